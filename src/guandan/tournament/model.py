"""The tournament's data: plain dataclasses and their versioned JSON form.

A :class:`Tournament` holds its settings, its :class:`Entry` list (pairs, teams of two pairs, bot pairs),
the :class:`Round` list with each round's :class:`Match` (one table, or two tables for a team match) and
the :class:`LogEntry` list of everything the organiser and the tables did (who, when, before, after).
Timestamps are strings passed in by the caller (ISO 8601 by convention); the engine never reads a clock.

Levels are ints 2..14 with 11=J, 12=Q, 13=K, 14=A (R6); :func:`parse_level` reads ``"A"``, ``"K"``,
``"10"``/``"T"`` or an int; digits are ASCII only (a fullwidth ``"１０"`` or Arabic-Indic ``"١٠"`` is
refused with the spellings allowed, rather than read as 10).

JSON: :func:`to_json` / :func:`from_json` round-trip the whole state; the object carries
``"version": STATE_VERSION`` and reading refuses another version with :class:`StateError`. Reading
checks the whole object before building anything (:func:`check_state`: every field's type, no unknown
field, the known formats, kinds and sides, unique entry ids, matches that name existing entries, rounds
numbered 1..N); NaN and infinite numbers are neither read nor written (JSON has no such numbers).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

from .errors import ImpossibleLevel, StateError

STATE_VERSION = 1
LEVEL_MIN = 2
LEVEL_A = 14
_NAMES = {11: "J", 12: "Q", 13: "K", 14: "A"}
_PARSE = {"J": 11, "Q": 12, "K": 13, "A": 14, "T": 10}

FORMATS = ("swiss", "round_robin", "groups_knockout")
VENUES = ("tables", "online")
LATE_ACTIONS = ("forfeit", "levels")
ROUND_KINDS = ("swiss", "round_robin", "group", "knockout")
ENTRY_KINDS = ("pair", "team")
SIDES = ("a", "b")
LEVEL_SPELLINGS = "2..10, J, Q, K, A (T for 10; ASCII digits)"


def parse_level(value: int | str, what: str = "level") -> int:
    """Level 2..14 from ``"2".."10"``, ``"T"``, ``"J"``, ``"Q"``, ``"K"``, ``"A"`` (any case) or an int.

    Digits must be ASCII: ``"１０"`` (fullwidth) or ``"١٠"`` (Arabic-Indic) are refused, like floats and
    bools. Raises :class:`ImpossibleLevel` (params ``field``, ``value``) for anything else or a level
    outside 2..A (R6); the message lists the spellings allowed.
    """
    if isinstance(value, str):
        v = value.strip().upper()
        if v in _PARSE:
            n = _PARSE[v]
        elif v.isascii() and v.isdecimal():
            n = int(v)
        else:
            raise ImpossibleLevel(f"{what}: {value!r} is not a level; write {LEVEL_SPELLINGS}", field=what,
                                  value=value)
    elif isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        raise ImpossibleLevel(f"{what}: {value!r} is not a level; write {LEVEL_SPELLINGS}", field=what,
                              value=repr(value))
    if not LEVEL_MIN <= n <= LEVEL_A:
        raise ImpossibleLevel(f"{what}: {value!r} is outside 2..A; write {LEVEL_SPELLINGS}", field=what, value=value)
    return n


def level_name(level: int) -> str:
    """``14 → "A"``, ``10 → "10"``."""
    return _NAMES.get(level, str(level))


@dataclass
class Player:
    """One player: ``name`` as shown; ``account`` is the site account's name, or None for a name typed
    by the organiser (an event at physical tables)."""

    name: str
    account: str | None = None


@dataclass
class Entry:
    """A pair (two partners for the whole event) or, with ``kind == "team"``, a team of two pairs
    (``players[0:2]`` and ``players[2:4]``).

    ``bot``: the bot level that plays this entry (e.g. ``"hard"``), None for people. ``seed``: the
    organiser's seeding number (1 = strongest); ``rating``: used for seeding when no seed is given.
    ``joined_round``: the first round it may be paired in (late entries start with no points).
    ``withdrawn_after``: the last round it took part in once withdrawn (it is never paired again).
    """

    id: int
    name: str
    players: list[Player]
    kind: str = "pair"
    club: str | None = None
    rating: float | None = None
    seed: int | None = None
    bot: str | None = None
    joined_round: int = 1
    withdrawn_after: int | None = None
    group: int | None = None

    @property
    def active(self) -> bool:
        return self.withdrawn_after is None


@dataclass
class Penalty:
    """A penalty against ``side`` (``"a"`` or ``"b"``) of one match (R54): the opponents gain ``levels``.

    ``kind``: ``"timeouts"`` (from the 3rd timeout on, +1 each), ``"late"`` (+1 per full 5 minutes) or
    ``"manual"`` (the organiser's, with ``reason``). ``loses_match``: the penalty loses the game outright
    (R54: hiding cards a 3rd time, signalling 3 times).
    """

    side: str
    levels: int
    reason: str
    kind: str = "manual"
    loses_match: bool = False


@dataclass
class MatchResult:
    """What a table reports for one match (R58): the levels reached by side a and side b (2..14),
    which side passed A (``passed_a``, None when nobody did), whether time was called, each side's
    timeouts count and minutes late, the organiser's manual ``penalties``, ``absent`` (``"a"``, ``"b"``,
    ``"both"`` or None), and for a drawn knock-out match ``extra_deal``: the side that took 头游 in the
    extra deal at level 2. ``team_deals`` (team matches only): one ``[t1, t2]`` per deal, the deal's result
    for team a at table 1 and at table 2: the upgrade that the tournament's preset gives the result (R35;
    +3/+2/+1 with the official preset when team a's pair took 头游 with 1-2/1-3/1-4, negative when team b's
    pair did), see :mod:`guandan.tournament.teams`.
    """

    level_a: int = LEVEL_MIN
    level_b: int = LEVEL_MIN
    passed_a: str | None = None
    time_called: bool = False
    timeouts_a: int = 0
    timeouts_b: int = 0
    late_a: int = 0
    late_b: int = 0
    penalties: list[Penalty] = field(default_factory=list)
    absent: str | None = None
    extra_deal: str | None = None
    team_deals: list[list[int]] | None = None


@dataclass
class Match:
    """One table of a round (two tables for a team match): entry ``a`` against entry ``b``; ``b`` is None
    for a bye. ``result`` is the final result; ``claims`` holds the results the two pairs entered at a
    physical table, keyed ``"a"``/``"b"``, until they agree (then ``result`` is set) or the organiser
    decides a dispute. ``stage``: the knock-out stage (``"final"``, ``"semi"``, ``"r8"``...) or the group
    number as ``"g1"``..; None in Swiss and round robin. ``slot``: in a knock-out, the match's place in the
    bracket (0 = the top; the winners of slots 2k and 2k+1 meet next), kept apart from ``table`` because
    tables put the byes last; None outside a knock-out (and in states written before it existed, where
    the table order stands in for it)."""

    table: int
    a: int
    b: int | None
    result: MatchResult | None = None
    claims: dict[str, MatchResult] = field(default_factory=dict)
    stage: str | None = None
    slot: int | None = None

    @property
    def is_bye(self) -> bool:
        return self.b is None

    @property
    def status(self) -> str:
        """``"bye"``, ``"final"``, ``"disputed"`` (two claims that differ), ``"claimed"`` (one claim) or
        ``"pending"``."""
        if self.b is None:
            return "bye"
        if self.result is not None:
            return "final"
        if len(self.claims) == 2:
            return "disputed"
        return "claimed" if self.claims else "pending"


@dataclass
class Round:
    """A paired round: ``number`` from 1, ``kind`` (``"swiss"``, ``"round_robin"``, ``"group"``,
    ``"knockout"``), its matches (tables numbered from 1, byes last), and when it was paired."""

    number: int
    kind: str
    matches: list[Match]
    paired_at: str | None = None

    @property
    def complete(self) -> bool:
        return all(m.status in ("final", "bye") for m in self.matches)

    @property
    def has_results(self) -> bool:
        return any(m.result is not None or m.claims for m in self.matches)


@dataclass
class LogEntry:
    """One logged action: ``action`` (``"pair"``, ``"repair"``, ``"claim"``, ``"enter"``, ``"decide"``,
    ``"correct"``, ``"withdraw"``, ``"add_entry"``, ``"penalty"``), by whom, when (passed in), the round and
    table concerned, the value ``before`` and ``after`` (JSON form) and the reason given."""

    action: str
    by: str
    at: str | None
    round: int | None = None
    table: int | None = None
    before: Any = None
    after: Any = None
    reason: str | None = None


@dataclass
class Options:
    """Scoring and pairing options (R58 defaults).

    ``tiebreaks``: order of the tie-breaks after field points, any of ``"net"`` (净积小分),
    ``"cumulative"`` (累积小分), ``"opponents"`` (opponents' field points), ``"head_to_head"``, ``"seed"``;
    the entry id always settles what is left. ``first_round``: ``"seeded"`` or ``"random"`` (with
    ``random_seed``). ``bye_net``/``bye_cumulative``: small scores credited for a bye or a walkover.
    ``late_minutes_per_level``: R54's 5. ``free_timeouts``: R54's 2 (the 3rd timeout is the first penalised).
    ``groups``/``knockout_size``: for ``groups_knockout``. ``prizes``: the top K places in the prize list.
    """

    tiebreaks: list[str] = field(default_factory=lambda: ["net", "cumulative", "opponents", "head_to_head", "seed"])
    first_round: str = "seeded"
    random_seed: int | None = None
    bye_net: int = 0
    bye_cumulative: int = 0
    late_minutes_per_level: int = 5
    free_timeouts: int = 2
    groups: int = 2
    knockout_size: int = 4
    prizes: int = 3


@dataclass
class Tournament:
    """The whole event. ``preset`` and ``overrides``: the rule preset of its games (docs/rules.md section P) and
    single option changes. ``format``: one of :data:`FORMATS`. ``rounds``: Swiss rounds (for round robin and
    groups it is worked out from the field). ``match_minutes``: time limit of a match (R58: 70 in Swiss and
    groups), ``knockout_minutes`` (120); None for untimed. ``team``: entries are teams (复式 matches).
    ``directors``: who may pair, enter, correct and penalise (empty: anyone, e.g. the local CLI).
    ``venue``: ``"tables"`` (physical tables, results typed) or ``"online"`` (the server plays each round
    in its rooms, :mod:`guandan.tournament.online`). ``clock_lead_s``/``clock_follow_s``: the move clocks
    of online tables in seconds (R53: 60 and 30). ``late_minutes``: at online tables, a pair with nobody
    connected this many minutes after the round starts is late (None: no check); ``late_action``:
    ``"forfeit"`` (the default: the late pair loses by absence) or ``"levels"`` (R54: the opponents gain
    a level per full ``options.late_minutes_per_level`` minutes late)."""

    name: str
    format: str = "swiss"
    rounds: int = 5
    preset: str = "official"
    overrides: dict[str, str] = field(default_factory=dict)
    match_minutes: int | None = 70
    knockout_minutes: int | None = 120
    team: bool = False
    entries: list[Entry] = field(default_factory=list)
    played: list[Round] = field(default_factory=list)
    options: Options = field(default_factory=Options)
    directors: list[str] = field(default_factory=list)
    log: list[LogEntry] = field(default_factory=list)
    venue: str = "tables"
    clock_lead_s: int = 60
    clock_follow_s: int = 30
    late_minutes: int | None = None
    late_action: str = "forfeit"

    def entry(self, entry_id: int) -> Entry:
        """The entry with that id; :class:`~guandan.tournament.errors.UnknownEntry` otherwise."""
        from .errors import UnknownEntry

        for e in self.entries:
            if e.id == entry_id:
                return e
        raise UnknownEntry(f"no entry with id {entry_id}", entry=entry_id)


# --- JSON -----------------------------------------------------------------------------------------------


def result_to_dict(r: MatchResult | None) -> dict[str, Any] | None:
    return None if r is None else dataclasses.asdict(r)


def result_from_dict(d: dict[str, Any] | None) -> MatchResult | None:
    if d is None:
        return None
    d = dict(d)
    d["penalties"] = [Penalty(**p) for p in d.get("penalties", [])]
    return MatchResult(**d)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _plain(v: Any) -> Any:
    """``dataclasses.asdict`` for the state's values (dataclasses, lists, tuples, dicts and JSON
    scalars), without its deep copy of every leaf: strings, numbers, booleans and None are immutable,
    so the result is equal (``==``) to ``asdict``'s and shares nothing mutable with ``v``. A 400-pair
    event with one round played: 6 ms instead of 42 (the server writes the state at every result)."""
    cls = type(v)
    if cls in _SCALARS:
        return v
    names = _FIELD_NAMES.get(cls)
    if names is None and dataclasses.is_dataclass(cls):
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    if names is not None:
        return {n: x if type(x) in _SCALARS else _plain(x) for n in names for x in (getattr(v, n),)}
    if cls is list:
        return [x if type(x) in _SCALARS else _plain(x) for x in v]
    if cls is tuple:
        return tuple(x if type(x) in _SCALARS else _plain(x) for x in v)
    if cls is dict:
        return {k: x if type(x) in _SCALARS else _plain(x) for k, x in v.items()}
    return copy.deepcopy(v)  # anything else, as asdict does


def to_dict(t: Tournament) -> dict[str, Any]:
    """The whole state as plain JSON values, with ``"version"`` (equal to ``dataclasses.asdict(t)``
    plus the version)."""
    d = _plain(t)
    d["version"] = STATE_VERSION
    return d


# --- checking a state read from JSON -----------------------------------------------------------------------

def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_KINDS: dict[str, tuple[str, Any]] = {
    "int": ("an integer", _is_int),
    "str": ("a string", lambda v: isinstance(v, str)),
    "bool": ("true or false", lambda v: isinstance(v, bool)),
    "num": ("a finite number", lambda v: (_is_int(v) or isinstance(v, float)) and math.isfinite(v)),
    "list": ("a list", lambda v: isinstance(v, list)),
    "dict": ("an object", lambda v: isinstance(v, dict)),
    "any": ("any value", lambda v: True),
}
# field -> kind; "!" required, "?" may be null
_TOURNAMENT = {"version": "any", "name": "str!", "format": "str", "rounds": "int", "preset": "str", "overrides": "dict",
               "match_minutes": "int?", "knockout_minutes": "int?", "team": "bool", "entries": "list",
               "played": "list", "options": "dict", "directors": "list", "log": "list",
               "venue": "str", "clock_lead_s": "int", "clock_follow_s": "int", "late_minutes": "int?",
               "late_action": "str"}
_ENTRY = {"id": "int!", "name": "str!", "players": "list!", "kind": "str", "club": "str?", "rating": "num?",
          "seed": "int?", "bot": "str?", "joined_round": "int", "withdrawn_after": "int?", "group": "int?"}
_PLAYER = {"name": "str!", "account": "str?"}
_ROUND = {"number": "int!", "kind": "str!", "matches": "list!", "paired_at": "str?"}
_MATCH = {"table": "int!", "a": "int!", "b": "int?!", "result": "dict?", "claims": "dict", "stage": "str?",
          "slot": "int?"}
_RESULT = {"level_a": "int", "level_b": "int", "passed_a": "str?", "time_called": "bool", "timeouts_a": "int",
           "timeouts_b": "int", "late_a": "int", "late_b": "int", "penalties": "list", "absent": "str?",
           "extra_deal": "str?", "team_deals": "list?"}
_PENALTY = {"side": "str!", "levels": "int!", "reason": "str!", "kind": "str", "loses_match": "bool"}
_OPTIONS = {"tiebreaks": "list", "first_round": "str", "random_seed": "int?", "bye_net": "int", "bye_cumulative": "int",
            "late_minutes_per_level": "int", "free_timeouts": "int", "groups": "int", "knockout_size": "int",
            "prizes": "int"}
_LOG = {"action": "str!", "by": "str!", "at": "str?!", "round": "int?", "table": "int?", "before": "any",
        "after": "any", "reason": "str?"}


def _bad(where: str, message: str) -> StateError:
    return StateError(f"{where}: {message}", reason="malformed", field=where)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


#: each spec above read once: ``id(spec) -> ((key, required, nullable, word, check), ...)``
_COMPILED: dict[int, tuple[tuple[str, bool, bool, str, Any], ...]] = {}


def _compiled(spec: dict[str, str]) -> tuple[tuple[str, bool, bool, str, Any], ...]:
    got = _COMPILED.get(id(spec))
    if got is None:
        rows = []
        for key, kind in spec.items():
            required, kind = kind.endswith("!"), kind.rstrip("!")
            nullable, kind = kind.endswith("?"), kind.rstrip("?")
            word, ok = _KINDS[kind]
            rows.append((key, required, nullable, word, ok))
        got = _COMPILED[id(spec)] = tuple(rows)
    return got


def _fields(d: Any, spec: dict[str, str], where: str) -> dict[str, Any]:
    """Check one object against ``spec`` (see the tables above); returns it."""
    if not isinstance(d, dict):
        raise _bad(where, f"{_short(d)} is not a JSON object")
    if not d.keys() <= spec.keys():
        unknown = sorted(str(k) for k in d if k not in spec)
        raise _bad(where, f"unknown field {unknown[0]!r}")
    for key, required, nullable, word, ok in _compiled(spec):
        if key not in d:
            if required:
                raise _bad(where, f"the field {key!r} is missing")
            continue
        v = d[key]
        if v is None and nullable:
            continue
        if not ok(v):
            raise _bad(f"{where}.{key}", f"{_short(v)} is not {word}" + (" or null" if nullable else ""))
    return d


def _one_of(v: Any, allowed: tuple[str, ...], where: str) -> None:
    if v is not None and v not in allowed:
        raise _bad(where, f"{_short(v)} is not one of {', '.join(allowed)}")


def _check_result(r: Any, where: str) -> None:
    _fields(r, _RESULT, where)
    _one_of(r.get("passed_a"), SIDES, f"{where}.passed_a")
    _one_of(r.get("extra_deal"), SIDES, f"{where}.extra_deal")
    _one_of(r.get("absent"), (*SIDES, "both"), f"{where}.absent")
    for i, p in enumerate(r.get("penalties", [])):
        _fields(p, _PENALTY, f"{where}.penalties[{i}]")
        _one_of(p["side"], SIDES, f"{where}.penalties[{i}].side")
    for i, deal in enumerate(r.get("team_deals") or []):
        if not isinstance(deal, list) or len(deal) != 2 or not all(_is_int(x) for x in deal):
            raise _bad(f"{where}.team_deals[{i}]", f"{_short(deal)} is not two integers")


def check_state(d: Any) -> None:
    """Check a state object read from JSON before it is rebuilt (module docstring).

    Raises :class:`StateError`: ``reason`` ``"not_object"``, ``"version"`` (another version), or
    ``"malformed"`` with ``field``, the path of the first bad value (``"entries[2].rating"``), named
    in the one-line message with what is wrong there."""
    if not isinstance(d, dict):
        raise StateError("a tournament state is a JSON object", reason="not_object")
    if d.get("version") != STATE_VERSION:
        raise StateError(f"state version {_short(d.get('version'))} is not {STATE_VERSION}", reason="version",
                         version=d.get("version"))
    _fields(d, _TOURNAMENT, "state")
    _one_of(d.get("format", "swiss"), FORMATS, "state.format")
    _one_of(d.get("venue", "tables"), VENUES, "state.venue")
    _one_of(d.get("late_action", "forfeit"), LATE_ACTIONS, "state.late_action")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in d.get("overrides", {}).items()):
        raise _bad("state.overrides", "rule overrides are strings, e.g. {\"return_rule\": \"any\"}")
    if not all(isinstance(x, str) for x in d.get("directors", [])):
        raise _bad("state.directors", "directors are names (strings)")
    opts = _fields(d.get("options", {}), _OPTIONS, "state.options")
    if not all(isinstance(x, str) for x in opts.get("tiebreaks", [])):
        raise _bad("state.options.tiebreaks", "tie-breaks are names (strings)")
    ids: set[int] = set()
    for i, e in enumerate(d.get("entries", [])):
        where = f"entries[{i}]"
        _fields(e, _ENTRY, where)
        if e["id"] in ids:
            raise _bad(f"{where}.id", f"entry id {e['id']} is used twice")
        ids.add(e["id"])
        _one_of(e.get("kind", "pair"), ENTRY_KINDS, f"{where}.kind")
        for k, pl in enumerate(e["players"]):
            _fields(pl, _PLAYER, f"{where}.players[{k}]")
    for n, r in enumerate(d.get("played", []), 1):
        where = f"played[{n - 1}]"
        _fields(r, _ROUND, where)
        if r["number"] != n:
            raise _bad(f"{where}.number", f"round {_short(r['number'])} stands where round {n} should")
        _one_of(r["kind"], ROUND_KINDS, f"{where}.kind")
        tables: set[int] = set()
        for k, m in enumerate(r["matches"]):
            mw = f"{where}.matches[{k}]"
            _fields(m, _MATCH, mw)
            if m["table"] in tables:
                raise _bad(f"{mw}.table", f"table {m['table']} appears twice in round {n}")
            tables.add(m["table"])
            for side in SIDES:
                if m[side] is not None and m[side] not in ids:
                    raise _bad(f"{mw}.{side}", f"round {n} table {m['table']} names entry {m[side]}, "
                               "which the state does not hold")
            if m.get("result") is not None:
                _check_result(m["result"], f"{mw}.result")
            for side, c in m.get("claims", {}).items():
                _one_of(side, SIDES, f"{mw}.claims")
                _check_result(c, f"{mw}.claims.{side}")
    for i, x in enumerate(d.get("log", [])):
        _fields(x, _LOG, f"log[{i}]")


def from_dict(d: dict[str, Any]) -> Tournament:
    """Rebuild a :class:`Tournament` from :func:`to_dict`'s output.

    Raises :class:`StateError` (params ``reason``) for another version or a malformed object
    (:func:`check_state`).
    """
    check_state(d)
    try:
        d = dict(d)
        d.pop("version")
        entries = [Entry(**{**e, "players": [Player(**p) for p in e["players"]]}) for e in d.pop("entries", [])]
        rounds = []
        for r in d.pop("played", []):
            matches = [Match(table=m["table"], a=m["a"], b=m["b"], result=result_from_dict(m.get("result")),
                             claims={k: result_from_dict(v) for k, v in m.get("claims", {}).items()},  # type: ignore[misc]
                             stage=m.get("stage"), slot=m.get("slot")) for m in r["matches"]]
            rounds.append(Round(number=r["number"], kind=r["kind"], matches=matches, paired_at=r.get("paired_at")))
        options = Options(**d.pop("options", {}))
        log = [LogEntry(**x) for x in d.pop("log", [])]
        return Tournament(**d, entries=entries, played=rounds, options=options, log=log)
    except (KeyError, TypeError, AttributeError) as e:
        raise StateError(f"malformed tournament state: {e}", reason="malformed", detail=str(e)) from None


def to_json(t: Tournament, *, compact: bool = False) -> str:
    """:func:`to_dict` as indented JSON text (UTF-8 friendly, Chinese names kept), or with
    ``compact`` as one line without spaces: what the server stores, written by the standard
    library's C encoder, which ``indent`` turns off (a 400-pair event: 3 ms instead of 16).

    Raises :class:`StateError` (``reason="not_finite"``) when a number in the state is NaN or infinite
    (JSON has no such numbers, and :func:`from_json` would refuse them)."""
    try:
        if compact:
            return json.dumps(to_dict(t), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return json.dumps(to_dict(t), ensure_ascii=False, indent=1, allow_nan=False)
    except ValueError:
        raise StateError("a number in the state is NaN or infinite, which JSON cannot hold",
                         reason="not_finite") from None


def _no_constant(name: str) -> Any:
    raise StateError(f"{name} is not a number JSON allows", reason="not_finite", value=name)


def finite_float(text: str) -> float:
    """A JSON number as a float, refusing the ones too large for a float (``1e999`` would be infinite).

    Raises :class:`StateError` (``reason="not_finite"``)."""
    x = float(text)
    if not math.isfinite(x):
        raise StateError(f"{text} is too large a number", reason="not_finite", value=text)
    return x


def loads(text: str) -> Any:
    """``json.loads`` without NaN, Infinity or numbers too large for a float.

    Raises :class:`StateError`: ``reason`` ``"not_json"`` (with ``detail``), ``"not_finite"``."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=finite_float)
    except json.JSONDecodeError as e:
        raise StateError(f"not JSON: {e}", reason="not_json", detail=str(e)) from None
    except RecursionError:
        raise StateError("not JSON: nested too deeply", reason="not_json", detail="recursion") from None
    except StateError:
        raise
    except ValueError as e:  # e.g. an integer with more digits than Python converts
        raise StateError(f"not JSON: {e}", reason="not_json", detail=str(e)) from None


def from_json(text: str) -> Tournament:
    """Parse :func:`to_json`'s text; :class:`StateError` for text that is not JSON (or holds NaN or
    infinite numbers) and for a state that :func:`check_state` refuses."""
    return from_dict(loads(text))
