"""Compatibility module: the rules-case runner now lives in :mod:`guandan.evaluation.conformance`.

``python -m guandan.conformance FILE.jsonl [--verbose]`` (the README's command) and
``guandan.conformance`` imports keep working; new code imports ``guandan.evaluation.conformance``
(CHANGELOG.md, "Moved modules").
"""

from __future__ import annotations

import sys

from guandan.evaluation.conformance import (
    KINDS,
    MalformedCase,
    Outcome,
    _cli,
    load_cases,
    main,
    run_case,
    run_file,
)

__all__ = ["KINDS", "MalformedCase", "Outcome", "load_cases", "main", "run_case", "run_file"]

if __name__ == "__main__":
    sys.exit(_cli())
