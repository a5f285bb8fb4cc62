"""The Typer application object shared by every command module."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="guandan",
    help="pyguandan: Guandan (掼蛋) rules engine, bots, terminal play and tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # help paragraphs reflow to the terminal's width (no hard line breaks)
)


def _no_flag_metavars() -> None:
    """Flags (``--json``, ``--help``) take no value: show no ``<bool>`` type beside them in ``--help``."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "_guandan_flags", False):
        return

    def display_type_rich(self: TyperOption, ctx: object) -> str | None:
        if self.is_flag and not self.count:
            return None
        return shown(self, ctx)  # type: ignore[arg-type]

    display_type_rich._guandan_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_no_flag_metavars()


def load_rules(preset: str, rule: list[str] | None):  # type: ignore[no-untyped-def]
    """Preset plus ``--rule key=value`` overrides; exits with a one-line error when invalid."""
    from rich.console import Console
    from rich.markup import escape

    from guandan.core.errors import RuleConfigError
    from guandan.core.rules import RuleSet, apply_overrides

    try:
        return apply_overrides(RuleSet.preset(preset), rule or [])
    except RuleConfigError as e:  # the message quotes what was typed: markup in it is printed as written
        Console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {escape(str(e))}")
        raise typer.Exit(2) from None


PRESET_HELP = "Rule preset: official, anhui, classic, huaian, yangzhou, maanshan, aicomp."
#: Agent names for --help (guandan.agents.base.AGENT_NAMES; options as in guandan.agents.levels).
AGENT_HELP = (
    "random, heuristic, search, policy, or a level easy, normal (= heuristic), hard (= search), "
    "expert (search + networks, needs NumPy); "
    "options after a colon, e.g. hard:budget=0.25,workers=1."
)
RULE_HELP = "Override one rule option, e.g. --rule return_rule=any (repeatable). See `guandan rules`."


@app.callback()
def _root() -> None:
    """pyguandan: Guandan (掼蛋) rules engine, bots, terminal play and tools."""
