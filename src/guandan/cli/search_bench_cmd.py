"""``guandan bench-search``: speed of the search path (see :mod:`guandan.search_bench`)."""

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
) -> None:
    """Time Deal.clone, push/pop undo, checked apply, world sampling and whole rollouts.

    Wall-clock figures of this process: on a shared machine they move with its load.
    """
    import json

    from rich.console import Console
    from rich.table import Table

    from guandan.search_bench import run_search_bench

    err = Console(stderr=True)
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
        "actions_per_rollout": ("actions per rollout", ""),
    }
    for key, (label, unit) in labels.items():
        table.add_row(label, f"{result[key]:.2f} {unit}".strip())
    Console().print(table)
