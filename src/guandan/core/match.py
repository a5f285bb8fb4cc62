"""A game (比赛 of one 2→target climb, R5): deals in sequence, levels, tribute between deals.

:class:`Game` is the object drivers hold. It answers one query, :meth:`Game.pending` (phase,
seat to act, legal actions), and has the three entry points :meth:`legal_actions`,
:meth:`check` (raises :class:`~guandan.core.errors.IllegalAction`) and :meth:`apply`
(always checks). When a deal ends the game settles it (:func:`~guandan.core.scoring.settle`)
and deals the next one at once; every step is appended to :attr:`Game.events`, the
JSON-ready event log that game records are made of.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import FACE_RANK, N_FACES, card_text, face_of, full_deck, rank_char, wild_face
from .deal import OVER, PLAY, Deal, DealResult, team_of
from .errors import GuandanError, IllegalAction, RuleConfigError
from .gather import gather_deal
from .plays import PlayT, classify
from .rules import RuleSet
from .scoring import MatchScore, Settlement, anhui_title, settle

GAME_OVER = "game_over"

#: A hand source: ``(game_number, deal_number) -> four face sequences``, or ``None`` to shuffle.
HandSource = Callable[[int, int], "Sequence[Sequence[int]] | None"]


@dataclass(frozen=True)
class Pending:
    """What the game waits for: ``phase`` (``tribute``, ``return``, ``play`` or ``game_over``),
    ``seat`` to act (``None`` when over) and that seat's legal ``actions``."""

    phase: str
    seat: int | None
    actions: list[PlayT]


def shuffle_deal(rng: random.Random) -> list[list[int]]:
    """Shuffle the 108 cards with ``rng`` and deal 27 to each seat (R4); faces, sorted."""
    deck = full_deck()
    rng.shuffle(deck)
    return [sorted(face_of(c) for c in deck[i * 27 : (i + 1) * 27]) for i in range(4)]


def turn_card(hands: Sequence[Sequence[int]], level: int, rng: random.Random) -> tuple[int, int | None]:
    """R51: turn a uniformly random non-joker, non-wild card of the deal; its holder leads.

    Args:
        hands: the four hands (faces). level: the deal's level (rank index, for the wild).
        rng: the game's randomness; one ``choice`` over the cards (the same draw as choosing among
            their holders, so a seed gives the same leader as before the card was recorded).
    Returns:
        ``(seat, face)``: the leader and the turned card; ``(randrange(4), None)`` when no hand
        holds such a card (puzzle hands only).
    """
    w = wild_face(level)
    pool = [(s, f) for s, h in enumerate(hands) for f in h if f < 52 and f != w]
    if not pool:
        return rng.randrange(4), None
    seat, face = rng.choice(pool)
    return seat, face


def turned_card_leader(hands: Sequence[Sequence[int]], level: int, rng: random.Random) -> int:
    """R51: the seat that leads by the turned card (:func:`turn_card`)."""
    return turn_card(hands, level, rng)[0]


