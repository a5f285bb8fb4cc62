"""Duplicate boards: a fixed deal that many players play (issue 22; DESIGN.md section 6).

A :class:`Board` fixes everything a deal starts from:

* the 108 cards by seat (27 each, R1/R4), as dealt, before any tribute;
* the deal's level and both teams' levels (R6, R7: at 2 with both teams at 2 for a deal without
  tribute, a game's first deal; else the level of the team that supplied the previous 头游);
* the rule set (the preset and every option, docs/rules.md section P);
* either the first leader of a deal without tribute (the first deal of a game, R43, R51), or the
  tribute situation (:class:`BoardTribute`): the previous deal's result (who pays, R44), and the
  cards already paid and returned (R45-R47), or an anti-tribute that follows from the hands (R48).
  A board with tribute starts after the exchange: the cards are already exchanged when the first
  player acts, and the exchange is public to all four seats (R50).

Playing a board is playing that one deal from that position (:func:`play_board`); its result for
a side (:func:`side_result`) is the deal's outcome in levels under the board's preset (R35:
``+3/+2/+1`` for the winning team, ``-3/-2/-1`` for the other with the official table), or the
Anhui per-deal points when the preset counts points (section 2.1, seed 000: ``±4/±2/±1``).

JSON (:meth:`Board.to_json` / :meth:`Board.from_json`), versioned::

    {"format": "pyguandan-board", "version": 1, "number": 3, "preset": "official",
     "options": {...every RuleSet option...}, "level": "7", "levels": ["7", "4"],
     "hands": [["2S", ...27 cards], [...], [...], [...]], "first_leader": 1,
     "tribute": null | {"prev_finish": [2, 0, 3, 1], "prev_rest": [0, 0, 0, 5],
                        "tributes": [[1, 2, "AS"]], "returns": [[2, 1, "4D"]]}}

``tributes`` lists ``[payer, receiver, card]`` and ``returns`` ``[receiver, target, card]``, the
same triples as the records' ``tribute_paid`` / ``returns_revealed`` events; both are empty after
an anti-tribute. The reader coerces nothing (:meth:`Board.from_json`): a value of the wrong JSON
type, length or range is a :class:`BoardError` naming the field.

Board sets (:func:`deal_board_set`) are dealt from the operating system's secure random source
(:class:`secrets.SystemRandom`) unless a seed is given (tests and bots only): a published day's
boards are not derivable from anything public.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from guandan.agents.base import Agent
from guandan.agents.heuristic import HeuristicAgent
from guandan.core.cards import FACE_RANK, N_FACES, card_text, parse_card, parse_rank, rank_char
from guandan.core.deal import PLAY, RETURN, TRIBUTE, DealResult, deal_outcome, partner
from guandan.core.errors import GuandanError, RuleConfigError
from guandan.core.match import Game, shuffle_deal, turned_card_leader
from guandan.core.plays import RETURN_TYPE, TRIBUTE_TYPE, PlayT
from guandan.core.rules import RuleSet
from guandan.core.scoring import anhui_points, upgrade_for
from guandan.core.views import seat_view

BOARD_FORMAT = "pyguandan-board"
BOARD_VERSION = 1
#: Cards each seat is dealt (R4).
HAND_SIZE = 27

__all__ = [
    "BOARD_FORMAT", "BOARD_VERSION", "Board", "BoardError", "BoardPlay", "BoardTribute", "OneDealGame",
    "deal_board", "deal_board_set", "play_board", "side_result",
]


class BoardError(GuandanError):
    """A board that is malformed or cannot start (bad cards, levels, tribute that does not
    follow R44-R49). A ``ValueError``."""


# -- reading JSON values without coercion (Board.from_json) ------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _kind(v: Any) -> str:
    return {bool: "a bool", int: "an int", float: "a float", str: "a string", list: "a list",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)


def _field(name: str, message: str) -> BoardError:
    return BoardError(f"board field {name!r}: {message}")


def _get(data: dict[str, Any], key: str, prefix: str = "") -> Any:
    if key not in data:
        raise _field(prefix + key, "missing")
    return data[key]


def _int_list(data: dict[str, Any], key: str, prefix: str, lo: int, hi: int) -> list[int]:
    v = _get(data, key, prefix)
    if not isinstance(v, list):
        raise _field(prefix + key, f"must be a list of ints, not {_kind(v)}")
    for i, x in enumerate(v):
        if not _is_int(x) or not lo <= x <= hi:
            raise _field(f"{prefix}{key}[{i}]", f"must be an int {lo}..{hi}, not {_kind(x)} {x!r}")
    return v


def _card(v: Any, name: str) -> int:
    if not isinstance(v, str):
        raise _field(name, f"a card is a string such as 'TH' or 'BJ', not {_kind(v)} {v!r}")
    try:
        return parse_card(v)
    except GuandanError:
        raise _field(name, f"unknown card {v!r} (rank then suit, e.g. TH, AS, 7D; jokers SJ and BJ)") from None


def _level(v: Any, name: str) -> int:
    if not isinstance(v, str):
        raise _field(name, f"a level is a rank string '2'..'9', 'T', 'J', 'Q', 'K', 'A', not {_kind(v)} {v!r}")
    try:
        r = parse_rank(v)
    except GuandanError:
        r = -1
    if not 0 <= r <= 12:
        raise _field(name, f"a level is one of 2-9 T J Q K A (R6), not {v!r}")
    return r


def _same_json(given: Any, want: Any) -> bool:
    """``given`` is ``want`` with ``want``'s JSON type: a bool is not a number, a string is not
    an int, a float is not an int (an int may stand for a float: ``60`` seconds)."""
    if isinstance(want, bool) or isinstance(given, bool):
        return type(given) is type(want) and given == want
    if isinstance(want, float):
        return isinstance(given, (int, float)) and given == want
    if isinstance(want, list):
        return (isinstance(given, list) and len(given) == len(want)
                and all(_same_json(x, y) for x, y in zip(given, want)))
    return type(given) is type(want) and given == want


@dataclass(frozen=True)
class BoardTribute:
    """The tribute situation a board starts from (R44-R49).

    Attributes:
        prev_finish: the previous deal's finishing order (two seats for a 1-2, else four, R33);
            it says who pays whom (R44) and who would lead after an anti-tribute (R49).
        prev_rest: cards each seat still held when the previous deal ended (R46 under
            ``double_tribute_by = remaining_cards``): 0 for the seats that went out, 1-27 for
            the seats still holding cards when the deal ended (R33: the 末游 of a 1-3 or 1-4,
            both losers of a 1-2).
        tributes: ``(payer, receiver, face)`` per tribute paid; empty after an anti-tribute.
        returns: ``(receiver, target, face)`` per return; empty after an anti-tribute.

    Which cards are paid and returned, and by whom, is checked against the hands when the board
    starts (:meth:`Board.start_game`, R44-R49); here only their shape is.
    """

    prev_finish: tuple[int, ...]
    prev_rest: tuple[int, int, int, int] = (0, 0, 0, 0)
    tributes: tuple[tuple[int, int, int], ...] = ()
    returns: tuple[tuple[int, int, int], ...] = ()

    def prev_result(self) -> DealResult:
        """The previous deal's :class:`DealResult` (R33).

        Raises:
            BoardError: ``prev_finish`` is not a finished deal's order, or ``prev_rest`` does not
                match it (R33), or a tribute or return is not ``(seat, seat, face)``.
        """
        fo = list(self.prev_finish)
        if not all(_is_int(s) and s in (0, 1, 2, 3) for s in fo) or len(set(fo)) != len(fo):
            raise BoardError(f"prev_finish must list distinct seats 0-3, not {fo!r}")
        res = deal_outcome(fo)
        if len(fo) not in (2, 4) or res is None or res.finish_order != tuple(fo):
            raise BoardError(f"prev_finish {fo!r} is not the order of a finished deal (R33)")
        rest = tuple(self.prev_rest)
        if len(rest) != 4 or not all(_is_int(n) for n in rest):
            raise BoardError(f"prev_rest must be four card counts, not {self.prev_rest!r}")
        out = fo if len(fo) == 2 else fo[:3]  # the seats that went out (R33)
        for seat, n in enumerate(rest):
            if seat in out and n != 0:
                raise BoardError(f"prev_rest: seat {seat} went out in the previous deal, so it held 0 cards, not {n} (R33)")
            if seat not in out and not 1 <= n <= HAND_SIZE:
                raise BoardError(f"prev_rest: seat {seat} still held cards when the previous deal ended (R33), "
                                 f"1-{HAND_SIZE}, not {n}")
        for name, rows in (("tributes", self.tributes), ("returns", self.returns)):
            for row in rows:
                if (len(row) != 3 or not all(_is_int(x) and x in (0, 1, 2, 3) for x in row[:2])
                        or not _is_int(row[2]) or not 0 <= row[2] < N_FACES):
                    raise BoardError(f"{name}: each is (seat, seat, face), not {row!r}")
        if len(self.tributes) != len(self.returns):
            raise BoardError("one return per tribute paid (R47): "
                             f"{len(self.tributes)} tribute(s), {len(self.returns)} return(s)")
        return DealResult(res.finish_order, rest)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the module docstring (cards in text notation)."""
        return {
            "prev_finish": list(self.prev_finish),
            "prev_rest": list(self.prev_rest),
            "tributes": [[p, r, card_text(f)] for p, r, f in self.tributes],
            "returns": [[r, t, card_text(f)] for r, t, f in self.returns],
        }

    @classmethod
    def from_json(cls, data: Any) -> BoardTribute:
        """Inverse of :meth:`to_json`.

        Every value must have its JSON type (seats and counts ints, never strings, bools or
        floats; cards strings in card notation); nothing is coerced.

        Raises:
            BoardError: a missing field or a value of the wrong type, length or range, naming
                the field (``tribute.prev_finish`` ...).
        """
        if not isinstance(data, dict):
            raise _field("tribute", f"must be null or an object, not {_kind(data)}")
        finish = _int_list(data, "prev_finish", "tribute.", 0, 3)
        if len(finish) not in (2, 4):
            raise _field("tribute.prev_finish", f"lists 2 seats (a 1-2) or 4, not {len(finish)}")
        rest = _int_list(data, "prev_rest", "tribute.", 0, HAND_SIZE)
        if len(rest) != 4:
            raise _field("tribute.prev_rest", f"lists 4 card counts, not {len(rest)}")
        triples = []
        for key in ("tributes", "returns"):
            rows = _get(data, key, "tribute.")
            if not isinstance(rows, list):
                raise _field(f"tribute.{key}", f"must be a list, not {_kind(rows)}")
            out = []
            for i, row in enumerate(rows):
                name = f"tribute.{key}[{i}]"
                if not isinstance(row, list) or len(row) != 3:
                    raise _field(name, f"must be [seat, seat, card], not {row!r}")
                for j in (0, 1):
                    if not _is_int(row[j]) or row[j] not in (0, 1, 2, 3):
                        raise _field(f"{name}[{j}]", f"must be a seat 0-3 (an int), not {row[j]!r}")
                out.append((row[0], row[1], _card(row[2], f"{name}[2]")))
            triples.append(tuple(out))
        t = cls(tuple(finish), (rest[0], rest[1], rest[2], rest[3]), triples[0], triples[1])
        try:
            t.prev_result()
        except BoardError as e:
            raise _field("tribute", str(e)) from None
        return t


