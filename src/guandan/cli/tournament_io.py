"""File handling for ``guandan tournament``: reading entries (CSV or JSON), loading and saving the state,
parsing result options, and printing errors. The engine (:mod:`guandan.tournament`) does no I/O."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, NoReturn

import typer


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr on one line (line breaks in the message become spaces, the
    console does not wrap it, no Rich markup is read in it) and exit with ``code``."""
    from rich.console import Console
    from rich.markup import escape

    one_line = " ".join(str(message).split())
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/red] {escape(one_line)}")
    raise typer.Exit(code)


def fail_tournament(e: Exception) -> NoReturn:
    """A :class:`~guandan.tournament.errors.TournamentError` as ``error: [code] message``."""
    code = getattr(e, "code", "error")
    fail(f"{code}: {e}")


def read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except OSError as e:
        fail(f"{what} {path}: {e.strerror or e}")
    except UnicodeDecodeError:
        fail(f"{what} {path}: not UTF-8 text")


def load_state(path: Path) -> Any:
    """The tournament saved at ``path``; exits with a clear message for a missing or malformed file."""
    from guandan.tournament.errors import StateError
    from guandan.tournament.model import from_json

    text = read_text(path, "state file")
    try:
        return from_json(text)
    except StateError as e:
        fail(f"{path} is not a tournament state ({e})")


def save_state(t: Any, path: Path) -> None:
    """Write the state to ``path`` atomically (a temporary file renamed over it)."""
    from guandan.tournament.model import to_json

    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(to_json(t) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        fail(f"cannot write {path}: {e.strerror or e}")


def _num(value: str, what: str, row: int, kind: type = float) -> Any:
    value = value.strip()
    if not value:
        return None
    try:
        return kind(value)
    except ValueError:
        fail(f"entries row {row}: {what} {value!r} is not a number")


def read_entries(path: Path, team: bool) -> list[dict[str, Any]]:
    """Entries from a CSV (header ``name,partner,club,rating``; optional ``seed``, ``pair`` for the entry's
    name, ``bot``; for teams also ``name2,partner2`` and ``team``) or a JSON list of objects with
    ``players`` (2 or 4 names), optional ``name``, ``club``, ``rating``, ``seed``, ``bot``.

    Returns dicts ``{"name", "players", "club", "rating", "seed", "bot"}``; exits on a bad file."""
    text = read_text(path, "entries file")
    out: list[dict[str, Any]] = []
    if path.suffix.lower() == ".json":
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as e:
            fail(f"{path}: not JSON ({e})")
        if not isinstance(rows, list):
            fail(f"{path}: expected a JSON list of entries")
        for i, r in enumerate(rows, 1):
            if not isinstance(r, dict) or not isinstance(r.get("players"), list):
                fail(f"{path}: entry {i} needs a list of players")
            players = [str(p) for p in r["players"]]
            out.append({"name": str(r.get("name") or " / ".join(players)), "players": players,
                        "club": r.get("club"), "rating": r.get("rating"), "seed": r.get("seed"), "bot": r.get("bot")})
        return out
    reader = csv.DictReader(io.StringIO(text))
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    need = ["name", "partner"] + (["name2", "partner2"] if team else [])
    missing = [f for f in need if f not in fields]
    if missing:
        fail(f"{path}: the CSV header needs the columns {', '.join(need)} (missing: {', '.join(missing)})")
    for i, raw in enumerate(reader, 2):
        r = {(k or "").strip().lower(): (v or "").strip() for k, v in raw.items()}
        players = [r[c] for c in need]
        if not all(players):
            fail(f"{path} line {i}: every player needs a name")
        name = r.get("team" if team else "pair") or " / ".join(players)
        out.append({"name": name, "players": players, "club": r.get("club") or None,
                    "rating": _num(r.get("rating", ""), "rating", i), "seed": _num(r.get("seed", ""), "seed", i, int),
                    "bot": r.get("bot") or None})
    if not out:
        fail(f"{path}: no entries")
    return out


def parse_pair(value: str | None, what: str, kind: type = int) -> tuple[Any, Any]:
    """``"A:B"`` → ``(A, B)`` (``kind`` applied); exits on a bad value."""
    if value is None:
        return kind("0") if kind is int else None, kind("0") if kind is int else None
    parts = value.split(":")
    if len(parts) != 2:
        fail(f"--{what} takes SIDE_A:SIDE_B, e.g. 10:8 (got {value!r})")
    try:
        return kind(parts[0]), kind(parts[1])
    except ValueError:
        fail(f"--{what} {value!r}: not two numbers")
