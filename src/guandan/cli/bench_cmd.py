"""``guandan bench``: move-generation and self-play speed (see :mod:`guandan.evaluation.bench`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app
from .output import fail as _fail


def _fmt_us(us: float) -> str:
    return f"{us:,.1f}"


def render(result: dict[str, Any]) -> Any:
    """A Rich renderable (tables) of a :func:`guandan.evaluation.bench.run_bench` result."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title="legal-move generation (median of cold calls)", title_justify="left")
    table.add_column("scenario")
    table.add_column("moves", justify="right")
    table.add_column("µs/call", justify="right")
    table.add_column("target µs", justify="right")
    table.add_column("status")
    for row in result["scenarios"]:
        target = row.get("target_us")
        if target is None:
            status = Text("-")
        elif row["us_per_call"] <= target:
            status = Text("PASS", style="green")
        else:
            status = Text("OVER TARGET", style="bold red")
        table.add_row(
            row["id"], str(row["moves"]), _fmt_us(row["us_per_call"]),
            "-" if target is None else f"≤ {target:,.0f}", status,
        )
    parts: list[Any] = [table]
    dps = result.get("random_deals_per_s")
    if dps is not None:
        want = result["targets"]["random_deals_per_s"]
        deals = Table(title="random 4-bot self-play (whole deals, checked apply)", title_justify="left")
        deals.add_column("figure")
        deals.add_column("deals/s", justify="right")
        deals.add_column("target", justify="right")
        deals.add_column("status")
        ok = Text("PASS", style="green") if dps >= want else Text("OVER TARGET", style="bold red")
        deals.add_row("agents draw from game.legal_actions()", f"{dps:,.1f}", f"≥ {want:,.0f}", ok)
        views = result.get("random_deals_per_s_views")
        if views is not None:
            deals.add_row("through seat views (driver.step + RandomAgent)", f"{views:,.1f}", "-", Text("-"))
        parts.append(deals)
    parts.append(
        Text(
            f"peak memory: {result['peak_mb']:.1f} MB (process peak resident set size, ru_maxrss); "
            f"{result['repeat']} timed calls per scenario; moves = plays returned, PASS not counted"
        )
    )
    return Group(*parts)


_HELP = (
    "Time legal-move generation on ten fixed scenarios and random 4-bot self-play.\n\n"
    "Scenarios (perf-hands.json): level 7, wilds 7H; a 27-card hand without and with two wilds; free "
    "lead and answers to a single, a pair, a straight and a 4-card bomb. For each: the median µs of one "
    "cold legal_plays call and MOVES, the number of plays it returns (PASS is not counted).\n\n"
    "Then whole random deals per second (fresh game, level 2; agents draw uniformly from "
    "game.legal_actions(); every action goes through the checking game.apply; a second figure builds "
    "seat views as the driver does) and the peak memory (process peak resident set size, ru_maxrss)."
)


@app.command("bench", help=_HELP + "\n\n`guandan bench rl`: the RL environment's speed against RLCard and DouZero "
             "(see guandan.rl.bench; needs the [rl] extra).")
def bench_command(
    suite: Annotated[
        str, typer.Argument(metavar="SUITE", help="What to measure: 'engine' (default) or 'rl' (the research environment).")
    ] = "engine",
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as one JSON object.")] = False,
    repeat: Annotated[
        int, typer.Option("--repeat", "-n", help="Timed legal-move calls per scenario (the median is reported).")
    ] = 300,
    deals_seconds: Annotated[
        float,
        typer.Option(
            "--deals-seconds",
            help="Seconds of random self-play for each deals/s figure, up to 3600 (0 skips self-play).",
        ),
    ] = 3.0,
    hands: Annotated[
        Path | None,
        typer.Option("--hands", help="Scenario file in the perf-hands.json format (default: the built-in ten)."),
    ] = None,
) -> None:
    """Run :func:`guandan.evaluation.bench.run_bench` and print a Rich table (or JSON with ``--json``).

    Exits with status 2 and a one-line message on bad options or an unreadable ``--hands`` file.
    """
    if suite == "rl":
        from .bench_rl import bench_rl

        bench_rl(as_json, deals_seconds, _fail)
        return
    if suite != "engine":
        _fail(f"unknown benchmark {suite!r}; valid: engine, rl")
    from guandan.evaluation import bench

    if repeat < 1:
        _fail(f"--repeat must be at least 1, not {repeat}")
    if not 0 <= deals_seconds <= 3600:
        _fail(f"--deals-seconds must be 0 to 3600, not {deals_seconds}")
    scenarios = None
    if hands is not None:
        try:
            scenarios = bench.load_scenarios(hands)
        except OSError as e:
            _fail(f"cannot read {hands}: {e.strerror or e}")
        except ValueError as e:
            _fail(str(e))
    if as_json:
        result = bench.run_bench(repeat, deals_seconds, scenarios)
        typer.echo(json.dumps(result))
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    console = Console()
    n_steps = len(scenarios if scenarios is not None else bench.SCENARIO_IDS) + (2 if deals_seconds > 0 else 0)
    # no auto-refresh: a refresh thread would compete with the timed code for the GIL
    with Progress(
        TextColumn("{task.description}"), BarColumn(), console=console, auto_refresh=False, transient=True
    ) as prog:
        task = prog.add_task("benchmarking", total=n_steps)

        def step(label: str) -> None:
            if prog.tasks[0].description != "benchmarking":
                prog.advance(task)
            prog.update(task, description=f"benchmarking: {label}")
            prog.refresh()

        result = bench.run_bench(repeat, deals_seconds, scenarios, progress=step)
    console.print(render(result))
