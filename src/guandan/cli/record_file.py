"""Reading a record file for a command (``guandan replay``, ``guandan review``): the lines, or a
one-line error on stderr and exit status 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer


def read_record_or_exit(path: Path, err: Any) -> list[str]:
    """The lines of the record file ``path`` (:func:`guandan.records.read_lines`).

    Args:
        path: the record file.
        err: the Rich console for errors (stderr).
    Raises:
        typer.Exit: status 1 after printing ``error: cannot read PATH: reason`` (the file cannot
            be read) or ``error: PATH: line N: reason`` (a line is not UTF-8).
    """
    from rich.text import Text

    from guandan.records import RecordError, read_lines

    try:
        return read_lines(path)
    except OSError as e:
        err.print(Text(f"error: cannot read {path}: {e.strerror or e}"))
    except RecordError as e:
        err.print(Text(f"error: {path}: {e}"))
    raise typer.Exit(1)
