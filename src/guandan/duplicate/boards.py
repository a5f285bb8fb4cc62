"""Duplicate boards: a fixed deal that many players play (issue 22; DESIGN.md section 6).

A :class:`Board` fixes everything a deal starts from:

* the 108 cards by seat (27 each, R1/R4), as dealt, before any tribute;
* the deal's level and both teams' levels (R6, R7: the deal's level is one of the team levels);
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
an anti-tribute.

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
    "BOARD_FORMAT", "BOARD_VERSION", "Board", "BoardError", "BoardPlay", "BoardTribute",
    "deal_board", "deal_board_set", "play_board", "side_result",
]


class BoardError(GuandanError):
    """A board that is malformed or cannot start (bad cards, levels, tribute that does not
    follow R44-R49). A ``ValueError``."""


@dataclass(frozen=True)
class BoardTribute:
    """The tribute situation a board starts from (R44-R49).

    Attributes:
        prev_finish: the previous deal's finishing order (two seats for a 1-2, else four, R33);
            it says who pays whom (R44) and who would lead after an anti-tribute (R49).
        prev_rest: cards each seat still held when the previous deal ended (R46 under
            ``double_tribute_by = remaining_cards``; zeros otherwise are fine).
        tributes: ``(payer, receiver, face)`` per tribute paid; empty after an anti-tribute.
        returns: ``(receiver, target, face)`` per return; empty after an anti-tribute.
    """

    prev_finish: tuple[int, ...]
    prev_rest: tuple[int, int, int, int] = (0, 0, 0, 0)
    tributes: tuple[tuple[int, int, int], ...] = ()
    returns: tuple[tuple[int, int, int], ...] = ()

    def prev_result(self) -> DealResult:
        """The previous deal's :class:`DealResult` (R33).

        Raises:
            BoardError: ``prev_finish`` is not a finished deal's order.
        """
        fo = list(self.prev_finish)
        if sorted(set(fo)) != sorted(fo) or not all(s in (0, 1, 2, 3) for s in fo):
            raise BoardError(f"prev_finish must list distinct seats 0-3, not {fo!r}")
        res = deal_outcome(fo)
        if len(fo) not in (2, 4) or res is None or res.finish_order != tuple(fo):
            raise BoardError(f"prev_finish {fo!r} is not the order of a finished deal (R33)")
        if len(self.prev_rest) != 4 or not all(isinstance(n, int) and 0 <= n <= HAND_SIZE for n in self.prev_rest):
            raise BoardError(f"prev_rest must be four card counts, not {self.prev_rest!r}")
        return DealResult(res.finish_order, tuple(self.prev_rest))  # type: ignore[arg-type]

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

        Raises:
            BoardError: a missing field, a bad seat or card.
        """
        try:
            triples = []
            for key in ("tributes", "returns"):
                rows = tuple((int(a), int(b), parse_card(c)) for a, b, c in data[key])
                triples.append(rows)
            rest = tuple(int(n) for n in data["prev_rest"])
            return cls(tuple(int(s) for s in data["prev_finish"]), rest, triples[0], triples[1])  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError) as e:
            raise BoardError(f"bad tribute object: {e}") from None


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
    Raises:
        BoardError: not 108 cards, not 27 per seat, bad levels or leader.
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
        if len(self.hands) != 4 or any(len(h) != HAND_SIZE for h in self.hands):
            raise BoardError(f"a board deals {HAND_SIZE} cards to each of four seats (R4)")
        counts = [0] * N_FACES
        for h in self.hands:
            for f in h:
                if not isinstance(f, int) or isinstance(f, bool) or not 0 <= f < N_FACES:
                    raise BoardError(f"bad face {f!r}")
                counts[f] += 1
        if counts != [2] * N_FACES:
            raise BoardError("a board holds the 108 cards of two decks exactly (R1)")
        if len(self.levels) != 2 or not all(isinstance(x, int) and 0 <= x <= 12 for x in self.levels):
            raise BoardError(f"levels must be two rank indices 0..12, not {self.levels!r}")
        if self.level not in self.levels:
            raise BoardError(f"the deal's level must be one of the team levels (R7), not {self.level!r}")
        if self.first_leader not in (0, 1, 2, 3) or isinstance(self.first_leader, bool):
            raise BoardError(f"first_leader must be a seat 0-3, not {self.first_leader!r}")

    # -- starting the deal -------------------------------------------------------------------
    def start_game(self) -> Game:
        """A :class:`~guandan.core.match.Game` at the start of the board's play phase: the deal
        dealt, the board's tribute paid and returned (or the anti-tribute shown), the first
        leader to act. Its events hold the deal, tribute and return actions like any game's.

        Raises:
            BoardError: the tribute does not follow from the previous result and the hands
                (R44-R49), or the leader is not the one R49 names.
        """
        t = self.tribute
        prev = t.prev_result() if t is not None else None
        draws = _BoardDraws(t.tributes if t else (), prev.first if prev else None)
        try:
            game = Game.from_start(self.rules, self.hands, self.level, self.levels, prev=prev,
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

        Args:
            data: the JSON object (a dict).
            check: also start the deal (:meth:`start_game`) to check the tribute and leader.
        Raises:
            BoardError: another format or version, a missing or bad field.
        """
        if not isinstance(data, dict) or data.get("format") != BOARD_FORMAT:
            raise BoardError("not a pyguandan board")
        if data.get("version") != BOARD_VERSION:
            raise BoardError(f"unsupported board version {data.get('version')!r} (this reader reads {BOARD_VERSION})")
        try:
            rules = RuleSet.from_dict(data["options"])
            hands = tuple(tuple(sorted(parse_card(c) for c in h)) for h in data["hands"])
            board = cls(
                number=int(data["number"]),
                rules=rules,
                hands=hands,
                level=parse_rank(data["level"]),
                levels=(parse_rank(data["levels"][0]), parse_rank(data["levels"][1])),
                first_leader=int(data["first_leader"]),
                tribute=None if data["tribute"] is None else BoardTribute.from_json(data["tribute"]),
                preset=data.get("preset"),
            )
        except BoardError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, RuleConfigError) as e:
            raise BoardError(f"bad board: {type(e).__name__}: {e}") from None
        if check:
            board.start_game()
        return board


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
    previous result drawn uniformly among 1-2, 1-3 and 1-4 with random seats, the teams' levels
    drawn uniformly from 2..A, the deal played at the level of 头游's team (R7), and the tribute
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
