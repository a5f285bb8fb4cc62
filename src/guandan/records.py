"""Game records: JSON Lines files that replay a game exactly (DESIGN.md section 3, RULES.md section P).

Format (version 1), one JSON object per line, UTF-8, ``\\n`` line ends:

* line 1, the header::

    {"format":"pyguandan-record","version":1,"preset":"official","options":{...every RuleSet option...},
     "seed":7,"hands":"shuffled","first_leader":null,"max_games":1,"players":["heuristic",...]}

  ``preset`` is informational (the preset the options started from, or ``null``); ``options`` is
  authoritative (:meth:`RuleSet.to_dict`). ``seed`` seeds the game's ``random.Random`` (``null``:
  unknown). ``hands`` is ``"shuffled"`` (every deal was shuffled from the seed) or ``"explicit"``
  (some deals were supplied; their hands are taken from the ``deal`` events). ``first_leader`` and
  ``max_games`` are the :class:`~guandan.core.match.Game` arguments. ``players`` names the four
  seats. An optional ``created`` field (ISO time) is written only when asked for, so that by
  default the same seed gives byte-identical files; replay ignores it and any unknown header key.

* then one line per entry of :attr:`Game.events`, in order, exactly as the game produced them:
  ``deal``, ``anti_tribute``, ``action``, ``tribute_paid``, ``returns_revealed``, ``jiefeng``,
  ``deal_end``, ``game_over``.

Every line is ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``; events carry no
timestamps. :func:`replay` rebuilds the game from the header, re-applies every ``action`` event
through :meth:`Game.check` / :meth:`Game.apply` with the recorded seat, and requires every other
event the replayed game produces to equal the recorded one (compared as canonical JSON with sorted
keys), in the same place; ``action`` events are verified by the legality check itself.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from guandan.core.cards import card_text, parse_card
from guandan.core.errors import GuandanError, IllegalAction, RuleConfigError
from guandan.core.match import Game, action_from_json, shuffle_deal
from guandan.core.rules import RuleSet

FORMAT = "pyguandan-record"
VERSION = 1
HANDS_KINDS = ("shuffled", "explicit")

#: Required fields of each event type (besides ``type``); optional ones in :data:`_OPTIONAL_FIELDS`.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "deal": ("game", "deal", "level", "levels", "hands"),
    "anti_tribute": ("seats", "leader"),
    "action": ("seat", "action"),
    "tribute_paid": ("tributes",),
    "returns_revealed": ("returns", "leader"),
    "jiefeng": ("leader",),
    "deal_end": (
        "finish_order", "result", "winner_team", "upgrade", "levels", "passed", "failed", "demoted", "a_fails",
    ),
    "game_over": ("game", "winner_team"),
}
_OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "deal": ("first_leader",),
    "deal_end": ("points", "points_total"),
}


class RecordError(GuandanError):
    """A record that cannot be replayed: corrupt line, illegal action or mismatch.

    ``line`` is the 1-based line number (``len(lines) + 1`` when the record ends too early);
    ``reason`` the explanation; ``str(error)`` is ``"line N: reason"``. A ``ValueError``.
    """

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


def dumps(obj: Any) -> str:
    """The record's canonical JSON text of one line (no spaces, UTF-8 kept, key order kept)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _canon(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# -- writing ---------------------------------------------------------------------------------------


