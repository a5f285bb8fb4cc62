"""``guandan compat serve`` and ``guandan compat join``: the AI-competition protocol."""

from __future__ import annotations

import typer

from .app import AGENT_HELP, PRESET_HELP, RULE_HELP, app, load_rules
from .output import error_text

compat_app = typer.Typer(
    help="Host or join games in the Guandan AI-competition websocket protocol.", no_args_is_help=True
)
app.add_typer(compat_app, name="compat")


@compat_app.command("serve")
def serve_command(
    port: int = typer.Option(23456, "--port", min=0, max=65535, help="TCP port (the platform's default is 23456; 0 = any free port)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    games: int = typer.Option(1, "--games", "-n", min=1, help="Full games (2 → passing A) to play."),
    preset: str = typer.Option("aicomp", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
    timeout: float = typer.Option(30.0, "--timeout", min=0.01, help="Seconds per decision before the fallback bot plays it."),
    record: str = typer.Option(None, "--record", help="Directory for one pyguandan record per game."),
    seed: int = typer.Option(
        None, "--seed",
        help="Make the run reproducible: anyone who knows the seed knows the cards. Default: every deal is "
        "shuffled by the system's cryptographic random generator.",
    ),
    max_deals: int = typer.Option(500, "--max-deals", min=1, help="Deals after which a game counts as a draw."),
    send_timeout: float = typer.Option(
        10.0, "--send-timeout", min=0.01,
        help="Seconds one message to a client may take; a client that stops reading is then treated as "
        "disconnected and the fallback bot plays its seat.",
    ),
    start_delay: float = typer.Option(
        0.3, "--start-delay", min=0.0,
        help="Seconds between the 4th connection and the first message (ws4py clients need a pause).",
    ),
) -> None:
    """Serve ws://HOST:PORT/game/{name}; seats by connection order; starts at the 4th client.

    Without --seed every deal is shuffled by the system's cryptographic random generator, so no
    client can work out the other hands; records then store every deal's hands and replay without
    a seed. Each decision the fallback bot makes is logged with its seat and reason.
    """
    import asyncio
    import logging

    from rich.console import Console
    from rich.table import Table

    from guandan.compat.host import CompatHost, serve

    rules = load_rules(preset, rule)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    console = Console()
    try:
        h = CompatHost(rules, games=games, timeout=timeout, record_dir=record, seed=seed, max_deals=max_deals,
                       preset=preset, send_timeout=send_timeout, start_delay=start_delay)
    except OSError as e:
        Console(stderr=True).print(error_text(f"--record {record}: {e.strerror or e}"))
        raise typer.Exit(2) from None

    def ready(bound: int) -> None:
        console.print(f"Ready for connect. ws://{host}:{bound}/game/<name>  ({games} game(s), preset {preset})")

    try:
        summary = asyncio.run(serve(h, host, port, ready))
    except OSError as e:
        Console(stderr=True).print(error_text(f"cannot listen on {host}:{port}: {e}"))
        raise typer.Exit(1) from None
    except SystemExit:
        Console(stderr=True).print(error_text(f"cannot listen on {host}:{port}"))
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    t = Table(title=f"{summary.games} game(s), {summary.deals} deals in {summary.seconds:.1f} s")
    for col in ("seat", "client", "victories", "draws", "fallback decisions", "bad replies"):
        t.add_column(col)
    for s in range(4):
        t.add_row(str(s), summary.names[s], str(summary.victories[s]), str(summary.draws[s]),
                  str(summary.fallback_decisions[s]), str(summary.bad_replies[s]))
    console.print(t)
    for s in summary.mostly_fallback():
        reasons = ", ".join(f"{r} {n}" for r, n in sorted(summary.fallback_reasons[s].items()))
        console.print(
            f"[yellow]warning:[/yellow] seat {s} ({summary.names[s]}) was played mostly by the fallback bot "
            f"({summary.fallback_decisions[s]} of {summary.decisions[s]} decisions: {reasons}); its results "
            "are the fallback bot's, not its client's"
        )
    if summary.seconds > 0:
        console.print(f"{summary.games / summary.seconds * 60:.1f} games/min")
    for path in summary.records:
        console.print(f"record: {path}")


@compat_app.command("join")
def join_command(
    url: str = typer.Argument(..., metavar="URL", help="Host address, e.g. ws://127.0.0.1:23456/game/client1"),
    bot: str = typer.Option("heuristic", "--bot", help="Bot that plays: " + AGENT_HELP),
    seed: int = typer.Option(None, "--seed", help="Bot seed."),
    delay: float = typer.Option(0.0, "--delay", min=0.0, help="Seconds to wait before each reply."),
) -> None:
    """Play one of our bots on any host that speaks the protocol (ours included)."""
    import asyncio

    from rich.console import Console

    from guandan.agents import make_agent
    from guandan.compat.client import join

    err = Console(stderr=True)
    try:
        agent = make_agent(bot, seed)
    except ValueError as e:
        err.print(error_text(e))
        raise typer.Exit(2) from None
    if not url.startswith(("ws://", "wss://")):
        err.print(error_text(f"{url!r} is not a websocket address (ws://HOST:PORT/game/NAME)"))
        raise typer.Exit(2)
    try:
        stats = asyncio.run(join(url, agent, delay=delay))
    except OSError as e:
        err.print(error_text(f"cannot connect to {url}: {e}"))
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Exception as e:  # the host closed or sent something unreadable
        err.print(error_text(f"connection ended: {e}"))
        raise typer.Exit(1) from None
    res = stats.result or {}
    Console().print(
        f"seat {stats.seat}: {stats.games} game(s), {stats.deals} deals, {stats.decisions} decisions; "
        f"victories {res.get('victoryNum')}, draws {res.get('draws')}"
    )


@compat_app.command("arena")
def arena_command(
    ours: str = typer.Argument(..., metavar="OURS", help="Our bot (any name make_agent knows, e.g. heuristic)."),
    opponent_cmd: str = typer.Option(
        ..., "--opponent-cmd", "-o",
        help="Command line that starts ONE seat of the protocol bot; {url} is replaced by the address it must "
        "connect to ({name}, {seat} and {workdir} are also filled in). Started twice per run, stopped at the end.",
    ),
    games: int = typer.Option(5, "--games", "-n", min=1, help="Whole games per run (two runs: seats swapped)."),
    seed: int = typer.Option(1, "--seed", "-s", help="Seed of both runs: the same cards with the seats swapped."),
    preset: str = typer.Option("aicomp", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
    timeout: float = typer.Option(10.0, "--timeout", min=0.01, help="Seconds per decision before the fallback bot plays it."),
    max_deals: int = typer.Option(500, "--max-deals", min=1, help="Deals after which a game counts as a draw."),
    json_file: str = typer.Option(None, "--json", help="Write the summary as JSON to this file ('-': standard output)."),
    out: str = typer.Option(None, "--out", help="Directory for the records and the opponent's logs (default: a new temp dir)."),
) -> None:
    """Duplicate match of our bot against a protocol bot through the compat host.

    Run 1 seats OURS on seats 0/2 and the opponent on 1/3; run 2 swaps them with the same seed,
    so both teams get the same cards. Prints deal and game win rates with 95% Wilson intervals,
    levels per deal, our decision times and the fallback bot's decisions.
    """
    import json

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from guandan.agents import AGENT_NAMES, make_agent
    from guandan.compat.arena import ArenaError, fill_command, protocol_duplicate_match

    from .rates import ci, pct, rate_table

    err = Console(stderr=True)
    try:
        make_agent(ours, 0)
        fill_command(opponent_cmd, "ws://x", "n", 0, "w")
    except ValueError as e:
        err.print(error_text(e), highlight=False)
        if ours not in AGENT_NAMES:
            err.print(f"bots: {', '.join(AGENT_NAMES)}")
        raise typer.Exit(2) from None
    rules = load_rules(preset, rule)
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("games, {task.fields[deals]} deals"),
        TimeElapsedColumn(), console=err, transient=True,
    ) as bar:
        task = bar.add_task(f"{ours} vs opponent", total=2 * games, deals=0)

        def progress(done: int, total: int, deals: int) -> None:
            bar.update(task, completed=done, deals=deals)

        try:
            result = protocol_duplicate_match(
                ours, opponent_cmd, games, seed, rules, preset, out, timeout, max_deals, progress=progress
            )
        except ArenaError as e:
            err.print(error_text(e), highlight=False)
            raise typer.Exit(1) from None
        except OSError as e:
            err.print(error_text(e), highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err.print("interrupted; the opponent processes were stopped")
            raise typer.Exit(130) from None

    table = rate_table(f"{ours} vs protocol bot, preset {result.preset}, seed {seed}, {games} game(s) per run")
    table.add_row(f"deal win rate of {ours} ({result.deals} deals)", pct(result.deal_win_rate), ci(result.deal_ci))
    table.add_row(f"game win rate of {ours} ({result.games} games)", pct(result.game_win_rate), ci(result.game_ci))
    if result.draws:
        table.add_row("  draws (counted as half)", str(result.draws), "")
    table.add_row("levels per deal, ours / theirs",
                  f"{result.levels_per_deal_ours:.2f} / {result.levels_per_deal_theirs:.2f}", "")
    table.add_row(f"our decision time ({result.decisions} decisions)",
                  f"mean {result.decision_ms_mean:.1f} ms, p99 {result.decision_ms_p99:.1f} ms", "")
    table.add_row("fallback decisions, ours / opponent's", f"{result.fallback_ours} / {result.fallback_theirs}", "")
    table.add_row("paired deals with the same hands", f"{result.paired_same_hands} / {result.paired_deals}", "")
    table.add_row("time", f"{result.seconds:.0f} s", "")
    Console().print(table)
    Console().print(f"CI: Wilson score interval. Records and the opponent's logs: {result.out_dir}")
    for label in result.mostly_fallback:
        err.print(f"[yellow]warning:[/yellow] {label} was played mostly by the host's fallback bot: "
                  "those results are not the opponent's")
    if json_file:
        text = json.dumps(result.to_json(), ensure_ascii=False, indent=1)
        if json_file == "-":
            typer.echo(text)
        else:
            with open(json_file, "w", encoding="utf-8") as f:
                f.write(text + "\n")
