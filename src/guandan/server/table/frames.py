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


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _key(name: str) -> str:
    # the keys spliced are the frames' own ASCII names ("view", "room", "history", "rules")
    return f'"{name}":' if name.isascii() and name.isidentifier() else _dumps(name) + ":"


def spliced_json(value: dict[str, Any], parts: dict[str, JsonText] | None) -> str:
    """Compact JSON text of the dict ``value``, taking the text of each key ``k`` of ``parts`` from
    ``parts[k]`` (made once, shared by many frames) instead of encoding ``value[k]`` again.

    A part is used only when ``value[k] is parts[k].value`` (the same object); any other key is
    encoded as usual, so the text always parses to ``value``. The spliced keys come last (JSON
    objects are unordered)."""
    used = {k: t for k, t in (parts or {}).items() if k in value and value[k] is t.value}
    if not used:
        return _dumps(value)
    head = _dumps({k: v for k, v in value.items() if k not in used})
    tail = ",".join(_key(k) + t.text() for k, t in used.items())
    return head[:-1] + ("," if len(head) > 2 else "") + tail + "}"


class JsonText:
    """A JSON value whose compact text is made once, when first asked, and shared by every frame
    that embeds it (:attr:`SharedFrame.parts`). Do not change ``value`` once made.

    Args:
        value: the value.
        parts: for a dict ``value``, pre-encoded values of some of its keys (:func:`spliced_json`):
            a seat's view takes the deal's history and the rule options from texts made once per
            position and once per rule set.
        text: the value's text when the caller already has it (it must encode ``value``).
    """

    __slots__ = ("_parts", "_text", "value")

    def __init__(self, value: Any, parts: dict[str, JsonText] | None = None, text: str | None = None) -> None:
        self.value = value
        self._parts = parts
        if text is not None:
            self._text = text

    def text(self) -> str:
        """The compact JSON text of :attr:`value` (cached)."""
        try:
            return self._text
        except AttributeError:
            if self._parts and isinstance(self.value, dict):
                self._text: str = spliced_json(self.value, self._parts)
            else:
                self._text = _dumps(self.value)
            return self._text


class SharedFrame(dict):  # type: ignore[type-arg]
    """A frame queued for several connections (every spectator gets the same state frame): its
    JSON text is made once, when the first writer sends it, not once per connection. Do not change
    it after queueing.

    ``parts`` (optional): :class:`JsonText` of some of the frame's values, whose texts are then
    reused instead of encoding those values again (:func:`spliced_json`): the ``"view"`` of a
    seat (a table re-sends an unchanged position on every connect and disconnect; a first lead's
    view with its legal actions is 20-100 KB of JSON) and the ``"room"`` summary, which every
    frame of one broadcast shares."""

    __slots__ = ("_text", "parts")

    def text(self) -> str:
        """The compact JSON text (cached)."""
        try:
            return self._text
        except AttributeError:
            self._text: str = spliced_json(self, getattr(self, "parts", None))
            return self._text