def record_header(
    game: Game,
    preset: str | None = None,
    players: Sequence[str] | None = None,
    *,
    seed: int | None | str = "game",
    hands: str | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """The header object of ``game``'s record (see the module docstring).

    Args:
        game: the game.
        preset: preset name to store (default: the preset equal to ``game.rules``, else ``None``).
        players: four seat names (default ``["seat0", ...]``).
        seed: the seed to store (an int or ``None``); the default ``"game"`` means ``game.seed``.
        hands: ``"shuffled"`` or ``"explicit"``; default ``"explicit"`` when the game was given
            hands or has no seed, else ``"shuffled"``.
        created: optional ISO time stamp to include (omitted by default: byte-for-byte determinism).
    Raises:
        ValueError: not four player names, a seed that is not an int, or a bad ``hands`` value.
    """
    names = list(players) if players is not None else [f"seat{s}" for s in range(4)]
    if len(names) != 4 or not all(isinstance(n, str) for n in names):
        raise ValueError("a record needs four player names")
    the_seed = game.seed if seed == "game" else seed
    if the_seed is not None and not _is_int(the_seed):
        raise ValueError(f"the seed must be an integer or None, not {the_seed!r}")
    if hands is None:
        given = game.hands_given
        hands = "explicit" if given or the_seed is None else "shuffled"
    if hands not in HANDS_KINDS:
        raise ValueError(f"hands must be one of {', '.join(HANDS_KINDS)}, not {hands!r}")
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "preset": preset if preset is not None else game.rules.preset_name(),
        "options": game.rules.to_dict(),
        "seed": the_seed,
        "hands": hands,
        "first_leader": game.fixed_first_leader,
        "max_games": game.max_games,
        "players": names,
    }
    if created is not None:
        header["created"] = created
    return header


def record_lines(
    game: Game,
    preset: str | None = None,
    players: Sequence[str] | None = None,
    *,
    seed: int | None | str = "game",
    hands: str | None = None,
    created: str | None = None,
) -> list[str]:
    """The record of ``game`` so far as lines without line ends: the header then every event.

    Arguments as :func:`record_header`. Deterministic: the same seed and actions give the same lines.
    """
    header = record_header(game, preset, players, seed=seed, hands=hands, created=created)
    return [dumps(header)] + [dumps(ev) for ev in game.events]


