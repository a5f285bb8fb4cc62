"""Rule options and named presets (docs/rules.md section P).

A :class:`RuleSet` is frozen; change options with :meth:`RuleSet.replace` or
:func:`apply_overrides`. Every game record stores the preset name and every option value.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import RuleConfigError

_CHOICES: dict[str, tuple[str, ...]] = {
    "target_level": ("A", "8"),
    "pass_target": ("strict", "lenient", "double_up_only"),
    "after_target": ("game_over", "restart"),
    "return_rule": ("le10", "any", "le10_partner_only"),
    "double_tribute_by": ("card", "remaining_cards"),
    "double_tribute_tie": ("seat", "random"),
    "return_to": ("payer", "next_seat"),
    "anti_tribute_single": ("payer", "team_if_opponents"),
    "first_leader": ("turned_card", "random_seat"),
    "card_counts": ("always", "le10"),
}
_BOOLS = (
    "target_no_upgrade_with_last", "streaks", "full_house_joker_pair", "points", "no_shuffle", "single_deal",
)
_OPTIONAL_SECONDS = ("clock_lead_s", "clock_follow_s")

#: Bounds of the move clocks ``clock_lead_s`` / ``clock_follow_s`` (seconds, both included): the
#: one check of a clock wherever it comes from (rule options, the rooms API's top-level clock
#: fields, the CLI). Below a tenth of a second a clock only makes the server spin; above an hour it
#: is no clock.
CLOCK_MIN_S = 0.1
CLOCK_MAX_S = 3600.0
#: Largest ``a_fail_limit`` (a game has far fewer attempts at A than this).
A_FAIL_LIMIT_MAX = 100
#: Longest digit string read as a number (``int("1" * 5000)`` raises instead of answering).
_MAX_DIGITS = 32


def clock_problem(value: Any) -> str | None:
    """Why ``value`` is not a valid move clock, or ``None`` when it is (``None`` itself is valid:
    no clock). A clock is a real number of seconds (not a bool) from :data:`CLOCK_MIN_S` to
    :data:`CLOCK_MAX_S`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "give a number of seconds or null"
    if not math.isfinite(value) or not CLOCK_MIN_S <= value <= CLOCK_MAX_S:
        return f"give seconds from {CLOCK_MIN_S:g} to {CLOCK_MAX_S:g}, or null"
    return None