class Game:
    """A whole game from level 2 until a team passes the target (R5-R7, R35-R42).

    Args:
        rules: rule options (default: ``official``).
        seed: seed of the game's ``random.Random`` (ignored when ``rng`` is given).
        rng: the injected source of all randomness (shuffles, first leader, random ties).
        hands: optional explicit hand source ``(game_number, deal_number) -> hands | None``;
            a sequence of four hands is accepted as the first deal's hands.
        first_leader: fixed first leader of each game's first deal (tests, puzzles); default R51.
        max_games: with ``after_target == "restart"``, how many games to play before stopping
            (``None``: until stopped by the driver).
        gather_rng: under ``no_shuffle``, the source of the gathered tricks' order and the cut
            (:mod:`guandan.core.gather`); default ``None``: a fresh :class:`secrets.SystemRandom`
            each deal, never the seeded ``rng`` (a seat must not predict the next hands). A
            no-shuffle game is therefore replayed from the hands its record holds.

    Under ``single_deal`` the game is one deal at a level drawn with ``rng.randrange(13)`` (both
    teams at that level, no tribute, R51 first leader); it ends after that deal, won by the team
    that won the deal.
    """

    def __init__(
        self,
        rules: RuleSet | None = None,
        *,
        seed: int | None = None,
        rng: random.Random | None = None,
        hands: HandSource | Sequence[Sequence[int]] | None = None,
        first_leader: int | None = None,
        max_games: int | None = 1,
        gather_rng: random.Random | None = None,
    ) -> None:
        if rules is not None and not isinstance(rules, RuleSet):
            raise RuleConfigError(f"rules must be a RuleSet (e.g. RuleSet.preset('official')), not {rules!r}")
        if max_games is not None and (isinstance(max_games, bool) or not isinstance(max_games, int) or max_games < 1):
            raise GuandanError(f"max_games must be a positive int or None, not {max_games!r}")
        if first_leader is not None and (isinstance(first_leader, bool) or first_leader not in (0, 1, 2, 3)):
            raise GuandanError(f"first_leader must be a seat 0-3, not {first_leader!r}")
        self.rules = rules or RuleSet.official()
        self.seed = seed
        self.rng = rng if rng is not None else random.Random(seed)
        #: whether hands were supplied (explicit deals) rather than all shuffled
        self.hands_given = hands is not None
        if hands is None or callable(hands):
            self._hand_source: HandSource | None = hands
        else:
            first = [list(h) for h in hands]
            self._hand_source = lambda g, d: first if (g, d) == (1, 1) else None
        self.fixed_first_leader = first_leader
        self.max_games = max_games
        self.score = MatchScore()
        self.game_number = 1
        self.deal_number = 0
        self.games_won = [0, 0]
        self.winner: int | None = None  # team that passed the target in the last game
        self.over = False
        #: R58: the match clock ran out (:meth:`call_time`); the game ends with the deal in progress
        self.time_called = False
        self.events: list[dict[str, Any]] = []
        self.settlements: list[Settlement] = []
        self.level = 0
        self._prev: DealResult | None = None
        self.gather_rng = gather_rng
        #: under ``no_shuffle``: the current deal's tricks as groups of faces (gather.py step 1)
        self._groups: list[list[int]] = []
        self._prev_groups: list[list[int]] = []
        #: R51: ``(seat, face)`` of the card turned for the current game's first deal, or ``None``
        self.turned: tuple[int, int] | None = None
        self.deal: Deal
        if self.rules.single_deal:
            self.level = self.rng.randrange(13)  # single_deal: one deal at a random level
            self.score.levels = [self.level, self.level]
        self._new_deal()

    # -- deals -----------------------------------------------------------------------------
    def _new_deal(self) -> None:
        self.deal_number += 1
        hands = None
        if self._hand_source is not None:
            hands = self._hand_source(self.game_number, self.deal_number)
        if hands is None:
            if self.rules.no_shuffle and self._prev is not None and self._prev_groups:
                hands = gather_deal(self._prev_groups, self.gather_rng)
            else:
                hands = shuffle_deal(self.rng)
        hands = [sorted(h) for h in hands]
        self._groups = []
        level = self.level
        leader = None
        turned: int | None = None
        if self._prev is None:
            self.turned = None
            if self.fixed_first_leader is not None:
                leader = self.fixed_first_leader
            elif self.rules.first_leader == "turned_card":
                leader, turned = turn_card(hands, level, self.rng)
                if turned is not None:
                    self.turned = (leader, turned)
            else:
                leader = self.rng.randrange(4)
        self.deal = Deal(self.rules, level, hands, self.rng, prev=self._prev, first_leader=leader)
        ev: dict[str, Any] = {
            "type": "deal",
            "game": self.game_number,
            "deal": self.deal_number,
            "level": rank_char(level),
            "levels": [rank_char(x) for x in self.score.levels],
            "hands": [[_txt(f) for f in h] for h in hands],
        }
        plan = self.deal.plan
        if plan is None:
            ev["first_leader"] = leader
            if turned is not None:
                ev["turned_card"] = _txt(turned)  # R51: the card turned face up; its holder leads
        #: index in :attr:`events` of the current deal's ``deal`` event
        self.deal_event_index = len(self.events)
        self.events.append(ev)
        if plan is not None and plan.anti_tribute:
            self.events.append(
                {"type": "anti_tribute", "seats": list(plan.anti_seats), "leader": plan.first_leader}
            )

    def _after_action(self, seat: int, act: PlayT, phase: str) -> None:
        ev: dict[str, Any] = {"type": "action", "seat": seat, "action": action_to_json(act)}
        self.events.append(ev)
        deal = self.deal
        if phase == PLAY and act[0] != "pass" and self.rules.no_shuffle:
            if len(deal.trick) == 1 or not self._groups:  # a lead opens a new trick
                self._groups.append([])
            self._groups[-1].extend(act[2])
        plan = deal.plan
        if phase == "tribute" and deal.phase != "tribute" and plan is not None:
            self.events.append(
                {
                    "type": "tribute_paid",
                    "tributes": [[p, r, _txt(plan.paid[p])] for p, r in plan.to.items()],
                }
            )
        if phase == "return" and deal.phase != "return" and plan is not None:
            self.events.append(
                {
                    "type": "returns_revealed",
                    "returns": [[r, t, _txt(plan.returned[r])] for r, t in plan.returns_due],
                    "leader": plan.first_leader,
                }
            )
        if phase == PLAY and deal.jiefeng_seat is not None:
            self.events.append({"type": "jiefeng", "leader": deal.jiefeng_seat})
        if deal.phase == OVER:
            self._settle()

    def _settle(self) -> None:
        res = self.deal.result
        assert res is not None
        st = settle(self.rules, self.level, res, self.score)
        self.settlements.append(st)
        ev: dict[str, Any] = {
            "type": "deal_end",
            "finish_order": list(res.finish_order),
            "result": st.result,
            "winner_team": st.winner,
            "upgrade": st.upgrade,
            "levels": [rank_char(x) for x in st.levels_after],
            "passed": st.passed,
            "failed": list(st.failed),
            "demoted": list(st.demoted),
            "a_fails": list(self.score.a_fails),
        }
        if self.rules.points:
            ev["points"] = list(st.points_delta)
            ev["points_total"] = list(self.score.points)
        if self.rules.streaks:
            # Yangzhou (AMB-17): the runs that gave this deal's bonus or penalties, for the result screen
            ev["streaks"] = {
                "bonus": st.streak_bonus,
                "penalty": list(st.streak_penalty),
                "first_run": [res.first, self.score.first_runs[res.first]],
                "last_runs": [[s, self.score.last_runs[s]] for s in res.last],
            }
        self.events.append(ev)
        if self.rules.no_shuffle:
            # gather.py step 1: the tricks, then the cards still held by each seat that did not finish
            self._prev_groups = self._groups + [list(res.rest_cards[s]) for s in range(4) if res.rest[s] > 0]
        if st.passed or self.rules.single_deal:
            self.games_won[st.winner] += 1
            self.winner = st.winner
            self.events.append({"type": "game_over", "game": self.game_number, "winner_team": st.winner})
            # R58: once time is called the match ends with this deal, even where R42 restarts
            more = not self.time_called and not self.rules.single_deal and self.rules.after_target == "restart" and (
                self.max_games is None or self.game_number < self.max_games
            )
            if not more:
                self.over = True
                return
            # R42 / AMB-28: a new game restarts at 2 with no tribute and a random first leader
            self.game_number += 1
            self.deal_number = 0
            self.score.levels = [0, 0]
            self.score.a_fails = [0, 0]
            self.score.first_runs = [0, 0, 0, 0]
            self.score.last_runs = [0, 0, 0, 0]
            self.level = 0
            self._prev = None
            self._new_deal()
            return
        assert st.next_level is not None
        self.level = st.next_level
        self._prev = res
        if self.time_called:
            self._end_on_time()
            return
        self._new_deal()

    def call_time(self, *, play_deal: bool = False) -> None:
        """R58: the match's time has run out. The deal in progress is played to its end (tribute and
        return included) and the game ends there; the levels reached decide (:attr:`winner` is the
        team with the higher level, ``None`` when they are equal). A deal with no action yet (the time
        ran out between two deals) is not played: the game ends at once. Appends the ``time_called``
        event (``game``, ``deal``), which a record replays. ``play_deal``: the current deal is played
        even with no action yet (a table whose players already see the new deal, e.g. its tribute is
        due; R58's extra deal at level 2 of a drawn knock-out match, a new game with time called at
        once); the event then carries ``"play_deal": true``. Raises
        ``IllegalAction`` (``game_over``) once the game is over or time was already called."""
        if self.over or self.time_called:
            raise IllegalAction("game_over", "the game is over or its time was already called")
        self.time_called = True
        ev: dict[str, Any] = {"type": "time_called", "game": self.game_number, "deal": self.deal_number}
        if play_deal:
            ev["play_deal"] = True
        self.events.append(ev)
        started = play_deal or any(e["type"] == "action" for e in self.events[self.deal_event_index:])
        if not started:
            self._end_on_time()

    def _end_on_time(self) -> None:
        a, b = self.score.levels
        self.winner = None if a == b else (0 if a > b else 1)
        self.over = True
        self.events.append({"type": "game_over", "game": self.game_number, "winner_team": self.winner})

    # -- the three entry points ------------------------------------------------------------
    def pending(self) -> Pending:
        """Phase, seat to act and its legal actions (``game_over`` when nothing is pending)."""
        if self.over:
            return Pending(GAME_OVER, None, [])
        d = self.deal
        return Pending(d.phase, d.turn, d.legal_actions())

    @property
    def phase(self) -> str:
        """``tribute``, ``return``, ``play`` or ``game_over``."""
        return GAME_OVER if self.over else self.deal.phase

    def to_act(self) -> int | None:
        """The seat to act, or ``None`` when the game is over."""
        return None if self.over else self.deal.turn

    def legal_actions(self) -> list[PlayT]:
        """Legal actions of the seat to act (PASS first when following); empty when over."""
        return [] if self.over else self.deal.legal_actions()

    def check(self, action: Any, seat: int | None = None) -> PlayT:
        """Validate ``action`` for ``seat`` (default: the seat to act); return it normalised.

        Raises:
            IllegalAction: with a machine-readable ``reason`` (see :data:`guandan.core.errors.REASONS`).
        """
        if self.over:
            raise IllegalAction("game_over", "the game is over")
        return self.deal.check(action, seat)

    def legal_readings(self, cards: Any, seat: int | None = None) -> list[PlayT]:
        """The legal readings of a selection of cards played by ``seat`` (R17, EC-47).

        For a UI that lets people pick cards: every reading of ``cards`` that would be accepted
        now (several means the player must choose one).

        Raises:
            IllegalAction: no reading is legal (the reason of the first rejected reading, or
                ``not_a_reading`` when the cards are no combination at all).
        """
        if self.over:
            raise IllegalAction("game_over", "the game is over")
        faces = tuple(cards)
        try:
            readings = classify(faces, self.deal.level, self.rules.full_house_joker_pair)
        except GuandanError as e:
            raise IllegalAction("malformed", str(e)) from None
        if not readings:
            self.check((None, None, faces), seat)  # raises not_in_hand / not_a_reading / ...
            raise IllegalAction("not_a_reading", "those cards are not a legal play")
        legal: list[PlayT] = []
        first_error: IllegalAction | None = None
        for r in readings:
            try:
                legal.append(self.check(tuple(r), seat))
            except IllegalAction as e:
                first_error = first_error or e
        if not legal:
            assert first_error is not None
            raise first_error
        return legal

    def apply(self, action: Any, seat: int | None = None) -> PlayT:
        """Check and apply ``action``; settle and deal on when the deal ends.

        Returns:
            The normalised action applied.
        Raises:
            IllegalAction: the action is not legal; the game is unchanged.
        """
        act = self.check(action, seat)
        self.apply_unchecked(act)
        return act

    def apply_unchecked(self, act: PlayT) -> None:
        """Apply a normalised action taken from :meth:`legal_actions`, without checking."""
        seat = self.deal.turn
        assert seat is not None
        phase = self.deal.phase
        self.deal.apply_unchecked(act)
        self._after_action(seat, act, phase)

    # -- information -----------------------------------------------------------------------
    def title(self, seat: int) -> str:
        """Anhui title for ``seat``'s cumulative points (section 2.1)."""
        return anhui_title(self.score.points[seat])

    def team_level(self, team: int) -> int:
        """Level (rank index) of team 0 (seats 0/2) or 1 (seats 1/3)."""
        return self.score.levels[team]

    @classmethod
    def from_start(
        cls,
        rules: RuleSet,
        hands: Sequence[Sequence[int]],
        level: int,
        levels: Sequence[int],
        *,
        prev: DealResult | None = None,
        first_leader: int | None = None,
        rng: random.Random | None = None,
    ) -> Game:
        """A game whose first deal starts from a fixed position (a duplicate board, a puzzle).

        The deal is dealt ``hands`` at ``level`` with team levels ``levels``; with ``prev`` (the
        previous deal's result) tribute, return or anti-tribute follow from it (R44-R49), else
        ``first_leader`` leads (R51). After that deal the game goes on as usual (the next deal
        is shuffled from ``rng``); ``max_games`` is 1.

        The levels must be those the rules give such a deal (R7):

        * without ``prev`` the deal has no tribute, so it is a game's first deal (R43; also the
          first deal of a following game, R42/AMB-28): both teams at 2 and the deal at 2
          (``level == 0``, ``levels == (0, 0)``; R6, R7, EC-46);
        * with ``prev`` it is a later deal, played at the level of the team that supplied 头游
          in ``prev`` (``level == levels[team_of(prev.first)]``, R7). An anti-tribute (R48)
          is such a deal too: it follows from ``prev`` and the hands.

        Args:
            rules: the rule set.
            hands: four hands of faces (the deal's hands before any tribute).
            level: the deal's level (rank index 0..12).
            levels: the team levels ``[team02, team13]`` (rank indices, after the previous
                deal's upgrade).
            prev: the previous deal's result (tribute follows), or ``None``.
            first_leader: the leader when ``prev`` is ``None`` (required then).
            rng: the game's randomness (random double-tribute ties, AMB-04; later deals).
        Raises:
            GuandanError: (a ``ValueError``) a level outside 0..12; without ``prev`` a level or
                team level other than 2, or no first leader (R7, R51); with ``prev`` a deal level
                other than the level of 头游's team (R7); malformed hands.
        """
        lv = list(levels)
        if len(lv) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 12 for x in lv):
            raise GuandanError(f"levels must be two rank indices 0..12, not {levels!r}")
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= 12:
            raise GuandanError(f"the deal's level must be a rank index 0..12, not {level!r}")
        shown = f"level {rank_char(level)} with team levels {rank_char(lv[0])}/{rank_char(lv[1])}"
        if prev is None:
            if level != 0 or lv != [0, 0]:
                raise GuandanError(
                    "a deal without tribute is a game's first deal: both teams at level 2 and the deal "
                    f"at level 2 (R7, R43), not {shown}")
            if first_leader is None:
                raise GuandanError("a deal without tribute needs a first leader (R51)")
        else:
            if not prev.finish_order or prev.first not in (0, 1, 2, 3):
                raise GuandanError(f"prev must be a finished deal's result (R33), not {prev!r}")
            head_team = team_of(prev.first)
            if level != lv[head_team]:
                raise GuandanError(
                    f"after a deal won by seat {prev.first} (头游) the deal is played at its team's level "
                    f"{rank_char(lv[head_team])} (R7), not {shown}")
        # built as a first deal at level 2 with a fixed leader (no random draw), then restarted
        game = cls(rules, rng=rng if rng is not None else random.Random(0),
                   hands=[list(h) for h in hands],
                   first_leader=first_leader if first_leader is not None else next(
                       (s for s in range(4) if len(hands[s]) > 0), 0))
        game.fixed_first_leader = first_leader
        game.score.levels = lv
        game.level = level
        game._prev = prev
        game.events = []
        game.deal_number = 0
        game._new_deal()
        return game

    def clone(self) -> Game:
        """An independent copy (the deal and score are copied; events are shared-prefix copies)."""
        new = Game.__new__(Game)
        new.__dict__.update(self.__dict__)
        new.deal = self.deal.clone()
        new.score = self.score.copy()
        new.events = self.events[:]
        new.settlements = self.settlements[:]
        new.games_won = self.games_won[:]
        new.rng = _copy_rng(self.rng)
        new._groups = [g[:] for g in self._groups]
        return new


