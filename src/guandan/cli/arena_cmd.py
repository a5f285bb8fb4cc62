"""``guandan arena``: two agents play duplicate deals and games (see :mod:`guandan.evaluation.arena`)."""

from __future__ import annotations

import typer

from .app import AGENT_HELP, PRESET_HELP, RULE_HELP, app, load_rules
from .output import error_text


@app.command("arena")
def arena_command(
    agent_a: str = typer.Argument(..., metavar="AGENT_A", help="Team A's agent (seats 0 and 2 first): " + AGENT_HELP),
    agent_b: str = typer.Argument(..., metavar="AGENT_B", help="Team B's agent (seats 1 and 3 first): " + AGENT_HELP),
    deals: int = typer.Option(
        100, "--deals", "-n", help="Boards: single deals at level 2, each played twice with seats swapped."
    ),
    games: int = typer.Option(
        20, "--games", "-g", help="Whole games (2 to passing A), each played twice with seats swapped; 0 for none."
    ),
    preset: str = typer.Option("official", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
    seed: int = typer.Option(0, "--seed", "-s", help="Master seed: the same seed replays the same boards and games."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object instead of a table."),
) -> None:
    """Play AGENT_A against AGENT_B in duplicate; report win rates with 95% CIs.

    Each board is dealt once and played twice (same cards per seat, same
    first leader): A in seats 0/2, then A in seats 1/3. A deal is won by
    the team of the first player out. Wilson score intervals.
    """
    import json

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from guandan.agents.registry import make_agent
    from guandan.evaluation.arena import duplicate_match

    from .rates import ci, pct, rate_table

    err = Console(stderr=True)
    for name in (agent_a, agent_b):
        try:
            make_agent(name, 0)
        except ValueError as e:
            err.print(error_text(e), soft_wrap=True, highlight=False)
            raise typer.Exit(2) from None
    if deals < 0 or games < 0 or deals + games == 0:
        err.print(error_text("--deals and --games must be >= 0 and not both 0"))
        raise typer.Exit(2)
    rules = load_rules(preset, rule)

    total = 2 * deals + 2 * games
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(f"{agent_a} vs {agent_b}", total=total)

        def progress(done: int, _total: int) -> None:
            bar.update(task, completed=done)

        result = duplicate_match(agent_a, agent_b, deals, rules, seed, progress=progress, games=games)

    if as_json:
        out = result.to_json()
        out.pop("records", None)
        typer.echo(json.dumps(out))
        return

    table = rate_table(f"{agent_a} (A) vs {agent_b} (B), preset {result.preset}, seed {seed}")
    if deals:
        table.add_row(f"deal win rate of A ({result.deals} deals, {result.boards} boards)",
                      pct(result.deal_win_rate), ci(result.deal_ci))
        table.add_row("  paired per-board interval", "", ci(result.board_ci))
        r = result.results_a
        table.add_row("  A's wins as 1-2 / 1-3 / 1-4", f"{r['1-2']} / {r['1-3']} / {r['1-4']}", "")
        table.add_row("mean levels gained per deal, A / B",
                      f"{result.mean_upgrade_a:.2f} / {result.mean_upgrade_b:.2f}", "")
    if games:
        table.add_row(f"game win rate of A ({result.games} games)", pct(result.game_win_rate), ci(result.game_ci))
        table.add_row("  mean deals per game", f"{result.mean_game_deals:.1f}", "")
    table.add_row("time", f"{result.seconds:.1f} s ({result.ms_per_action:.2f} ms/action)", "")
    for team, name, dm in (("A", agent_a, result.decision_ms_a), ("B", agent_b, result.decision_ms_b)):
        if dm.get("n"):
            table.add_row(f"decision time of {team} ({name}), mean / p99 / max",
                          f"{dm['mean_ms']:.1f} / {dm['p99_ms']:.1f} / {dm['max_ms']:.1f} ms", "")
    Console().print(table)
    Console().print("CI: Wilson score interval (deals and games taken as independent trials).")
