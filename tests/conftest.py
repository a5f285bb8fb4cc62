"""Shared test set-up: make ``tests/reference.py`` importable as ``reference`` whatever the
pytest import mode (the naive rules reference used by the differential and perft tests)."""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


import pytest  # noqa: E402


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
