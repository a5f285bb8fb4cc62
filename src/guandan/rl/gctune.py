"""Garbage-collector settings for the project's own stepping processes (never applied on import).

A step of the environment allocates many short-lived containers (tuples of plays, small lists of
ids, per-trick arrays) and hardly any reference cycles, yet CPython's default generation-0
threshold (700 allocations) runs a collection every few decisions, and every generation-2 pass
walks the whole heap (rules tables, move-generator caches, a network's parameters). Processes the
project starts itself for stepping tables (:class:`~guandan.rl.vec.VecEnv` worker processes,
``guandan bench rl``, ``guandan train-rl``, ``guandan rl selfplay``/``arena`` and their worker
processes or Ray actors) call :func:`tune_gc` once their set-up is done. A library user's process
keeps its own settings: importing :mod:`guandan.rl` changes nothing.
"""

from __future__ import annotations

import gc

#: Generation-0 threshold set by :func:`tune_gc` (allocations minus deallocations between
#: collections of the youngest generation; CPython's default is 700).
GEN0_THRESHOLD = 50_000


def tune_gc(gen0: int = GEN0_THRESHOLD) -> tuple[int, int, int]:
    """Collect once, move every object alive after set-up to the permanent generation
    (:func:`gc.freeze`: later collections no longer walk them) and raise the generation-0
    threshold to ``gen0`` (generations 1 and 2 at 50 each). Cycles are still collected, less often.

    Args:
        gen0: the new generation-0 threshold (at least 1).
    Returns:
        The previous thresholds ``(gen0, gen1, gen2)`` (for :func:`gc.set_threshold`).
    Raises:
        ValueError: ``gen0`` < 1.
    """
    if gen0 < 1:
        raise ValueError(f"gen0 must be at least 1, not {gen0}")
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(gen0, 50, 50)
    return before  # type: ignore[return-value]
