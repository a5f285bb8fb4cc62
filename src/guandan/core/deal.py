"""One deal: anti-tribute check, tribute, return, play, finishing order (docs/rules.md R27-R33, R43-R52).

The deal is a state machine with explicit phases (:data:`TRIBUTE`, :data:`RETURN`,
:data:`PLAY`, :data:`OVER`). Drivers ask :meth:`Deal.to_act` and :meth:`Deal.legal_actions`,
then :meth:`Deal.apply` (which always checks). The deal never calls an agent and never
prints; all randomness comes from the injected ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .cards import BIG_JOKER, FACE_RANK, N_FACES, card_text, cards_text, rank_char, wild_face
from .errors import GuandanError, IllegalAction
from .movegen import legal_plays
from .plays import (
    PASS,
    PASS_TYPE,
    PLAY_TYPES,
    RETURN_TYPE,
    STRENGTH,
    TRIBUTE_TYPE,
    PlayT,
    beats,
    classify,
)
from .rules import RuleSet

TRIBUTE = "tribute"
RETURN = "return"
PLAY = "play"
OVER = "over"
_TEN = 8  # rank index of T


def partner(seat: int) -> int:
    """The partner of ``seat`` (R2, R3: seats 0-3 in play order, partners opposite)."""
    return (seat + 2) % 4


def team_of(seat: int) -> int:
    """Team index: 0 for seats {0, 2}, 1 for seats {1, 3}."""
    return seat & 1


@dataclass(frozen=True)
class DealResult:
    """How a deal ended (R33-R35).

    Attributes:
        finish_order: seats that went out, in order; when three went out the fourth seat is
            appended (末游). A two-seat order is a double-down (1-2) ended at once (EC-29).
        rest: per-seat cards still held when the deal ended (length 4).
        rest_cards: per-seat faces still held (length 4; empty tuples for finished seats).
    """

    finish_order: tuple[int, ...]
    rest: tuple[int, ...]
    rest_cards: tuple[tuple[int, ...], ...] = ()

    @property
    def first(self) -> int:
        """头游: the first seat out."""
        return self.finish_order[0]

    @property
    def winner_team(self) -> int:
        """Team of 头游 (R35)."""
        return team_of(self.finish_order[0])

    @property
    def result(self) -> str:
        """``'1-2'``, ``'1-3'`` or ``'1-4'``: where 头游's partner finished (R35, AMB-23)."""
        fo = self.finish_order
        p = partner(fo[0])
        if len(fo) >= 2 and fo[1] == p:
            return "1-2"
        if len(fo) >= 3 and fo[2] == p:
            return "1-3"
        return "1-4"

    @property
    def last(self) -> tuple[int, ...]:
        """末游 seat(s): both losers in a 1-2 (双下), else the fourth seat."""
        if self.result == "1-2":
            w = self.finish_order[0]
            return tuple(sorted(((w + 1) % 4, (w + 3) % 4)))
        if len(self.finish_order) == 4:
            return (self.finish_order[3],)
        out = [s for s in range(4) if s not in self.finish_order]
        return (out[0],) if len(out) == 1 else tuple(out)


def deal_outcome(finish_order_so_far: Sequence[int]) -> DealResult | None:
    """Whether the deal is over given the seats out so far (R33); the result if it is.

    Over when one team has 1st and 2nd, or when three seats are out.
    """
    fo = list(finish_order_so_far)
    if len(fo) >= 2 and fo[1] == partner(fo[0]):
        return DealResult(tuple(fo[:2]), (0, 0, 0, 0))
    if len(fo) >= 3:
        rest = [s for s in range(4) if s not in fo[:3]]
        return DealResult(tuple(fo[:3]) + tuple(rest), (0, 0, 0, 0))
    return None


@dataclass
class TributePlan:
    """Who pays whom before a deal (R44-R49), computed from the previous deal's result."""

    double: bool
    payers: tuple[int, ...]
    head: int  # 头游 of the previous deal
    anti_tribute: bool = False
    anti_seats: tuple[int, ...] = ()  # seats that showed big jokers (R48)
    paid: dict[int, int] = field(default_factory=dict)  # payer -> face
    to: dict[int, int] = field(default_factory=dict)  # payer -> receiver
    returns_due: list[tuple[int, int]] = field(default_factory=list)  # (receiver, target)
    returned: dict[int, int] = field(default_factory=dict)  # receiver -> face
    first_leader: int | None = None


