"""Import contracts (issue 24): `lint-imports` (import-linter) keeps every contract in
pyproject.toml's ``[tool.importlinter]``: zero import circles at every level of the package
(``acyclic_siblings``; imports inside functions count, ``TYPE_CHECKING`` blocks do not), the
packages in layers that point one way with every package named (``layers``, exhaustive), the
table's game flow free of websockets/storage/cluster, only the app building the cluster node, and
the deciding code (core, agents, records, tournament, duplicate) free of I/O frameworks.

The third-party allowances per package (NumPy in agents, PyTorch only in train, ...) stay in
tests/test_layers.py, which import-linter cannot express as one rule per package."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _lint_imports() -> str:
    exe = shutil.which("lint-imports") or str(pathlib.Path(sys.executable).with_name("lint-imports"))
    if not pathlib.Path(exe).exists():
        pytest.fail("lint-imports (import-linter, in the [test] extra) is not installed")
    return exe


def test_every_import_contract_is_kept(tmp_path: pathlib.Path) -> None:
    proc = subprocess.run([_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    m = re.search(r"Contracts: (\d+) kept, (\d+) broken", out)
    assert m is not None, out
    assert (int(m.group(1)), int(m.group(2))) == (5, 0), out


def test_the_circle_contract_sees_a_circle(tmp_path: pathlib.Path) -> None:
    """Guards against a vacuous contract: a two-module circle in a scratch package breaks it."""
    pkg = tmp_path / "circ"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from circ import b\n    return b\n")
    (pkg / "b.py").write_text("from circ import a\n")
    cfg = tmp_path / ".importlinter"
    cfg.write_text("[importlinter]\nroot_package = circ\n\n[importlinter:contract:1]\nname = no circles\n"
                   "type = acyclic_siblings\nancestors = circ\n")
    proc = subprocess.run([_lint_imports(), "--no-cache", str(cfg)], cwd=tmp_path, capture_output=True, text=True,
                          check=False, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "BROKEN" in out and "0 kept, 1 broken" in out, out
