"""不洗牌 (the ``no_shuffle`` house mode): the next deal's hands made from the previous deal's cards.

Players ask for this mode because combinations stay together and bombs come more often. How a
deal is made (docs/rules.md, "House modes"):

1. **Groups.** Every trick of the previous deal is one group: its plays' cards in the order they
   were played (one play's cards in the order the play lists them). The cards still held by the
   seats that did not finish (末游; both losers after a 双下) are one group per seat.
2. **Gather.** The groups go onto the pile in a uniformly random order.
3. **Cut.** The pile is cut at a uniformly random point ``c`` in ``0..107``: the ``c`` cards on top
   go to the bottom.
4. **Deal in packets.** Seats 0, 1, 2, 3 in turn each take the next :data:`PACKET_SIZE` (9) cards
   from the top, three rounds: 27 cards each (R4).

The order of the groups and the cut are drawn from the operating system's secure source
(:class:`secrets.SystemRandom`) unless a test injects a generator: every seat saw the previous
deal's plays, so a seeded or predictable order would let a seat work out the others' hands from
its own. What stays unknown to a seat with ``T`` groups is the order of the groups (``T!``) and
the cut (108), at most ``log2(T! * 108)`` bits; a seat's own packets show it which groups lie at
its packets' edges, and a group cut by a packet edge continues in the next seat's packet
(``scripts/bombs_no_shuffle.py`` measures both).

Standard library only, no I/O.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Sequence

from .errors import GuandanError

#: Cards per packet when dealing (three rounds of 9 give each seat its 27, R4).
PACKET_SIZE = 9
#: Cards in a deal (two decks, R1).
DECK_SIZE = 108


def gather_pile(groups: Sequence[Sequence[int]], rng: random.Random | None = None) -> list[int]:
    """Put ``groups`` on a pile in a random order and cut it at a random point (steps 2-3).

    Args:
        groups: the previous deal's groups of faces (tricks in play order, then the cards left
            in hand per seat); together exactly 108 cards.
        rng: the source of the order and the cut; default a fresh :class:`secrets.SystemRandom`.
    Returns:
        The pile, top card first (108 faces).
    Raises:
        GuandanError: the groups do not hold 108 cards.
    """
    total = sum(len(g) for g in groups)
    if total != DECK_SIZE:
        raise GuandanError(f"a no-shuffle deal gathers {DECK_SIZE} cards, not {total}")
    src = rng if rng is not None else secrets.SystemRandom()
    order = [list(g) for g in groups]
    src.shuffle(order)
    pile = [f for g in order for f in g]
    cut = src.randrange(DECK_SIZE)
    return pile[cut:] + pile[:cut]


def deal_packets(pile: Sequence[int], packet: int = PACKET_SIZE) -> list[list[int]]:
    """Deal a pile in packets (step 4): seats 0..3 in turn take ``packet`` cards from the top.

    Args:
        pile: 108 faces, top first.
        packet: cards per packet; must divide 27.
    Returns:
        Four hands of 27 faces, each in the order the cards were taken.
    Raises:
        GuandanError: the pile is not 108 cards or ``packet`` does not divide 27.
    """
    if len(pile) != DECK_SIZE:
        raise GuandanError(f"a deal needs {DECK_SIZE} cards, not {len(pile)}")
    per_seat = DECK_SIZE // 4
    if isinstance(packet, bool) or not isinstance(packet, int) or packet < 1 or per_seat % packet:
        raise GuandanError(f"a packet must divide {per_seat} cards, not {packet!r}")
    hands: list[list[int]] = [[], [], [], []]
    for i in range(0, DECK_SIZE, packet):
        hands[(i // packet) % 4].extend(pile[i : i + packet])
    return hands


def gather_deal(groups: Sequence[Sequence[int]], rng: random.Random | None = None) -> list[list[int]]:
    """The next deal's four hands under ``no_shuffle``: :func:`gather_pile` then :func:`deal_packets`.

    Args:
        groups: as :func:`gather_pile`.
        rng: as :func:`gather_pile` (default: the secure source).
    Returns:
        Four hands of 27 faces (in dealing order; callers sort them).
    Raises:
        GuandanError: the groups do not hold 108 cards.
    """
    return deal_packets(gather_pile(groups, rng))


__all__ = ["PACKET_SIZE", "DECK_SIZE", "gather_pile", "deal_packets", "gather_deal"]
