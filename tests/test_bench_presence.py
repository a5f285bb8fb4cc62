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


def test_interleaved_samples_are_split_by_window_without_each_window_s_first_seconds() -> None:
    """--interleave: even windows poll presence, odd ones /healthz; a window's first MARGIN_S
    seconds and anything before the first window are left out; pairs need both windows."""
    assert bench_presence.MARGIN_S == 2.0
    assert bench_presence.alternating("alternate:100.5:30.0") == (100.5, 30.0)
    assert bench_presence.alternating("/api/friends") is None
    t0, w = 100.0, 10.0
    samples = [(95.0, 500.0), (101.0, 999.0)]  # before the first window; in window 0's margin
    samples += [(103.0 + i * 0.05, float(v)) for i, v in enumerate(range(1, 101))]  # window 0: 1..100
    samples += [(111.9, 777.0)]  # window 1's margin
    samples += [(112.0 + i * 0.05, float(v)) for i, v in enumerate(range(2, 102))]  # window 1: 2..101
    samples += [(122.5 + i * 0.1, 5.0) for i in range(10)]  # window 2: ten 5 ms, no window 3
    assert bench_presence.interleaved_p99(samples, t0, w)["pairs"]["of"] == 0  # under MIN_PAIR_SAMPLES (1,000)
    samples += [(133.0, 2000.0)]  # window 3: one slow sample, too few for a pair
    out = bench_presence.interleaved_p99(samples, t0, w, min_pair=100)
    assert out["samples"] == {"presence": 110, "control": 101}
    # nearest rank: the 109th of 110 (1..100 and ten 5s) is 99; the 100th of 2..101 and 2000 is 101
    assert out["presence_p99_ms"] == 99.0 and out["control_p99_ms"] == 101.0
    # window 0's p99 is 99, window 1's 100: one pair; window 2's partner has 1 sample, under 100
    assert out["pairs"] == {"each": [-1.0], "mean": -1.0, "above_zero": 0, "of": 1}


def test_interleaved_summary_pools_the_load_tests() -> None:
    runs = [
        {"presence_p99_ms": 12.0, "control_p99_ms": 10.5, "pairs": {"each": [1.0, -2.0]}},
        {"presence_p99_ms": 9.0, "control_p99_ms": 10.0, "pairs": {"each": [3.0]}},
    ]
    s = bench_presence.summarise_interleaved(runs)
    assert s["presence_minus_control_ms"] == {"each": [1.5, -1.0], "mean": 0.25, "above_zero": 1, "of": 2}
    assert s["window_pairs"] == {"mean": 0.67, "above_zero": 2, "of": 3}


def test_a_load_test_s_start_burst_is_compared_apart_by_the_kind_of_its_window() -> None:
    """--skip-start: the first seconds of a load test (its start burst) leave the windows and are
    reported with the kind of the window its first sample fell in."""
    assert bench_presence.START_S == 5.0
    t0, w = 100.0, 10.0
    burst = [(123.0 + i * 0.01, 40.0 + i) for i in range(100)]  # window 2 (presence): 40..139 ms in 1 s
    rest = [(128.5 + i * 0.05, 2.0) for i in range(200)]  # 128.5..138.45: windows 2 and 3
    out = bench_presence.interleaved_p99(burst + rest, t0, w, min_pair=1, start_s=5.0)
    # nearest rank: the 99th of 40..139 is 138
    assert out["start"] == {"kind": "presence", "p99_ms": 138.0, "samples": 100}
    assert out["presence_p99_ms"] == 2.0 and out["control_p99_ms"] == 2.0
    # window 2: 128.5..129.95 (30); window 3 without its 2 s margin: 132.0..138.45 (130)
    assert out["samples"] == {"presence": 30, "control": 130}
    # without --skip-start the burst counts in the presence window
    # (nearest rank: the 129th of 130 samples, thirty 2 ms and the burst's 40..139, is 138)
    assert bench_presence.interleaved_p99(burst + rest, t0, w, min_pair=1)["presence_p99_ms"] == 138.0
    assert "start" not in bench_presence.interleaved_p99(burst + rest, t0, w)
    runs = [{"presence_p99_ms": 2.0, "control_p99_ms": 2.0, "pairs": {"each": []}, "start": out["start"]},
            {"presence_p99_ms": 2.0, "control_p99_ms": 2.0, "pairs": {"each": []},
             "start": {"kind": "control", "p99_ms": 50.5, "samples": 80}}]
    assert bench_presence.summarise_interleaved(runs)["start_p99_ms"] == {"presence": [138.0], "control": [50.5]}


def test_the_bench_waits_so_that_a_load_test_starts_mid_window_of_the_kind_wanted() -> None:
    t0, w = 100.0, 30.0
    for now in (100.0, 131.7, 159.99, 1000.25):
        for setup in (0.0, 12.5, 75.0):
            for kind in (0, 1):
                wait = bench_presence.start_wait(now, t0, w, setup, kind)
                assert 0 <= wait < 2 * w
                first = now + wait + setup  # when the load test's first sample comes
                assert bench_presence.window_of(first, t0, w) % 2 == kind
                assert abs((first - t0) % w - w / 2) < 1e-6  # mid-window


def test_the_steady_p99_leaves_out_the_start_burst_and_is_summarised_per_repeat() -> None:
    samples = [(100.0 + i * 0.01, 50.0) for i in range(300)]  # the first 3 s: a burst of 50 ms
    samples += [(106.0 + i * 0.01, float(1 + i % 10)) for i in range(1000)]  # then 1-10 ms
    assert bench_presence.steady_p99(samples, 5.0) == 10.0
    assert bench_presence.steady_p99(samples, 0.0) == 50.0
    assert bench_presence.steady_p99([], 5.0) is None
    runs = [{"repeat": 0, "run": "baseline", "p99_ms": 30.0, "steady_p99_ms": 10.0},
            {"repeat": 0, "run": "presence", "p99_ms": 28.0, "steady_p99_ms": 10.5}]
    assert bench_presence.summarise(runs, "steady_p99_ms", "steady_") == {
        "steady_presence_rise_ms": {"each": [0.5], "mean": 0.5, "above_zero": 1, "of": 1}}


def test_profile_presence_counts_the_samples_through_the_presence_code() -> None:
    spec = importlib.util.spec_from_file_location(
        "profile_presence", Path(__file__).resolve().parents[1] / "scripts" / "profile_presence.py")
    assert spec is not None and spec.loader is not None
    profile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(profile)
    raw = ("run (asyncio/base_events.py:607);sweep (guandan/server/friends_push.py:321) 7\n"
           "run (asyncio/base_events.py:607);broadcast (guandan/server/table/flow.py:90) 90\n"
           "_feed (guandan/server/process_calls.py:264) 3\n\nnot a line\n")
    assert profile.presence_share(raw) == (100, 10)


def test_streams_settle_for_two_periods_before_the_load_test() -> None:
    """A stream's account is seen at its first sweep and its friends' panels show it one period
    (20 s) later: a presence run waits two periods and a few sweeps; polls one period."""
    assert bench_presence.settle_s("/api/friends/stream", 20.0) == 45.0
    assert bench_presence.settle_s("/api/friends", 20.0) == 20.0
    assert bench_presence.settle_s("/healthz", 10.0) == 10.0
