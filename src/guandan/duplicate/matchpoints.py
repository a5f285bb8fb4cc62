"""Matchpoint scoring of duplicate boards (issue 22): pure, incremental.

Each result on a board is compared with every other result on that board: 1 matchpoint for each
result it beats, ½ for each result it ties (a result is a number, higher is better: the levels
or Anhui points of :func:`guandan.duplicate.boards.side_result`). Its percentage is its
matchpoints over the most it could have, the number of other results::

    pct = 100 * (beaten + ties / 2) / (n - 1)        (n results on the board, n >= 2)

**A field of one.** With a single result there is nothing to compare with, and the formula has
no denominator. Duplicate bridge gives such a result an average, 50 % (the "top" of a board
played once is 0; scorers award average rather than leave the board out), and this module does
the same: a lone result scores 50 %, which also keeps a player's day average from moving when
the board is first played. The score changes as soon as a second result arrives.

Incremental
-----------
:class:`BoardTable` keeps, per board, how many results have each distinct value (a sorted list
of values and their counts) and the running count of results below each value. Adding a result
is a binary search and an update of at most ``k`` cumulative counts (``k`` distinct values: six
with levels, six with Anhui points), and every result's percentage on the board is then read in
O(log k) — all the scores of the board change at once without touching the other results. A
day (:class:`DayScores`) is a set of boards plus per-player results; its leaderboard (average
percentage over the boards each player played, and the count) is recomputed only when a result
has been added since the last answer and is otherwise cached; a week (:func:`week_leaderboard`)
averages the percentages of all the boards a player played over several days.
"""

from __future__ import annotations

import bisect
import math
import operator
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

__all__ = [
    "BoardTable", "DayScores", "Standing", "matchpoints", "percentages", "week_leaderboard",
    "SINGLE_RESULT_PCT",
]

#: The percentage of a board's only result (a field of one; module docstring).
SINGLE_RESULT_PCT = 50.0


def _check_result(result: object) -> float:
    """``result`` when it is a finite number (an int or a float, not a bool).

    A NaN compares neither above, below nor equal to anything, and an infinity is no deal's
    result: either would corrupt a board's sorted table and every percentage and leaderboard
    built on it, so both are refused where a result enters.

    Raises:
        TypeError: ``result`` is not a number.
        ValueError: ``result`` is NaN or infinite.
    """
    if isinstance(result, bool) or not isinstance(result, (int, float)):
        raise TypeError(f"a result is a number, not {result!r}")
    if isinstance(result, float) and not math.isfinite(result):
        raise ValueError(f"a result is a finite number, not {result!r}")
    return result


def matchpoints(results: Iterable[float]) -> list[float]:
    """Matchpoints of each result against all the others (the reference: O(n²), for tests and
    small fields): 1 per result beaten, ½ per tie.

    Returns:
        A list in the order of ``results``.
    Raises:
        TypeError: a result is not a number.
        ValueError: a result is NaN or infinite.
    """
    rs = [_check_result(r) for r in results]
    return [sum(1.0 if r > o else 0.5 if r == o else 0.0 for j, o in enumerate(rs) if j != i)
            for i, r in enumerate(rs)]


def percentages(results: Iterable[float]) -> list[float]:
    """Percentages of each result of one board, recomputed from scratch (module docstring; a
    field of one scores :data:`SINGLE_RESULT_PCT`).

    Raises:
        TypeError: a result is not a number.
        ValueError: a result is NaN or infinite.
    """
    rs = [_check_result(r) for r in results]
    if len(rs) == 1:
        return [SINGLE_RESULT_PCT]
    return [100.0 * mp / (len(rs) - 1) for mp in matchpoints(rs)]


