"""Reading and replaying records (:mod:`guandan.records`): every action re-applied through the rules
engine, every other event compared with the one the replayed game produces."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from guandan.core.cards import card_text, parse_card, parse_rank
from guandan.core.errors import GuandanError, IllegalAction, RuleConfigError
from guandan.core.match import Game, action_from_json, shuffle_deal
from guandan.core.rules import RuleSet

from .writer import _OPTIONAL_FIELDS, ADDED_FIELDS, EVENT_FIELDS, FORMAT, HANDS_KINDS, VERSION, RecordError, _canon, _is_int



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


def _as_old(mine: dict[str, Any], recorded: dict[str, Any]) -> dict[str, Any]:
    """``mine`` without the :data:`~guandan.records.writer.ADDED_FIELDS` that ``recorded`` lacks (a
    record written before the field existed still replays)."""
    added = [k for k in ADDED_FIELDS.get(str(mine.get("type")), ()) if k in mine and k not in recorded]
    if not added:
        return mine
    return {k: v for k, v in mine.items() if k not in added}


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


class RecordedDraws(random.Random):
    """The random draws of a record without a seed, answered from what the record shows.

    A game dealt by a generator whose state cannot be stored (the web server shuffles with
    ``secrets.SystemRandom``) is recorded with ``"seed": null`` and ``"hands": "explicit"``: every
    deal's hands are in its ``deal`` event. Its other random draws are visible in the events too,
    and replay takes them from there, in the order the game draws them:

    * the first leader of a game (R51): ``first_leader`` of the game's first ``deal`` event, drawn
      by ``randrange(4)`` (``random_seat``) or ``choice`` over the ``(seat, card)`` pairs
      (``turned_card``; the pair with the recorded ``turned_card``, or any card of the leader in a
      record written before the card was recorded);
    * the level of a ``single_deal`` game: ``randrange(13)``, the first ``deal`` event's ``level``;
    * the random allocation of two equal double tributes (R46, AMB-04 Anhui): ``choice((a, b))``
      where ``a`` is the head's 下家; the ``tribute_paid`` event says who paid the head.

    :func:`replay_lines` sets :attr:`current` to ``(game, deal)`` at each new deal. A draw the
    record does not answer falls back to ``random.Random(0)``; the event comparison of the replay
    then reports the difference.

    Args:
        events: the record's events (dicts, header excluded), in order.
    """

    def __init__(self, events: Iterable[dict[str, Any]]) -> None:
        super().__init__(0)
        #: ``(game number, deal number)`` of the deal being replayed
        self.current: tuple[int, int] = (1, 1)
        self.leaders: dict[tuple[int, int], int] = {}
        self.paid_to: dict[tuple[int, int], dict[int, int]] = {}
        self.turned: dict[tuple[int, int], int] = {}
        self.levels: dict[tuple[int, int], int] = {}
        where = (1, 1)
        for ev in events:
            if ev.get("type") == "deal":
                where = (ev.get("game"), ev.get("deal"))  # type: ignore[assignment]
                lead = ev.get("first_leader")
                if isinstance(lead, int) and not isinstance(lead, bool) and 0 <= lead <= 3:
                    self.leaders[where] = lead
                for key, store, parse in (("turned_card", self.turned, parse_card), ("level", self.levels, parse_rank)):
                    try:
                        store[where] = parse(ev.get(key))
                    except (GuandanError, TypeError, AttributeError):
                        pass
            elif ev.get("type") == "tribute_paid" and isinstance(ev.get("tributes"), list):
                self.paid_to[where] = {
                    t[0]: t[1] for t in ev["tributes"] if isinstance(t, list) and len(t) == 3
                }

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        """The recorded first leader for ``randrange(4)`` at a game's first deal; else ``Random(0)``'s draw."""
        if stop is None and step == 1 and start == 13 and self.current in self.levels:
            return self.levels[self.current]  # single_deal's level (Game draws it before the first deal)
        lead = self.leaders.get(self.current)
        if stop is None and step == 1 and lead is not None and lead < start:
            return lead
        return super().randrange(start, stop, step)

    def choice(self, seq: Sequence[Any]) -> Any:
        """The recorded outcome of a random double-tribute tie or of the turned card (see the class)."""
        items = list(seq)
        paid = self.paid_to.get(self.current)
        if len(items) == 2 and paid and all(p in paid for p in items):
            a = items[0]  # the head's 下家 (Deal passes (head + 1, head + 3)); head = a - 1
            return a if paid[a] == (a + 3) % 4 else items[1]
        lead = self.leaders.get(self.current)
        if lead is not None and items and isinstance(items[0], tuple):  # the turned card (R51)
            card = self.turned.get(self.current)
            for item in items:
                if item[0] == lead and (card is None or item[1] == card):
                    return item
        if lead is not None and lead in items:
            return lead
        return super().choice(seq)


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
    # a record without a seed (a server game dealt by a CSPRNG) answers its draws itself
    rng: random.Random = RecordedDraws(ev for _, ev in events) if no_seed else random.Random(seed)
    hint = " (the record has no seed, so the game's random draws cannot be reproduced)" if no_seed else ""

    def explicit_source(g: int, d: int) -> list[list[int]] | None:
        rec = deal_hands.get((g, d))
        if isinstance(rng, RecordedDraws):
            rng.current = (g, d)
            return None if rec is None else rec[1]
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
                if t == "time_called" and k >= len(game.events) and not game.over and not game.time_called:
                    game.call_time(play_deal=ev.get("play_deal") is True)  # R58: the match clock ran out here
                if k >= len(game.events):
                    raise RecordError(line_no, f"unexpected {t} event: the replayed game produced none here{hint}")
                if no_seed and t == "deal" and "turned_card" in game.events[k] and "turned_card" not in ev:
                    # a record without seed from before the card was recorded: RecordedDraws gave the
                    # leader one of its cards, not the card turned (R51); the game shows none
                    game.turned = None
                    game.events[k] = {x: v for x, v in game.events[k].items() if x != "turned_card"}
                mine = _as_old(game.events[k], ev)
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
