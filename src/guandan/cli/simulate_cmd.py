"""``guandan simulate``: bot-only games with a progress bar and summary statistics, optionally recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import AGENT_HELP, PRESET_HELP, RULE_HELP, app, load_rules


def game_stats(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Statistics of one finished game from its events.

    Returns a dict: ``deals``, ``actions``, ``loser_level`` (rank char of the losing team's level at
    the end, ``None`` when no team won), ``winner`` (team or ``None``), ``a_failures`` (failed target
    attempts, R38-R41), ``demotions`` (falls back to 2, R41), ``tributes`` (single tributes paid, R44),
    ``double_tributes`` (R44), ``anti_tributes`` (R48), ``jiefeng`` (R30), ``results`` (count per
    ``1-2``/``1-3``/``1-4``).
    """
    s: dict[str, Any] = {
        "deals": 0, "actions": 0, "loser_level": None, "winner": None, "a_failures": 0, "demotions": 0,
        "tributes": 0, "double_tributes": 0, "anti_tributes": 0, "jiefeng": 0,
        "results": {"1-2": 0, "1-3": 0, "1-4": 0},
    }
    last_end: dict[str, Any] | None = None
    for ev in events:
        t = ev["type"]
        if t == "deal":
            s["deals"] += 1
        elif t == "action":
            s["actions"] += 1
        elif t == "tribute_paid":
            if len(ev["tributes"]) >= 2:
                s["double_tributes"] += 1
            else:
                s["tributes"] += 1
        elif t == "anti_tribute":
            s["anti_tributes"] += 1
        elif t == "jiefeng":
            s["jiefeng"] += 1
        elif t == "deal_end":
            last_end = ev
            s["a_failures"] += len(ev["failed"])
            s["demotions"] += len(ev["demoted"])
            s["results"][ev["result"]] = s["results"].get(ev["result"], 0) + 1
        elif t == "game_over":
            s["winner"] = ev["winner_team"]
            if last_end is not None:
                s["loser_level"] = last_end["levels"][1 - ev["winner_team"]]
    return s


def _rank_value(ch: str) -> int:
    """Rank char to its number 2..14 (T=10, J=11, Q=12, K=13, A=14)."""
    return "23456789TJQKA".index(ch) + 2


