"""Frames as JSON: the contract's ``error`` frame and frames serialised once for many sockets."""

from __future__ import annotations

import json
from typing import Any

from ..errors import encodable

def error_frame(message: str, reason: str | None = None, params: dict[str, Any] | None = None,
                **extra: Any) -> dict[str, Any]:
    """The contract's ``{"type": "error", "message", "reason", "params"}`` frame (``message`` one line).

    ``reason`` is the stable code the UI translates (with ``params`` filled in), as ``code`` is in HTTP
    errors (:mod:`guandan.server.errors`). Lone surrogates in the message, ``params`` and ``extra``
    (quoted client input, such as an unknown message type ``"\\ud800"``) become U+FFFD, so that the
    frame always encodes and sending it never breaks the connection.
    """
    text = message.splitlines()[0] if message else "error"
    frame: dict[str, Any] = {"type": "error", "message": encodable(text), "reason": reason,
                             "params": encodable(params or {})}
    frame.update(encodable(extra))
    return frame


def frame_json(frame: dict[str, Any]) -> str:
    """Compact JSON text of a frame (UTF-8 kept); a :class:`SharedFrame` is serialised only once."""
    if isinstance(frame, SharedFrame):
        return frame.text()
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


class SharedFrame(dict):  # type: ignore[type-arg]
    """A frame queued for several connections (every spectator gets the same state frame): its
    JSON text is made once, when the first writer sends it, not once per connection. Do not change
    it after queueing."""

    __slots__ = ("_text",)

    def text(self) -> str:
        """The compact JSON text (cached)."""
        try:
            return self._text
        except AttributeError:
            self._text: str = json.dumps(self, ensure_ascii=False, separators=(",", ":"))
            return self._text
