"""File handling for ``guandan tournament``: reading entries (CSV or JSON), loading and saving the state,
parsing result options, and printing errors. The engine (:mod:`guandan.tournament`) does no I/O.

Every error is one line ``error: ...`` on stderr (exit code 2) naming the file, the entry or the option,
never a traceback. User text (names, reasons, paths) is printed as written: Rich markup in it is escaped
(:func:`esc`). Numbers are ASCII digits; NaN and infinities are refused wherever a number is read.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from .output import fail

#: The CSV columns that :func:`read_entries` reads (any other column is ignored, with a note).
CSV_COLUMNS = ("name", "partner", "club", "rating", "seed", "pair", "bot")
CSV_TEAM_COLUMNS = ("name2", "partner2", "team")
#: The fields of an entry in a JSON entries file.
JSON_FIELDS = ("name", "players", "club", "rating", "seed", "bot")


def esc(text: Any) -> str:
    """``text`` as a string with Rich markup escaped, so that ``[bold]`` or ``[/x]`` in a name is printed
    as written (and cannot make Rich raise a MarkupError)."""
    from rich.markup import escape

    return escape(str(text))


def note(message: str) -> None:
    """Print a one-line note to stderr (markup in ``message`` escaped)."""
    from rich.console import Console

    Console(stderr=True, soft_wrap=True).print(f"note: {esc(message)}")




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
    """The tournament saved at ``path``, checked field by field (:func:`guandan.tournament.model.check_state`)
    and against the engine's settings (:func:`guandan.tournament.director.check_config`); exits with a
    one-line error naming the file for a missing, unreadable or malformed one."""
    from guandan.tournament.director import check_config
    from guandan.tournament.errors import TournamentError
    from guandan.tournament.model import from_json

    text = read_text(path, "state file")
    try:
        t = from_json(text)
        check_config(t)
    except TournamentError as e:
        fail(f"{path} is not a tournament state ({e})")
    return t


def save_state(t: Any, path: Path) -> None:
    """Write the state to ``path`` atomically: the JSON is made first, written to a new temporary file in
    the same directory, flushed to disk and renamed over ``path`` (``os.replace``); on any failure the
    temporary file is removed, ``path`` keeps its old content, and the command exits with a one-line
    error."""
    from guandan.tournament.errors import TournamentError
    from guandan.tournament.model import to_json

    try:
        data = (to_json(t) + "\n").encode("utf-8")
    except TournamentError as e:
        fail(f"cannot write {path}: {e}")
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.chmod(tmp, _file_mode(path))  # mkstemp makes it 0600: keep the mode a plain write would give
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        fail(f"cannot write {path}: {e.strerror or e}")
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _file_mode(path: Path) -> int:
    """The permission bits for the new state file: the old file's, else 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _csv_number(value: str, what: str, where: str, kind: type = float) -> Any:
    """A CSV cell as a finite float (``kind=float``) or an int; None for an empty cell; exits otherwise."""
    value = value.strip()
    if not value:
        return None
    if kind is int:
        body = value[1:] if value[:1] in "+-" else value
        if not (body.isascii() and body.isdecimal()):
            fail(f"{where}: {what} {value!r} is not a whole number")
        return int(value)
    try:
        x = float(value)
    except ValueError:
        fail(f"{where}: {what} {value!r} is not a number")
    if not math.isfinite(x):
        fail(f"{where}: {what} {value!r} is not a finite number")
    return x


def _json_entry(r: Any, i: int, path: Path, team: bool) -> dict[str, Any]:
    """One entry of a JSON entries file, type-checked; exits with a line naming the entry."""
    if not isinstance(r, dict):
        fail(f"{path}: entry {i} is not an object with players")
    label = f"entry {i}" + (f" ({r['name']!r})" if isinstance(r.get("name"), str) and r["name"].strip() else "")
    unknown = sorted(str(k) for k in r if k not in JSON_FIELDS)
    if unknown:
        fail(f"{path}: {label}: unknown field {unknown[0]!r} (the fields are {', '.join(JSON_FIELDS)})")
    want = 4 if team else 2
    players = r.get("players")
    if not isinstance(players, list) or len(players) != want:
        fail(f"{path}: {label}: players must be a list of {want} names")
    if not all(isinstance(p, str) and p.strip() for p in players):
        fail(f"{path}: {label}: every player's name is a non-empty string")
    name = r.get("name")
    if name is not None and not (isinstance(name, str) and name.strip()):
        fail(f"{path}: {label}: name must be a non-empty string")
    for key in ("club", "bot"):
        if r.get(key) is not None and not isinstance(r[key], str):
            fail(f"{path}: {label}: {key} must be a string")
    rating = r.get("rating")
    if rating is not None and (isinstance(rating, bool) or not isinstance(rating, (int, float))
                               or not math.isfinite(rating)):
        fail(f"{path}: {label}: rating {rating!r} is not a finite number")
    seed = r.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        fail(f"{path}: {label}: seed {seed!r} is not a whole number")
    players = [p.strip() for p in players]
    return {"name": name.strip() if name else " / ".join(players), "players": players, "club": r.get("club"),
            "rating": None if rating is None else float(rating), "seed": seed, "bot": r.get("bot")}


