"""Round robin by Berger tables, groups, and knock-out brackets.

* :func:`berger_rounds`: every entry meets every other exactly once. Berger tables by the circle method:
  the entries sit in two rows; the last one stays put, the others move one place round the circle each
  round. An odd count adds a dummy, and meeting the dummy is a bye.
* :func:`snake_groups`: entries in seeding order dealt into groups in a snake (1→A, 2→B, 3→B, 4→A for two
  groups), so every group has the same mix of seeds.
* :func:`bracket_order`: seed positions of a knock-out bracket of size N (a power of 2) such that seed 1
  meets N, 2 meets N−1, … in the first round and seeds 1 and 2 can only meet in the final
  (N=8: 1 v 8, 4 v 5, 2 v 7, 3 v 6).
"""

from __future__ import annotations

from collections.abc import Sequence


def berger_rounds(ids: Sequence[int]) -> list[list[tuple[int, int | None]]]:
    """All rounds of a round robin: a list of rounds, each a list of ``(a, b)`` with ``b`` None for a bye
    (byes last in their round). ``len(ids)`` rounds when odd, ``len(ids) − 1`` when even."""
    seats: list[int | None] = list(ids)
    if len(seats) % 2:
        seats.append(None)
    n = len(seats)
    if n < 2:
        return []
    fixed, ring = seats[-1], seats[:-1]
    rounds = []
    for r in range(n - 1):
        games: list[tuple[int | None, int | None]] = [(ring[0], fixed) if r % 2 == 0 else (fixed, ring[0])]
        for i in range(1, n // 2):
            games.append((ring[i], ring[n - 1 - i]))
        out: list[tuple[int, int | None]] = []
        byes: list[tuple[int, int | None]] = []
        for a, b in games:
            if a is None:
                a, b = b, a
            (byes if b is None else out).append((a, b))  # type: ignore[arg-type]
        rounds.append(out + byes)
        ring = ring[-1:] + ring[:-1]
    return rounds


def snake_groups(order: Sequence[int], groups: int) -> list[list[int]]:
    """Split ids in seeding order into ``groups`` groups in a snake."""
    out: list[list[int]] = [[] for _ in range(groups)]
    for i, e in enumerate(order):
        row, col = divmod(i, groups)
        out[col if row % 2 == 0 else groups - 1 - col].append(e)
    return out


def is_power_of_two(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def bracket_order(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order for a power-of-two ``size``; consecutive pairs meet."""
    order = [1]
    while len(order) < size:
        m = 2 * len(order) + 1
        order = [x for s in order for x in (s, m - s)]
    return order


def first_knockout_round(qualifiers: Sequence[int], size: int) -> list[tuple[int, int | None]]:
    """The first knock-out round for ``qualifiers`` in seeding order (best first), bracket of ``size``;
    missing seeds (fewer qualifiers than places) are byes for the top seeds."""
    order = bracket_order(size)
    seeded: list[int | None] = list(qualifiers) + [None] * (size - len(qualifiers))
    out: list[tuple[int, int | None]] = []
    for i in range(0, size, 2):
        a, b = seeded[order[i] - 1], seeded[order[i + 1] - 1]
        if a is None:
            a, b = b, a
        out.append((a, b))  # type: ignore[arg-type]
    return out


def stage_name(matches_in_round: int) -> str:
    """``"final"`` (1 match), ``"semi"`` (2), ``"quarter"`` (4), else ``"r<2n>"`` (the last 2n)."""
    return {1: "final", 2: "semi", 4: "quarter"}.get(matches_in_round, f"r{2 * matches_in_round}")
