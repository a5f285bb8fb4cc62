"""Shared test set-up: make ``tests/reference.py`` importable as ``reference`` whatever the
pytest import mode (the naive rules reference used by the differential and perft tests)."""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