_txt = card_text


def _copy_rng(rng: random.Random) -> random.Random:
    """A copy of ``rng`` that continues its sequence; a generator without state to copy (the
    operating system's CSPRNG, :class:`random.SystemRandom`, whose ``getstate`` raises
    ``NotImplementedError``) is shared: its draws cannot be predicted or repeated anyway."""
    try:
        state = rng.getstate()
    except NotImplementedError:
        return rng
    new = random.Random()
    new.setstate(state)
    return new


def action_to_json(act: PlayT) -> list[Any]:
    """``[type, rank, [cards]]`` with rank and cards in text notation (records, JSON APIs)."""
    t, r, cards = act
    return [t, None if r is None else rank_char(r), [_txt(f) for f in cards]]


def action_from_json(data: Any) -> PlayT:
    """Inverse of :func:`action_to_json`.

    Raises:
        IllegalAction: ``malformed`` when the value is not ``[type, rank, [cards]]``.
        NotationError: a bad card or rank.
    """
    from .cards import parse_card, parse_rank

    if not (
        isinstance(data, list)
        and len(data) == 3
        and isinstance(data[0], str)
        and (data[1] is None or isinstance(data[1], str))
        and isinstance(data[2], list)
        and all(isinstance(c, str) for c in data[2])
    ):
        raise IllegalAction("malformed", f"not an action [type, rank, [cards]]: {data!r}")
    t, r, cards = data
    rank = None if r is None else parse_rank(r)
    return (t, rank, tuple(parse_card(c) for c in cards))


__all__ = [
    "Game",
    "Pending",
    "GAME_OVER",
    "shuffle_deal",
    "turned_card_leader",
    "turn_card",
    "action_to_json",
    "action_from_json",
    "team_of",
    "FACE_RANK",
    "N_FACES",
]
