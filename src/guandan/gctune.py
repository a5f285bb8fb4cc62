"""Compatibility module: the garbage-collector settings now live in :mod:`guandan.runtime.gctune`.

``from guandan.gctune import tune_gc`` keeps working; new code imports
``guandan.runtime.gctune`` (CHANGELOG.md, "Moved modules").
"""

from __future__ import annotations

from guandan.runtime.gctune import GEN0_THRESHOLD, tune_gc

__all__ = ["GEN0_THRESHOLD", "tune_gc"]