def write_record(
    path_or_file: str | os.PathLike[str] | IO[str],
    game: Game,
    preset: str | None = None,
    players: Sequence[str] | None = None,
    *,
    seed: int | None | str = "game",
    hands: str | None = None,
    created: str | None = None,
) -> int:
    """Write ``game``'s record (UTF-8, one ``\\n`` after every line) to a path or a text file.

    Arguments as :func:`record_header`. Returns the number of lines written.
    Raises:
        OSError: the file cannot be written.
    """
    lines = record_lines(game, preset, players, seed=seed, hands=hands, created=created)
    text = "".join(line + "\n" for line in lines)
    if hasattr(path_or_file, "write"):
        path_or_file.write(text)
    else:
        with open(path_or_file, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return len(lines)


# -- reading and replaying -------------------------------------------------------------------------


@dataclass
class ReplayResult:
    """A verified record.

    Attributes:
        header: the header object.
        game: the replayed game (its events equal the record's).
        events: ``(line number, event)`` for every recorded event.
        n_lines: lines in the record, header included.
        n_actions: action events re-applied.
        n_deals: deal events.
        complete: the game is over (a record of an unfinished game is valid but not complete).
    """

    header: dict[str, Any]
    game: Game
    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    n_lines: int = 0
    n_actions: int = 0
    n_deals: int = 0
    complete: bool = False


def read_lines(source: str | os.PathLike[str] | IO[str] | IO[bytes]) -> list[str]:
    """The record's lines (line ends removed; one final ``\\n`` is not an extra line).

    Args:
        source: a path, or an open text or binary file.
    Raises:
        OSError: the path cannot be read.
        RecordError: a line is not UTF-8.
    """
    if hasattr(source, "read"):
        data = source.read()
    else:
        with open(source, "rb") as f:
            data = f.read()
    if isinstance(data, bytes):
        raw = data.split(b"\n")
        out = []
        for i, b in enumerate(raw, 1):
            try:
                out.append(b.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise RecordError(i, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    else:
        out = data.split("\n")
    if out and out[-1] == "":
        out.pop()
    return [s.removesuffix("\r") for s in out]


def _load(line_no: int, text: str) -> dict[str, Any]:
    if not text.strip():
        raise RecordError(line_no, "empty line")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(line_no, f"not valid JSON ({e.msg} at column {e.colno})") from None
    except (ValueError, RecursionError) as e:  # huge integers, absurd nesting
        raise RecordError(line_no, f"unreadable JSON ({type(e).__name__})") from None
    if not isinstance(obj, dict):
        raise RecordError(line_no, f"expected a JSON object, found {type(obj).__name__}")
    return obj


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse_header(line_no: int, obj: dict[str, Any]) -> RuleSet:
    """Validate a header object; return its rule set.

    Raises:
        RecordError: wrong format or version, a missing or invalid field.
    """
    if obj.get("format") != FORMAT:
        raise RecordError(line_no, f"not a pyguandan record (format is {obj.get('format')!r}, expected {FORMAT!r})")
    if obj.get("version") != VERSION:
        raise RecordError(line_no, f"unsupported record version {obj.get('version')!r} (this reader reads {VERSION})")
    for key in ("preset", "options", "seed", "hands", "first_leader", "max_games", "players"):
        if key not in obj:
            raise RecordError(line_no, f"header field {key!r} is missing")
    if not isinstance(obj["options"], dict):
        raise RecordError(line_no, "header field 'options' must be an object")
    try:
        rules = RuleSet.from_dict(obj["options"])
    except RuleConfigError as e:
        raise RecordError(line_no, f"bad rule options: {e}") from None
    if obj["preset"] is not None and not isinstance(obj["preset"], str):
        raise RecordError(line_no, "header field 'preset' must be a string or null")
    if obj["seed"] is not None and not _is_int(obj["seed"]):
        raise RecordError(line_no, "header field 'seed' must be an integer or null")
    if obj["hands"] not in HANDS_KINDS:
        raise RecordError(line_no, f"header field 'hands' must be 'shuffled' or 'explicit', not {obj['hands']!r}")
    if obj["hands"] == "shuffled" and obj["seed"] is None:
        raise RecordError(line_no, "shuffled hands need a seed (header 'seed' is null)")
    fl = obj["first_leader"]
    if fl is not None and not (_is_int(fl) and 0 <= fl < 4):
        raise RecordError(line_no, "header field 'first_leader' must be a seat 0-3 or null")
    mg = obj["max_games"]
    if mg is not None and not (_is_int(mg) and mg >= 1):
        raise RecordError(line_no, "header field 'max_games' must be a positive integer or null")
    pl = obj["players"]
    if not (isinstance(pl, list) and len(pl) == 4 and all(isinstance(p, str) for p in pl)):
        raise RecordError(line_no, "header field 'players' must be a list of four names")
    return rules


def _check_event(line_no: int, ev: dict[str, Any]) -> None:
    t = ev.get("type")
    if not isinstance(t, str):
        raise RecordError(line_no, "event has no 'type'")
    if t not in EVENT_FIELDS:
        raise RecordError(line_no, f"unknown event type {t!r}")
    for key in EVENT_FIELDS[t]:
        if key not in ev:
            raise RecordError(line_no, f"{t} event: field {key!r} is missing")
    allowed = {"type", *EVENT_FIELDS[t], *_OPTIONAL_FIELDS.get(t, ())}
    extra = sorted(k for k in ev if k not in allowed)
    if extra:
        raise RecordError(line_no, f"{t} event: unexpected field {extra[0]!r}")
    if t == "action":
        if not (_is_int(ev["seat"]) and 0 <= ev["seat"] < 4):
            raise RecordError(line_no, f"action event: bad seat {ev['seat']!r}")
    elif t == "deal":
        if not (_is_int(ev["game"]) and _is_int(ev["deal"])):
            raise RecordError(line_no, "deal event: 'game' and 'deal' must be integers")
        hands = ev["hands"]
        if not (isinstance(hands, list) and len(hands) == 4 and all(isinstance(h, list) for h in hands)):
            raise RecordError(line_no, "deal event: 'hands' must be four lists of cards")


def _parse_hands(line_no: int, hands: list[list[Any]]) -> list[list[int]]:
    out = []
    seen: dict[int, int] = {}
    for h in hands:
        faces = []
        for c in h:
            try:
                f = parse_card(c)
            except (GuandanError, TypeError, AttributeError):
                raise RecordError(line_no, f"deal event: bad card {c!r}") from None
            seen[f] = seen.get(f, 0) + 1
            if seen[f] > 2:
                raise RecordError(line_no, f"deal event: {card_text(f)} dealt more than twice (two decks, R1)")
            faces.append(f)
        out.append(faces)
    return out


def _first_difference(a: Any, b: Any) -> str:
    """Name of the first field where two events differ (for error messages)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a:
                return f"field {k!r} is not in the record"
            if k not in b:
                return f"field {k!r} is not produced by the replayed game"
            if _canon(a[k]) != _canon(b[k]):
                return f"{k} is {_canon(a[k])} in the record but {_canon(b[k])} in the replayed game"
    return f"recorded {_canon(a)}, replayed {_canon(b)}"


def replay_lines(
    lines: Sequence[str],
    on_event: Callable[[int, dict[str, Any], Game], None] | None = None,
) -> ReplayResult:
    """Replay and verify a record given as lines (see the module docstring for what is checked).

    Args:
        lines: the record's lines, header first (line ends removed).
        on_event: called as ``(line number, recorded event, game)`` after each event is verified
            (after the action is applied, for actions).
    Returns:
        A :class:`ReplayResult`.
    Raises:
        RecordError: a corrupt line (bad JSON, not an object, unknown event type, missing field,
            bad card), an illegal action (with the :class:`IllegalAction` reason), an event that
            differs from what the replayed game produces, or a record that ends before an event
            the game produced. The message names the line.
    """
    if not lines:
        raise RecordError(1, "empty record (no header)")
    header = _load(1, lines[0])
    rules = parse_header(1, header)
    events: list[tuple[int, dict[str, Any]]] = []
    deal_hands: dict[tuple[int, int], tuple[int, list[list[int]], list[list[str]]]] = {}
    for i, text in enumerate(lines[1:], 2):
        ev = _load(i, text)
        _check_event(i, ev)
        events.append((i, ev))
        if ev["type"] == "deal":
            deal_hands[(ev["game"], ev["deal"])] = (i, _parse_hands(i, ev["hands"]), ev["hands"])

    seed = header["seed"]
    no_seed = seed is None
    rng = _RecordedDraws(events) if no_seed else random.Random(seed)
    hint = " (the record has no seed, so the game's random draws cannot be reproduced)" if no_seed else ""

    def explicit_source(g: int, d: int) -> list[list[int]] | None:
        rec = deal_hands.get((g, d))
        if rec is None:
            return None  # the game shuffles; the deal event comparison reports the mismatch
        state = rng.getstate()
        shuffled = shuffle_deal(rng)
        if [[card_text(f) for f in h] for h in shuffled] == rec[2]:
            return shuffled  # this deal was shuffled from the seed in the original game too
        rng.setstate(state)
        return rec[1]

    current = 1
    try:
        game = Game(
            rules,
            seed=seed,
            rng=rng,
            hands=explicit_source if header["hands"] == "explicit" else None,
            first_leader=header["first_leader"],
            max_games=header["max_games"],
        )
        if isinstance(rng, _RecordedDraws):
            rng.game = game
        k = 0  # game events matched so far
        n_actions = 0
        for line_no, ev in events:
            current = line_no
            t = ev["type"]
            if t == "action":
                if k < len(game.events):
                    raise RecordError(
                        line_no, f"expected a {game.events[k]['type']} event before this action{hint}"
                    )
                seat = ev["seat"]
                try:
                    act = action_from_json(ev["action"])
                except (GuandanError, TypeError, AttributeError) as e:  # core raises AttributeError on non-strings
                    raise RecordError(line_no, f"malformed action {_canon(ev['action'])}: {e}") from None
                try:
                    game.check(act, seat)
                except IllegalAction as e:
                    raise RecordError(
                        line_no, f"illegal action by seat {seat} ({e.reason}): {_canon(ev['action'])}: {e}"
                    ) from None
                game.apply(act, seat)
                k += 1  # the game's own action event
                n_actions += 1
            else:
                if k >= len(game.events):
                    raise RecordError(line_no, f"unexpected {t} event: the replayed game produced none here{hint}")
                mine = game.events[k]
                if _canon(ev) != _canon(mine):
                    if mine.get("type") != t:
                        raise RecordError(
                            line_no, f"expected a {mine.get('type')} event, found {t}{hint}"
                        )
                    raise RecordError(line_no, f"{t} event differs: {_first_difference(ev, mine)}{hint}")
                k += 1
            if on_event is not None:
                on_event(line_no, ev, game)
        if k < len(game.events):
            raise RecordError(
                len(lines) + 1, f"record ends early: the replayed game produced a {game.events[k]['type']} event next"
            )
    except RecordError:
        raise
    except (GuandanError, ValueError) as e:  # e.g. a recorded hand holding a card three times
        raise RecordError(current, f"cannot replay: {e}") from None
    return ReplayResult(
        header=header,
        game=game,
        events=events,
        n_lines=len(lines),
        n_actions=n_actions,
        n_deals=sum(1 for _, ev in events if ev["type"] == "deal"),
        complete=game.over,
    )


class _RecordedDraws(random.Random):
    """The random draws of a game recorded without a seed, read back from its events.

    A game dealt by a generator that cannot be replayed (the operating system's CSPRNG, issue 11)
    is recorded with ``"seed": null`` and explicit hands; its other random draws are visible in
    the events: the first leader of a game's first deal (R51, the ``deal`` event's
    ``first_leader``) and the payer whose card goes to the 1st out on a double-tribute tie
    (AMB-04, the ``tribute_paid`` event). This generator answers those draws from the record, so
    such records replay exactly; any other draw falls back to ``random.Random(0)``.
    """

    def __init__(self, events: list[tuple[int, dict[str, Any]]]) -> None:
        super().__init__(0)
        #: the game being replayed (set once it exists; the first deal is dealt in its constructor)
        self.game: Game | None = None
        self.first_leaders: dict[tuple[int, int], int] = {}
        self.to_head: dict[tuple[int, int], int] = {}
        key = (1, 1)
        head: int | None = None
        for _, ev in events:
            t = ev.get("type")
            if t == "deal" and _is_int(ev.get("game")) and _is_int(ev.get("deal")):
                key = (ev["game"], ev["deal"])
                if _is_int(ev.get("first_leader")):
                    self.first_leaders[key] = ev["first_leader"]
            elif t == "deal_end" and isinstance(ev.get("finish_order"), list) and ev["finish_order"]:
                head = ev["finish_order"][0]
            elif t == "game_over":
                head = None
            elif t == "tribute_paid" and head is not None and isinstance(ev.get("tributes"), list):
                for row in ev["tributes"]:
                    if isinstance(row, list) and len(row) == 3 and row[1] == head:
                        self.to_head[key] = row[0]

    def _key(self) -> tuple[int, int]:
        g = self.game
        return (1, 1) if g is None else (g.game_number, g.deal_number)

    def randrange(self, *args: Any, **kwargs: Any) -> int:  # type: ignore[override]
        leader = self.first_leaders.get(self._key())  # R51 random_seat
        return leader if leader is not None else super().randrange(*args, **kwargs)

    def choice(self, seq: Any) -> Any:
        g = self.game
        if g is not None and g.deal.phase == "tribute" and g.deal.plan is not None:
            payer = self.to_head.get(self._key())  # AMB-04: the tie's winner
            if payer in seq:
                return payer
        leader = self.first_leaders.get(self._key())  # R51 turned_card: the holder of the card
        if leader is not None and leader in seq:
            return leader
        return super().choice(seq)


def replay(
    source: str | os.PathLike[str] | IO[str] | IO[bytes],
    on_event: Callable[[int, dict[str, Any], Game], None] | None = None,
) -> ReplayResult:
    """Read a record file and replay it (:func:`replay_lines`).

    Args:
        source: a path or an open file.
        on_event: see :func:`replay_lines`.
    Raises:
        OSError: the file cannot be read.
        RecordError: see :func:`replay_lines`.
    """
    return replay_lines(read_lines(source), on_event)


def iter_records(paths: Iterable[str | os.PathLike[str]]) -> Iterable[tuple[str, ReplayResult | RecordError]]:
    """Replay several records; yields ``(path, result or the RecordError)``. ``OSError`` propagates."""
    for p in paths:
        try:
            yield str(p), replay(p)
        except RecordError as e:
            yield str(p), e


__all__ = [
    "EVENT_FIELDS",
    "FORMAT",
    "VERSION",
    "RecordError",
    "ReplayResult",
    "dumps",
    "iter_records",
    "parse_header",
    "read_lines",
    "record_header",
    "record_lines",
    "replay",
    "replay_lines",
    "write_record",
]
