"""``guandan loadtest``: measure the web server with many concurrent tables (loopback only)."""

from __future__ import annotations

import typer

from .app import app
from .output import error_text


@app.command("loadtest")
def loadtest_command(
    tables: int = typer.Option(..., "--tables", "-n", help="Concurrent tables (3 heuristic bots + 1 scripted websocket player each; see --people)."),
    url: list[str] = typer.Option(
        None, "--url", metavar="URL",
        help="A running server on this machine; repeat it or separate URLs with commas to spread the tables over "
             "several servers (a cluster). Default: start one with a fresh SQLite database.",
    ),
    deals: int = typer.Option(1, "--deals", "-d", help="Deals each table plays before its player stops."),
    spectators: int = typer.Option(
        0, "--spectators", help="Spectator websockets per table (0-8), on the URLs after the player's."
    ),
    timeout: float = typer.Option(300.0, "--timeout", help="Deadline of the whole run in seconds."),
    seed: int = typer.Option(0, "--seed", help="Seed of the scripted players' choices."),
    replay_check: bool = typer.Option(
        True, "--replay-check/--no-replay-check", help="Download and replay every stored game of the run at the end (not with --round or --people 2: those games go on after their deals)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    samples: str = typer.Option(
        None, "--samples", metavar="FILE",
        help="Also write every latency sample to FILE as CSV (arrived_monotonic_s,latency_ms: the arrival on "
             "the machine's monotonic clock, for setting the samples beside what another process did then).",
    ),
    people: int = typer.Option(
        None, "--people", min=1, max=2, show_default="1",
        help="Scripted people per table: 1 (seat 0, three bots) or 2 (seats 0 and 2, partners, two bots: the "
             "load of an online round's table, where every action reaches two people). --round always has 2.",
    ),
    round_: bool = typer.Option(
        False, "--round",
        help="Play the tables as one round of an online tournament instead: 2N accounts as N pairs of people "
             "against N bot pairs, both people of every table scripted (the server must allow registrations: "
             "the one started here does; the event stays on a server given with --url).",
    ),
) -> None:
    """Play N tables through the real HTTP API and websockets; report actions/s, act->state
    latency (p50/p99, ms), errors, and whether every stored game's record replays.

    With --round the N tables are one round of an online tournament (docs/tournaments.md), for
    comparing its move latency with the plain run's."""
    import json

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from guandan.server.loadtest import LoadTestError, run_loadtest, split_urls

    err = Console(stderr=True)
    if tables < 1 or tables > 2000:
        err.print(error_text("--tables must be between 1 and 2000"))
        raise typer.Exit(2)
    if deals < 1:
        err.print(error_text("--deals must be at least 1"))
        raise typer.Exit(2)
    if timeout <= 0:
        err.print(error_text("--timeout must be positive"))
        raise typer.Exit(2)
    if not 0 <= spectators <= 8:
        err.print(error_text("--spectators must be between 0 and 8"))
        raise typer.Exit(2)
    if round_ and people == 1:
        err.print(error_text("--round plays both people of a pair at every table: --people 2 (the default there)"))
        raise typer.Exit(2)
    if round_ and spectators:
        err.print(error_text("--round plays without spectators (a tournament table's spectators see it delayed)"))
        raise typer.Exit(2)
    def unwritable(e: OSError) -> typer.Exit:
        err.print(error_text(f"--samples: cannot write {samples!r}: {e.strerror or e}"))
        return typer.Exit(2)

    if samples is not None:
        try:  # refused now, not after a run of minutes
            with open(samples, "a", encoding="utf-8"):
                pass
        except OSError as e:
            raise unwritable(e) from None
    if round_ or people == 2:
        # a round's games go on after D deals, and a game two people play cannot be abandoned
        # (409 abandon_not_alone): no record is complete
        replay_check = False
    try:
        urls = split_urls(url) if url else None
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("tables · {task.fields[actions]} actions"), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            task = bar.add_task(f"playing {tables} tables", total=tables, actions=0)

            def progress(done: int, total: int, actions: int) -> None:
                bar.update(task, completed=done, actions=actions)

            if round_:
                from guandan.server.loadtest_round import run_round_loadtest

                report = run_round_loadtest(tables, url=urls, deals=deals, timeout_s=timeout, seed=seed,
                                            progress=progress)
            else:
                report = run_loadtest(tables, url=urls, deals=deals, timeout_s=timeout, seed=seed,
                                      spectators=spectators, check_replay=replay_check, progress=progress,
                                      people=people or 1)
    except LoadTestError as e:
        err.print(error_text(e))
        raise typer.Exit(2) from None
    if samples is not None:
        from guandan.server.loadtest import write_samples

        try:
            write_samples(report, samples)
        except OSError as e:
            raise unwritable(e) from None
    if json_out:
        print(json.dumps(report.to_json()))
    else:
        where = report.urls[0] if len(report.urls) == 1 else f"{len(report.urls)} servers"
        kind = "online tournament round" if round_ else "load test" + (", 2 people per table" if people == 2 else "")
        t = Table(title=f"{kind}: {report.tables} tables x {report.deals} deal(s) at {where}")
        t.add_column("measure")
        t.add_column("value", justify="right")
        t.add_row("tables done", f"{report.tables_done}/{report.tables}" + (" (deadline hit)" if report.timed_out else ""))
        t.add_row("set-up (s, not measured)", f"{report.setup_s:.1f}")
        t.add_row("games starting (s, not measured)", f"{report.start_s:.1f} ({report.start_actions} bot actions)")
        t.add_row("duration (s)", f"{report.duration_s:.1f}")
        t.add_row("actions (all seats)", str(report.actions))
        t.add_row("actions/s", f"{report.actions_per_s:.1f}")
        t.add_row("player actions", str(report.person_actions))
        for name, v in (("latency p50 (ms)", report.p50_ms), ("latency p99 (ms)", report.p99_ms), ("latency max (ms)", report.max_ms),
                        ("latency p99, once parsed (ms)", report.p99_parsed_ms)):
            t.add_row(name, "-" if v is None else f"{v:.1f}")
        if report.spectators:
            t.add_row("spectator frames", str(report.spectator_frames))
            for name, v in (("act -> spectator p50 (ms)", report.spectator_p50_ms),
                            ("act -> spectator p99 (ms)", report.spectator_p99_ms)):
                t.add_row(name, "-" if v is None else f"{v:.1f}")
        if replay_check:
            t.add_row("records replayed", f"{report.records_ok}/{report.records_checked}")
        t.add_row("errors", str(report.n_errors))
        Console().print(t)
        for line in report.errors[:5]:
            err.print(f"[yellow]{line}[/yellow]")
    if report.tables_done == 0:
        raise typer.Exit(1)
