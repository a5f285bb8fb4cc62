"""Hidden-hand sampling: deals consistent with one seat's public record (DESIGN.md section 6).

The one world sampler of the project. The search bot, the RL environment and any analysis
call :func:`sample_world` (or :class:`WorldConstraints` when they sample many worlds from one
view); nobody writes a second.

What a seat knows (all of it public to that seat, docs/rules.md R32, R50)
--------------------------------------------------------------------
* its own hand, and the cards every seat has played (``view.history``);
* how many cards each seat holds (``view.card_counts``; with ``card_counts = le10`` a hidden
  count is recomputed from the public record, 27 dealt, R4);
* finished seats hold nothing (R31);
* tribute facts (R44-R50), from ``view.tribute_events``:

  - a **tribute** receiver holds the paid card from then on, unless it played or returned it;
  - a **tribute payer** held no non-wild card stronger in level order (R9) than the card it
    paid (R45, EC-31): at the start of play it holds such cards only as far as they were
    returned to it;
  - a **return** target holds the returned card unless it played it (R47);
  - a return that is not in the ≤10 set (``return_rule``: ``le10``, or ``le10_partner_only``
    towards a partner; AMB-02/03, EC-38/39) proves that the receiver held no card of that set
    and, being its smallest card, no card weaker in level order (R47: a returned Q means no J);
  - **anti-tribute** (R48): the seats shown held the big jokers (one seat shown: both; two
    seats: one each). When tribute was paid instead, the seats counted for anti-tribute held
    at most one big joker between them (R48, AMB-08), so a payer who paid a big joker holds no
    other one, and with ``anti_tribute_single = team_if_opponents`` its partner holds at most
    ``1 - (big jokers paid)``;
* wilds (R12) never stand for jokers, and a play lists the physical faces played (a wild
  appears as its own face, the ♥ of the level rank), so the played cards are exact.

Sampling
--------
Unplayed cards not in the viewer's hand (the *pool*) are dealt to the other seats: first the
cards a seat is known to hold, then the cards some seat may not hold (most constrained first,
each copy to an allowed seat with probability proportional to its free places), then the
rest uniformly. Without tribute constraints this is exactly uniform over the consistent
deals; with them it is close to uniform (the constrained copies are placed by the weights
above). A greedy pass that runs into a dead end is retried; after a few failures an exact
placement with a max-flow feasibility check takes over, so a sample exists whenever a
consistent deal exists.

:meth:`WorldConstraints.exact` is the second draw of the same sampler: exact draws over the
16 rank groups by a dynamic program with backward sampling
(:mod:`guandan.core.exact_worlds`), uniform over the consistent deals or tilted by a belief's
per-seat, per-group count weights (:mod:`guandan.agents.belief`); the draw above stays the
default.

Playing a sampled world out
---------------------------
:func:`world_deal` turns a view (play phase) and a sampled world into a
:class:`~guandan.core.deal.Deal` in the same position (trick, top play, passes, finished seats,
history), ready for :meth:`~guandan.core.deal.Deal.apply_unchecked` /
:meth:`~guandan.core.deal.Deal.clone` in search.

Standard library only; the randomness comes from the injected ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from .cards import BIG_JOKER, FACE_RANK, N_FACES, parse_card, wild_face
from .deal import PLAY, Deal, partner
from .exact_worlds import ExactSampler, InconsistentView, World
from .plays import PLAY_TYPES, STRENGTH, PlayT
from .views import SeatView

_TEN = 8  # rank index of T
#: cards dealt to each seat (R4), used to recompute counts hidden by ``card_counts = le10``
DEALT = 27

__all__ = [
    "DEALT", "World", "WorldConstraints", "InconsistentView", "sample_world", "world_deal", "played_by_seat",
]


def played_by_seat(history: Sequence[tuple[int, PlayT]]) -> list[list[int]]:
    """Per-seat, per-face counts of the cards each seat has played (``history`` as in a view).

    Returns:
        A list of 4 lists of 54 counts. Tribute, return and pass actions play no cards.
    """
    out = [[0] * N_FACES for _ in range(4)]
    for seat, act in history:
        if act[0] in PLAY_TYPES:
            row = out[seat]
            for f in act[2]:
                row[f] += 1
    return out


class WorldConstraints:
    """What one seat's view says about the other seats' hands now (see the module docstring).

    Build once per view, then call :meth:`sample` as often as needed.

    Args:
        view: the seat's :class:`~guandan.core.views.SeatView` (any phase).
    Attributes:
        seat: the viewing seat.
        counts: cards held now per seat (length 4).
        pool: per-face counts (length 54) of the cards the other seats hold between them.
        lower: ``lower[s][f]``: copies of face ``f`` seat ``s`` is known to hold now.
        upper: ``upper[s][f]``: most copies of face ``f`` seat ``s`` may hold now.
    Raises:
        InconsistentView: the counts do not add up or the facts contradict each other.
    """

    def __init__(self, view: SeatView) -> None:
        self.seat = seat = view.seat
        self.hand: tuple[int, ...] = tuple(view.hand)
        self.level = level = view.level
        rules = view.rules
        st = STRENGTH[level]
        wild = wild_face(level)
        played = played_by_seat(view.history)
        pool = [2] * N_FACES
        for f in view.hand:
            pool[f] -= 1
        for row in played:
            for f in range(N_FACES):
                pool[f] -= row[f]
        if min(pool) < 0:
            raise InconsistentView("more copies of a face are in hand and played than the deck holds (R1)")

        # known holdings at the start of play (K) and caps at the start of play (cap0)
        known = [[0] * N_FACES for _ in range(4)]
        cap0 = [[2] * N_FACES for _ in range(4)]
        tributes: list[tuple[int, int, int]] = []
        returns: list[tuple[int, int, int]] = []
        anti: tuple[int, ...] = ()
        for ev in view.tribute_events:
            kind = ev.get("type")
            if kind == "tribute_paid":
                tributes.extend((int(p), int(r), parse_card(c)) for p, r, c in ev["tributes"])
            elif kind == "returns_revealed":
                returns.extend((int(r), int(t), parse_card(c)) for r, t, c in ev["returns"])
            elif kind == "anti_tribute":
                anti = tuple(int(s) for s in ev["seats"])
        returned_to = [[0] * N_FACES for _ in range(4)]
        for _r, t, c in returns:
            returned_to[t][c] += 1
        for p, r, t in tributes:
            known[r][t] += 1
            # R45/EC-31: the payer held no non-wild card stronger than its tribute
            ts = st[FACE_RANK[t]]
            for f in range(N_FACES):
                if f != wild and st[FACE_RANK[f]] > ts:
                    cap0[p][f] = min(cap0[p][f], returned_to[p][f])
        if tributes and not anti:
            # R48: the counted seats held at most one big joker between them
            payers = [p for p, _r, _t in tributes]
            paid_bj = sum(1 for _p, _r, t in tributes if t == BIG_JOKER)
            counted = list(payers)
            if len(tributes) == 1 and rules.anti_tribute_single == "team_if_opponents":
                p, r, _t = tributes[0]
                if p != partner(r):
                    counted.append(partner(p))  # AMB-08
            for s in counted:
                if s in payers:
                    # a payer held one big joker at most, and paid it if it held it (R45)
                    cap = returned_to[s][BIG_JOKER]
                else:
                    cap = max(0, 1 - paid_bj)  # the payer's partner under AMB-08
                cap0[s][BIG_JOKER] = min(cap0[s][BIG_JOKER], cap)
        for r, t, c in returns:
            if known[r][c] > 0:
                known[r][c] -= 1
            known[t][c] += 1
            limit_applies = rules.return_rule == "le10" or (
                rules.return_rule == "le10_partner_only" and t == partner(r)
            )
            in_set = FACE_RANK[c] <= _TEN and FACE_RANK[c] != level
            if limit_applies and not in_set:
                # EC-39: the receiver had no card of the ≤10 set to return, and returned its
                # smallest card (R47), so it held no card weaker in level order than that one
                cs = st[FACE_RANK[c]]
                for f in range(N_FACES):
                    if (FACE_RANK[f] <= _TEN and FACE_RANK[f] != level) or st[FACE_RANK[f]] < cs:
                        cap0[r][f] = 0
        for s in anti:
            known[s][BIG_JOKER] = max(known[s][BIG_JOKER], 2 if len(anti) == 1 else 1)

        counts = self._counts(view, played, tributes, returns)
        lower = [[0] * N_FACES for _ in range(4)]
        upper = [[0] * N_FACES for _ in range(4)]
        for s in range(4):
            if s == seat:
                continue
            for f in range(N_FACES):
                lower[s][f] = max(0, known[s][f] - played[s][f])
                upper[s][f] = min(pool[f], cap0[s][f] - played[s][f])
                if upper[s][f] < lower[s][f]:
                    raise InconsistentView(f"seat {s}: contradictory facts about face {f}")
        others = [s for s in range(4) if s != seat]
        if sum(counts[s] for s in others) != sum(pool):
            raise InconsistentView(
                f"the other seats hold {sum(counts[s] for s in others)} cards but {sum(pool)} are unseen"
            )
        for f in range(N_FACES):
            if sum(lower[s][f] for s in others) > pool[f]:
                raise InconsistentView(f"face {f} is known held more often than it is unseen")
        for s in others:
            if sum(lower[s]) > counts[s]:
                raise InconsistentView(f"seat {s} is known to hold more cards than it has")
        self.counts = counts
        self.pool = pool
        self.lower = lower
        self.upper = upper
        self.others = others
        # faces some seat may not take freely: placed with care
        self._constrained = [
            f
            for f in range(N_FACES)
            if pool[f] - sum(lower[s][f] for s in others) > 0
            and any(upper[s][f] - lower[s][f] < pool[f] - sum(lower[o][f] for o in others) for s in others)
        ]

    def _counts(
        self,
        view: SeatView,
        played: list[list[int]],
        tributes: list[tuple[int, int, int]],
        returns: list[tuple[int, int, int]],
    ) -> list[int]:
        counts: list[int] = []
        for s in range(4):
            c = view.card_counts[s]
            if s == view.seat:
                c = len(view.hand)
            if c is None:
                # hidden count (le10, R32): dealt cards, tribute and returns moved, cards played
                c = DEALT - sum(played[s])
                c += sum(1 for _p, r, _t in tributes if r == s) - sum(1 for p, _r, _t in tributes if p == s)
                c += sum(1 for _r, t, _c in returns if t == s) - sum(1 for r, _t, _c in returns if r == s)
            if s in view.finished:
                c = 0
            counts.append(int(c))
        return counts

    # -- sampling ---------------------------------------------------------------------------
    def sample(self, rng: random.Random) -> World:
        """One consistent world: four hands (sorted faces), the viewer's own hand unchanged.

        Raises:
            InconsistentView: no consistent world exists (cannot happen for a view of a real game).
        """
        for _ in range(8):
            w = self._greedy(rng)
            if w is not None:
                return w
        return self._exact(rng)

    def exact(self, weights: Sequence[Sequence[Sequence[float]]] | None = None) -> ExactSampler:
        """The exact sampler of this view (:class:`~guandan.core.exact_worlds.ExactSampler`).

        Args:
            weights: ``weights[s][g][k]`` (4 x 16 x 9): belief factors per hidden seat, rank
                group and count; ``None``: the exact uniform law over consistent deals.
        Returns:
            An :class:`ExactSampler`; its ``sample(rng)`` draws worlds that satisfy every fact.
        Raises:
            InconsistentView: no consistent world has a positive weight.
            ValueError: ``weights`` has a bad shape or a negative entry.
        """
        return ExactSampler(self, weights)

    def _start(self) -> tuple[list[list[int]], list[int], list[int]]:
        hands: list[list[int]] = [[] for _ in range(4)]
        pool = self.pool[:]
        slots = [0, 0, 0, 0]
        for s in self.others:
            low = self.lower[s]
            h = hands[s]
            for f in range(N_FACES):
                k = low[f]
                if k:
                    h.extend((f,) * k)
                    pool[f] -= k
            slots[s] = self.counts[s] - len(h)
        return hands, pool, slots

    def _finish(self, hands: list[list[int]], pool: list[int], slots: list[int], rng: random.Random) -> World:
        rest: list[int] = []
        for f in range(N_FACES):
            if pool[f]:
                rest.extend((f,) * pool[f])
        rng.shuffle(rest)
        i = 0
        for s in self.others:
            k = slots[s]
            hands[s].extend(rest[i : i + k])
            i += k
        hands[self.seat] = list(self.hand)
        h = [tuple(sorted(x)) for x in hands]
        return (h[0], h[1], h[2], h[3])

    def _greedy(self, rng: random.Random) -> World | None:
        hands, pool, slots = self._start()
        lower, upper = self.lower, self.upper
        copies: list[tuple[int, float, int]] = []
        for f in self._constrained:
            n_ok = sum(1 for s in self.others if upper[s][f] > lower[s][f])
            for _ in range(pool[f]):
                copies.append((n_ok, rng.random(), f))
        copies.sort()
        taken = [[0] * N_FACES for _ in range(4)]
        for _n, _r, f in copies:
            ok = [s for s in self.others if slots[s] > 0 and lower[s][f] + taken[s][f] < upper[s][f]]
            if not ok:
                return None
            s = _weighted(ok, slots, rng)
            hands[s].append(f)
            taken[s][f] += 1
            slots[s] -= 1
            pool[f] -= 1
        return self._finish(hands, pool, slots, rng)

    def _exact(self, rng: random.Random) -> World:
        hands, pool, slots = self._start()
        lower, upper = self.lower, self.upper
        caps = {s: [upper[s][f] - lower[s][f] for f in range(N_FACES)] for s in self.others}
        faces = [f for f in self._constrained for _ in range(pool[f])]
        rng.shuffle(faces)
        if not _feasible(faces, caps, slots, self.others):
            raise InconsistentView("no deal of the unseen cards satisfies the view's facts")
        for i, f in enumerate(faces):
            ok = [s for s in self.others if slots[s] > 0 and caps[s][f] > 0]
            rng.shuffle(ok)
            ok.sort(key=lambda s: -slots[s] * rng.random())
            for s in ok:
                caps[s][f] -= 1
                slots[s] -= 1
                if _feasible(faces[i + 1 :], caps, slots, self.others):
                    hands[s].append(f)
                    pool[f] -= 1
                    break
                caps[s][f] += 1
                slots[s] += 1
            else:  # pragma: no cover - feasibility was checked before
                raise InconsistentView("no deal of the unseen cards satisfies the view's facts")
        return self._finish(hands, pool, slots, rng)

    def consistent(self, world: Sequence[Sequence[int]]) -> bool:
        """Whether ``world`` (four hands of faces) agrees with every fact of the view."""
        if len(world) != 4 or tuple(sorted(world[self.seat])) != tuple(sorted(self.hand)):
            return False
        total = [0] * N_FACES
        for s in self.others:
            row = [0] * N_FACES
            for f in world[s]:
                row[f] += 1
                total[f] += 1
            if len(world[s]) != self.counts[s]:
                return False
            if any(row[f] < self.lower[s][f] or row[f] > self.upper[s][f] for f in range(N_FACES)):
                return False
        return total == self.pool


def _weighted(seats: list[int], slots: list[int], rng: random.Random) -> int:
    total = sum(slots[s] for s in seats)
    x = rng.random() * total
    for s in seats:
        x -= slots[s]
        if x < 0:
            return s
    return seats[-1]


def _feasible(faces: Sequence[int], caps: dict[int, list[int]], slots: list[int], others: list[int]) -> bool:
    """Can ``faces`` (copies) go to ``others`` within per-face ``caps`` and ``slots``? (max flow)"""
    need: dict[int, int] = {}
    for f in faces:
        need[f] = need.get(f, 0) + 1
    if not need:
        return True
    fs = list(need)
    # flow[f][s]: copies of f sent to seat s
    flow = {f: dict.fromkeys(others, 0) for f in fs}
    used = dict.fromkeys(others, 0)
    total = 0
    for f in fs:
        for _ in range(need[f]):
            # BFS over (face -> seat) with residual edges seat -> face (undo) to find a free seat
            prev: dict[Any, Any] = {("f", f): None}
            queue: list[Any] = [("f", f)]
            end = None
            while queue and end is None:
                node = queue.pop(0)
                if node[0] == "f":
                    g = node[1]
                    for s in others:
                        if flow[g][s] < caps[s][g] and ("s", s) not in prev:
                            prev[("s", s)] = node
                            if used[s] < slots[s]:
                                end = ("s", s)
                                break
                            queue.append(("s", s))
                else:
                    s = node[1]
                    for g in fs:
                        if flow[g][s] > 0 and ("f", g) not in prev:
                            prev[("f", g)] = node
                            queue.append(("f", g))
            if end is None:
                return False
            used[end[1]] += 1
            node = end
            while prev[node] is not None:
                p = prev[node]
                if p[0] == "f":
                    flow[p[1]][node[1]] += 1
                else:
                    flow[node[1]][p[1]] -= 1
                node = p
            total += 1
    return True


def sample_world(view: SeatView, rng: random.Random) -> World:
    """Sample the hidden hands of the other seats consistently with ``view`` (module docstring).

    Args:
        view: the viewing seat's view (any phase).
        rng: the source of randomness (the same seed gives the same world).
    Returns:
        Four hands, ``world[s]`` a sorted tuple of faces (0..53); ``world[view.seat] == view.hand``;
        finished seats get ``()``; the four hands plus the played cards are the 108-card deck.
    Raises:
        InconsistentView: the view admits no deal (never for a view of a real game).
    """
    return WorldConstraints(view).sample(rng)


def world_deal(view: SeatView, world: Sequence[Sequence[int]], rng: random.Random | None = None) -> Deal:
    """A :class:`~guandan.core.deal.Deal` in ``view``'s position with the hands of ``world``.

    The deal is in the play phase with the view's trick, play to beat, passes so far, finished
    seats, history and seat to act, so that its ``legal_actions()`` for the seat to act are the
    legal actions in that world, and playing it out (``apply_unchecked``) ends it by R29-R33.

    Args:
        view: a play-phase view.
        world: four hands of faces (e.g. from :func:`sample_world`).
        rng: the deal's ``random.Random`` (unused in the play phase; default a fixed seed).
    Raises:
        ValueError: the view is not in the play phase, or ``world`` is malformed.
    """
    if view.phase != PLAY or view.to_act is None:
        raise ValueError(f"world_deal needs a play-phase view with a seat to act, not phase {view.phase!r}")
    hands = [list(h) for h in world]
    deal = Deal(view.rules, view.level, hands, rng or random.Random(0), first_leader=view.to_act)
    played = played_by_seat(view.history)
    deal.initial_hands = tuple(
        tuple(sorted(list(hands[s]) + [f for f in range(N_FACES) for _ in range(played[s][f])]))
        for s in range(4)
    )
    trick = list(view.trick)
    deal.trick = trick
    deal.top = view.top
    deal.top_seat = view.top_seat
    # passes since the play to beat: trailing passes of the (chronological) history
    passes = 0
    if view.top is not None:
        for _s, a in reversed(view.history):
            if a[0] != "pass":
                break
            passes += 1
    deal.passes = passes
    deal.leader = trick[0][0] if trick else view.to_act
    deal.turn = view.to_act
    deal.finished = list(view.finished)
    deal.history = list(view.history)
    deal._legal = None
    return deal
