"""A fast rule-based player: hand decomposition plus situational rules.

The agent acts from a :class:`~guandan.core.views.SeatView` only (DESIGN.md section 1).

How it thinks
-------------
**Hand decomposition** (:func:`decompose`, in :mod:`guandan.agents.decomposition`, re-exported
here). The hand is partitioned into combinations that could each be played in one turn (docs/rules.md
R18-R24), each with a *cost*, roughly "how many turns it still needs"; a search finds the
partition of least total cost. This module is the policy that plays from that picture.

**Leading** (R27). Play the whole hand when it is one legal play. Otherwise lead the weakest
combination of the decomposition, preferring combinations that shed more cards; in the
endgame lead the combinations nobody can beat (judged from the unseen cards) first and the
last weak one last; do not lead a combination whose size equals an opponent's remaining card
count (it could let them go out) unless it is safe; help a partner with one or two cards by
leading a low single or pair.

**Following** (R28). Go out when one legal play empties the hand. When the partner holds the
trick, pass, unless a combination of the hand beats it and leaves at most one weak
combination while the partner holds more cards. Otherwise answer with the weakest
combination of the decomposition that beats the table; failing that, with the play whose
remaining hand decomposes best, breaking a combination only when that costs little
(``TAU_*``) or an opponent is close to going out. Bombs and straight flushes are kept for
when they matter: an opponent with few cards (``CLOSE_*``), a hand that can then go out, or
bombs to spare (``SPARE_BOMBS``).

**Tribute and return** (R45, R47). Pay the allowed copy whose loss hurts the hand least (for
example not the card of a straight flush). Return the allowed card least useful to the hand;
among equally useless cards give an opponent the lowest and a partner the highest.

The decisions are a pure function of the view: the agent is deterministic for any seed.
Measured on one core (20 heuristic self-play games, about 15,000 decisions): 0.2 ms per
decision on average, median 0.05 ms, 99th percentile 2.5 ms, worst about 15 ms (a full
hand with many straight-flush and wild choices). The class attributes (``TAU_CALM`` …,
``MODEL``) are the tuning knobs; no variant tried in duplicate self-play (300-500 boards
each, one knob or cost parameter changed at a time) beat the defaults by more than noise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from guandan.core.cards import BIG_JOKER, FACE_RANK, SMALL_JOKER, wild_face
from guandan.core.plays import (
    BOMB_TYPES,
    FULL_HOUSE,
    PAIR,
    PASS,
    PLATE,
    PLATE_WINDOWS,
    PLAY_TYPES,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRAIGHT_WINDOWS,
    STRENGTH,
    TRIPLE,
    TUBE,
    TUBE_WINDOWS,
    PlayT,
    canonical,
    classify,
    play_key,
)
from guandan.core.views import SeatView

from .decomposition import (  # re-exported: the names others import from this module
    DEFAULT_MODEL,
    Combo,
    CostModel,
    Decomposition,
    decompose,
    hand_cost,
)

__all__ = ["DEFAULT_MODEL", "Combo", "CostModel", "Decomposition", "HeuristicAgent", "decompose", "hand_cost",
           "lead_order"]


# --------------------------------------------------------------------------------------------
# helpers on plays
# --------------------------------------------------------------------------------------------
def distinct_answers(legal: Iterable[PlayT], level: int, reserved: Sequence[int]) -> dict[tuple[Any, ...], PlayT]:
    """The plays of ``legal`` up to suits (PASS left out), one per shape signature.

    Args:
        legal: legal actions (tuples ``(type, rank, faces)``).
        level: the level rank (wilds, R8). reserved: per-face marks of cards kept for a straight
            flush; of two plays with one signature, the one using fewer of them is kept.

    Returns:
        dict: signature -> play, in the order first seen.
    """
    sigs: dict[tuple[Any, ...], PlayT] = {}
    for a in legal:
        if a[0] == "pass":
            continue
        sg = _signature(a, level)
        old = sigs.get(sg)
        if old is None or sum(reserved[f] for f in a[2]) < sum(reserved[f] for f in old[2]):
            sigs[sg] = a
    return sigs


def _is_bomb(play: PlayT) -> bool:
    return play[0] in BOMB_TYPES


def _signature(play: PlayT, level: int) -> tuple[Any, ...]:
    """What a play does to a hand up to suits: type, rank and the ranks of its cards."""
    W = level * 4 + 1
    return (play[0], play[1], tuple(sorted(FACE_RANK[f] if f != W else 99 for f in play[2])))


def _minus(counts: Sequence[int], faces: Sequence[int]) -> list[int]:
    out = list(counts)
    for f in faces:
        out[f] -= 1
    return out


def _materialize(combo: Combo, counts: Sequence[int], level: int, reserved: Sequence[int]) -> tuple[int, ...] | None:
    """Choose faces for ``combo`` from ``counts`` avoiding ``reserved`` faces when possible."""
    ptype, _rank, parts, nw, _cost, faces = combo
    W = level * 4 + 1
    if faces is not None and not parts:
        return tuple(faces)
    if ptype == STRAIGHT_FLUSH and faces is not None:
        return tuple(faces)
    avail = list(counts)
    out: list[int] = []
    if faces is not None:  # e.g. a full house with a joker pair
        for f in faces:
            avail[f] -= 1
        out.extend(faces)
    straight = ptype == STRAIGHT
    for r, k in parts:
        fs = [f for f in range(4 * r, 4 * r + 4) if f != W]
        for _ in range(k):
            # prefer faces not reserved by straight flushes, and (straights) a new suit
            best = None
            best_score = None
            for f in fs:
                if avail[f] <= 0:
                    continue
                score = (reserved[f] if reserved else 0) * 2
                if straight and out and all((x & 3) == (f & 3) for x in out):
                    score += 1
                if best_score is None or score < best_score:
                    best, best_score = f, score
            if best is None:
                return None
            avail[best] -= 1
            out.append(best)
    if avail[W] < nw:
        return None
    out.extend([W] * nw)
    return canonical(out, level)


# --------------------------------------------------------------------------------------------
# the agent
# --------------------------------------------------------------------------------------------
class _CtxBase:
    """What a decision context derives from its unseen cards and the seats' card counts, shared by
    :class:`_Ctx` (a seat view) and the fast rollout policy's context (a deal). A subclass sets
    ``W``, ``level``, ``ncards``, ``opps`` and ``_nat`` (``None`` at first) and defines ``unseen()``."""

    __slots__ = ()
    W: int
    level: int
    ncards: Sequence[int]
    opps: Sequence[int]
    _nat: tuple[list[int], int] | None

    def unseen(self) -> list[int]:  # pragma: no cover - defined by every subclass
        raise NotImplementedError

    def unseen_ranks(self) -> tuple[list[int], int]:
        """``(natural unseen cards per rank 0..12, unseen wilds)`` from :meth:`unseen` (the level
        rank's count leaves the wilds out, R8); computed once per decision."""
        if self._nat is None:
            u = self.unseen()
            uw = u[self.W]
            nat = [u[4 * r] + u[4 * r + 1] + u[4 * r + 2] + u[4 * r + 3] for r in range(13)]
            nat[self.level] -= uw
            self._nat = (nat, uw)
        return self._nat

    def opp_min(self) -> int:
        return min((self.ncards[s] for s in self.opps), default=99)


class _Ctx(_CtxBase):
    """Per-decision facts derived from the view."""

    __slots__ = (
        "W",
        "_nat",
        "_unseen",
        "counts",
        "hand",
        "legal",
        "level",
        "ncards",
        "opps",
        "partner",
        "seat",
        "st",
        "view",
    )

    def __init__(self, view: SeatView) -> None:
        self.view = view
        self.seat = view.seat
        self.partner = (view.seat + 2) % 4
        self.level = view.level
        self.W = wild_face(view.level)
        self.st = STRENGTH[view.level]
        counts = [0] * 54
        for f in view.hand:
            counts[f] += 1
        self.counts = counts
        self.hand = view.hand
        self.ncards = [27 if c is None else c for c in view.card_counts]
        self.opps = [s for s in ((view.seat + 1) % 4, (view.seat + 3) % 4) if self.ncards[s] > 0]
        self.legal = view.legal_actions
        self._unseen: list[int] | None = None
        self._nat: tuple[list[int], int] | None = None

    def unseen(self) -> list[int]:
        """Per-face counts of cards not in this hand and not yet played (held by others)."""
        if self._unseen is None:
            u = [2] * 54
            for f in self.hand:
                u[f] -= 1
            for _s, a in self.view.history:
                if a[0] in PLAY_TYPES:
                    for f in a[2]:
                        u[f] -= 1
            self._unseen = u
        return self._unseen




def lead_order(combos: Sequence[Combo], is_safe: Callable[[Combo], bool], st: Sequence[float],
               ncards: Sequence[int], opps: Sequence[int], partner: int, opp_min: Callable[[], int],
               feed_partner: bool = True, mode: str = "cost") -> list[Combo]:
    """The order in which a leader tries its decomposition's combinations (R26: a free lead).

    Shared by :class:`HeuristicAgent` and the search's fast rollout policy
    (:mod:`guandan.agents.fast_rollout`), so both lead by the same rules.

    Args:
        combos: the hand's decomposition (:attr:`Decomposition.combos`).
        is_safe: whether no unseen combination can beat a combination.
        st: strength of each rank for singles/pairs/triples (index = rank).
        ncards: cards left per seat (index = seat).
        opps: the two opponents' seats; partner: the partner's seat.
        opp_min: fewest cards held by an opponent still playing (called when needed).
        feed_partner: lead the partner's count as a single/pair when it holds 1-2 cards.
        mode: ``"cost"`` (default), ``"size"`` or ``"cost_bucket"`` (:attr:`HeuristicAgent.LEAD_ORDER`).

    Returns:
        list[Combo]: the non-bomb combinations in order (weakest first; unbeatable ones first in
        the endgame; from the top when an opponent holds one card and only singles are left), then
        the bombs, weakest first.
    """
    nonbomb = [c for c in combos if c[0] not in BOMB_TYPES]
    bombs = [c for c in combos if c[0] in BOMB_TYPES]

    def strength(c: Combo) -> float:
        r = c[1]
        if c[0] in (STRAIGHT, TUBE, PLATE, STRAIGHT_FLUSH):
            return float(r)
        return float(r if r is not None and r >= 13 else st[r]) if r is not None else 99.0

    if not nonbomb:
        return sorted(bombs, key=lambda c: -c[4])  # weakest bomb first (least negative cost)
    flags = [is_safe(c) for c in nonbomb]
    safe = [c for c, s in zip(nonbomb, flags) if s]
    unsafe = [c for c, s in zip(nonbomb, flags) if not s]
    order: list[Combo]
    if safe and len(unsafe) <= 1:
        # endgame: keep the lead with unbeatable combinations, the weak one last
        order = sorted(safe, key=lambda c: (-c.size, strength(c))) + unsafe
    else:
        danger = {ncards[s] for s in opps if ncards[s] <= 5}
        pn = ncards[partner]
        safe_ids = {id(c) for c in safe}
        feeding = feed_partner and 0 < pn <= 2 and opp_min() > 2

        def lead_key(c: Combo) -> tuple[Any, ...]:
            sz = c.size
            risky = sz in danger and id(c) not in safe_ids
            feed = -1 if feeding and sz == pn and c[0] in (SINGLE, PAIR) else 0
            # weakest first: high cost first, more cards first, lower rank first
            if mode == "size":
                return (risky, feed, -min(sz, 5), -round(c[4], 3), strength(c))
            if mode == "cost_bucket":
                return (risky, feed, -round(c[4] * 2) / 2, -sz, strength(c))
            return (risky, feed, -round(c[4], 3), -sz, strength(c))

        order = sorted(nonbomb, key=lead_key)
        if 1 in danger and all(c.size == 1 for c in nonbomb):
            # only singles left and an opponent has one card: lead from the top
            order = sorted(nonbomb, key=lambda c: -strength(c))
    return order + sorted(bombs, key=lambda c: -c[4])


class HeuristicAgent:
    """Rule-based player (name ``heuristic``); see the module docstring for its rules.

    Args:
        seed: accepted for the common agent interface (``make_agent``); the decisions are a
            pure function of the view, so the agent is deterministic whatever the seed.
        full_house_joker_pair: the rule option R21 the hand decomposition assumes; the agent
            falls back to a legal action anyway when a planned play is not legal.

    Tuning: subclass and override the class attributes below. Knobs off by default
    (``HOLD_CONTROL``, ``BLOCK_WHEN_CLOSE``, ``BOMB_FOR_PARTNER``, other ``LEAD_ORDER`` values)
    measured equal or worse in duplicate self-play.
    """

    name = "heuristic"

    #: Largest rise in hand cost accepted to answer an opponent without a bomb, by urgency.
    TAU_CALM = 0.25
    TAU_CLOSE = 1.2
    TAU_URGENT = 3.0
    #: An opponent is "close" to going out with this many cards or fewer (top seat / any).
    CLOSE_TOP = 6
    CLOSE_ANY = 4
    URGENT_TOP = 3
    URGENT_ANY = 2
    #: At most this many distinct non-bomb answers are evaluated by re-decomposition.
    MAX_EVAL = 6
    #: Search budget (nodes) when re-decomposing a hand to judge an answer.
    EVAL_BUDGET = 150
    #: Lead a low single/pair to a partner holding one or two cards.
    FEED_PARTNER = True
    #: Beat the partner's trick when the play leaves at most one weak combination to finish.
    BEAT_PARTNER_TO_FINISH = True
    #: Calm and the partner still to answer: keep a control card (cost below this) and pass.
    HOLD_CONTROL = 0.0
    #: Close to an opponent going out: answer with the strongest acceptable play (blocking).
    BLOCK_WHEN_CLOSE = False
    #: Bomb when the bomb leaves at most this many weak combinations.
    BOMB_WEAK_LEFT = 1
    #: Bomb to regain the lead for a partner holding this many cards or fewer (0: never).
    BOMB_FOR_PARTNER = 0
    #: With at least this many bombs, and no fewer than weak combinations, bombs are spent freely.
    SPARE_BOMBS = 2

    #: Combination costs used by the hand decomposition.
    MODEL: CostModel = DEFAULT_MODEL
    #: Lead order among the non-bomb combinations: "cost" (weakest first), "size", "cost_bucket".
    LEAD_ORDER = "cost"

    def __init__(self, seed: int | None = None, full_house_joker_pair: bool = True) -> None:
        self.rng = random.Random(seed)
        self.fhjp = full_house_joker_pair
        self._level = 0

    def _dec(self, counts: Sequence[int], budget: int = 400) -> Decomposition:
        return decompose(counts, self._level, self.fhjp, budget, self.MODEL)

    def _cost(self, counts: Sequence[int], budget: int = 400) -> float:
        return decompose(counts, self._level, self.fhjp, budget, self.MODEL).cost

    # -- entry point --------------------------------------------------------------------------
    def act(self, view: SeatView) -> PlayT:
        """Choose one of ``view.legal_actions``.

        Raises:
            ValueError: the view offers no legal action (the seat is not to act).
        """
        legal = view.legal_actions
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal action")
        if len(legal) == 1:
            return legal[0]
        ctx = _Ctx(view)
        self._level = view.level
        if view.phase == "tribute":
            return self._tribute(ctx)
        if view.phase == "return":
            return self._return(ctx)
        act = self._finish(ctx)
        if act is not None:
            return act
        if view.top is None:
            act = self._lead(ctx)
        else:
            act = self._follow(ctx)
        if act in legal:
            return act
        return self._fallback(ctx)  # pragma: no cover - safety net

    # -- tribute / return -------------------------------------------------------------------
    def _tribute(self, ctx: _Ctx) -> PlayT:
        """R45: pay the allowed copy whose loss leaves the best hand (e.g. keep a straight flush)."""
        best = None
        for a in ctx.legal:
            c = self._cost(_minus(ctx.counts, a[2]))
            if best is None or c < best[0] - 1e-9:
                best = (c, a)
        assert best is not None
        return best[1]

    def _return(self, ctx: _Ctx) -> PlayT:
        """R47: return the allowed card least useful to the hand: a lone weak single if there is
        one (the lowest to an opponent, the highest weak one to the partner), else the allowed
        card whose loss leaves the best hand."""
        to_partner = False
        for ev in reversed(ctx.view.tribute_events):
            if ev.get("type") == "tribute_paid":
                for payer, receiver, _card in ev["tributes"]:
                    if receiver == ctx.seat and payer == ctx.partner:
                        to_partner = True
                break
        st = ctx.st
        level = ctx.level
        W = ctx.W
        by_rank: dict[int, list[PlayT]] = {}
        for a in ctx.legal:
            f = a[2][0]
            by_rank.setdefault(99 if f == W else FACE_RANK[f], []).append(a)

        def strength(r: int) -> float:
            return st[level] + 0.5 if r == 99 else float(r if r >= 13 else st[r])

        d = self._dec(ctx.counts)
        reserved = self._reserved(d)
        lone = [c[2][0][0] for c in d.combos
                if c[0] == SINGLE and c[2] and c[3] == 0 and c[4] >= 0.9 and c[2][0][0] in by_rank]
        pick: int | None = None
        if lone:
            pick = max(lone, key=strength) if to_partner else min(lone, key=strength)
        else:
            best = None
            for r in sorted(by_rank, key=strength)[:5]:
                a = by_rank[r][0]
                c = self._cost(_minus(ctx.counts, a[2]), self.EVAL_BUDGET)
                key = (round(c, 6), -strength(r) if to_partner else strength(r))
                if best is None or key < best[0]:
                    best = (key, r)
            assert best is not None
            pick = best[1]
        acts = by_rank[pick]
        # same rank, several suits: keep the copy that a straight flush needs
        return min(acts, key=lambda a: reserved[a[2][0]])

    # -- play -----------------------------------------------------------------------------------
    def _finish(self, ctx: _Ctx) -> PlayT | None:
        """A legal play that empties the hand (R31), strongest reading first."""
        n = len(ctx.hand)
        if n > 10:
            return None
        best = None
        for a in ctx.legal:
            if len(a[2]) == n and (
                best is None or (_is_bomb(a), play_key(a, ctx.level)) > (_is_bomb(best), play_key(best, ctx.level))
            ):
                best = a
        return best

    def _reserved(self, d: Decomposition) -> list[int]:
        res = [0] * 54
        for c in d.combos:
            if c[0] == STRAIGHT_FLUSH and c[5]:
                for f in c[5]:
                    res[f] += 1
        return res

    def _combo_action(self, ctx: _Ctx, combo: Combo, d: Decomposition) -> PlayT | None:
        faces = _materialize(combo, ctx.counts, ctx.level, self._reserved(d))
        if faces is None:
            return None
        readings = classify(faces, ctx.level, self.fhjp)
        want = combo[0]
        for r in readings:
            if r[0] == want and r[1] == combo[1]:
                return (r[0], r[1], r[2])
        for r in readings:  # e.g. a "straight" that turned out to be one suit
            if r[0] == STRAIGHT_FLUSH and want == STRAIGHT:
                return (r[0], r[1], r[2])
        return None

    # safety of a combination against the unseen cards (bombs aside)
    def _safe(self, ctx: _Ctx, combo: Combo) -> bool:
        ptype, rank = combo[0], combo[1]
        if ptype in BOMB_TYPES:
            return True
        u = ctx.unseen()
        st = ctx.st
        lv = ctx.level
        nat, uw = ctx.unseen_ranks()
        assert rank is not None
        if ptype in (SINGLE, PAIR, TRIPLE, FULL_HOUSE):
            k = {SINGLE: 1, PAIR: 2, TRIPLE: 3, FULL_HOUSE: 3}[ptype]
            s = rank if rank >= 13 else st[rank]
            for r in range(13):
                if st[r] > s and nat[r] >= 1 and nat[r] + uw >= k:
                    return False
            if s < st[lv] and k <= 2 and uw >= k:
                return False
            if k <= 2:
                if s < 13 and u[SMALL_JOKER] >= k:
                    return False
                if s < 14 and u[BIG_JOKER] >= k:
                    return False
            return True
        width = {STRAIGHT: 1, TUBE: 2, PLATE: 3}[ptype]
        windows = {1: STRAIGHT_WINDOWS, 2: TUBE_WINDOWS, 3: PLATE_WINDOWS}[width]
        for top, ranks in windows.items():
            if top <= rank:
                continue
            need = sum(max(0, width - nat[r]) for r in ranks)
            if need <= uw and need < width * len(ranks):
                return False
        return True

    def _lead(self, ctx: _Ctx) -> PlayT:
        d = self._dec(ctx.counts)
        order = lead_order(d.combos, lambda c: self._safe(ctx, c), ctx.st, ctx.ncards, ctx.opps,
                           ctx.partner, ctx.opp_min, self.FEED_PARTNER, self.LEAD_ORDER)
        for c in order:
            act = self._combo_action(ctx, c, d)
            if act is not None and act in ctx.legal:
                return act
        return self._fallback(ctx)

    def _pressure(self, top_n: int, opp_min: int) -> tuple[bool, float]:
        """How pressed a follower is: ``(close, tau)``.

        Args:
            top_n: cards left to the seat whose play leads the trick.
            opp_min: fewest cards left to an opponent still playing.

        Returns:
            tuple[bool, float]: whether the deal is close to someone going out (R31), and the
            cost a follower accepts to answer (``TAU_URGENT``, ``TAU_CLOSE`` or ``TAU_CALM``).
        """
        close = top_n <= self.CLOSE_TOP or opp_min <= self.CLOSE_ANY
        if top_n <= self.URGENT_TOP or opp_min <= self.URGENT_ANY:
            return close, self.TAU_URGENT
        return close, (self.TAU_CLOSE if close else self.TAU_CALM)

    def _follow(self, ctx: _Ctx) -> PlayT:
        view = ctx.view
        top = view.top
        top_seat = view.top_seat
        assert top is not None and top_seat is not None
        level = ctx.level
        d = self._dec(ctx.counts)
        if top_seat == ctx.partner:
            return self._over_partner(ctx, d)
        c0 = d.cost
        legal = ctx.legal
        top_n = ctx.ncards[top_seat]
        opp_min = ctx.opp_min()
        close, tau = self._pressure(top_n, opp_min)

        # 1. an answer that is already a combination of the decomposition: no breaking
        best: tuple[float, PlayT] | None = None
        ttype, tsize = top[0], len(top[2])
        if ttype not in BOMB_TYPES:
            for c in d.combos:
                if c[0] != ttype or c[0] in BOMB_TYPES:
                    continue
                act = self._combo_action(ctx, c, d)
                if act is None or len(act[2]) != tsize or act not in legal:
                    continue
                loss = -c[4]
                if best is None or loss < best[0] - 1e-9 or (
                    abs(loss - best[0]) < 1e-9 and play_key(act, level) < play_key(best[1], level)
                ):
                    best = (loss, act)
        if best is not None:
            if self.HOLD_CONTROL and not close and -best[0] < self.HOLD_CONTROL:
                partner_to_come = top_seat == (ctx.seat + 3) % 4 and ctx.ncards[ctx.partner] > 0
                if partner_to_come:
                    return PASS
            if self.BLOCK_WHEN_CLOSE and close:
                strongest = None
                for c in d.combos:
                    if c[0] != ttype:
                        continue
                    act = self._combo_action(ctx, c, d)
                    if act is None or len(act[2]) != tsize or act not in legal:
                        continue
                    if strongest is None or play_key(act, level) > play_key(strongest, level):
                        strongest = act
                if strongest is not None:
                    return strongest
            return best[1]

        # 2. answers that break combinations: re-decompose what would be left
        reserved = self._reserved(d)
        sigs = distinct_answers(legal, level, reserved)
        if not sigs:
            return PASS
        nonbomb = sorted((a for a in sigs.values() if not _is_bomb(a)), key=lambda a: play_key(a, level))
        for a in nonbomb[: self.MAX_EVAL]:
            c1 = self._cost(_minus(ctx.counts, a[2]), self.EVAL_BUDGET)
            loss = c1 - c0
            if best is None or loss < best[0] - 1e-9:
                best = (loss, a)
        if best is not None and best[0] <= tau:
            return best[1]

        # 3. bombs, when they matter
        return self._bomb_answer(sigs.values(), d, ctx.counts, level, ctx.ncards[ctx.partner], close)

    def _bomb_answer(self, answers: Iterable[PlayT], d: Decomposition, counts: Sequence[int], level: int,
                     partner_n: int, close: bool) -> PlayT:
        """Last step of following when no cheap answer is found: a bomb, when it matters (R27).

        Args:
            answers: the legal answers considered (bombs among them are tried, lowest first, at most 3).
            d: the decomposition of the hand; counts: the hand's per-face counts.
            level: the level rank; partner_n: cards left to the partner.
            close: whether someone is close to going out (:meth:`_pressure`).

        Returns:
            PlayT: the bomb that leaves the cheapest hand, if the deal is close, few weak
            combinations would be left, bombs are to spare, or the partner is about to go out;
            else ``PASS``.
        """
        bombs = sorted((a for a in answers if _is_bomb(a)), key=lambda a: play_key(a, level))
        if not bombs:
            return PASS
        n_bombs = sum(1 for c in d.combos if c[0] in BOMB_TYPES)
        n_weak = sum(1 for c in d.combos if c[0] not in BOMB_TYPES and c[4] > 0.5)
        spare = n_bombs >= self.SPARE_BOMBS and n_bombs >= n_weak
        choice = None
        for a in bombs[:3]:
            rest = self._dec(_minus(counts, a[2]), self.EVAL_BUDGET)
            if choice is None or rest.cost < choice[0] - 1e-9:
                choice = (rest.cost, a, rest)
        assert choice is not None
        rest = choice[2]
        weak_left = sum(1 for c in rest.combos if c[0] not in BOMB_TYPES and c[4] > 0.3)
        for_partner = 0 < partner_n <= self.BOMB_FOR_PARTNER
        if close or weak_left <= self.BOMB_WEAK_LEFT or spare or for_partner:
            return choice[1]
        return PASS

    def _over_partner(self, ctx: _Ctx, d: Decomposition) -> PlayT:
        """The partner holds the trick: pass (R28 allows beating a partner, rarely wise), unless
        a combination of the hand beats it and leaves at most one weak combination, so that
        the bot can go out next while the partner still holds more cards."""
        top = ctx.view.top
        assert top is not None
        if not self.BEAT_PARTNER_TO_FINISH or top[0] in BOMB_TYPES:
            return PASS
        if ctx.ncards[ctx.partner] <= len(ctx.hand):
            return PASS
        for c in d.combos:
            if c[0] != top[0]:
                continue
            act = self._combo_action(ctx, c, d)
            if act is None or len(act[2]) != len(top[2]) or act not in ctx.legal:
                continue
            rest = [x for x in d.combos if x is not c and x[0] not in BOMB_TYPES]
            unsafe = [x for x in rest if not self._safe(ctx, x)]
            if len(unsafe) <= 1 and len(rest) <= 2:
                return act
        return PASS

    def _fallback(self, ctx: _Ctx) -> PlayT:
        """Safety net: pass when allowed, else the lowest non-bomb play."""
        legal = ctx.legal
        if legal[0][0] == "pass":
            return legal[0]
        plays = [a for a in legal if a[0] in PLAY_TYPES]
        nb = [a for a in plays if not _is_bomb(a)] or plays
        return min(nb, key=lambda a: (play_key(a, ctx.level), -len(a[2])))