class _BoardDraws(random.Random):
    """The one random draw a board's start can meet, answered by the board: who takes the head's
    tribute when two equal tributes are shared out at random (R46, AMB-04 under Anhui)."""

    def __init__(self, tributes: Sequence[tuple[int, int, int]], head: int | None) -> None:
        super().__init__(0)
        self._to = {p: r for p, r, _f in tributes}
        self._head = head

    def choice(self, seq: Sequence[Any]) -> Any:
        items = list(seq)
        if len(items) == 2 and all(p in self._to for p in items):
            for p in items:
                if self._to[p] == self._head:
                    return p
        return super().choice(seq)


@dataclass(frozen=True)
class Board:
    """One duplicate board (module docstring).

    Args:
        number: the board's number in its set (1-based).
        rules: the rule set the board is played under.
        hands: four hands of 27 faces each, the 108 cards (R1, R4), before any tribute.
        level: the deal's level (rank index 0..12), one of ``levels`` (R7).
        levels: team levels ``(team02, team13)`` (rank indices).
        first_leader: the seat that leads the first trick of the play phase (R49, R51). With a
            tribute it must be the seat R49 names (checked by :meth:`start_game`).
        tribute: the tribute situation, or ``None`` (no tribute: a game's first deal, R43).
        preset: the preset name stored with the board (informational; ``options`` rule).

    The levels follow R7: a board without tribute is a game's first deal (R43, R42/AMB-28), so
    both teams are at 2 and the deal is played at 2 (``level == 0``, ``levels == (0, 0)``,
    EC-46); a board with tribute (or an anti-tribute, R48) is a later deal, played at the level
    of the team that supplied 头游 in the previous deal (``level == levels[prev_finish[0] % 2]``).

    Raises:
        BoardError: a number below 1, not 108 cards, not 27 per seat, a bad leader, levels
            against R7, or a tribute situation whose shape is wrong (:meth:`BoardTribute.prev_result`).
    """

    number: int
    rules: RuleSet
    hands: tuple[tuple[int, ...], ...]
    level: int
    levels: tuple[int, int]
    first_leader: int
    tribute: BoardTribute | None = None
    preset: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not _is_int(self.number) or self.number < 1:
            raise BoardError(f"number must be an int >= 1, not {self.number!r}")
        if len(self.hands) != 4 or any(len(h) != HAND_SIZE for h in self.hands):
            raise BoardError(f"a board deals {HAND_SIZE} cards to each of four seats (R4)")
        counts = [0] * N_FACES
        for h in self.hands:
            for f in h:
                if not _is_int(f) or not 0 <= f < N_FACES:
                    raise BoardError(f"bad face {f!r}")
                counts[f] += 1
        extra = next((f for f in range(N_FACES) if counts[f] > 2), None)
        if extra is not None:
            raise BoardError(f"hands: {card_text(extra)} dealt {counts[extra]} times; two decks hold 2 of each card (R1)")
        if counts != [2] * N_FACES:
            raise BoardError("a board holds the 108 cards of two decks exactly (R1)")
        if len(self.levels) != 2 or not all(_is_int(x) and 0 <= x <= 12 for x in self.levels):
            raise BoardError(f"levels must be two rank indices 0..12, not {self.levels!r}")
        if not _is_int(self.level) or not 0 <= self.level <= 12:
            raise BoardError(f"level must be a rank index 0..12, not {self.level!r}")
        if self.first_leader not in (0, 1, 2, 3) or isinstance(self.first_leader, bool):
            raise BoardError(f"first_leader must be a seat 0-3, not {self.first_leader!r}")
        shown = (f"level {rank_char(self.level)} with team levels "
                 f"{rank_char(self.levels[0])}/{rank_char(self.levels[1])}")
        if self.tribute is None:
            if self.level != 0 or tuple(self.levels) != (0, 0):
                raise BoardError("a board without tribute is a game's first deal: both teams at level 2 and the "
                                 f"deal at level 2 (R7, R43), not {shown}")
            return
        if not isinstance(self.tribute, BoardTribute):
            raise BoardError(f"tribute must be a BoardTribute or None, not {self.tribute!r}")
        head = self.tribute.prev_result().first
        if self.level != self.levels[head & 1]:
            raise BoardError(f"after a deal won by seat {head} (头游) the deal is played at its team's level "
                             f"{rank_char(self.levels[head & 1])} (R7), not {shown}")

    # -- starting the deal -------------------------------------------------------------------
    def start_game(self, *, one_deal: bool = False) -> Game:
        """A :class:`~guandan.core.match.Game` at the start of the board's play phase: the deal
        dealt, the board's tribute paid and returned (or the anti-tribute shown), the first
        leader to act. Its events hold the deal, tribute and return actions like any game's.

        Args:
            one_deal: a :class:`OneDealGame`, over when the board's deal ends (a table that
                plays the board, the daily challenge); else a game that deals on after it.
        Raises:
            BoardError: the tribute does not follow from the previous result and the hands
                (R44-R49), or the leader is not the one R49 names.
        """
        t = self.tribute
        prev = t.prev_result() if t is not None else None
        draws = _BoardDraws(t.tributes if t else (), prev.first if prev else None)
        try:
            game = (OneDealGame if one_deal else Game).from_start(
                self.rules, self.hands, self.level, self.levels, prev=prev,
                                   first_leader=None if t is not None else self.first_leader, rng=draws)
        except (GuandanError, ValueError) as e:
            raise BoardError(f"board {self.number} cannot start: {e}") from None
        if t is not None:
            self._exchange(game, t)
        if game.phase != PLAY or game.to_act() != self.first_leader:
            raise BoardError(
                f"board {self.number}: the play phase starts with seat {game.to_act()}, "
                f"not the board's first leader {self.first_leader} (R49)")
        return game

    def _exchange(self, game: Game, t: BoardTribute) -> None:
        plan = game.deal.plan
        assert plan is not None
        if plan.anti_tribute:
            if t.tributes or t.returns:
                raise BoardError(f"board {self.number}: the payers hold both big jokers (R48): no tribute")
            return
        paid = {p: f for p, _r, f in t.tributes}
        returned = {r: f for r, _t, f in t.returns}
        try:
            while game.phase in (TRIBUTE, RETURN):
                seat = game.to_act()
                assert seat is not None
                if game.phase == TRIBUTE:
                    f = paid[seat]
                    game.apply((TRIBUTE_TYPE, FACE_RANK[f], (f,)), seat)
                else:
                    f = returned[seat]
                    game.apply((RETURN_TYPE, FACE_RANK[f], (f,)), seat)
        except KeyError as e:
            raise BoardError(f"board {self.number}: seat {e.args[0]} must pay or return a card (R44, R47)") from None
        except GuandanError as e:
            raise BoardError(f"board {self.number}: {e}") from None
        want_to = {p: r for p, r, _f in t.tributes}
        if plan.to != want_to or len(paid) != len(t.tributes):
            raise BoardError(f"board {self.number}: the tributes go {plan.to}, not {want_to} (R46)")
        if sorted(plan.returns_due) != sorted((r, tg) for r, tg, _f in t.returns):
            raise BoardError(f"board {self.number}: the returns go {plan.returns_due} (R47)")

    # -- JSON --------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The versioned JSON object of the module docstring."""
        return {
            "format": BOARD_FORMAT,
            "version": BOARD_VERSION,
            "number": self.number,
            "preset": self.preset if self.preset is not None else self.rules.preset_name(),
            "options": self.rules.to_dict(),
            "level": rank_char(self.level),
            "levels": [rank_char(x) for x in self.levels],
            "hands": [[card_text(f) for f in h] for h in self.hands],
            "first_leader": self.first_leader,
            "tribute": None if self.tribute is None else self.tribute.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any, *, check: bool = True) -> Board:
        """Read a board written by :meth:`to_json`.

        Every value must have the JSON type :meth:`to_json` writes; nothing is coerced: ``number``
        and ``first_leader`` are ints (not strings, bools or floats), ``level`` and ``levels``
        rank strings, ``hands`` four lists of 27 card strings holding the 108 cards of two decks
        (R1, R4), ``options`` an object of option values of their own types (``[3, 2, 1]``, not
        ``"3/2/1"``; ``true``, not ``1``), ``preset`` a string or null, ``tribute`` null or the
        object of :meth:`BoardTribute.from_json`. The board's own checks follow (R7 levels,
        :class:`Board`), then, with ``check``, the start of the deal.

        Args:
            data: the JSON object (a dict).
            check: also start the deal (:meth:`start_game`) to check the tribute and leader.
        Raises:
            BoardError: another format or version; a missing field or a value of the wrong type,
                length or range, an unknown card or a card dealt more than twice, naming the
                field (``hands[2][5]``, ``levels``, ``options.streaks`` ...); levels against R7;
                with ``check``, a tribute or leader against R44-R49.
        """
        if not isinstance(data, dict) or data.get("format") != BOARD_FORMAT:
            raise BoardError("not a pyguandan board")
        version = data.get("version")
        if not _is_int(version) or version != BOARD_VERSION:
            raise BoardError(f"unsupported board version {version!r} (this reader reads {BOARD_VERSION})")
        number = _get(data, "number")
        if not _is_int(number) or number < 1:
            raise _field("number", f"must be an int >= 1, not {_kind(number)} {number!r}")
        leader = _get(data, "first_leader")
        if not _is_int(leader) or leader not in (0, 1, 2, 3):
            raise _field("first_leader", f"must be a seat 0-3 (an int), not {_kind(leader)} {leader!r}")
        level = _level(_get(data, "level"), "level")
        levels = _get(data, "levels")
        if not isinstance(levels, list) or len(levels) != 2:
            raise _field("levels", f"must be a list of the two team levels, not {levels!r}")
        team_levels = (_level(levels[0], "levels[0]"), _level(levels[1], "levels[1]"))
        preset = data.get("preset")
        if preset is not None and not isinstance(preset, str):
            raise _field("preset", f"must be a string or null, not {_kind(preset)} {preset!r}")
        options = _get(data, "options")
        if not isinstance(options, dict):
            raise _field("options", f"must be an object of rule options, not {_kind(options)}")
        for key, value in options.items():
            try:
                RuleSet.from_dict({key: value})
            except RuleConfigError as e:
                raise _field(f"options.{key}", str(e)) from None
        try:
            rules = RuleSet.from_dict(options)
        except RuleConfigError as e:
            raise _field("options", str(e)) from None
        typed = rules.to_dict()
        for key, value in options.items():
            if not _same_json(value, typed[key]):
                raise _field(f"options.{key}", f"must be written as {typed[key]!r} ({_kind(typed[key])}), "
                                               f"not {_kind(value)} {value!r}")
        raw = _get(data, "hands")
        if not isinstance(raw, list) or len(raw) != 4:
            raise _field("hands", f"must be a list of four hands (R4), not {_kind(raw)}"
                         + (f" of {len(raw)}" if isinstance(raw, list) else ""))
        hands = []
        seen = [0] * N_FACES
        for seat, hand in enumerate(raw):
            if not isinstance(hand, list) or len(hand) != HAND_SIZE:
                got = f"{len(hand)} cards" if isinstance(hand, list) else _kind(hand)
                raise _field(f"hands[{seat}]", f"must be a list of {HAND_SIZE} cards (R4), not {got}")
            faces = []
            for i, c in enumerate(hand):
                f = _card(c, f"hands[{seat}][{i}]")
                seen[f] += 1
                if seen[f] > 2:
                    raise _field(f"hands[{seat}][{i}]", f"{c} is dealt a third time; two decks hold 2 of each card (R1)")
                faces.append(f)
            hands.append(tuple(sorted(faces)))
        tribute = _get(data, "tribute")
        board = cls(
            number=number,
            rules=rules,
            hands=tuple(hands),
            level=level,
            levels=team_levels,
            first_leader=leader,
            tribute=None if tribute is None else BoardTribute.from_json(tribute),
            preset=preset,
        )
        if check:
            board.start_game()
        return board


