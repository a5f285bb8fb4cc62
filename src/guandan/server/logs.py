"""Structured server logs (``guandan serve --log-format json|kv``): one line per record carrying the
node (``--node-name``) and, when the record is about a table, its room.

* ``json``: ``{"ts": "2026-12-01T18:00:00.123Z", "level": "info", "logger": "...", "node": "...",
  "room": "abc123" | absent, "msg": "..."}`` (JSON Lines, for log collectors);
* ``kv``: ``ts=... level=info logger=... node=... room=abc123 msg="..."`` (key=value, for grep).

The room comes from ``extra={"room": ...}`` or, for the tables' messages that start with
``"room %s"``, from their first argument.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

#: Accepted ``--log-format`` values.
LOG_FORMATS = ("text", "json", "kv")


def _room_of(record: logging.LogRecord) -> str | None:
    room = getattr(record, "room", None)
    if room is None and isinstance(record.msg, str) and record.msg.startswith("room %s") \
            and isinstance(record.args, tuple) and record.args:
        room = record.args[0]
    return None if room is None else str(room)


class StructuredFormatter(logging.Formatter):
    """Formats a record as one JSON object or one key=value line.

    Args:
        fmt: ``json`` or ``kv``. node: the process's node name, added to every line.
    """

    def __init__(self, fmt: str, node: str) -> None:
        super().__init__()
        self.kind = fmt
        self.node = node

    def fields(self, record: logging.LogRecord) -> dict[str, Any]:
        """The line's fields in order: ts (UTC, ms), level, logger, node, room (if any), msg, exc (if any)."""
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        out: dict[str, Any] = {"ts": ts, "level": record.levelname.lower(), "logger": record.name,
                               "node": getattr(record, "node", None) or self.node}
        room = _room_of(record)
        if room is not None:
            out["room"] = room
        out["msg"] = record.getMessage()
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return out

    def format(self, record: logging.LogRecord) -> str:
        """One line (``\\n`` inside a message or traceback is escaped)."""
        f = self.fields(record)
        if self.kind == "json":
            return json.dumps(f, ensure_ascii=False)
        parts = []
        for k, v in f.items():
            s = str(v)
            if not s or any(c in s for c in ' "=\n\t'):
                s = json.dumps(s, ensure_ascii=False)
            parts.append(f"{k}={s}")
        return " ".join(parts)


def configure(fmt: str, node: str, level: str = "info") -> None:
    """Send every logger's records (the server's and uvicorn's) to stderr in ``fmt``.

    Raises:
        ValueError: ``fmt`` is not ``json`` or ``kv``.
    """
    if fmt not in ("json", "kv"):
        raise ValueError(f"log format must be json or kv, not {fmt!r}")
    handler = logging.StreamHandler()
    handler.setFormatter(StructuredFormatter(fmt, node))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers[:] = []
        lg.propagate = True


__all__ = ["LOG_FORMATS", "StructuredFormatter", "configure"]
