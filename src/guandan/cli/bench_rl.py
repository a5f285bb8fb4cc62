"""``guandan bench rl``: render :func:`guandan.rl.bench.run_rl_bench` (called from ``bench_cmd``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import typer


def _status(ok: bool | None) -> Any:
    from rich.text import Text

    if ok is None:
        return Text("-")
    return Text("PASS", style="green") if ok else Text("BELOW TARGET", style="bold red")


def render(result: dict[str, Any]) -> Any:
    """Rich tables of an RL benchmark result."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    c = result["checks"]
    env = Table(title="guandan.rl env, one core, random legal actions (steps = decisions)", title_justify="left")
    for col in ("action mode", "observation", "steps/s"):
        env.add_column(col, justify="right" if col == "steps/s" else "left")
    env.add_row("(bare engine: legal actions + apply)", "-", f"{result['engine_steps_per_s']:,.0f}")
    for r in result["env"]:
        mode = r["action_mode"] + (" (before: reference paths)" if r.get("reference") else "")
        env.add_row(mode, r["obs"], f"{r['steps_per_s']:,.0f}")
    main = next(r["steps_per_s"] for r in result["env"]
                if r["action_mode"] == "abstract" and r["obs"] == "default" and not r.get("reference"))
    pz = result.get("pettingzoo_steps_per_s")
    pair = result.get("pettingzoo")
    if pz is not None and pair:
        env.add_row("PettingZoo AEC, abstract: agent_iter/last/step", "default", f"{pz:,.0f}")
        env.add_row("  the Table loop, alternating with it (same load)", "default", f"{pair['table_steps_per_s']:,.0f}")
    v = result["vec"]
    vec = Table(title=f"VecEnv, {v['tables']} tables, abstract + default encoding, random actions chosen by the caller",
                title_justify="left")
    vec.add_column("backend")
    vec.add_column("decisions/s", justify="right")
    vec.add_column("vs one core", justify="right")
    vec.add_column("target")
    vec.add_column("status")
    vec.add_column("worker CPU / wall", justify="right")
    vec.add_column("decisions / worker CPU s", justify="right")
    vec.add_column("caller CPU / wall", justify="right")

    def cpu_cols(run: dict[str, Any] | None) -> tuple[str, str, str]:
        if not run or not run.get("decisions_per_cpu_s"):
            return "-", "-", "-"
        parent = run.get("parent_cpu_s")
        return (f"{run['cpu_s'] / run['wall_s']:.2f}", f"{run['decisions_per_cpu_s']:,.0f}",
                "-" if parent is None else f"{parent / run['wall_s']:.2f}")

    def row(label: str, rate: float, target: str = "-", status: Any = None, run: dict[str, Any] | None = None) -> None:
        vec.add_row(label, f"{rate:,.0f}", f"{rate / main:.2f}x", target, status if status is not None else Text("-"),
                    *cpu_cols(run))

    w = v["workers"]
    target = result["targets"].get("vec_decisions_per_s", 40_000)
    head = v.get("process_workers")
    row("sync, step()", v["sync_decisions_per_s"])
    one = v.get("process_1_worker")
    if one:
        row("process, 1 worker, step()", one["decisions_per_s"], run=one)
    for key, label in (("process_workers_lockstep", f"process, {w} workers, step()"),
                       ("process_workers_pipelined", f"process, {w} workers, pipelined")):
        run = v.get(key)
        if not run:
            continue
        if run is head or run == head:
            row(label + " *", run["decisions_per_s"], f"≥ {target:,.0f}", _status(c.get("vec_target")), run)
        else:
            row(label, run["decisions_per_s"], run=run)
    row(f"process, {w} workers, step(), candidates K=64 + features", v["process_candidates_decisions_per_s"])
    vec.caption = (f"step(): lock-step, all rows per call. pipelined: VecEnv(groups=2), step_async/step_wait per group "
                   "(the workers step one group while the caller chooses actions for the other). "
                   f"* the headline figure, checked against the target: the faster path in this run ({v.get('path')}).")
    vec.caption_justify = "left"
    ref = result["references"]
    refs = Table(title="references, same run (benchmark-only packages)", title_justify="left")
    refs.add_column("environment")
    refs.add_column("steps/s", justify="right")
    refs.add_column("ours (abstract+default) / it", justify="right")
    refs.add_column("our PettingZoo AEC / it", justify="right")
    refs.add_column("status")
    rl = ref["rlcard_doudizhu_steps_per_s"]
    if pz is not None:
        refs.add_row("ours through PettingZoo's AEC API (abstract + default)", f"{pz:,.0f}",
                     f"{main / pz:.2f}x", "1.00x", _status(c.get("pettingzoo_target")))
    refs.add_row("RLCard doudizhu (with its encoding)", "-" if rl is None else f"{rl:,.0f}",
                 "-" if rl is None else f"{c['vs_rlcard_doudizhu']:.2f}x",
                 "-" if rl is None or pz is None else f"{pz / rl:.2f}x", _status(c["faster_than_rlcard"]))
    dz = ref["douzero_gameenv_steps_per_s"]
    refs.add_row("DouZero GameEnv (no encoding)", "-" if dz is None else f"{dz:,.0f}",
                 "-" if dz is None else f"{c['vs_douzero']:.2f}x",
                 "-" if dz is None or pz is None else f"{pz / dz:.2f}x", Text("-"))
    notes = [n for n in (ref["rlcard_note"], ref["douzero_note"]) if n]
    target = Text(
        f"single-core target ≥ {result['targets']['single_core_steps_per_s']:,} steps/s (abstract + default): "
        f"{main:,.0f} — "
    )
    target.append_text(_status(c["single_core_target"]))
    target.append(f"  ({c['speedup_vs_reference']:.2f}x the reference paths in this run)")
    parts: list[Any] = [env, vec, refs, target]
    if pz is not None:
        pz_line = Text(f"PettingZoo AEC target ≥ {result['targets']['single_core_steps_per_s']:,} steps/s: {pz:,.0f} — ")
        pz_line.append_text(_status(c.get("pettingzoo_target")))
        pz_line.append(f"  ({c['pettingzoo_vs_table']:.2f}x the one-core Table loop alternating with it; "
                       f"{c['pettingzoo_vs_table_cpu']:.2f}x per CPU second)")
        parts.append(pz_line)
    parts += [Text(f"skipped: {n}", style="yellow") for n in notes]
    load = result.get("load_average") or {}
    if load.get("start") is not None:
        parts.append(Text(f"{result['seconds']:g} s per figure; 1-minute load average {load['start']:.2f} at the start, "
                          f"{load['end']:.2f} at the end (other jobs on the machine lower every figure)"))
    else:
        parts.append(Text(f"{result['seconds']:g} s per figure"))
    return Group(*parts)


def bench_rl(as_json: bool, seconds: float, fail: Callable[[str], None]) -> None:
    """Run the RL benchmark with ``seconds`` per figure; print tables or JSON."""
    if not 0 < seconds <= 3600:  # also nan
        fail(f"--deals-seconds must be > 0 and at most 3600 for `guandan bench rl` (seconds per figure), not {seconds}")
    try:
        from guandan.rl import bench
        from guandan.runtime.gctune import tune_gc
    except ImportError as e:
        fail(f"guandan bench rl needs the [rl] extra (pip install -e '.[rl]' in the pyguandan checkout): {e}")
    tune_gc()  # this process only steps tables: frozen set-up, rarer young collections (guandan.runtime.gctune)
    if as_json:
        typer.echo(json.dumps(bench.run_rl_bench(seconds)))
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    console = Console()
    with Progress(TextColumn("{task.description}"), BarColumn(), console=console, auto_refresh=False,
                  transient=True) as prog:
        task = prog.add_task("benchmarking", total=18)

        def step(label: str) -> None:
            prog.advance(task)
            prog.update(task, description=f"benchmarking: {label}")
            prog.refresh()

        result = bench.run_rl_bench(seconds, progress=step)
    console.print(render(result))
