"""Hints for the table's 提示 button: every sensible play, weakest first (docs/table-contract.md
section 11).

The order is the heuristic bot's own judgement (:mod:`guandan.agents.heuristic`): a hand is
scored by the cost of its best decomposition into combinations (:func:`~guandan.agents.heuristic.
decompose`; lower is better), so

* when following (R23-R26), each distinct play that beats the table is ranked by how much it
  raises the cost of the cards left (breaking a straight to answer a single costs more than
  playing a lone single), then by its strength (:func:`~guandan.core.plays.play_key`); bombs,
  straight flushes and the joker bomb (R11-R13) come after every other play, weakest first;
* when leading, the hints are the combinations the bot splits the hand into, in the order the bot
  leads them (its weakest, most costly combination first), bombs last;
* in the tribute and return phases (R45, R47), the allowed cards with the bot's choice first.

Pass is never a hint: an empty list when following means that no play beats the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guandan.agents.heuristic import HeuristicAgent, decompose
from guandan.core.cards import FACE_RANK, wild_face
from guandan.core.plays import BOMB_TYPES, PASS_TYPE, STRENGTH, PlayT, play_key
from guandan.core.views import SeatView

#: Plays whose leftover hand is scored when following (the cheapest by strength first; the rest
#: follow by strength). Bounds the time of one hint on a 27-card hand with wilds.
MAX_SCORED = 40
#: Search budget of one decomposition when scoring a play (the bot's evaluation budget).
SCORE_BUDGET = 150


def _signature(play: PlayT, level: int) -> tuple[Any, ...]:
    """A play up to suits: its type, rank and card ranks (a wild counts apart)."""
    w = wild_face(level)
    return (play[0], play[1], tuple(sorted(FACE_RANK[f] if f != w else 99 for f in play[2])))


def _counts(hand: Sequence[int]) -> list[int]:
    counts = [0] * 54
    for f in hand:
        counts[f] += 1
    return counts


def _minus(counts: Sequence[int], faces: Sequence[int]) -> list[int]:
    out = list(counts)
    for f in faces:
        out[f] -= 1
    return out


def _distinct(plays: Sequence[PlayT], level: int) -> list[PlayT]:
    """One play per signature: the one using the fewest wilds (then the first listed)."""
    w = wild_face(level)
    best: dict[tuple[Any, ...], PlayT] = {}
    for a in plays:
        sg = _signature(a, level)
        old = best.get(sg)
        if old is None or a[2].count(w) < old[2].count(w):
            best[sg] = a
    return list(best.values())


def hint_actions(view: SeatView, full_house_joker_pair: bool = True) -> list[PlayT]:
    """The hints for the seat of ``view`` (which must be the seat to act).

    Args:
        view: the acting seat's :class:`~guandan.core.views.SeatView` (``legal_actions`` set).
        full_house_joker_pair: the room's ``full_house_joker_pair`` option (R21).
    Returns:
        Legal actions (``(type, rank, cards)`` tuples), weakest first, no pass; ``[]`` when the
        view has no legal action or nothing but pass.
    """
    legal = list(view.legal_actions)
    if not legal:
        return []
    level = view.level
    if view.phase in ("tribute", "return"):
        choice = HeuristicAgent(0, full_house_joker_pair).act(view)
        rest = sorted((a for a in legal if a != choice), key=lambda a: STRENGTH[level][FACE_RANK[a[2][0]]]
                      if a[2][0] < 52 else 20 + a[2][0])
        return [choice, *rest]
    plays = [a for a in legal if a[0] != PASS_TYPE]
    if not plays:
        return []
    if view.top is None:
        return _leads(view, plays, full_house_joker_pair)
    return _follows(view, plays, full_house_joker_pair)


def _follows(view: SeatView, plays: list[PlayT], fhjp: bool) -> list[PlayT]:
    level = view.level
    counts = _counts(view.hand)
    distinct = _distinct(plays, level)
    bombs = sorted((a for a in distinct if a[0] in BOMB_TYPES), key=lambda a: (play_key(a, level), len(a[2])))
    others = sorted((a for a in distinct if a[0] not in BOMB_TYPES), key=lambda a: play_key(a, level))
    base = decompose(counts, level, fhjp, SCORE_BUDGET).cost
    scored: list[tuple[float, int, PlayT]] = []
    for a in others[:MAX_SCORED]:
        loss = decompose(_minus(counts, a[2]), level, fhjp, SCORE_BUDGET).cost - base
        scored.append((round(loss, 6), play_key(a, level), a))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [a for _l, _k, a in scored] + others[MAX_SCORED:] + bombs


def _leads(view: SeatView, plays: list[PlayT], fhjp: bool) -> list[PlayT]:
    level = view.level
    st = STRENGTH[level]
    w = wild_face(level)
    d = decompose(_counts(view.hand), level, fhjp)
    by_kind: dict[tuple[str, int | None, int], list[PlayT]] = {}
    for a in plays:
        by_kind.setdefault((a[0], a[1], len(a[2])), []).append(a)

    def strength(c: Any) -> float:
        r = c.rank
        if r is None:
            return 99.0
        if c.type in ("straight", "tube", "plate", "straight_flush"):
            return float(r)
        return float(r if r >= 13 else st[r])

    nonbomb = sorted((c for c in d.combos if c.type not in BOMB_TYPES),
                     key=lambda c: (-round(c.cost, 3), -c.size, strength(c)))
    bombs = sorted((c for c in d.combos if c.type in BOMB_TYPES), key=lambda c: -c.cost)
    out: list[PlayT] = []
    seen: set[tuple[Any, ...]] = set()
    for c in nonbomb + bombs:
        options = by_kind.get((c.type, c.rank, c.size), [])
        if c[5] is not None and c.type in BOMB_TYPES:  # exact faces (straight flush, joker bomb)
            exact = [a for a in options if sorted(a[2]) == sorted(c[5])]
            options = exact or options
        if not options:
            continue
        # the copy of the combination that uses as few wilds as the combination itself
        a = min(options, key=lambda a: (abs(a[2].count(w) - c[3]), a[2]))
        sg = _signature(a, level)
        if sg not in seen:
            seen.add(sg)
            out.append(a)
    if not out:  # the decomposition found nothing legal (cannot happen with a full hand): the bot's lead
        out.append(HeuristicAgent(0, fhjp).act(view))
    return out


__all__ = ["MAX_SCORED", "hint_actions"]
