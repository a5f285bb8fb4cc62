"""Frames as JSON: the contract's ``error`` frame and frames serialised once for many sockets."""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def encodable(value: Any) -> Any:
    """``value`` with every lone surrogate of its strings (dict keys and values, list and tuple
    items, which become lists) replaced by U+FFFD, so that it encodes as UTF-8 JSON; other values
    unchanged. Used for every error answer and error frame (their texts may quote client input)."""
    if isinstance(value, str):
        return _SURROGATE_RE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encodable(v) for v in value]
    return value


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


class JsonText:
    """A JSON value whose compact text is made once, when first asked, and shared by every frame
    that embeds it (:attr:`SharedFrame.view_text`). Do not change ``value`` once made."""

    __slots__ = ("_text", "value")

    def __init__(self, value: Any) -> None:
        self.value = value

    def text(self) -> str:
        """The compact JSON text of :attr:`value` (cached)."""
        try:
            return self._text
        except AttributeError:
            self._text: str = json.dumps(self.value, ensure_ascii=False, separators=(",", ":"))
            return self._text


class SharedFrame(dict):  # type: ignore[type-arg]
    """A frame queued for several connections (every spectator gets the same state frame): its
    JSON text is made once, when the first writer sends it, not once per connection. Do not change
    it after queueing.

    ``view_text`` (optional): a :class:`JsonText` of the frame's ``"view"`` value, whose text is
    then reused instead of encoding the view again (a table re-sends an unchanged position on every
    connect and disconnect; a first lead's view with its legal actions is 20-100 KB of JSON). The
    frame's text then ends with the ``"view"`` key (JSON objects are unordered)."""

    __slots__ = ("_text", "view_text")

    def text(self) -> str:
        """The compact JSON text (cached)."""
        try:
            return self._text
        except AttributeError:
            view = getattr(self, "view_text", None)
            if view is None or "view" not in self:
                self._text: str = json.dumps(self, ensure_ascii=False, separators=(",", ":"))
            else:
                head = json.dumps({k: v for k, v in self.items() if k != "view"}, ensure_ascii=False,
                                  separators=(",", ":"))
                self._text = head[:-1] + ("," if len(head) > 2 else "") + '"view":' + view.text() + "}"
            return self._text
