"""``guandan bench-search``: speed of the search path (see :mod:`guandan.evaluation.search_bench`)."""

from __future__ import annotations

import typer

from .app import app


@app.command("bench-search")
def bench_search_command(
    positions: int = typer.Option(
        6, "--positions", min=1, help="Seeded start positions (first decision of a deal)."
    ),
    rollouts: int = typer.Option(3, "--rollouts", min=1, help="Rollouts per position and policy."),
    seed: int = typer.Option(1, "--seed", help="Seed of the world sampling."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as one JSON object."),
    audit: int = typer.Option(
        0, "--audit", min=0, metavar="GAMES",
        help="Instead of timing: deviation audit over GAMES heuristic self-play games. At each late "
             "decision every --spec is asked; where it deviates from the heuristic both moves are "
             "played out on the real hands and the deviation counts as gained, lost or even.",
    ),
    specs: list[str] = typer.Option(
        ["hard:worlds=32,workers=1"], "--spec",
        help="Agent spec audited (repeatable), e.g. 'hard:worlds=32,workers=1,z=2'.",
    ),
    late: str = typer.Option(
        "10", "--late",
        help="Audit positions where a seat still playing holds at most this many cards "
             "('all': every position).",
    ),
) -> None:
    """Time Deal.clone, push/pop undo, checked apply, world sampling and whole rollouts; or, with
    --audit GAMES, audit search specs' deviations from the heuristic on the real hands.

    Wall-clock figures of this process: on a shared machine they move with its load.
    """
    import json

    from rich.console import Console
    from rich.table import Table

    from guandan.evaluation.search_bench import run_search_bench

    err = Console(stderr=True)
    if audit:
        _audit(audit, specs, late, seed, as_json)
        return
    with err.status("measuring") as status:
        result = run_search_bench(
            positions, rollouts, seed, progress=lambda s: status.update(f"measuring {s}")
        )
    if as_json:
        typer.echo(json.dumps(result))
        return
    table = Table(title="search path (one process, wall clock)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    labels = {
        "clone_us": ("Deal.clone", "µs"),
        "push_pop_us": ("push_unchecked + pop_unchecked", "µs"),
        "apply_us": ("checked Deal.apply", "µs"),
        "sample_ms": ("world constraints + one sampled world", "ms"),
        "rollout_ms": ("rollout to the end of the deal, rollout policy", "ms"),
        "rollout_heuristic_ms": ("rollout to the end of the deal, full heuristic", "ms"),
        "rollout_fast_ms": ("rollout to the end of the deal, fast rollout policy", "ms"),
        "actions_per_rollout": ("actions per rollout", ""),
        "late_rollout_heuristic_ms": ("late position: rollout, full heuristic", "ms"),
        "late_rollout_fast_ms": ("late position: rollout, fast rollout policy", "ms"),
        "late_actions_per_rollout": ("late position: actions per rollout", ""),
    }
    for key, (label, unit) in labels.items():
        table.add_row(label, f"{result[key]:.2f} {unit}".strip())
    Console().print(table)


def _audit(games: int, specs: list[str], late: str, seed: int, as_json: bool) -> None:
    """``--audit``: run :func:`guandan.evaluation.search_audit.run_search_audit` with a progress bar."""
    import json

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from guandan.agents import make_agent
    from guandan.agents.levels import late_option
    from guandan.evaluation.search_audit import run_search_audit

    try:
        late_cards = late_option(late)
    except ValueError:
        raise typer.BadParameter(f"a card count or 'all', not {late!r}", param_hint="--late") from None
    for s in specs:
        try:
            make_agent(s, 1)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--spec") from None
    with Progress(TextColumn("audit"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=Console(stderr=True)) as bar:
        task = bar.add_task("", total=games)

        def progress(done: int, stats: dict[str, dict[str, object]]) -> None:
            line = " | ".join(f"{s}: +{v['gained']} -{v['lost']} dev {v['deviations']}"
                              for s, v in stats.items())
            bar.update(task, completed=done, description=line)
            if not bar.console.is_terminal:  # a log file: one line per game
                bar.console.print(f"game {done}/{games}: {line}", soft_wrap=True)

        result = run_search_audit(specs, games, seed, late_cards, progress=progress)
    if as_json:
        typer.echo(json.dumps({"games": games, "seed": seed, "late": late, "specs": result}))
        return
    table = Table(title=f"deviation audit: {games} games from seed {seed}, late={late} (heuristic self-play)")
    for col in ("spec", "positions", "deviations", "gained", "lost", "even", "s/decision", "failures"):
        table.add_column(col, justify="left" if col == "spec" else "right")
    for s, v in result.items():
        per = v["seconds"] / v["positions"] if v["positions"] else 0.0
        table.add_row(s, str(v["positions"]), str(v["deviations"]), str(v["gained"]), str(v["lost"]),
                      str(v["even"]), f"{per:.2f}", str(v["failures"]))
    Console().print(table)
