"""Every name a module of ``guandan`` lists in ``__all__`` exists in it (``from m import *`` works).

A module's ``__all__`` is its public surface (docs/architecture.md); after a move between modules a
stale entry makes ``from m import *`` raise AttributeError, which nothing else would notice.
"""

from __future__ import annotations

import importlib
import pkgutil

import guandan

#: Modules that import optional extras at import time (PyTorch, Ray, PettingZoo/Gymnasium).
OPTIONAL = ("torch", "ray", "pettingzoo", "gymnasium")


def _modules() -> list[str]:
    names = (m.name for m in pkgutil.walk_packages(guandan.__path__, "guandan."))
    # __main__ runs the CLI; the migrations are Alembic scripts run inside Alembic's context only
    return sorted(n for n in names if not n.endswith("__main__") and ".migrations" not in n)


def test_every_listed_name_exists() -> None:
    missing: list[str] = []
    checked = 0
    for name in _modules():
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            if any(x in str(e) for x in OPTIONAL):
                continue
            raise
        listed = getattr(mod, "__all__", None)
        if listed is None:
            continue
        checked += 1
        missing += [f"{name}.{n}" for n in listed if not hasattr(mod, n)]
    assert checked >= 40, checked  # 50 modules list __all__ today
    assert missing == []

