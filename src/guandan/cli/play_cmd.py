"""``guandan play``: a person plays a full game in the terminal.

This module only parses the command's arguments; the game itself (its loop, rendering, input and
languages) is the :mod:`guandan.terminal` package.
"""

from __future__ import annotations

import typer

from .app import AGENT_HELP, PRESET_HELP, RULE_HELP, app, load_rules
from .output import error_text


@app.command("play")
def play_command(
    preset: str = typer.Option("official", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed of the game (shuffles, bots); random when omitted."
    ),
    bot: str = typer.Option("heuristic", "--bot", help="Bot for the other three seats: " + AGENT_HELP),
    lang: str = typer.Option("en", "--lang", help="Language of the game's screens, prompts and messages: en or zh (中文)."),
    delay: float | None = typer.Option(
        None,
        "--delay",
        min=0.0,
        max=60.0,
        help="Seconds to pause after each bot move, up to 60 (default: 0.4 in a terminal, else 0).",
    ),
    autoplay: bool = typer.Option(
        False, "--autoplay", help="Demo mode: the heuristic bot plays your seat too; no prompts."
    ),
    no_shuffle: bool = typer.Option(
        False, "--no-shuffle",
        help="House mode 不洗牌: each later deal is the previous deal's tricks gathered, cut and dealt in "
             "packets of 9 (bombs come more often); same as --rule no_shuffle=true.",
    ),
    single_deal: bool = typer.Option(
        False, "--single-deal",
        help="House mode 单局: a quick game of one deal at a random level; same as --rule single_deal=true.",
    ),
) -> None:
    """Play a full game in the terminal: you are South (seat 0), a bot partner is North (seat 2), bots East (1) and West (3). From level 2 until a team passes the target, with tribute.

    Type cards as rank then suit (TH TD, 10h), or ranks only when the suits do not matter (QQQ, 10 10); p to pass, h for a hint, ? for help, q to quit. --lang zh plays in Chinese.
    """
    from rich.console import Console

    from guandan.terminal.game import check_bot, check_language, play_game

    err = Console(stderr=True)
    rules = load_rules(preset, rule)
    if no_shuffle or single_deal:  # house modes (docs/rules.md P.1) on top of the preset and --rule
        rules = rules.replace(**{k: True for k, on in (("no_shuffle", no_shuffle), ("single_deal", single_deal)) if on})
    try:
        check_language(lang)
    except ValueError as e:
        err.print(error_text(e), highlight=False)
        raise typer.Exit(2) from None
    try:
        check_bot(bot)
    except ValueError as e:
        err.print(error_text(e), highlight=False)
        raise typer.Exit(2) from None
    raise typer.Exit(play_game(rules, preset=preset, seed=seed, bot=bot, delay=delay, autoplay=autoplay))
