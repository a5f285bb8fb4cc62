"""``scripts/bench_presence.py``: the order of a repeat's runs and the summary of their p99s (issue 25,
"Speed and scale"). The benchmark itself runs by hand (docs/friends.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "bench_presence", Path(__file__).resolve().parents[1] / "scripts" / "bench_presence.py")
assert _SPEC is not None and _SPEC.loader is not None
bench_presence = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_presence)


def test_each_repeat_starts_with_the_next_kind_of_run() -> None:
    arms = ["baseline", "presence", "control"]
    assert [bench_presence.arm_order(arms, k) for k in range(4)] == [
        ["baseline", "presence", "control"],
        ["presence", "control", "baseline"],
        ["control", "baseline", "presence"],
        ["baseline", "presence", "control"],
    ]
    assert bench_presence.arm_order(["baseline", "presence"], 1) == ["presence", "baseline"]


def test_summary_subtracts_within_each_repeat() -> None:
    runs = [
        {"repeat": 0, "run": "baseline", "p99_ms": 20.0},
        {"repeat": 0, "run": "presence", "p99_ms": 27.5},
        {"repeat": 0, "run": "control", "p99_ms": 25.0},
        {"repeat": 1, "run": "presence", "p99_ms": 30.0},
        {"repeat": 1, "run": "control", "p99_ms": 33.0},
        {"repeat": 1, "run": "baseline", "p99_ms": 31.0},
        {"repeat": 2, "run": "baseline", "p99_ms": 18.0},
        {"repeat": 2, "run": "presence", "p99_ms": None},  # a run without samples counts nowhere
    ]
    s = bench_presence.summarise(runs)
    assert s["presence_rise_ms"] == {"each": [7.5, -1.0], "mean": 3.25, "above_zero": 1, "of": 2}
    assert s["control_rise_ms"] == {"each": [5.0, 2.0], "mean": 3.5, "above_zero": 2, "of": 2}
    assert s["presence_minus_control_ms"] == {"each": [2.5, -3.0], "mean": -0.25, "above_zero": 1, "of": 2}


def test_summary_without_a_control_has_no_difference() -> None:
    s = bench_presence.summarise([{"repeat": 0, "run": "baseline", "p99_ms": 10.0},
                                  {"repeat": 0, "run": "presence", "p99_ms": 12.0}])
    assert set(s) == {"presence_rise_ms"}
    assert s["presence_rise_ms"]["each"] == [2.0]