@app.command("simulate")
def simulate_command(
    games: Annotated[
        int, typer.Option("--games", "-n", min=1, help="Number of games (each from level 2 to the target).")
    ] = 10,
    preset: Annotated[str, typer.Option("--preset", "-p", help=PRESET_HELP)] = "official",
    rule: Annotated[list[str] | None, typer.Option("--rule", "-r", help=RULE_HELP)] = None,
    bot: Annotated[str, typer.Option("--bot", "-b", help="Bot for all four seats: " + AGENT_HELP)] = "heuristic",
    seed: Annotated[
        int | None,
        typer.Option("--seed", "-s", help="Base seed: game i (0-based) uses seed+i; default: drawn at random and shown."),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option("--record", help="Directory for one record per game (game-0001.jsonl, ...); created if needed."),
    ] = None,
) -> None:
    """Play bot-only games and print statistics (deals, levels, A failures, tributes, speed).

    Each game is one climb from 2 to the target (max_games=1). Game i (0-based) is seeded SEED+i and the bot in seat s is seeded 4*(SEED+i)+s, so a run is reproducible from its seed.

    Ctrl-C stops the run: the games finished so far are summarised, then "interrupted" (exit status 130).
    """
    import secrets
    import time

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table
    from rich.text import Text

    from guandan.agents import make_agent
    from guandan.agents.driver import run_game
    from guandan.core.match import Game
    from guandan.records import write_record

    err = Console(stderr=True, soft_wrap=True)
    out = Console()
    rules = load_rules(preset, rule)
    try:
        make_agent(bot, 0)
    except ValueError as e:  # unknown name or option
        msg = str(e).replace("unknown agent", "unknown bot").replace("valid agents", "valid bots")
        err.print(Text(f"error: {msg}"))
        raise typer.Exit(2) from None
    except ImportError as e:
        err.print(Text(f"error: the {bot} bot is not available ({e}); try --bot random"))
        raise typer.Exit(2) from None
    if record is not None:
        try:
            record.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            err.print(Text(f"error: cannot create {record}: {e.strerror or e}"))
            raise typer.Exit(1) from None
    base = seed if seed is not None else secrets.randbelow(2**31)
    width = max(4, len(str(games)))
    stats: list[dict[str, Any]] = []
    started = time.perf_counter()
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
    ) as progress:
        task = progress.add_task(f"{preset} · {bot}", total=games)
        interrupted = False
        try:
            for i in range(games):
                gseed = base + i
                game = Game(rules, seed=gseed, max_games=1)
                agents = [make_agent(bot, 4 * gseed + s) for s in range(4)]
                run_game(game, agents)
                stats.append(game_stats(game.events))
                if record is not None:
                    path = record / f"game-{i + 1:0{width}d}.jsonl"
                    try:
                        write_record(path, game, preset, [bot] * 4)
                    except OSError as e:
                        progress.stop()
                        err.print(Text(f"error: cannot write {path}: {e.strerror or e}"))
                        raise typer.Exit(1) from None
                progress.advance(task)
        except KeyboardInterrupt:  # Ctrl-C: summarise the games finished so far
            interrupted = True
    wall = time.perf_counter() - started

    n = len(stats)
    if interrupted and n == 0:
        err.print(Text(f"interrupted before the first game finished ({wall:.1f} s)"))
        raise typer.Exit(130)
    deals = [s["deals"] for s in stats]
    actions = sum(s["actions"] for s in stats)
    total_deals = sum(deals)
    levels = [s["loser_level"] for s in stats if s["loser_level"] is not None]
    dist: dict[str, int] = {}
    for ch in sorted(levels, key=_rank_value):
        dist[ch] = dist.get(ch, 0) + 1
    wins = [sum(1 for s in stats if s["winner"] == t) for t in (0, 1)]
    results = {k: sum(s["results"][k] for s in stats) for k in ("1-2", "1-3", "1-4")}

    def per_game(key: str) -> str:
        tot = sum(s[key] for s in stats)
        return f"{tot} ({tot / n:.2f} per game)"

    done = f"{n} of {games} games (interrupted)" if interrupted else f"{n} games"
    table = Table(title=f"simulate: {done}, preset {preset}, bot {bot}, seed {base}")
    table.add_column("statistic")
    table.add_column("value")
    table.add_row("games", str(n))
    table.add_row("wins team 0/2 : team 1/3", f"{wins[0]} : {wins[1]}")
    table.add_row("deals", f"{total_deals} total; per game mean {total_deals / n:.2f}, min {min(deals)}, max {max(deals)}")
    table.add_row("results 1-2 / 1-3 / 1-4", f"{results['1-2']} / {results['1-3']} / {results['1-4']}")
    if levels:
        mean = sum(_rank_value(c) for c in levels) / len(levels)
        table.add_row("loser team's level", f"mean {mean:.2f} (2..14, A=14); " + ", ".join(f"{k}:{v}" for k, v in dist.items()))
    table.add_row("A failures", per_game("a_failures"))
    table.add_row("fall backs to 2", per_game("demotions"))
    table.add_row("tributes (single)", per_game("tributes"))
    table.add_row("double tributes", per_game("double_tributes"))
    table.add_row("anti-tributes", per_game("anti_tributes"))
    table.add_row("jiefeng", per_game("jiefeng"))
    table.add_row("actions", f"{actions} ({actions / total_deals:.1f} per deal)" if total_deals else str(actions))
    table.add_row("wall time", f"{wall:.2f} s")
    table.add_row("speed", f"{total_deals / wall:.1f} deals/s, {n / wall:.2f} games/s" if wall > 0 else "-")
    if record is not None:
        table.add_row("records", f"{record}/game-{1:0{width}d}.jsonl … ({n} files)")
    out.print(table)
    if interrupted:
        err.print(Text(f"interrupted after {n} of {games} games"))
        raise typer.Exit(130)
