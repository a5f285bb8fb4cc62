"""Every ``--help`` of the ``guandan`` command (issue 11, "found by a new user"): no ``<bool>``
type shown beside a flag, and help paragraphs reflow to the terminal's width instead of keeping
the line breaks of the source (which broke sentences mid-line)."""

from __future__ import annotations

import inspect
import re

from typing import Any
import typer
from typer.testing import CliRunner

from guandan.cli import app


def _commands() -> list[tuple[list[str], Any]]:
    root = typer.main.get_command(app)
    out: list[tuple[list[str], Any]] = []

    def walk(path: list[str], cmd: Any) -> None:
        out.append((path, cmd))
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk([*path, name], sub)

    walk([], root)
    return out


def _words(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def test_every_help_has_no_bool_metavar_and_unbroken_paragraphs() -> None:
    runner = CliRunner()
    commands = _commands()
    assert len(commands) >= 12  # the root, its commands and the compat group's
    for path, cmd in commands:
        r = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "2000", "TERMINAL_WIDTH": "2000"})
        assert r.exit_code == 0, (path, r.output)
        assert "<bool>" not in r.output, path
        lines = [_words(line.strip(" │╭╮╰╯─")) for line in r.output.splitlines()]
        for para in inspect.cleandoc(cmd.help or "").split("\n\n"):
            want = _words(para.replace("\\[", "["))  # Rich markup escapes print as the bracket
            if want:
                assert any(want in line for line in lines), (path, want, r.output)
        for flag in ("--help",):
            row = next(line for line in r.output.splitlines() if flag in line)
            assert not re.search(r"<\w+>", row), (path, row)


def test_serve_error_keeps_bracketed_extra_names(tmp_path) -> None:
    """`guandan serve --redis` without redis-py must print the whole install hint:
    the extra's name in brackets (``.[cluster]``) must not be read as Rich markup and dropped."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['redis'] = None\n"
        "from guandan.cli import main\n"
        "sys.argv = ['guandan', 'serve', '--redis', 'redis://127.0.0.1:1/0', '--port', '0',"
        " '--db', 'postgresql+psycopg://nobody@127.0.0.1:1/none']\n"
        "main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "pip install -e '.[cluster]'" in r.stderr, r.stderr