# -- a game of one deal -------------------------------------------------------------------------


class OneDealGame(Game):
    """A game that is over as soon as its deal ends (a board is one deal, scored on its own).

    The deal's ``deal_end`` event is the last event: no next deal is dealt and no ``game_over``
    event follows, even when the deal passes A (R37): a board's result is
    :func:`side_result`, not a game's winner, so :attr:`winner` stays ``None``. The finished
    deal stays :attr:`deal` (its hands left, finishing order and result can be read).
    """

    _ending = False

    def _new_deal(self) -> None:
        if self._ending:
            return  # the board's deal ended: nothing is dealt after it
        super()._new_deal()

    def _settle(self) -> None:
        n = len(self.events)  # the deal_end event goes here
        self._ending = True
        super()._settle()
        del self.events[n + 1:]
        self.over = True
        self.winner = None


# -- results -------------------------------------------------------------------------------------


def side_result(rules: RuleSet, result: DealResult, team: int) -> int:
    """A finished deal's result for ``team`` (0: seats 0/2, 1: seats 1/3).

    Levels (R35, the preset's ``upgrade``: ``+3/+2/+1`` for 头游's team by where its partner
    finished, the negative for the other team); with ``rules.points`` (Anhui) the per-deal points
    of the team's seats instead (section 2.1: ``±4/±2/±1``). Caps at A (R36), passing A (R37)
    and streaks do not apply: a board is one deal scored on its own.

    Raises:
        ValueError: ``team`` is not 0 or 1.
    """
    if team not in (0, 1):
        raise ValueError(f"team must be 0 or 1, not {team!r}")
    if rules.points:
        return anhui_points(result)[team]  # seat ``team`` belongs to team ``team``
    up = upgrade_for(rules, result.finish_order)
    return up if result.winner_team == team else -up


