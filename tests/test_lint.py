"""Pyflakes through ruff: no undefined names, unused imports or variables, or redefinitions in
``src`` and ``tests`` (the rules of ``[tool.ruff.lint]`` in pyproject.toml)."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _ruff() -> str:
    exe = shutil.which("ruff") or str(pathlib.Path(sys.executable).with_name("ruff"))
    if not pathlib.Path(exe).exists():
        pytest.fail("ruff (in the [test] extra) is not installed")
    return exe


def test_pyflakes_finds_nothing() -> None:
    proc = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise", "src", "tests"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_lint_sees_an_undefined_name(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f() -> int:\n    return undefined_name\n", encoding="utf-8")
    proc = subprocess.run([_ruff(), "check", "--no-cache", "--output-format", "concise",
                           "--config", str(ROOT / "pyproject.toml"), str(bad)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "F401" in proc.stdout and "F821" in proc.stdout, proc.stdout
