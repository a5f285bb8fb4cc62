"""Layering (DESIGN.md section 1): dependencies point down only.

* Importing ``guandan.core`` in a fresh interpreter loads no third-party module.
* Import-layer check over the AST of every file (imports inside functions and
  ``TYPE_CHECKING`` blocks count too): ``guandan.core`` imports only the standard library and
  itself; ``guandan.agents``, ``guandan.records`` and ``guandan.evaluation.conformance`` import
  only the core (+ the standard library, + their own package); ``guandan.evaluation`` may also
  import ``guandan.agents``; ``guandan.agents`` may also import NumPy (inference of shipped weights,
  DESIGN.md section 6), never PyTorch. The compatibility modules at the old paths
  (``guandan.arena``, ``guandan.conformance``, ``guandan.gctune``) import only their new home.
"""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "guandan"
STDLIB = set(sys.stdlib_module_names)


def test_importing_core_loads_no_third_party_module():
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import guandan.core\n"
        "new = sorted(set(sys.modules) - before)\n"
        "print(json.dumps(new))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    new = json.loads(out.stdout)
    assert "guandan.core" in new  # the import really happened in this fresh interpreter
    foreign = [m for m in new if m.split(".")[0] not in STDLIB and m.split(".")[0] != "guandan"]
    assert not foreign, f"importing guandan.core loaded third-party modules: {foreign}"
    assert not [m for m in new if m.startswith("guandan.") and not m.startswith("guandan.core")], new


def _module_name(path: pathlib.Path) -> tuple[str, bool]:
    """(dotted module name, is_package) of a file under src/."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def imports_of(path: pathlib.Path) -> list[tuple[int, str]]:
    """Every ``(line, absolute module name)`` imported anywhere in ``path``.

    ``from X import a, b`` yields ``X.a`` and ``X.b`` (they may be submodules); relative
    imports are resolved against the file's package.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name, is_pkg = _module_name(path)
    package = name if is_pkg else name.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level > 1:
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts)
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod == "__future__":
                continue
            for a in node.names:
                out.append((node.lineno, f"{mod}.{a.name}" if a.name != "*" else mod))
    return out


def _allowed(target: str, prefixes: tuple[str, ...]) -> bool:
    top = target.split(".")[0]
    if top in STDLIB:
        return True
    if target == "guandan.__version__":
        return True
    return any(target == p or target.startswith(p + ".") for p in prefixes)


LAYERS = {
    "guandan.core": ("guandan.core",),
    "guandan.agents": ("guandan.core", "guandan.agents", "numpy"),
    "guandan.records": ("guandan.core", "guandan.records"),
    # garbage-collector settings shared by the server and the stepping processes: standard library only
    "guandan.runtime": ("guandan.runtime",),
    # the evaluation tools (arena, benchmarks, the search audit, the rules-case runner): core and
    # agents; the rules-case runner checks the core alone
    "guandan.evaluation": ("guandan.core", "guandan.agents", "guandan.evaluation"),
    "guandan.evaluation.conformance": ("guandan.core", "guandan.evaluation.conformance"),
    # the terminal game: core and agents, drawn with Rich; never the command line or the server
    "guandan.terminal": ("guandan.core", "guandan.agents", "guandan.terminal", "rich"),
    # compatibility modules at the old paths (CHANGELOG.md, "Moved modules"): their new home only
    "guandan.gctune": ("guandan.gctune", "guandan.runtime.gctune"),
    "guandan.conformance": ("guandan.conformance", "guandan.evaluation.conformance"),
    "guandan.arena": ("guandan.arena", "guandan.evaluation.arena"),
    # the AI-competition host and client: core, agents, arena, records (+ websockets/Starlette/uvicorn),
    # never the server or the research environment
    "guandan.compat": ("guandan.core", "guandan.agents", "guandan.evaluation.arena", "guandan.records", "guandan.compat",
                       "websockets", "starlette", "uvicorn"),
    # the research environment: core and agents (+ its optional extra), never the server. One arrow
    # goes sideways, on purpose: rl.protocol runs protocol bots as opponents through the compat host
    # (issue 9 item 4); compat never imports rl (checked above), so the layers stay acyclic;
    # rlcard/douzero only inside the benchmark's functions (reference envs, never a dependency);
    # ray only inside the scale-out functions (optional extra [ray])
    "guandan.rl": ("guandan.core", "guandan.agents", "guandan.rl", "guandan.runtime", "guandan.compat",
                   "numpy", "pettingzoo", "gymnasium",
                   "rlcard", "douzero", "ray"),
    # training: the only package that imports PyTorch (DESIGN.md section 6); its actor processes
    # apply the shared collector settings (gctune) and its evaluations use the arena's Wilson interval
    # competitions (issue 21): plain pairing and scoring code; networkx for the maximum-weight matching
    "guandan.tournament": ("guandan.core", "guandan.agents", "guandan.tournament", "networkx"),
    "guandan.train": ("guandan.core", "guandan.agents", "guandan.rl", "guandan.train", "guandan.runtime",
                      "guandan.evaluation.arena", "numpy", "torch"),
}


