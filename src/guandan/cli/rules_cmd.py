"""``guandan rules``: list the rule options and presets (docs/rules.md section P)."""

from __future__ import annotations

import typer

from .app import PRESET_HELP, RULE_HELP, app, load_rules


@app.command("rules")
def rules_command(
    preset: str = typer.Option("official", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
) -> None:
    """Show every rule option, its valid values and its value under a preset."""
    from rich.console import Console
    from rich.table import Table

    from guandan.core.rules import PRESETS, option_help

    rules = load_rules(preset, rule)
    table = Table(title=f"rule options (preset {preset})")
    table.add_column("option")
    table.add_column("value")
    table.add_column("valid values")
    values = rules.to_dict()
    for name, valid in option_help().items():
        v = values[name]
        shown = "/".join(map(str, v)) if isinstance(v, list) else ("null" if v is None else str(v).lower() if isinstance(v, bool) else str(v))
        table.add_row(name, shown, valid)
    Console().print(table)
    Console().print("presets: " + ", ".join(PRESETS))