def read_entries(path: Path, team: bool) -> list[dict[str, Any]]:
    """Entries from a CSV or a JSON file (by the ``.json`` suffix).

    CSV: a header with ``name,partner`` (teams: also ``name2,partner2``) and optionally ``club``, ``rating``,
    ``seed``, ``pair`` (the entry's name), ``bot`` (teams: ``team`` for the name); column names are read
    without case or surrounding spaces. Other columns (a phone number...) are ignored, and a note names
    them; a column named twice, or a row with more cells than the header has columns, is refused.
    JSON: a list of objects with ``players`` (2 names, 4 for teams) and optionally ``name``, ``club``,
    ``bot`` (strings), ``rating`` (a finite number), ``seed`` (an integer); any other field is refused.

    Returns dicts ``{"name", "players", "club", "rating", "seed", "bot"}``; exits with a one-line error
    naming the line or the entry for a bad file."""
    text = read_text(path, "entries file")
    if path.suffix.lower() == ".json":
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as e:
            fail(f"{path}: not JSON ({e})")
        except (RecursionError, ValueError) as e:
            fail(f"{path}: not JSON ({'nested too deeply' if isinstance(e, RecursionError) else e})")
        if not isinstance(rows, list):
            fail(f"{path}: expected a JSON list of entries")
        out = [_json_entry(r, i, path, team) for i, r in enumerate(rows, 1)]
        if not out:
            fail(f"{path}: no entries")
        return out
    try:
        rows = [(i, row) for i, row in enumerate(csv.reader(io.StringIO(text)), 1) if any(c.strip() for c in row)]
    except csv.Error as e:
        fail(f"{path}: not a CSV file ({e})")
    if not rows:
        fail(f"{path}: no entries")
    header = [h.strip().lower() for h in rows[0][1]]
    need = ["name", "partner"] + (["name2", "partner2"] if team else [])
    missing = [f for f in need if f not in header]
    if missing:
        fail(f"{path}: the CSV header needs the columns {', '.join(need)} (missing: {', '.join(missing)})")
    twice = sorted({h for h in header if h and header.count(h) > 1})
    if twice:
        fail(f"{path}: the CSV header names the column {twice[0]!r} more than once")
    known = CSV_COLUMNS + (CSV_TEAM_COLUMNS if team else ())
    ignored = [h for h in header if h and h not in known]
    if ignored:
        note(f"{path}: ignored the columns {', '.join(ignored)} (read: {', '.join(known)})")
    out: list[dict[str, Any]] = []
    for i, row in rows[1:]:
        where = f"{path} line {i}"
        if len(row) > len(header):
            fail(f"{where} has {len(row)} cells but the header has {len(header)} columns")
        r = {h: cell.strip() for h, cell in zip(header, row)}
        players = [r.get(c, "") for c in need]
        if not all(players):
            fail(f"{where}: every player needs a name")
        name = r.get("team" if team else "pair") or " / ".join(players)
        out.append({"name": name, "players": players, "club": r.get("club") or None,
                    "rating": _csv_number(r.get("rating", ""), "rating", where),
                    "seed": _csv_number(r.get("seed", ""), "seed", where, int), "bot": r.get("bot") or None})
    if not out:
        fail(f"{path}: no entries")
    return out


def parse_count(text: str, what: str, value: str) -> int:
    """A whole number of ASCII digits (no sign); exits naming the option otherwise."""
    t = text.strip()
    if not (t.isascii() and t.isdecimal()):
        fail(f"--{what} {value!r}: {text!r} is not a whole number (ASCII digits 0-9)")
    return int(t)


def parse_pair(value: str | None, what: str, kind: type = int) -> tuple[Any, Any]:
    """``"A:B"`` → ``(A, B)``: with ``kind=int`` two whole numbers of ASCII digits (a fullwidth ``３`` is
    refused, not read as 3), with ``kind=str`` the two texts; ``None`` → ``(0, 0)`` or ``(None, None)``.
    Exits on a bad value."""
    if value is None:
        return (0, 0) if kind is int else (None, None)
    parts = value.split(":")
    if len(parts) != 2:
        fail(f"--{what} takes SIDE_A:SIDE_B, e.g. 10:8 (got {value!r})")
    if kind is int:
        return parse_count(parts[0], what, value), parse_count(parts[1], what, value)
    return kind(parts[0]), kind(parts[1])
