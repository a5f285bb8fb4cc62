"""Starting a terminal game (``guandan play``): the language, the bots, the opening lines, then the
session's loop (:class:`~guandan.terminal.session.PlaySession`).

The command line only parses arguments and calls :func:`check_language`, :func:`check_bot` and
:func:`play_game`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .i18n import LANGUAGES, set_language, tr
from .render import HUMAN
from .session import PlaySession

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from guandan.agents.base import Agent
    from guandan.core.rules import RuleSet


def check_language(lang: str) -> None:
    """Choose the language of the game's screens (:func:`guandan.terminal.i18n.set_language`).

    Raises:
        ValueError: ``lang`` is not one of :data:`~guandan.terminal.i18n.LANGUAGES`; the message
            names the valid ones.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"--lang {lang!r} is not available; valid: {', '.join(LANGUAGES)}")
    set_language(lang)


def check_bot(bot: str) -> None:
    """Check a bot spec (:func:`guandan.agents.make_agent`: name and options) by building it once.

    Raises:
        ValueError: unknown bot or option; the message speaks of bots and lists the valid ones.
    """
    from guandan.agents import make_agent

    try:
        make_agent(bot, 0)
    except ValueError as e:
        msg = str(e).replace("unknown agent", "unknown bot").replace("valid agents", "valid bots")
        raise ValueError(msg) from None


def _bot_words(bot: str) -> str:
    """The bot's name in the player's language: its name or level translated, any options after
    the first colon kept as typed (``hard:worlds=24`` -> ``困难:worlds=24`` in Chinese)."""
    name, colon, options = bot.partition(":")
    return tr(name) + colon + options


def build_agent(name: str, seed: int) -> tuple[Agent, str | None]:
    """A bot by name, falling back to the random bot when ``heuristic`` cannot be imported.

    Returns:
        ``(agent, note)``: ``note`` is a one-line explanation when a fallback happened, else ``None``.
    Raises:
        ValueError: unknown agent name (from :func:`guandan.agents.make_agent`).
    """
    from guandan.agents import make_agent
    from guandan.agents.base import RandomAgent

    try:
        return make_agent(name, seed), None
    except ImportError as e:
        return RandomAgent(seed), f"the {name} bot is not available ({e}); using the random bot"


def play_game(
    rules: RuleSet,
    *,
    preset: str,
    seed: int | None,
    bot: str,
    delay: float | None,
    autoplay: bool,
    console: Console | None = None,
) -> int:
    """Play one terminal game: the person at seat 0, ``bot`` at the other seats.

    Args:
        rules: the game's rules; preset: the preset's name (shown in the opening line).
        seed: seed of the game (shuffles, bots); ``None``: a random one.
        bot: bot spec for seats 1-3 (checked first with :func:`check_bot`); seat 0's bot
            (the heuristic) plays only with ``autoplay``.
        delay: seconds to pause after each bot move; ``None``: 0.4 in a terminal, else 0.
        autoplay: demo mode, seat 0 is played by the heuristic bot too, with no prompts.
        console: where the game is printed and read (default: a new Rich console).
    Returns:
        The exit status of :meth:`PlaySession.run`.
    """
    import random
    import sys

    from rich.console import Console
    from rich.text import Text

    from guandan.core.match import Game

    if seed is None:
        seed = random.SystemRandom().randrange(1, 1_000_000)
    console = console if console is not None else Console(highlight=False)
    notes: list[str] = []
    bots = []
    for s in range(4):
        name = "heuristic" if s == HUMAN else bot  # seat 0's bot plays only in --autoplay
        agent, note = build_agent(name, seed * 10 + s)
        if note and note not in notes:
            notes.append(note)
        bots.append(agent)
    hint_agent, hint_note = build_agent("heuristic", seed * 10 + 7)
    hint_name = "heuristic" if hint_note is None else "random"
    if hint_note:
        hint_note = "hints come from the random bot: the heuristic bot is not available"
        if hint_note not in notes:
            notes.append(hint_note)
    if delay is None:
        delay = 0.4 if sys.stdout.isatty() else 0.0
    game = Game(rules, seed=seed)
    intro = Text(tr("pyguandan — you are South (seat 0); your partner is North (seat 2); East (seat 1) and West "
                    "(seat 3) play against you."), style="bold")
    intro.append("\n" + tr("preset {preset} · seed {seed} · bots {bot}", preset=tr(preset), seed=seed, bot=_bot_words(bot))
                 + (tr(" · autoplay (demo)") if autoplay else "") + tr(". Type ? for help."), style="")
    modes = [tr(words) for on, words in ((rules.no_shuffle, "no shuffle (不洗牌)"),
                                         (rules.single_deal, "single deal (单局)")) if on]
    if modes:
        intro.append("\n" + tr("House modes: ") + ", ".join(modes), style="")
    console.print(intro)
    for note in notes:
        console.print(Text(tr("note: "), style="yellow") + Text(note))
    session = PlaySession(
        game, bots, hint_agent, console, delay=delay, autoplay=autoplay, hint_name=hint_name
    )
    return session.run()
