"""A rollout policy that plays straight from a :class:`~guandan.core.deal.Deal` (name ``fast``).

The search bot (:mod:`.search`) spends most of its time in rollouts, and a profile of late
decisions puts most of a rollout in the heuristic's per-call work: building a seat view, the full
list of legal actions (move generation) at every action, a fresh hand decomposition for every
sampled hand, and classifying every planned play to check that it is in that list.
:class:`FastRolloutPolicy` makes the heuristic's decisions (:mod:`.heuristic`: the same
decomposition, costs, lead order, endgame safety, follow thresholds and bomb rules) without that
overhead:

* **No seat view, no legal-action list in the common case.** It reads the deal directly
  (hands as per-face counts, the trick's top play, card counts). A combination of the hand's
  decomposition is legal to lead (R27) and legal to follow exactly when it beats the table
  (:func:`guandan.core.plays.beats`, R23-R26), so the legal plays are generated
  (:func:`guandan.core.movegen.legal_plays`) only when no combination of the decomposition
  answers the table and a combination would have to be broken, or a bomb considered.
* **Going out** (R31) is checked by classifying the whole hand once (10 cards or fewer): a
  reading that may be played now (any reading when leading, one that beats the table when
  following) empties the hand, as the heuristic's ``_finish`` does with the legal list.
* **Incremental decomposition.** After a seat plays a combination of its decomposition (faces
  chosen away from straight-flush cards), the rest of that decomposition is stored as the
  decomposition of the hand that is left, so the seat's next decision reuses it instead of
  searching again; hands of sampled worlds are all different, so the heuristic's cache rarely
  hits in rollouts. Decompositions live in the policy's own bounded cache, never in the
  heuristic's (whose real decisions must not change).
* **Unseen cards** for the endgame safety test are the other three hands (in a rollout every
  hand is known; from the seat's side they are exactly the cards not in its hand and not yet
  played).
* **Cheaper judgement of broken answers**: the two weakest non-bomb answers (``MAX_EVAL``) are
  re-decomposed with a search budget of ``EVAL_BUDGET`` nodes.

It never plays an illegal action: every play it returns is a reading of cards of the seat's
hand that beats the table (or leads), and when nothing planned fits it falls back to PASS (when
following) or the weakest legal play. :meth:`FastRolloutPolicy.act` accepts a
:class:`~guandan.core.views.SeatView` too (the common agent interface, so it can sit at a table),
but rollouts call :meth:`FastRolloutPolicy.act_deal`. Decisions are a pure function of the deal
(deterministic whatever the seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guandan.core.cards import wild_face
from guandan.core.deal import Deal
from guandan.core.movegen import legal_plays
from guandan.core.plays import (
    BOMB_TYPES,
    PAIR,
    PASS,
    PLATE,
    PLAY_TYPES,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRENGTH,
    TRIPLE,
    TUBE,
    PlayT,
    beats,
    classify,
    play_key,
)
from guandan.core.views import SeatView

from .decomposition import Combo, Decomposition, _sf_candidates, decompose
from .heuristic import HeuristicAgent, _CtxBase, _materialize, _minus, distinct_answers, lead_order

__all__ = ["FastRolloutPolicy"]

#: Most decompositions kept by one policy (oldest dropped first).
_CACHE_MAX = 20_000


def _combo_key(c: Combo, st: Sequence[int]) -> int:
    """The comparison key (:func:`guandan.core.plays.play_key`) a non-bomb combination will
    have: its top rank for sequences (R10), the level-order strength of its rank otherwise (R9;
    jokers 13 and 14)."""
    r = c[1]
    if c[0] in (STRAIGHT, TUBE, PLATE):
        return int(r)
    return int(r if r >= 13 else st[r])


_GROUP = {SINGLE: 1, PAIR: 2, TRIPLE: 3}


def _surely_no_answer(counts: Sequence[int], level: int, top: PlayT, n: int) -> bool:
    """Whether a hand surely holds no play beating a single, pair or triple ``top``, read from
    rank counts (a cheap test before generating the legal plays; ``False`` when unsure).

    No bomb (4+ of a rank with wilds, the four jokers, R24) and no straight flush can be formed,
    and no rank stronger than the table (R9 level order; wilds join a natural rank, R12-R15, or
    pair as level cards; jokers form singles and natural pairs only, R19) holds enough cards.
    """
    k = _GROUP.get(top[0])
    if k is None:
        return False
    if n < k:  # fewer cards than the table's and than any bomb (k <= 3)
        return True
    W = level * 4 + 1
    w = counts[W]
    sj, bj = counts[52], counts[53]
    if sj + bj == 4:
        return False
    st = STRENGTH[level]
    trank = top[1]
    ts = trank if trank >= 13 else st[trank]
    most = 0
    for r in range(13):
        c = counts[4 * r] + counts[4 * r + 1] + counts[4 * r + 2] + counts[4 * r + 3]
        if r == level:
            c -= w
        if c > most:
            most = c
        if c and c + w >= k and st[r] > ts:
            return False
    if most + w >= 4:
        return False
    if k == 1:
        if (w and st[level] > ts) or (sj and ts < 13) or (bj and ts < 14):
            return False
    elif k == 2:
        if (w == 2 and st[level] > ts) or (sj == 2 and ts < 13) or (bj == 2 and ts < 14):
            return False
    if n >= 5 and _sf_candidates(counts, level, w):
        return False
    return True


def _loss_key(x: tuple[float, int, Combo]) -> tuple[float, int]:
    return (round(x[0], 9), x[1])


class _DealCtx(_CtxBase):
    """The facts :meth:`HeuristicAgent._safe` and the lead/follow rules read, from a deal.

    Same attribute names as the heuristic's per-decision context (``seat``, ``partner``,
    ``level``, ``W``, ``st``, ``counts``, ``ncards``, ``opps``, ``unseen()``, ``opp_min()``).
    """

    __slots__ = ("W", "_nat", "_others", "_unseen", "counts", "level", "n", "ncards", "opps", "partner", "seat",
                 "st")

    def __init__(self, seat: int, counts: Sequence[int], level: int, ncards: Sequence[int],
                 others: Sequence[Sequence[int]]) -> None:
        self.seat = seat
        self.partner = (seat + 2) % 4
        self.level = level
        self.W = wild_face(level)
        self.st = STRENGTH[level]
        self.counts = counts
        self.n = ncards[seat]
        self.ncards = ncards
        self.opps = [s for s in ((seat + 1) % 4, (seat + 3) % 4) if ncards[s] > 0]
        self._others = others
        self._unseen: list[int] | None = None
        self._nat: tuple[list[int], int] | None = None

    def unseen(self) -> list[int]:
        """Per-face counts of the cards in the other three hands (= unseen from this seat)."""
        if self._unseen is None:
            a, b, c = self._others
            self._unseen = [x + y + z for x, y, z in zip(a, b, c)]
        return self._unseen


class FastRolloutPolicy(HeuristicAgent):
    """The heuristic's rules played from a deal, without views or legal-action lists (module
    docstring). Name ``fast``.

    Args:
        seed: accepted for the agent interface; decisions do not depend on it.
        full_house_joker_pair: rule option R21 (also read from the deal's rules in rollouts).
        dec_budget: search budget of every decomposition (default ``DEC_BUDGET``).
        max_eval: broken answers judged when following (default ``MAX_EVAL``).
        incremental: reuse the rest of the decomposition after a seat plays one of its
            combinations (default); ``False``: decompose every new hand afresh (closer to the
            heuristic: the model of the other players, ``belief_model=fast``).
    """

    name = "fast"
    MAX_EVAL = 2
    #: search budget (nodes per straight-flush choice) of every decomposition (heuristic: 400
    #: for the hand, 150 to judge an answer)
    DEC_BUDGET = 150

    def __init__(self, seed: int | None = None, full_house_joker_pair: bool = True, *,
                 dec_budget: int | None = None, max_eval: int | None = None,
                 incremental: bool = True) -> None:
        super().__init__(seed, full_house_joker_pair)
        if dec_budget is not None:
            self.DEC_BUDGET = dec_budget
        if max_eval is not None:
            self.MAX_EVAL = max_eval
        self.incremental = incremental
        self._cache: dict[tuple[Any, ...], Decomposition] = {}

    def reset(self) -> None:
        """Forget the remembered decompositions (the search calls it before each sampled world,
        so that a world's rollouts do not depend on the worlds played before it: decisions stay
        a pure function of the view and the seed, whatever the worker count)."""
        self._cache.clear()

    # -- decomposition with its own cache ------------------------------------------------------
    def _dec(self, counts: Sequence[int], budget: int = 400) -> Decomposition:
        # one search budget (DEC_BUDGET) for every decomposition, so that a hand judged when
        # choosing an answer is not decomposed again when it plays next
        key = (tuple(counts), self._level)
        d = self._cache.get(key)
        if d is None:
            d = decompose(counts, self._level, self.fhjp, self.DEC_BUDGET, self.MODEL)
            self._remember(key, d)
        return d

    def _cost(self, counts: Sequence[int], budget: int = 400) -> float:
        return self._dec(counts, budget).cost

    def _remember(self, key: tuple[Any, ...], d: Decomposition) -> None:
        cache = self._cache
        if len(cache) >= _CACHE_MAX:
            cache.clear()
        cache[key] = d

    def _played(self, counts: Sequence[int], d: Decomposition, combo: Combo, faces: Sequence[int],
                reserved: Sequence[int]) -> None:
        """Store the rest of ``d`` as the decomposition of ``counts`` minus ``faces`` (the faces
        of ``combo``), unless the faces took a card a kept straight flush needs."""
        if not self.incremental:
            return
        if combo[0] != STRAIGHT_FLUSH and any(reserved[f] for f in faces):
            return
        rest = [c for c in d.combos if c is not combo]
        if len(rest) == len(d.combos):
            return
        left = list(counts)
        for f in faces:
            left[f] -= 1
        key = (tuple(left), self._level)
        if key not in self._cache:
            self._remember(key, Decomposition(rest, d.cost - combo[4]))

    # -- entry points --------------------------------------------------------------------------
    def act(self, view: SeatView) -> PlayT:
        """Choose one of ``view.legal_actions`` (tribute and return as the heuristic; play-phase
        decisions by the deal-level rules with the unseen cards taken from the view).

        Raises:
            ValueError: the view offers no legal action.
        """
        if view.phase != "play" or len(view.legal_actions) <= 1:
            return super().act(view)
        counts = [0] * 54
        for f in view.hand:
            counts[f] += 1
        # the unseen cards as one "other hand" (the safety test only reads their sum)
        u = [2] * 54
        for f in view.hand:
            u[f] -= 1
        for _s, a in view.history:
            if a[0] in PLAY_TYPES:
                for f in a[2]:
                    u[f] -= 1
        zero = [0] * 54
        ncards = [27 if c is None else c for c in view.card_counts]
        ncards[view.seat] = len(view.hand)
        act = self._decide(view.seat, counts, view.level, ncards, (u, zero, zero), view.top, view.top_seat)
        if act in view.legal_actions:
            return act
        return super().act(view)  # pragma: no cover - safety net

    def act_deal(self, deal: Deal) -> PlayT:
        """The action of the seat to act in a play-phase ``deal`` (a normalised legal action,
        ready for :meth:`Deal.apply_unchecked`)."""
        seat = deal.turn
        assert seat is not None
        hands = deal.hands
        self.fhjp = deal.rules.full_house_joker_pair
        others = [hands[s] for s in range(4) if s != seat]
        return self._decide(seat, hands[seat], deal.level, deal.n_cards, others, deal.top, deal.top_seat)

    # -- decisions ----------------------------------------------------------------------------
    def _decide(self, seat: int, counts: Sequence[int], level: int, ncards: Sequence[int],
                others: Sequence[Sequence[int]], top: PlayT | None, top_seat: int | None) -> PlayT:
        self._level = level
        ctx = _DealCtx(seat, counts, level, ncards, others)
        if top is None:
            act = self._finish_deal(ctx)
            return act if act is not None else self._lead_deal(ctx)
        assert top_seat is not None
        # the plays that beat the table (R23-R26): none, pass without thinking
        if _surely_no_answer(counts, level, top, ctx.n):
            return PASS
        legal = legal_plays(counts, level, top, self.fhjp)
        if not legal:
            return PASS
        n = ctx.n
        if n <= 10:  # a play that empties the hand (R31), strongest reading first
            best = None
            for a in legal:
                if len(a[2]) == n and (best is None or (a[0] in BOMB_TYPES, play_key(a, level))
                                       > (best[0] in BOMB_TYPES, play_key(best, level))):
                    best = a
            if best is not None:
                return best
        return self._follow_deal(ctx, top, top_seat, legal)

    def _finish_deal(self, ctx: _DealCtx) -> PlayT | None:
        """A lead that empties the hand (R31), strongest reading first (the heuristic's
        ``_finish``)."""
        n = ctx.n
        if n > 10:
            return None
        counts = ctx.counts
        W = ctx.W
        # distinct natural ranks (the jokers count as one, the wilds as none): a hand of one
        # play has one rank (single, pair, triple, bomb R18-R24, the four jokers), or is a full
        # house / straight (5 cards) or a tube / plate (6 cards)
        if n != 5 and n != 6:
            r0 = -1
            for f in range(54):
                if counts[f] and f != W:
                    r = f >> 2
                    if r0 < 0:
                        r0 = r
                    elif r != r0:
                        return None
        faces = [f for f in range(54) if counts[f] for _ in range(counts[f])]
        best = None
        level = ctx.level
        for r in classify(faces, level, self.fhjp):
            a = (r[0], r[1], r[2])
            if best is None or ((a[0] in BOMB_TYPES, play_key(a, level))
                                > (best[0] in BOMB_TYPES, play_key(best, level))):
                best = a
        return best

    def _action(self, ctx: _DealCtx, combo: Combo,
                reserved: Sequence[int]) -> tuple[PlayT | None, tuple[int, ...]]:
        """The play of ``combo`` (faces avoiding straight-flush cards) and its faces."""
        faces = _materialize(combo, ctx.counts, ctx.level, reserved)
        if faces is None:
            return None, ()
        want = combo[0]
        readings = classify(faces, ctx.level, self.fhjp)
        for r in readings:
            if r[0] == want and r[1] == combo[1]:
                return (r[0], r[1], r[2]), faces
        for r in readings:
            if r[0] == STRAIGHT_FLUSH and want == STRAIGHT:
                return (r[0], r[1], r[2]), faces
        return None, ()

    def _lead_deal(self, ctx: _DealCtx) -> PlayT:
        d = self._dec(ctx.counts)
        order = lead_order(d.combos, lambda c: self._safe(ctx, c), ctx.st, ctx.ncards,  # type: ignore[arg-type]
                           ctx.opps, ctx.partner, ctx.opp_min, self.FEED_PARTNER)
        reserved = self._reserved(d)
        for c in order:
            act, faces = self._action(ctx, c, reserved)
            if act is not None:
                self._played(ctx.counts, d, c, faces, reserved)
                return act
        return self._weakest(ctx, None)  # pragma: no cover - safety net

    def _weakest(self, ctx: _DealCtx, top: PlayT | None) -> PlayT:
        """Safety net: pass when following, else the lowest non-bomb play."""
        if top is not None:
            return PASS
        plays = legal_plays(ctx.counts, ctx.level, None, self.fhjp)
        nb = [a for a in plays if a[0] not in BOMB_TYPES] or plays
        return min(nb, key=lambda a: (play_key(a, ctx.level), -len(a[2])))

    def _follow_deal(self, ctx: _DealCtx, top: PlayT, top_seat: int, legal: list[PlayT]) -> PlayT:
        level = ctx.level
        d = self._dec(ctx.counts)
        reserved = self._reserved(d)
        ttype, tsize = top[0], len(top[2])
        if top_seat == ctx.partner:
            return self._over_partner_deal(ctx, d, top, reserved)
        c0 = d.cost
        ncards = ctx.ncards
        top_n = ncards[top_seat]
        opp_min = ctx.opp_min()
        close, tau = self._pressure(top_n, opp_min)

        # 1. a combination of the decomposition that beats the table
        if ttype not in BOMB_TYPES:
            # cheapest to give up first (highest cost), then the lowest key; the key of a
            # combination is known without choosing its faces, so only the chosen one is
            # materialised and classified
            tkey = play_key(top, level)
            fits = []
            for c in d.combos:
                if c[0] != ttype or c.size != tsize:
                    continue
                k = _combo_key(c, ctx.st)
                if k > tkey:
                    fits.append((-c[4], k, c))
            fits.sort(key=_loss_key)
            for _loss, _k, c in fits:
                act, faces = self._action(ctx, c, reserved)
                if act is None or len(act[2]) != tsize or not beats(act, top, level):
                    continue
                self._played(ctx.counts, d, c, faces, reserved)
                return act

        # 2. answers that break combinations: re-decompose what would be left
        sigs = distinct_answers(legal, level, reserved)
        if not sigs:
            return PASS
        nonbomb = sorted((a for a in sigs.values() if a[0] not in BOMB_TYPES),
                         key=lambda a: play_key(a, level))
        best2: tuple[float, PlayT] | None = None
        for a in nonbomb[: self.MAX_EVAL]:
            loss = self._cost(_minus(ctx.counts, a[2])) - c0
            if best2 is None or loss < best2[0] - 1e-9:
                best2 = (loss, a)
        if best2 is not None and best2[0] <= tau:
            return best2[1]

        # 3. bombs, when they matter
        return self._bomb_answer(sigs.values(), d, ctx.counts, level, ncards[ctx.partner], close)

    def _over_partner_deal(self, ctx: _DealCtx, d: Decomposition, top: PlayT,
                           reserved: Sequence[int]) -> PlayT:
        """The partner holds the trick: the heuristic's ``_over_partner`` rule."""
        if not self.BEAT_PARTNER_TO_FINISH or top[0] in BOMB_TYPES:
            return PASS
        if ctx.ncards[ctx.partner] <= ctx.n:
            return PASS
        for c in d.combos:
            if c[0] != top[0]:
                continue
            act, faces = self._action(ctx, c, reserved)
            if act is None or len(act[2]) != len(top[2]) or not beats(act, top, ctx.level):
                continue
            rest = [x for x in d.combos if x is not c and x[0] not in BOMB_TYPES]
            unsafe = [x for x in rest if not self._safe(ctx, x)]  # type: ignore[arg-type]
            if len(unsafe) <= 1 and len(rest) <= 2:
                self._played(ctx.counts, d, c, faces, reserved)
                return act
        return PASS

