"""``guandan loadtest``: measure the web server with many concurrent tables (loopback only)."""

from __future__ import annotations

import typer

from .app import app


@app.command("loadtest")
def loadtest_command(
    tables: int = typer.Option(..., "--tables", "-n", help="Concurrent tables (3 heuristic bots + 1 scripted websocket player each)."),
    url: str = typer.Option(
        None, "--url", help="A running server on this machine (default: start one with a fresh SQLite database)."
    ),
    deals: int = typer.Option(1, "--deals", "-d", help="Deals each table plays before its player stops."),
    timeout: float = typer.Option(300.0, "--timeout", help="Deadline of the whole run in seconds."),
    seed: int = typer.Option(0, "--seed", help="Seed of the scripted players' choices."),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Play N tables through the real HTTP API and websockets; report actions/s and act->state
    latency (p50/p99, ms)."""
    import json

    from rich.console import Console
    from rich.table import Table

    from guandan.server.loadtest import LoadTestError, run_loadtest

    err = Console(stderr=True)
    if tables < 1 or tables > 2000:
        err.print("[red]error:[/red] --tables must be between 1 and 2000")
        raise typer.Exit(2)
    if deals < 1:
        err.print("[red]error:[/red] --deals must be at least 1")
        raise typer.Exit(2)
    if timeout <= 0:
        err.print("[red]error:[/red] --timeout must be positive")
        raise typer.Exit(2)
    try:
        with err.status(f"playing {tables} tables ..."):
            report = run_loadtest(tables, url=url, deals=deals, timeout_s=timeout, seed=seed)
    except LoadTestError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    if json_out:
        print(json.dumps(report.to_json()))
    else:
        t = Table(title=f"load test: {report.tables} tables x {report.deals} deal(s) at {report.url}")
        t.add_column("measure")
        t.add_column("value", justify="right")
        t.add_row("tables done", f"{report.tables_done}/{report.tables}" + (" (deadline hit)" if report.timed_out else ""))
        t.add_row("duration (s)", f"{report.duration_s:.1f}")
        t.add_row("actions (all seats)", str(report.actions))
        t.add_row("actions/s", f"{report.actions_per_s:.1f}")
        t.add_row("player actions", str(report.person_actions))
        for name, v in (("latency p50 (ms)", report.p50_ms), ("latency p99 (ms)", report.p99_ms), ("latency max (ms)", report.max_ms)):
            t.add_row(name, "-" if v is None else f"{v:.1f}")
        t.add_row("errors", str(report.n_errors))
        Console().print(t)
        for line in report.errors[:5]:
            err.print(f"[yellow]{line}[/yellow]")
    if report.tables_done == 0:
        raise typer.Exit(1)
