"""``guandan.runtime.gctune.tuned_gc``: the load generator's collector settings, put back afterwards."""

from __future__ import annotations

import gc

import pytest

from guandan.runtime.gctune import tuned_gc


@pytest.fixture
def clean_gc():
    before = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_thresholds_and_freeze_hold_inside_and_are_restored(clean_gc: None) -> None:
    with tuned_gc(20_000, 50, 100) as before:
        assert before == (700, 10, 10)
        assert gc.get_threshold() == (20_000, 50, 100)
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_restored_after_an_exception(clean_gc: None) -> None:
    with pytest.raises(RuntimeError), tuned_gc(5_000, 20, 30):
        raise RuntimeError("the load test failed")
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_keeps_them_frozen(clean_gc: None) -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    with tuned_gc():
        pass
    assert gc.get_freeze_count() >= frozen
    assert gc.get_threshold() == (700, 10, 10)


def test_a_bad_threshold_changes_nothing(clean_gc: None) -> None:
    with pytest.raises(ValueError, match="gen1 must be at least 1"), tuned_gc(1000, 0, 10):
        pass
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_the_load_generator_measures_with_the_servers_settings(clean_gc: None) -> None:
    from guandan.server.app import GC_THRESHOLDS
    from guandan.server.loadtest import CLIENT_GC_THRESHOLDS, run_measured

    assert CLIENT_GC_THRESHOLDS == GC_THRESHOLDS

    async def inside() -> tuple[int, int, int]:
        return gc.get_threshold()

    assert run_measured(inside()) == GC_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0