class BoardTable:
    """The score table of one board: counts per distinct result, read incrementally.

    Args:
        results: results already on the board (optional).
    """

    __slots__ = ("_below", "_counts", "_pct", "_values", "n")

    def __init__(self, results: Iterable[float] = ()) -> None:
        self._values: list[float] = []  # distinct values, ascending
        self._counts: list[int] = []  # results per value
        self._below: list[int] = []  # results strictly below each value
        self._pct: dict[float, float] | None = None
        #: number of results on the board
        self.n = 0
        for r in results:
            self.add(r)

    def add(self, result: float) -> None:
        """Add one result: O(log k + k) for ``k`` distinct values (module docstring).

        Raises:
            TypeError: ``result`` is not a number.
            ValueError: ``result`` is NaN or infinite (the table is unchanged).
        """
        _check_result(result)
        i = bisect.bisect_left(self._values, result)
        if i < len(self._values) and self._values[i] == result:
            self._counts[i] += 1
        else:
            self._values.insert(i, result)
            self._counts.insert(i, 1)
            self._below.insert(i, self._below[i] if i < len(self._below) else self.n)
        for j in range(i + 1, len(self._values)):
            self._below[j] += 1
        self.n += 1
        self._pct = None

    def matchpoints(self, result: float) -> float:
        """Matchpoints of a result equal to ``result`` that is on the board: results beaten
        plus half the other results it ties.

        Raises:
            KeyError: no result equal to ``result`` is on the board.
        """
        i = bisect.bisect_left(self._values, result)
        if i >= len(self._values) or self._values[i] != result:
            raise KeyError(result)
        return self._below[i] + (self._counts[i] - 1) / 2

    def percentage(self, result: float) -> float:
        """The percentage of a result equal to ``result`` on the board (module docstring).

        Raises:
            KeyError: no such result on the board.
        """
        if self.n == 1:
            if result not in self._values:
                raise KeyError(result)
            return SINGLE_RESULT_PCT
        return 100.0 * self.matchpoints(result) / (self.n - 1)

    def table(self) -> dict[float, float]:
        """Percentage per distinct result on the board (cached until the next :meth:`add`)."""
        if self._pct is None:
            self._pct = {v: self.percentage(v) for v in self._values}
        return self._pct

    def frequencies(self) -> list[tuple[float, int]]:
        """``(result, how many)`` per distinct result, best first (a board's frequency table)."""
        return list(zip(reversed(self._values), reversed(self._counts)))


@dataclass(frozen=True)
class Standing:
    """One line of a leaderboard.

    Attributes:
        player: the player's key.
        pct: average percentage over the boards counted (0-100).
        boards: boards counted.
        rank: 1-based place (equal averages share a place).
    """

    player: Hashable
    pct: float
    boards: int
    rank: int


class _Ranking:
    """A leaderboard's order: player indices best first (more boards first among equal
    averages, then the earlier player), their averages, and ranks by binary search (equal
    averages, compared to 1e-9, share a rank)."""

    __slots__ = ("avg", "counts", "neg", "order", "pos")

    def __init__(self, sums: list[float], counts: list[int], min_boards: int) -> None:
        self.counts = counts
        self.avg = avg = [round(s / c, 9) if c else 0.0 for s, c in zip(sums, counts)]
        keep = [i for i, c in enumerate(counts) if c >= max(1, min_boards)]
        keep.sort(key=counts.__getitem__, reverse=True)  # stable: equal counts keep index order
        keep.sort(key=avg.__getitem__, reverse=True)
        self.order = keep
        self.neg = [-avg[i] for i in keep]  # ascending
        self.pos: dict[int, int] | None = None

    def rank_at(self, j: int) -> int:
        """1-based rank of the ``j``-th player of the order."""
        return bisect.bisect_left(self.neg, self.neg[j]) + 1

    def position(self, i: int) -> int | None:
        """Place in the order of player index ``i`` (``None``: not on the board)."""
        if self.pos is None:
            self.pos = {p: j for j, p in enumerate(self.order)}
        return self.pos.get(i)