@dataclass(frozen=True)
class RuleSet:
    """Every contested rule as an explicit option (docs/rules.md section P; defaults = ``official``).

    Attributes:
        upgrade: levels gained for results 1-2, 1-3, 1-4 (R35, AMB-16).
        target_level: ``"A"`` or ``"8"`` (AMB-17).
        pass_target: what passes the target level (R37, R40, AMB-14).
        target_no_upgrade_with_last: a win with a 末游 in a target-level deal gives no upgrade (Yangzhou).
        a_fail_limit: failed attempts at the own target level before falling back to 2
            (1 to :data:`A_FAIL_LIMIT_MAX`), or ``None`` for unlimited (R41, AMB-13).
        after_target: ``"game_over"`` or ``"restart"`` at 2 after passing the target (R42, AMB-28).
        streaks: Yangzhou streak bonus/penalty for 3+ consecutive 头游/末游 (AMB-17).
        return_rule: what may be returned (R47, AMB-02/03).
        double_tribute_by: who receives which double tribute (R46, AMB-05).
        double_tribute_tie: equal double-tribute cards (R46, AMB-04/06).
        return_to: where each double-tribute return goes (AMB-07).
        anti_tribute_single: whose big jokers count in a single tribute (R48, AMB-08).
        full_house_joker_pair: a joker pair may be a full house's pair (R21, AMB-18).
        first_leader: first leader of a game (R51).
        card_counts: who sees remaining card counts (R32, AMB-24).
        points: Anhui per-deal points and title ladder (section 2.1).
        clock_lead_s, clock_follow_s: move clocks in seconds (:data:`CLOCK_MIN_S` to
            :data:`CLOCK_MAX_S`), or ``None`` (R53, AMB-25).
        no_shuffle: house mode 不洗牌: every deal after a game's first is the previous deal's
            cards gathered trick by trick, cut and dealt in packets (:mod:`guandan.core.gather`).
        single_deal: house mode 单局: the game is one deal at a random level (both teams at it).

    Raises:
        RuleConfigError: on construction (and so on :meth:`replace`, :meth:`from_dict`), any
            option outside its values or bounds.
    """

    upgrade: tuple[int, int, int] = (3, 2, 1)
    target_level: str = "A"
    pass_target: str = "strict"
    target_no_upgrade_with_last: bool = False
    a_fail_limit: int | None = 3
    after_target: str = "game_over"
    streaks: bool = False
    return_rule: str = "le10"
    double_tribute_by: str = "card"
    double_tribute_tie: str = "seat"
    return_to: str = "payer"
    anti_tribute_single: str = "payer"
    full_house_joker_pair: bool = True
    first_leader: str = "turned_card"
    card_counts: str = "always"
    points: bool = False
    clock_lead_s: float | None = None
    clock_follow_s: float | None = None
    no_shuffle: bool = False
    single_deal: bool = False

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise RuleConfigError(
                    f"rule option {name}={value!r} is invalid; valid values: {', '.join(choices)}"
                )
        for name in _BOOLS:
            if not isinstance(getattr(self, name), bool):
                raise RuleConfigError(f"rule option {name} must be true or false")
        up = self.upgrade
        if (
            not isinstance(up, tuple)
            or len(up) != 3
            or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 12 for x in up)
            or sum(up) == 0
        ):
            raise RuleConfigError(
                f"rule option upgrade={up!r} is invalid; give three ints 0..12 for 1-2/1-3/1-4, "
                "not all 0 (else no team could ever reach the target), e.g. 3/2/1"
            )
        lim = self.a_fail_limit
        if lim is not None and (
            isinstance(lim, bool) or not isinstance(lim, int) or not 1 <= lim <= A_FAIL_LIMIT_MAX
        ):
            raise RuleConfigError(
                f"rule option a_fail_limit={_shown(lim)} is invalid; give an int from 1 to "
                f"{A_FAIL_LIMIT_MAX} or null"
            )
        for name in _OPTIONAL_SECONDS:
            v = getattr(self, name)
            problem = clock_problem(v)
            if problem is not None:
                raise RuleConfigError(f"rule option {name}={_shown(v)} is invalid; {problem}")

    # --- presets -----------------------------------------------------------------------------
    @classmethod
    def official(cls) -> RuleSet:
        """The default: 2022 trial competition rules plus the 2017 national lineage."""
        return PRESETS["official"]

    @classmethod
    def preset(cls, name: str) -> RuleSet:
        """Return the named preset (``official anhui classic huaian yangzhou maanshan aicomp``).

        Raises:
            RuleConfigError: unknown preset name, listing the valid ones.
        """
        try:
            return PRESETS[name]
        except (KeyError, TypeError):
            raise RuleConfigError(
                f"unknown preset {name!r}; valid presets: {', '.join(PRESETS)}"
            ) from None

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some options changed (values already typed).

        Raises:
            RuleConfigError: unknown option name or invalid value.
        """
        unknown = [k for k in changes if k not in OPTION_NAMES]
        if unknown:
            raise RuleConfigError(
                f"unknown rule option {unknown[0]!r}; valid options: {', '.join(OPTION_NAMES)}"
            )
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Every option as JSON-ready values (``upgrade`` as a list)."""
        d = dataclasses.asdict(self)
        d["upgrade"] = list(self.upgrade)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: RuleSet | None = None) -> RuleSet:
        """Build from JSON-like values on top of ``base`` (default ``official``).

        Values may be typed (``[3, 2, 1]``, ``true``) or strings as on the CLI (``"3/2/1"``).

        Raises:
            RuleConfigError: unknown option or invalid value.
        """
        base = base or PRESETS["official"]
        if not isinstance(data, Mapping):
            raise RuleConfigError("rule options must be an object of option: value")
        return base.replace(**{str(k): parse_option_value(str(k), v) for k, v in data.items()})

    def preset_name(self) -> str | None:
        """The name of the preset equal to this rule set, or ``None`` when it is a custom mix."""
        for name, rs in PRESETS.items():
            if rs == self:
                return name
        return None

    def diff(self, other: RuleSet) -> dict[str, Any]:
        """Options whose values differ from ``other`` (as JSON-ready values of ``self``)."""
        mine, theirs = self.to_dict(), other.to_dict()
        return {k: v for k, v in mine.items() if theirs[k] != v}


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RuleSet))


def option_help() -> dict[str, str]:
    """One line per option: its valid values (for help text and error messages)."""
    out: dict[str, str] = {}
    for name in OPTION_NAMES:
        if name in _CHOICES:
            out[name] = " | ".join(_CHOICES[name])
        elif name in _BOOLS:
            out[name] = "true | false"
        elif name == "upgrade":
            out[name] = "three ints for 1-2/1-3/1-4, e.g. 3/2/1"
        elif name == "a_fail_limit":
            out[name] = f"int 1..{A_FAIL_LIMIT_MAX} | null (unlimited)"
        else:
            out[name] = f"seconds {CLOCK_MIN_S:g}..{CLOCK_MAX_S:g} | null"
    return out