class Deal:
    """A single deal at one level.

    Args:
        rules: the rule set.
        level: the deal's level rank index 0..12 (R7).
        hands: four hands as sequences of faces; any sizes (27 cards each in a real deal,
            fewer for puzzles and tests).
        rng: source of every random choice (random tie allocation, R46/AMB-04).
        prev: the previous deal's result for tribute (``None``: first deal of a game, no tribute, R43).
        first_leader: leader when there is no tribute (R51); required when ``prev`` is ``None``.
    Raises:
        ValueError: malformed hands or a missing first leader.
    """

    def __init__(
        self,
        rules: RuleSet,
        level: int,
        hands: Sequence[Sequence[int]],
        rng: random.Random,
        prev: DealResult | None = None,
        first_leader: int | None = None,
    ) -> None:
        if not isinstance(rules, RuleSet):
            raise GuandanError(f"rules must be a RuleSet, not {type(rules).__name__}")
        if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 12:
            raise GuandanError(f"level must be a rank index 0..12 (2..A), not {level!r}")
        if isinstance(hands, (str, bytes)) or len(hands) != 4:
            raise GuandanError("a deal needs four hands")
        self.rules = rules
        self.level = level
        self.rng = rng
        self.wild = wild_face(level)
        # each hand holds at most two copies of a face; puzzle and test hands are not checked
        # across seats (shuffled deals always hold the 108 cards exactly, EC-48)
        self.hands: list[list[int]] = [_as_counts(h) for h in hands]
        self.n_cards: list[int] = [sum(h) for h in self.hands]
        self.initial_hands: tuple[tuple[int, ...], ...] = tuple(_faces(h) for h in self.hands)
        self.finished: list[int] = []
        self.result: DealResult | None = None
        self.top: PlayT | None = None
        self.top_seat: int | None = None
        self.passes = 0
        self.trick: list[tuple[int, PlayT]] = []
        self.history: list[tuple[int, PlayT]] = []  # every action of the deal, in order
        self.jiefeng_seat: int | None = None  # set when the last trick ended in 接风
        self.leader: int | None = None
        self.turn: int | None = None
        self.phase = PLAY
        self._legal: list[PlayT] | None = None
        self._undo: list[Any] = []  # push_unchecked/pop_unchecked records (search only)
        self.plan: TributePlan | None = None
        if prev is None:
            if first_leader is None:
                raise GuandanError("the first deal of a game needs a first leader (R51)")
            if first_leader not in (0, 1, 2, 3) or isinstance(first_leader, bool):
                raise GuandanError(f"first_leader must be a seat 0-3, not {first_leader!r}")
            if self.n_cards[first_leader] == 0:
                raise GuandanError(f"the first leader, seat {first_leader}, holds no cards")
            self._start_play(first_leader)
        else:
            self._setup_tribute(prev)

    # -- tribute ---------------------------------------------------------------------------
    def _setup_tribute(self, prev: DealResult) -> None:
        """R44 (who pays), R48 (anti-tribute), then enter the tribute phase."""
        head = prev.first
        rules = self.rules
        if prev.result == "1-2":
            payers: tuple[int, ...] = ((head + 1) % 4, (head + 3) % 4)
            plan = TributePlan(True, payers, head)
            bj_holders = [s for s in payers for _ in range(self.hands[s][BIG_JOKER])]
            anti = len(bj_holders) >= 2
        else:
            payer = prev.last[0]
            plan = TributePlan(False, (payer,), head)
            counted: tuple[int, ...] = (payer,)
            if rules.anti_tribute_single == "team_if_opponents" and payer != partner(head):
                counted = (payer, partner(payer))  # AMB-08, seed 001
            bj_holders = [s for s in counted for _ in range(self.hands[s][BIG_JOKER])]
            anti = len(bj_holders) >= 2
        self.plan = plan
        self._prev = prev
        if anti:
            plan.anti_tribute = True
            plan.anti_seats = tuple(sorted(set(bj_holders)))
            plan.first_leader = head  # R49, EC-40
            self._start_play(head)
            return
        for s in plan.payers:
            if not self.tribute_options(s):
                raise ValueError(f"seat {s} must pay tribute but holds no card that can be paid (R45)")
        self.phase = TRIBUTE
        self.turn = plan.payers[0]

    def tribute_options(self, seat: int) -> list[int]:
        """Faces ``seat`` may pay: copies of its highest non-wild card in level order (R45, EC-31)."""
        hand = self.hands[seat]
        st = STRENGTH[self.level]
        best = -1
        faces: list[int] = []
        for f in range(N_FACES):
            if not hand[f] or f == self.wild:
                continue
            s = st[FACE_RANK[f]]
            if s > best:
                best, faces = s, [f]
            elif s == best:
                faces.append(f)
        return faces

    def return_limit(self, seat: int, target: int) -> int | None:
        """Highest rank index ``seat`` may return to ``target`` by the rank limit, or ``None`` when
        any card may be returned (R47, AMB-02/03): 10, or 9 when 10 is the level (EC-38)."""
        rule = self.rules.return_rule
        if rule == "any" or (rule == "le10_partner_only" and target != partner(seat)):
            return None
        return _TEN - 1 if self.level == _TEN else _TEN

    def return_options(self, seat: int, target: int) -> list[int]:
        """Faces ``seat`` may return to ``target`` (R47, AMB-02/03, EC-38/39)."""
        hand = self.hands[seat]
        held = [f for f in range(N_FACES) if hand[f]]
        if self.return_limit(seat, target) is None:
            return held
        st = STRENGTH[self.level]
        ok = [f for f in held if FACE_RANK[f] <= _TEN and FACE_RANK[f] != self.level]
        if ok:
            return ok
        if not held:
            return []
        low = min(st[FACE_RANK[f]] for f in held)  # EC-39: the smallest card instead
        return [f for f in held if st[FACE_RANK[f]] == low]

    def _assign_tributes(self) -> None:
        """R46: share out the tribute, R47: who returns to whom, R49: who leads."""
        plan = self.plan
        assert plan is not None
        head = plan.head
        if not plan.double:
            (payer,) = plan.payers
            plan.to = {payer: head}
            plan.first_leader = payer
        else:
            a, b = plan.payers  # a = head's 下家 (head+1), b = head's 上家 (head+3)
            st = STRENGTH[self.level]
            if self.rules.double_tribute_by == "remaining_cards":
                ra, rb = self._prev.rest[a], self._prev.rest[b]
                to_head = a if ra >= rb else b  # seed 001: more cards pays 上游; tie: 上游's 下家
            else:
                sa, sb = st[FACE_RANK[plan.paid[a]]], st[FACE_RANK[plan.paid[b]]]
                if sa != sb:
                    to_head = a if sa > sb else b
                elif self.rules.double_tribute_tie == "random":
                    to_head = self.rng.choice((a, b))  # AMB-04 (Anhui)
                else:
                    to_head = a  # AMB-04: 头游 takes the card of 头游's 下家
            other = b if to_head == a else a
            plan.to = {to_head: head, other: partner(head)}
            plan.first_leader = to_head  # R49, AMB-06
        for payer, receiver in plan.to.items():
            face = plan.paid[payer]
            self.hands[payer][face] -= 1
            self.n_cards[payer] -= 1
            self.hands[receiver][face] += 1
            self.n_cards[receiver] += 1
        # returns: the head's first, then the second's
        order = sorted(plan.to.items(), key=lambda pr: 0 if pr[1] == head else 1)
        for payer, receiver in order:
            if plan.double and self.rules.return_to == "next_seat":
                target = (receiver + 1) % 4  # AMB-07 (Yangzhou/Ma'anshan)
            else:
                target = payer
            plan.returns_due.append((receiver, target))
        self.phase = RETURN
        self.turn = plan.returns_due[0][0]

    def _finish_returns(self) -> None:
        plan = self.plan
        assert plan is not None
        for receiver, target in plan.returns_due:
            face = plan.returned[receiver]
            self.hands[receiver][face] -= 1
            self.n_cards[receiver] -= 1
            self.hands[target][face] += 1
            self.n_cards[target] += 1
        assert plan.first_leader is not None
        self._start_play(plan.first_leader)

    # -- play ------------------------------------------------------------------------------
    def _start_play(self, leader: int) -> None:
        self.phase = PLAY
        self.leader = leader
        self.turn = leader
        self.top = None
        self.top_seat = None
        self.passes = 0
        self.trick = []

    def _next_active(self, seat: int) -> int:
        n = self.n_cards
        for i in (1, 2, 3):
            s = (seat + i) % 4
            if n[s] > 0:
                return s
        return seat

    def to_act(self) -> int | None:
        """The seat that must act now, or ``None`` when the deal is over."""
        return None if self.phase == OVER else self.turn

    def legal_actions(self) -> list[PlayT]:
        """Every legal action of the seat to act (empty when over).

        Play phase: PASS first when following (never when leading, R27), then the plays from
        :func:`guandan.core.movegen.legal_plays`. Tribute/return phase: one action per
        allowed face.
        """
        if self._legal is not None:
            return self._legal
        out: list[PlayT]
        if self.phase == PLAY:
            assert self.turn is not None
            hand = self.hands[self.turn]
            fhjp = self.rules.full_house_joker_pair
            if self.top is None:
                out = legal_plays(hand, self.level, None, fhjp)
            else:
                out = [PASS]
                out.extend(legal_plays(hand, self.level, self.top, fhjp))
        elif self.phase == TRIBUTE:
            assert self.turn is not None
            out = [(TRIBUTE_TYPE, FACE_RANK[f], (f,)) for f in self.tribute_options(self.turn)]
        elif self.phase == RETURN:
            assert self.plan is not None and self.turn is not None
            target = dict(self.plan.returns_due)[self.turn]
            out = [(RETURN_TYPE, FACE_RANK[f], (f,)) for f in self.return_options(self.turn, target)]
        else:
            out = []
        self._legal = out
        return out

    def check(self, action: Any, seat: int | None = None) -> PlayT:
        """Validate ``action`` for ``seat`` (default: the seat to act) and return it normalised.

        Raises:
            IllegalAction: with ``reason`` one of ``game_over``, ``not_your_turn``,
                ``wrong_phase``, ``malformed``, ``not_in_hand``, ``not_a_reading``,
                ``ambiguous``, ``does_not_beat``, ``must_lead``, ``tribute_not_highest``,
                ``return_too_high``.
        """
        if self.phase == OVER:
            raise IllegalAction("game_over", "the deal is over")
        if seat is None:
            seat = self.turn
        elif seat not in (0, 1, 2, 3) or isinstance(seat, bool):
            raise IllegalAction("malformed", f"seat must be 0-3, not {seat!r}")
        elif seat != self.turn:
            raise IllegalAction("not_your_turn", f"it is seat {self.turn}'s turn, not seat {seat}'s")
        assert seat is not None
        atype, arank, cards = _unpack(action)
        hand = self.hands[seat]
        if atype == PASS_TYPE:
            if cards or arank is not None:
                raise IllegalAction("malformed", "a pass has no rank and no cards")
            if self.phase != PLAY:
                raise IllegalAction("wrong_phase", f"cannot pass during the {self.phase} phase")
            if self.top is None:
                raise IllegalAction("must_lead", "the leader must play, not pass (R27)")
            return PASS
        if not cards:
            raise IllegalAction("malformed", "an action needs cards")
        need: dict[int, int] = {}
        for f in cards:
            need[f] = need.get(f, 0) + 1
        for f, k in need.items():
            if hand[f] < k:
                held = "does not hold" if hand[f] == 0 else f"holds only {hand[f]} of"
                raise IllegalAction("not_in_hand", f"seat {seat} {held} {card_text(f)}" + (f" (needs {k})" if hand[f] else ""))
        if atype in (TRIBUTE_TYPE, RETURN_TYPE) and arank is not None and len(cards) == 1 and arank != FACE_RANK[cards[0]]:
            raise IllegalAction("not_a_reading", f"{card_text(cards[0])} is not of rank {_rank_name(arank)}")
        if atype == TRIBUTE_TYPE:
            if self.phase != TRIBUTE:
                raise IllegalAction("wrong_phase", f"no tribute is due in the {self.phase} phase")
            if len(cards) != 1:
                raise IllegalAction("malformed", "a tribute is exactly one card")
            if cards[0] not in self.tribute_options(seat):
                raise IllegalAction(
                    "tribute_not_highest",
                    "the tribute must be your highest card, not counting the wild (R45)",
                )
            return (TRIBUTE_TYPE, FACE_RANK[cards[0]], (cards[0],))
        if atype == RETURN_TYPE:
            if self.phase != RETURN:
                raise IllegalAction("wrong_phase", f"no return is due in the {self.phase} phase")
            if len(cards) != 1:
                raise IllegalAction("malformed", "a return is exactly one card")
            assert self.plan is not None
            target = dict(self.plan.returns_due)[seat]
            if cards[0] not in self.return_options(seat, target):
                raise IllegalAction(
                    "return_too_high",
                    "the return must rank 10 or lower and not be a level card (R47)",
                )
            return (RETURN_TYPE, FACE_RANK[cards[0]], (cards[0],))
        if self.phase != PLAY:
            raise IllegalAction("wrong_phase", f"cannot play cards during the {self.phase} phase")
        readings = classify(cards, self.level, self.rules.full_house_joker_pair)
        if not readings:
            raise IllegalAction("not_a_reading", f"{cards_text(cards)} is not a legal play")
        if atype is None:
            if len({(r[0], r[1]) for r in readings}) > 1:
                raise IllegalAction(
                    "ambiguous",
                    "these cards can be read several ways; declare one (R17): "
                    + ", ".join(f"{r[0]} {rank_char(r[1]) if r[1] is not None else ''}".strip() for r in readings),
                )
            play: PlayT = tuple(readings[0])  # type: ignore[assignment]
        else:
            play = next((tuple(r) for r in readings if r[0] == atype and r[1] == arank), None)  # type: ignore[assignment]
            if play is None:
                raise IllegalAction(
                    "not_a_reading", f"{cards_text(cards)} cannot be read as {atype} {_rank_name(arank)}"
                )
        if self.top is not None and not beats(play, self.top, self.level):
            raise IllegalAction("does_not_beat", "that does not beat the play on the table (R23-R26)")
        return play

    def apply(self, action: Any, seat: int | None = None) -> PlayT:
        """Check then apply ``action``; returns the normalised action applied.

        Raises:
            IllegalAction: see :meth:`check`; the state is unchanged then.
        """
        act = self.check(action, seat)
        self.apply_unchecked(act)
        return act

    def apply_unchecked(self, act: PlayT) -> None:
        """Apply a normalised legal action without checking (for search code that generated it)."""
        seat = self.turn
        assert seat is not None
        self._legal = None
        self.history.append((seat, act))
        atype = act[0]
        if self.phase == TRIBUTE:
            plan = self.plan
            assert plan is not None
            plan.paid[seat] = act[2][0]
            if len(plan.paid) < len(plan.payers):
                self.turn = plan.payers[len(plan.paid)]
            else:
                self._assign_tributes()
            return
        if self.phase == RETURN:
            plan = self.plan
            assert plan is not None
            plan.returned[seat] = act[2][0]
            if len(plan.returned) < len(plan.returns_due):
                self.turn = plan.returns_due[len(plan.returned)][0]
            else:
                self._finish_returns()
            return
        self.jiefeng_seat = None
        if atype == PASS_TYPE:
            self.trick.append((seat, act))
            self.passes += 1
            top_seat = self.top_seat
            assert top_seat is not None
            n = self.n_cards
            active = (n[0] > 0) + (n[1] > 0) + (n[2] > 0) + (n[3] > 0)
            needed = active - 1 if n[top_seat] > 0 else active
            if self.passes >= needed:  # R29: everyone else still holding cards passed
                if n[top_seat] > 0:
                    leader = top_seat
                elif n[partner(top_seat)] > 0:
                    leader = partner(top_seat)  # R30: 接风
                    self.jiefeng_seat = leader
                else:
                    # cannot happen in a real deal (R30, EC-28); only puzzle hands with an empty
                    # seat get here: the next seat still holding cards leads
                    leader = self._next_active(top_seat)
                self._start_play(leader)
            else:
                self.turn = self._next_active(seat)
            return
        hand = self.hands[seat]
        for f in act[2]:
            hand[f] -= 1
        self.n_cards[seat] -= len(act[2])
        self.trick.append((seat, act))
        self.top = act
        self.top_seat = seat
        self.passes = 0
        if self.n_cards[seat] == 0:
            self.finished.append(seat)
            res = deal_outcome(self.finished)
            if res is not None:
                self.result = DealResult(
                    res.finish_order,
                    tuple(self.n_cards),
                    tuple(_faces(h) for h in self.hands),
                )
                self.phase = OVER
                self.turn = None
                return
        self.turn = self._next_active(seat)

    # -- copies ----------------------------------------------------------------------------
    def clone(self) -> Deal:
        """A cheap independent copy for search (shares the immutable parts)."""
        new = Deal.__new__(Deal)
        new.__dict__.update(self.__dict__)
        new.hands = [h[:] for h in self.hands]
        new.n_cards = self.n_cards[:]
        new.finished = self.finished[:]
        new.trick = self.trick[:]
        new.history = self.history[:]
        new._legal = None
        new._undo = []
        if self.plan is not None:
            p = self.plan
            new.plan = TributePlan(
                p.double, p.payers, p.head, p.anti_tribute, p.anti_seats, dict(p.paid), dict(p.to),
                list(p.returns_due), dict(p.returned), p.first_leader,
            )
        return new

    # -- push/pop for search (play phase, unchecked) ------------------------------------------
    def push_unchecked(self, act: PlayT) -> None:
        """Apply a normalised legal play-phase action without checking, remembering how to undo
        it with :meth:`pop_unchecked` (search code only; ``apply`` keeps checking everything).

        Raises:
            ValueError: the deal is not in the play phase (tribute and return cannot be undone).
        """
        if self.phase != PLAY:
            raise ValueError(f"push_unchecked works in the play phase, not {self.phase!r}")
        undo = (
            act, self.turn, self.top, self.top_seat, self.passes, self.leader, self.jiefeng_seat,
            self.trick, len(self.finished), self.result,
        )
        self.trick = self.trick[:]  # _start_play replaces it, a play appends: keep the old list
        self._undo.append(undo)
        self.apply_unchecked(act)

    def pop_unchecked(self) -> PlayT:
        """Undo the last :meth:`push_unchecked`; returns the action undone.

        Raises:
            IndexError: nothing to undo.
        """
        if not self._undo:
            raise IndexError("no pushed action to undo")
        act, turn, top, top_seat, passes, leader, jiefeng, trick, n_fin, result = self._undo.pop()
        seat = turn
        if act[0] != PASS_TYPE:
            hand = self.hands[seat]
            for f in act[2]:
                hand[f] += 1
            self.n_cards[seat] += len(act[2])
        self.history.pop()
        del self.finished[n_fin:]
        self.turn, self.top, self.top_seat, self.passes = turn, top, top_seat, passes
        self.leader, self.jiefeng_seat, self.trick, self.result = leader, jiefeng, trick, result
        self.phase = PLAY
        self._legal = None
        return act