def _files(module: str) -> list[pathlib.Path]:
    rel = pathlib.Path(*module.split("."))
    pkg_dir = SRC / rel
    if pkg_dir.is_dir():
        return sorted(pkg_dir.rglob("*.py"))
    file = SRC / rel.with_suffix(".py")
    return [file] if file.is_file() else []


@pytest.mark.parametrize("module", sorted(LAYERS))
def test_import_layers(module):
    files = _files(module)
    if not files:
        pytest.skip(f"{module} does not exist yet")
    bad = []
    for f in files:
        for line, target in imports_of(f):
            if not _allowed(target, LAYERS[module]):
                bad.append(f"{f.relative_to(SRC)}:{line} imports {target}")
    assert not bad, f"{module} may import only {LAYERS[module]} and the standard library:\n" + "\n".join(bad)


def test_core_exists_and_checker_sees_its_imports():
    """Guards against a vacuous check: the core has files, and known imports are found."""
    files = _files("guandan.core")
    assert len(files) >= 8
    found = {t for f in files for _, t in imports_of(f)}
    assert "guandan.core.cards.wild_face" in found  # a relative import resolved
    assert "random.Random" in found or "random" in found
    assert not _allowed("typer", LAYERS["guandan.core"])
    assert not _allowed("guandan.agents.base", LAYERS["guandan.core"])
    assert _allowed("guandan.agents.base", LAYERS["guandan.evaluation"])
    assert not _allowed("guandan.cli.app", LAYERS["guandan.agents"])


def test_import_checker_resolves_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "guandan" / "core"
    pkg.mkdir(parents=True)
    f = pkg / "x.py"
    f.write_text("from . import cards\nfrom ..agents import base\nimport rich\nfrom .plays import beats\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    got = [t for _, t in imports_of(f)]
    assert got == ["guandan.core.cards", "guandan.agents.base", "rich", "guandan.core.plays.beats"]
    assert json.dumps(got)  # plain strings


def test_loadtest_imports_only_base_dependencies():
    """`guandan loadtest` is a command of the base package (README "Commands"): after `make serve`
    (the package without extras) it must not die on a missing module. Every third-party module
    that ``guandan/server/loadtest.py`` imports, at the top or inside a function, must belong to a
    distribution named in the base ``dependencies`` of pyproject.toml (httpx was missing once)."""
    import importlib.metadata as md
    import re
    import tomllib

    root = pathlib.Path(__file__).resolve().parent.parent
    base = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    declared = {re.split(r"[\[<>=!~ ;]", d, maxsplit=1)[0].lower().replace("_", "-") for d in base}
    tree = ast.parse((root / "src" / "guandan" / "server" / "loadtest.py").read_text("utf-8"))
    tops = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    tops |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    third = sorted(m for m in tops if m not in sys.stdlib_module_names and m != "guandan")
    assert "httpx" in third and "websockets" in third  # the checker sees the function-level imports
    owners = md.packages_distributions()
    missing = [m for m in third if not {d.lower().replace("_", "-") for d in owners.get(m, [m])} & declared]
    assert missing == [], f"loadtest imports modules outside the base dependencies: {missing}"