# -- playing a board ---------------------------------------------------------------------------


@dataclass
class BoardPlay:
    """One play of a board.

    Attributes:
        board: the board.
        result: how the deal ended (R33).
        actions: ``(seat, action)`` of every play-phase action, in order.
        events: the game's events from the deal through its ``deal_end`` (record events).
    """

    board: Board
    result: DealResult
    actions: list[tuple[int, PlayT]]
    events: list[dict[str, Any]]

    def score(self, team: int) -> int:
        """:func:`side_result` of this play for ``team``."""
        return side_result(self.board.rules, self.result, team)


def play_board(
    board: Board,
    agents: Sequence[Agent],
    on_step: Callable[[Game, int, PlayT], None] | None = None,
    max_actions: int = 2_000,
) -> BoardPlay:
    """Play ``board``'s deal to its end with four agents (index = seat).

    The agents see seat views only (:func:`guandan.core.views.seat_view`); every action goes
    through :meth:`Game.apply` (checked). Deterministic agents give the same play every time.

    Raises:
        ValueError: not four agents, or the deal did not end within ``max_actions``.
        IllegalAction: an agent answered an illegal action.
    """
    if len(agents) != 4:
        raise ValueError("play_board needs four agents, one per seat")
    game = board.start_game()
    deal = game.deal
    actions: list[tuple[int, PlayT]] = []
    for _ in range(max_actions):
        if deal.result is not None:
            break
        seat = game.to_act()
        assert seat is not None
        act = game.apply(agents[seat].act(seat_view(game, seat)), seat)
        actions.append((seat, act))
        if on_step is not None:
            on_step(game, seat, act)
    else:
        raise ValueError(f"board {board.number} did not end within {max_actions} actions")
    assert deal.result is not None
    end = next(i for i, ev in enumerate(game.events) if ev["type"] == "deal_end")
    return BoardPlay(board, deal.result, actions, game.events[: end + 1])


