"""The web server's own layering (issue 24; DESIGN.md section 6), read from the AST of every module.

* The table's game flow (``guandan.server.table``) is plain code: it imports the rules core, the
  agents, the records and itself, never a web framework, a database library, Redis, or another
  part of the server (connections, storage, the manager, the cluster).
* No import circle among the server's modules (imports inside functions count; only
  ``TYPE_CHECKING`` blocks are left out, as in ``tests/test_layers.py``).
* Only the application wiring attaches the cluster: the manager, the record writer, the room store
  and the websocket handler never import ``guandan.server.cluster``.
* No server module over 1,000 lines; one over 800 says why in its opening docstring's first line.
"""

from __future__ import annotations

import ast
import pathlib

from test_layers import SRC, _allowed, _module_name, imports_of

SERVER = SRC / "guandan" / "server"


def _py_files() -> list[pathlib.Path]:
    return sorted(p for p in SERVER.rglob("*.py") if "migrations" not in p.parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):
            for b in n.body:
                out.update(m.lineno for m in ast.walk(b) if hasattr(m, "lineno"))
    return out


def _graph() -> dict[str, set[str]]:
    """Module -> the server modules it imports (``TYPE_CHECKING`` imports left out)."""
    mods = {_module_name(p)[0]: p for p in _py_files()}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        skip = _type_checking_lines(ast.parse(p.read_text("utf-8")))
        for line, target in imports_of(p):
            if line in skip:
                continue
            t = target
            while t and t not in mods:
                t = t.rpartition(".")[0]
            if t and t != m and not m.startswith(t + "."):  # a package's own __init__ is no circle
                graph[m].add(t)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


TABLE_ALLOWED = ("guandan.core", "guandan.agents", "guandan.records", "guandan.server.table")


def test_the_table_flow_imports_no_io_layer():
    files = sorted((SERVER / "table").rglob("*.py"))
    assert {f.name for f in files} >= {"flow.py", "ports.py", "views.py", "info.py", "frames.py", "bots.py"}
    bad = [f"{f.relative_to(SRC)}:{line} imports {t}" for f in files for line, t in imports_of(f)
           if not _allowed(t, TABLE_ALLOWED)]
    assert not bad, "guandan.server.table may import only " + ", ".join(TABLE_ALLOWED) + ":\n" + "\n".join(bad)


def test_no_import_circle_in_the_server():
    graph = _graph()
    # the checker sees the edges (not vacuous): relative, package and function-level imports
    assert "guandan.server.table.flow" in graph["guandan.server.manager"]
    assert "guandan.server.cluster.node" in graph["guandan.server.cluster"]
    assert "guandan.server.games" in graph["guandan.server.gamestore"]  # imported inside a method
    assert _circles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert _circles(graph) == []


def test_only_the_wiring_imports_the_cluster():
    graph = _graph()
    for m in ("guandan.server.manager", "guandan.server.record_writer", "guandan.server.append_batcher",
              "guandan.server.roomstore", "guandan.server.connections", "guandan.server.ws",
              "guandan.server.gamestore", "guandan.server.api_rooms"):
        assert not {t for t in graph[m] if t.startswith("guandan.server.cluster")}, m
    assert any(t.startswith("guandan.server.cluster") for t in graph["guandan.server.app"])


def test_server_modules_stay_small():
    for p in _py_files():
        lines = p.read_text("utf-8").count("\n")
        assert lines <= 1000, f"{p.relative_to(SRC)} has {lines} lines"
        if lines > 800:
            first = ast.get_docstring(ast.parse(p.read_text("utf-8"))) or ""
            assert "lines" in first.splitlines()[0], f"{p.relative_to(SRC)}: {lines} lines and no reason given"
