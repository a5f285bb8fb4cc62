"""Errors of the commands are printed as written (guandan.cli.output): Rich markup in a message is
never read, so an install hint keeps its ``[bots]`` extra and a name keeps its brackets."""

from __future__ import annotations

import io

from rich.console import Console
from typer.testing import CliRunner

from guandan.cli.app import app
from guandan.cli.output import print_error


def test_a_message_with_brackets_is_printed_as_written() -> None:
    out = io.StringIO()
    print_error("install it with  pip install -e '.[bots]'\n(or [bold]pip install numpy[/bold])",
                Console(file=out, width=200, color_system=None))
    assert out.getvalue() == "error: install it with pip install -e '.[bots]' (or [bold]pip install numpy[/bold])\n"


def test_a_command_error_keeps_the_brackets() -> None:
    r = CliRunner().invoke(app, ["arena", "[bots]", "random", "--deals", "1"], env={"COLUMNS": "200"})
    assert r.exit_code == 2
    assert "[bots]" in r.output, r.output