# -- dealing boards ------------------------------------------------------------------------------


def deal_board(number: int, rules: RuleSet, rng: random.Random, tribute_share: float = 0.5,
               preset: str | None = None) -> Board:
    """Deal one board from ``rng``.

    Without tribute (probability ``1 - tribute_share``): a game's first deal, both teams at 2
    (R7, R43), the first leader by the preset's ``first_leader`` rule (R51). With tribute: a
    previous result drawn uniformly among 1-2, 1-3 and 1-4 with random seats, the other team's level
    drawn from 2..A and 头游's team's from the levels it can have just reached (2 + the result's
    upgrade under ``rules`` up to A, R35; the R41 fall back to 2 is not drawn), the deal played at
    the level of 头游's team (R7), and the tribute
    and return chosen by the heuristic player (:class:`~guandan.agents.heuristic.HeuristicAgent`,
    R45, R47), or an anti-tribute when the hands make one (R48).

    Raises:
        ValueError: ``tribute_share`` outside [0, 1].
    """
    if not 0.0 <= tribute_share <= 1.0:
        raise ValueError(f"tribute_share must be in [0, 1], not {tribute_share!r}")
    hands = [sorted(h) for h in shuffle_deal(rng)]
    if rng.random() >= tribute_share:
        if rules.first_leader == "turned_card":
            leader = turned_card_leader(hands, 0, rng)
        else:
            leader = rng.randrange(4)
        return Board(number, rules, tuple(tuple(h) for h in hands), 0, (0, 0), leader, None, preset)
    head = rng.randrange(4)
    mate = partner(head)
    losers = [(head + 1) % 4, (head + 3) % 4]
    rng.shuffle(losers)
    code = rng.randrange(3)
    rest = [0, 0, 0, 0]
    if code == 0:  # 1-2: both losers still hold cards
        finish: tuple[int, ...] = (head, mate)
        for s in losers:
            rest[s] = rng.randint(1, 15)
    elif code == 1:  # 1-3
        finish = (head, losers[0], mate, losers[1])
        rest[losers[1]] = rng.randint(1, 15)
    else:  # 1-4
        finish = (head, losers[0], losers[1], mate)
        rest[mate] = rng.randint(1, 15)
    team_levels = [rng.randrange(13), rng.randrange(13)]
    # 头游's team has just gone up by the result's upgrade from at least 2 (R35): at least 2 + upgrade
    team_levels[head & 1] = min(12, rules.upgrade[code] + team_levels[head & 1] * (13 - rules.upgrade[code]) // 13)
    level = team_levels[head & 1]
    prev = DealResult(finish, (rest[0], rest[1], rest[2], rest[3]))
    game = Game.from_start(rules, hands, level, team_levels, prev=prev, rng=random.Random(rng.random()))
    picker = HeuristicAgent(0)
    while game.phase in (TRIBUTE, RETURN):
        seat = game.to_act()
        assert seat is not None
        game.apply(picker.act(seat_view(game, seat)), seat)
    plan = game.deal.plan
    assert plan is not None
    tributes = tuple((p, r, plan.paid[p]) for p, r in plan.to.items())
    returns = tuple((r, t, plan.returned[r]) for r, t in plan.returns_due)
    leader = game.to_act()
    assert leader is not None
    tribute = BoardTribute(finish, (rest[0], rest[1], rest[2], rest[3]), tributes, returns)
    return Board(number, rules, tuple(tuple(h) for h in hands), level,
                 (team_levels[0], team_levels[1]), leader, tribute, preset)


def deal_board_set(n: int = 12, rules: RuleSet | None = None, *, seed: int | None = None,
                   tribute_share: float = 0.5, preset: str | None = None) -> list[Board]:
    """Deal ``n`` boards numbered 1..n (:func:`deal_board`).

    Args:
        n: number of boards (default 12, a day's challenge).
        rules: the rule set (default ``official``).
        seed: ``None`` (default): the operating system's secure random source
            (:class:`secrets.SystemRandom`), so the set cannot be derived from anything public;
            an int: a seeded ``random.Random`` (tests and bots only, never a published set).
        tribute_share: probability that a board starts after tribute.
        preset: preset name stored with the boards.
    Raises:
        ValueError: ``n`` < 1 or a bad ``tribute_share``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, not {n!r}")
    rules = rules or RuleSet.official()
    rng: random.Random = secrets.SystemRandom() if seed is None else random.Random(seed)
    return [deal_board(i, rules, rng, tribute_share, preset) for i in range(1, n + 1)]
