"""Garbage-collector settings for the project's own long-running processes (never applied on import).

A step of the environment allocates many short-lived containers (tuples of plays, small lists of
ids, per-trick arrays) and hardly any reference cycles, yet CPython's default generation-0
threshold (700 allocations) runs a collection every few decisions, and every generation-2 pass
walks the whole heap (rules tables, move-generator caches, a network's parameters). Processes the
project starts itself for stepping tables (:class:`~guandan.rl.vec.VecEnv` worker processes,
``guandan bench rl``, ``guandan train-rl``, ``guandan rl selfplay``/``arena`` and their worker
processes or Ray actors) call :func:`tune_gc` once their set-up is done, and so does ``guandan
serve`` (:func:`guandan.server.app.tune_gc`, with its own thresholds). A library user's process
keeps its own settings: importing :mod:`guandan` or :mod:`guandan.rl` changes nothing. Standard
library only (the server imports it without the ``[rl]`` extra).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Generation-0 threshold set by :func:`tune_gc` (allocations minus deallocations between
#: collections of the youngest generation; CPython's default is 700).
GEN0_THRESHOLD = 50_000


def tune_gc(
    gen0: int = GEN0_THRESHOLD, gen1: int = 50, gen2: int = 50, collect: bool = True
) -> tuple[int, int, int]:
    """Collect once, move every object alive after set-up to the permanent generation
    (:func:`gc.freeze`: later collections no longer walk them) and set the thresholds to
    ``(gen0, gen1, gen2)`` (CPython's default is 700, 10, 10). Cycles are still collected, less often.

    Args:
        gen0: allocations (minus deallocations) between two collections of the youngest generation.
        gen1: young collections per collection of the middle generation.
        gen2: middle collections per full collection.
        collect: collect once before freezing. A process made by ``fork`` passes False: what it
            inherited is frozen as it is, so the parent's garbage is never finalized in the child
            (finalizers of sockets, event loops or thread-bound libraries must not run there).
    Returns:
        The previous thresholds ``(gen0, gen1, gen2)`` (for :func:`gc.set_threshold`).
    Raises:
        ValueError: a threshold below 1.
    """
    for name, value in (("gen0", gen0), ("gen1", gen1), ("gen2", gen2)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, not {value}")
    before = gc.get_threshold()
    if collect:
        gc.collect()
    gc.freeze()
    gc.set_threshold(gen0, gen1, gen2)
    return before  # type: ignore[return-value]


@contextlib.contextmanager
def tuned_gc(gen0: int = GEN0_THRESHOLD, gen1: int = 50, gen2: int = 50) -> Iterator[tuple[int, int, int]]:
    """:func:`tune_gc` for the duration of a ``with`` block, then put the collector back as it was
    (the objects frozen here are unfrozen, unless the process had frozen some before, and the
    previous thresholds restored), for work that runs
    inside someone else's process: ``guandan loadtest`` measures latency on its own clock, and its
    hundreds of client sockets made full collections of 70-130 ms in the load generator, which
    showed up as server latency in the run's p99 (issue 21, measured 2026-12-06).

    Args:
        gen0, gen1, gen2: as :func:`tune_gc`.
    Yields:
        The previous thresholds ``(gen0, gen1, gen2)``.
    Raises:
        ValueError: a threshold below 1 (nothing is changed then).
    """
    was_frozen = gc.get_freeze_count() > 0
    before = tune_gc(gen0, gen1, gen2)
    try:
        yield before
    finally:
        if not was_frozen:  # a process that froze objects itself keeps them frozen (gc cannot unfreeze part)
            gc.unfreeze()
        gc.set_threshold(*before)
