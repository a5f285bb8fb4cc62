"""Shared test set-up: make ``tests/reference.py`` importable as ``reference`` whatever the
pytest import mode (the naive rules reference used by the differential and perft tests); the
Chromium fixture of the browser tests; the ``fast_hashing`` fixture of the server tests that make
many accounts; and the order in which a parallel run hands out the modules.

Parallel runs (``make test``: pytest-xdist, ``-n logical --dist loadfile``): each module runs
whole on one worker, so a module's live server, Chromium and cached records are made once and its
tests keep their order; the long modules (:data:`LONG_FIRST`) are handed out first so that the workers
finish together. A plain ``pytest`` run (one process) is left exactly as collected.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


import pytest  # noqa: E402


@pytest.fixture(scope="module")
def fast_hashing():  # type: ignore[no-untyped-def]
    """Cheaper argon2 parameters (still argon2id) for a module that registers or logs in many
    accounts (``pytestmark = pytest.mark.usefixtures("fast_hashing")``); the server's own
    parameters are put back after the module."""
    from argon2 import PasswordHasher

    from guandan.server import auth

    saved = auth._hasher
    auth._hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    yield
    auth._hasher = saved


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    """The machine's Chromium, headless, through Playwright (no browser download ever), for the
    browser tests. Missing Playwright or Chromium: skipped, or a failure when ``CI=true``."""
    from browser_helpers import LAUNCH_ARGS, find_chromium

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    exe = find_chromium()
    missing = None
    if sync_playwright is None:
        missing = "the Python package playwright is not installed (pip install -e '.[test]')"
    elif exe is None:
        missing = "Chromium is not installed (apt-get install chromium, or set GUANDAN_CHROMIUM to its path)"
    if missing:
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(f"browser tests cannot run: {missing}", pytrace=False)
        pytest.skip(f"browser tests skipped: {missing}")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=LAUNCH_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


#: Modules handed out first on parallel runs, longest first (seconds of one serial run on a loaded
#: 2-core machine, 2026-12-03, ``pytest --durations=0``: 1,354 s in all). Only the order of the
#: work changes; modules not named here follow in collection order.
LONG_FIRST = (
    "tests/test_invariants.py",  # 310 s: 1,001 complete games in one test
    "tests/test_cluster.py",  # 256 s: eight tests of three server processes each
    "tests/test_compat_robustness.py",  # 167 s: a 15-game run with a silent client
    "tests/test_browser_table.py",  # 82 s
    "tests/test_perft.py",  # 74 s
    "tests/test_heuristic.py",  # 45 s
    "tests/test_browser.py",  # 38 s
    "tests/test_cluster_leases.py",  # 38 s
    "tests/test_browser_pages.py",  # 34 s
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker: move the modules of :data:`LONG_FIRST` to the front, in that
    order, keeping the order of every module's tests (the workers must all collect the same order,
    so it depends on nothing but the names)."""
    if not hasattr(config, "workerinput"):
        return
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(LONG_FIRST)))  # stable