def parse_option_value(name: str, value: Any) -> Any:
    """Convert a CLI/JSON value for option ``name`` into its typed form.

    Raises:
        RuleConfigError: unknown option or a value that cannot be read.
    """
    if name not in OPTION_NAMES:
        raise RuleConfigError(
            f"unknown rule option {name!r}; valid options: {', '.join(OPTION_NAMES)}"
        )
    valid = option_help()[name]
    bad = RuleConfigError(f"rule option {name}={_shown(value)} is invalid; valid values: {valid}")
    if name in _CHOICES:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # target_level=8 written as a number
        if isinstance(value, str) and value.strip() in _CHOICES[name]:
            return value.strip()
        if isinstance(value, str) and value.strip().upper() in _CHOICES[name]:
            return value.strip().upper()
        raise bad
    if name in _BOOLS:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            v = value.strip().lower()
            if v in ("true", "yes", "on", "1"):
                return True
            if v in ("false", "no", "off", "0"):
                return False
        raise bad
    if name == "upgrade":
        parts: list[Any]
        if isinstance(value, str):
            parts = [p.strip() for p in value.replace(",", "/").split("/") if p.strip()]
        elif isinstance(value, (list, tuple)):
            parts = list(value)
        else:
            raise bad
        if not all(
            (isinstance(p, int) and not isinstance(p, bool))
            or (isinstance(p, str) and p.isascii() and p.isdecimal() and len(p) <= _MAX_DIGITS)
            for p in parts
        ):
            raise bad
        ints = tuple(int(p) for p in parts)
        if len(ints) != 3 or min(ints) < 0:
            raise bad
        return ints
    # a_fail_limit and clocks: number or null
    if value is None or (isinstance(value, str) and value.strip().lower() in ("null", "none", "off")):
        return None
    if isinstance(value, bool):
        raise bad
    num: float | int
    if name in _OPTIONAL_SECONDS:
        if not isinstance(value, (int, float, str)):
            raise bad
        try:
            num = float(value)
        except (TypeError, ValueError, OverflowError):
            raise bad from None
        if clock_problem(num) is not None:
            raise bad
        return num
    digits = value.strip() if isinstance(value, str) else ""
    if digits and digits.isascii() and digits.isdecimal() and len(digits) <= _MAX_DIGITS:
        num = int(digits)
    elif isinstance(value, int):
        num = value
    elif isinstance(value, float) and value.is_integer():
        num = int(value)
    else:
        raise bad
    if not 1 <= num <= A_FAIL_LIMIT_MAX:
        raise bad
    return num


def _shown(value: Any) -> str:
    """``repr(value)`` for an error message, at most 40 characters (a 5000-digit number or a long
    string is cut) and ASCII only (a lone surrogate or other unencodable text is escaped)."""
    text = ascii(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_override(text: str) -> tuple[str, Any]:
    """Parse one ``key=value`` override (CLI ``--rule``) into ``(name, typed value)``.

    Raises:
        RuleConfigError: no ``=``, unknown key, or invalid value.
    """
    if not isinstance(text, str) or "=" not in text:
        raise RuleConfigError(f"rule override {text!r} must look like key=value")
    key, value = text.split("=", 1)
    key = key.strip()
    return key, parse_option_value(key, value.strip())


def apply_overrides(base: RuleSet, overrides: Iterable[str]) -> RuleSet:
    """Apply CLI-style ``key=value`` overrides to ``base``.

    Raises:
        RuleConfigError: as :func:`parse_override`.
    """
    changes = dict(parse_override(o) for o in overrides)
    return base.replace(**changes) if changes else base


_OFFICIAL = RuleSet()
PRESETS: dict[str, RuleSet] = {
    "official": _OFFICIAL,
    "anhui": dataclasses.replace(
        _OFFICIAL,
        upgrade=(6, 4, 2),
        return_rule="any",
        double_tribute_tie="random",
        first_leader="random_seat",
        points=True,
    ),
    "classic": dataclasses.replace(
        _OFFICIAL,
        after_target="restart",
        return_rule="any",
        double_tribute_by="remaining_cards",
        anti_tribute_single="team_if_opponents",
    ),
    "huaian": _OFFICIAL,
    "yangzhou": dataclasses.replace(
        _OFFICIAL,
        target_no_upgrade_with_last=True,
        streaks=True,
        return_rule="any",
        return_to="next_seat",
    ),
    "maanshan": dataclasses.replace(_OFFICIAL, return_rule="any", return_to="next_seat"),
    "aicomp": dataclasses.replace(
        _OFFICIAL, pass_target="double_up_only", a_fail_limit=2, first_leader="random_seat"
    ),
}
#: Preset names in the order of docs/rules.md section P.
PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)