class DayScores:
    """A day's boards and results: incremental board tables, a cached leaderboard.

    Per board, each player's result is kept as the index of its distinct value (0: not played),
    so that the day's averages are a few vectorised passes over the players per board when the
    leaderboard is asked for after a new result (module docstring); the answer is cached.

    Args:
        boards: the board keys of the day (e.g. 1..12); results for other keys are refused.
    """

    def __init__(self, boards: Iterable[Hashable]) -> None:
        self.tables: dict[Hashable, BoardTable] = {b: BoardTable() for b in boards}
        #: ``results[board][player]`` = that player's result on that board
        self.results: dict[Hashable, dict[Hashable, float]] = {b: {} for b in self.tables}
        self._players: list[Hashable] = []
        self._index: dict[Hashable, int] = {}
        self._cls: dict[Hashable, list[int]] = {b: [] for b in self.tables}  # per player: value id
        self._ids: dict[Hashable, dict[float, int]] = {b: {} for b in self.tables}  # value -> id >= 1
        self._cache: _Ranking | None = None

    def add(self, board: Hashable, player: Hashable, result: float) -> None:
        """Record ``player``'s result on ``board`` and update that board's table.

        Raises:
            KeyError: ``board`` is not a board of the day.
            ValueError: the player already has a result on that board (each board is played
                once per player; the score is never changed by a second attempt).
            TypeError: ``result`` is not a number.
            ValueError: ``result`` is NaN or infinite.
        Nothing changes when an error is raised.
        """
        if board not in self.tables:
            raise KeyError(f"no board {board!r} on this day")
        _check_result(result)
        row = self.results[board]
        if player in row:
            raise ValueError(f"player {player!r} already has a result on board {board!r}")
        self.tables[board].add(result)
        row[player] = result
        i = self._index.get(player)
        if i is None:
            i = self._index[player] = len(self._players)
            self._players.append(player)
            for cls in self._cls.values():
                cls.append(0)
        ids = self._ids[board]
        vid = ids.get(result)
        if vid is None:
            vid = ids[result] = len(ids) + 1
        self._cls[board][i] = vid
        self._cache = None

    def percentage(self, board: Hashable, player: Hashable) -> float:
        """``player``'s percentage on ``board`` now.

        Raises:
            KeyError: no such board or no result of that player on it.
        """
        return self.tables[board].percentage(self.results[board][player])

    def player_boards(self, player: Hashable) -> list[tuple[Hashable, float, float]]:
        """``(board, result, percentage)`` of every board ``player`` played, in board order."""
        return [(b, row[player], self.tables[b].percentage(row[player]))
                for b, row in self.results.items() if player in row]

    def _sums(self) -> tuple[list[float], list[int]]:
        n = len(self._players)
        sums = [0.0] * n
        counts = [0] * n
        for b, cls in self._cls.items():
            ids = self._ids[b]
            if not ids:
                continue
            pct = self.tables[b].table()
            tab = [0.0] * (len(ids) + 1)
            for v, vid in ids.items():
                tab[vid] = pct[v]
            played = [0] + [1] * len(ids)
            sums = list(map(operator.add, sums, map(tab.__getitem__, cls)))
            counts = list(map(operator.add, counts, map(played.__getitem__, cls)))
        return sums, counts

    def totals(self) -> dict[Hashable, list[float]]:
        """``player -> [sum of percentages, boards]`` over the day's boards."""
        sums, counts = self._sums()
        return {p: [sums[i], counts[i]] for i, p in enumerate(self._players) if counts[i]}

    def _ranking(self) -> _Ranking:
        if self._cache is None:
            sums, counts = self._sums()
            self._cache = _Ranking(sums, counts, 1)
        return self._cache

    def leaderboard(self, offset: int = 0, limit: int | None = None, min_boards: int = 1) -> list[Standing]:
        """Players by average percentage over the boards they played (best first), with the
        number of boards; ``offset``/``limit`` select a page. The order is recomputed only after
        a new result (for ``min_boards`` 1; another minimum is computed afresh)."""
        if min_boards <= 1:
            rk = self._ranking()
        else:
            rk = _Ranking(*self._sums(), min_boards)
        stop = len(rk.order) if limit is None else min(len(rk.order), offset + limit)
        players = self._players
        return [Standing(players[rk.order[j]], rk.avg[rk.order[j]], rk.counts[rk.order[j]], rk.rank_at(j))
                for j in range(offset, stop)]

    def standing(self, player: Hashable) -> Standing | None:
        """``player``'s line of the leaderboard, or ``None`` when the player has no result."""
        i = self._index.get(player)
        if i is None:
            return None
        rk = self._ranking()
        j = rk.position(i)
        if j is None:
            return None
        return Standing(player, rk.avg[i], rk.counts[i], rk.rank_at(j))

    def __len__(self) -> int:
        """Players with at least one result."""
        return len(self._ranking().order)


def week_leaderboard(days: Iterable[DayScores], min_boards: int = 1) -> list[Standing]:
    """Players by average percentage over every board they played on the given days (each
    board weighs the same), with the number of boards; best first.

    Args:
        days: the week's :class:`DayScores`.
        min_boards: leave out players with fewer boards.
    """
    tot: dict[Hashable, list[float]] = {}
    for day in days:
        for p, (s, n) in day.totals().items():
            t = tot.setdefault(p, [0.0, 0])
            t[0] += s
            t[1] += n
    players = list(tot)
    sums = [tot[p][0] for p in players]
    counts = [int(tot[p][1]) for p in players]
    rk = _Ranking(sums, counts, min_boards)
    return [Standing(players[i], rk.avg[i], counts[i], rk.rank_at(j)) for j, i in enumerate(rk.order)]
