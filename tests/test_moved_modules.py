"""The old import paths kept by the compatibility modules (CHANGELOG.md, "Moved modules") give the
very objects of the new homes, and the moved-away paths are gone."""

from __future__ import annotations

import importlib

import pytest


def test_arena_conformance_gctune_reexport_their_new_homes() -> None:
    import guandan.arena as old_arena
    import guandan.conformance as old_conformance
    import guandan.gctune as old_gctune
    from guandan.evaluation import arena, conformance
    from guandan.runtime import gctune

    for name in old_arena.__all__:
        assert getattr(old_arena, name) is getattr(arena, name), name
    assert old_arena.wilson(5, 10) == arena.wilson(5, 10)
    for name in old_conformance.__all__:
        assert getattr(old_conformance, name) is getattr(conformance, name), name
    assert old_gctune.tune_gc is gctune.tune_gc and old_gctune.GEN0_THRESHOLD == 50_000


def test_records_package_keeps_every_public_name() -> None:
    import guandan.records as records
    from guandan.records import reader, writer

    assert sorted(records.__all__) == sorted([
        "RecordedDraws", "EVENT_FIELDS", "FORMAT", "VERSION", "RecordError", "ReplayResult", "dumps",
        "iter_records", "parse_header", "read_lines", "record_header", "record_lines", "replay",
        "replay_lines", "write_record",
    ])
    assert records.record_lines is writer.record_lines and records.replay_lines is reader.replay_lines
    assert records.FORMAT == "pyguandan-record" and records.VERSION == 1


def test_agent_registry_and_heuristic_names() -> None:
    import guandan.agents as agents
    from guandan.agents import base, decomposition, heuristic, registry

    assert agents.make_agent is registry.make_agent and agents.AGENT_NAMES is registry.AGENT_NAMES
    # the registry left ``base`` (CHANGELOG.md): base builds no agent, so it has no make_agent
    assert not hasattr(base, "make_agent") and not hasattr(base, "AGENT_NAMES")
    for name in ("CostModel", "DEFAULT_MODEL", "Combo", "Decomposition", "decompose", "hand_cost"):
        assert getattr(heuristic, name) is getattr(decomposition, name), name
    assert type(registry.make_agent("heuristic", 1)) is heuristic.HeuristicAgent


@pytest.mark.parametrize(
    "old", ["guandan.bench", "guandan.search_bench", "guandan.search_audit", "guandan.driver", "guandan.tui",
            "guandan.play_i18n"],
)
def test_moved_away_paths_are_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