def _rank_name(rank: Any) -> str:
    try:
        return rank_char(rank)
    except Exception:
        return str(rank)


def _as_counts(hand: Sequence[int]) -> list[int]:
    if isinstance(hand, (str, bytes, dict)):
        raise GuandanError("a hand is a sequence of faces (ints 0..53)")
    counts = [0] * N_FACES
    try:
        for f in hand:
            if not isinstance(f, int) or isinstance(f, bool) or not 0 <= f < N_FACES:
                raise GuandanError(f"bad face {f!r} in hand")
            counts[f] += 1
            if counts[f] > 2:
                raise GuandanError(f"{card_text(f)} appears more than twice (two decks, R1)")
    except TypeError:
        raise GuandanError("a hand is a sequence of faces (ints 0..53)") from None
    return counts


def _faces(counts: Sequence[int]) -> tuple[int, ...]:
    out: list[int] = []
    for f, n in enumerate(counts):
        if n:
            out.extend((f,) * n)
    return tuple(out)


def _unpack(action: Any) -> tuple[str | None, int | None, tuple[int, ...]]:
    """Accept ``(type, rank, cards)`` or a bare card sequence; normalise cards' order."""
    try:
        if isinstance(action, (tuple, list)) and len(action) == 3 and (
            action[0] is None or isinstance(action[0], str)
        ):
            atype, arank, cards = action
            if not isinstance(cards, (list, tuple)):
                raise TypeError
            cards = tuple(cards)
        elif isinstance(action, (tuple, list)) and all(isinstance(f, int) for f in action):
            atype, arank, cards = None, None, tuple(action)
        else:
            raise TypeError
        if atype is not None and atype not in PLAY_TYPES and atype not in (PASS_TYPE, TRIBUTE_TYPE, RETURN_TYPE):
            raise IllegalAction("malformed", f"unknown action type {atype!r}")
        for f in cards:
            if not isinstance(f, int) or isinstance(f, bool) or not 0 <= f < N_FACES:
                raise IllegalAction("malformed", f"bad card {f!r}")
        if arank is not None and (not isinstance(arank, int) or isinstance(arank, bool) or not 0 <= arank <= 14):
            raise IllegalAction("malformed", f"bad rank {arank!r}")
    except IllegalAction:
        raise
    except (TypeError, ValueError):
        raise IllegalAction("malformed", f"not an action: {action!r}") from None
    return atype, arank, tuple(sorted(cards))

