"""The error shape every HTTP answer and websocket ``error`` frame of the server shares.

An error is ``{"error": message, "code": code, "params": {...}}``: ``code`` is a stable snake_case
identifier (``name_taken``, ``seat_taken``, ...) that the UI translates with ``params`` filled in, and
``message`` is the English sentence for scripts and logs. ``code`` is ``null`` only for errors that
have not been given one.

:class:`AuthError` lives here, below both :mod:`guandan.server.auth` (which raises it for account
input) and :mod:`guandan.server.hardening` (which raises it for text no database stores), so that
neither imports the other to raise it.
"""

from __future__ import annotations

from typing import Any

from .table.frames import encodable


#: Websocket ``reason`` of a message sent while its table moves to another process (cluster mode,
#: :mod:`guandan.server.cluster`): retryable; ``params.retry_ms`` says when to try again.
OWNER_UNAVAILABLE = "owner_unavailable"
#: Reasons after which the same message may be sent again unchanged.
RETRYABLE_REASONS = frozenset({OWNER_UNAVAILABLE, "rate_limited"})


def error_body(message: str, code: str | None = None, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON body of an error answer, always encodable as UTF-8.

    Args:
        message: one line of English (only the first line is kept).
        code: stable identifier the client translates, or ``None``.
        params: values the translation fills in (JSON-serialisable).

    Returns:
        ``{"error": message, "code": code, "params": params}``; in the message and in every string
        of ``params`` a lone UTF-16 surrogate (text UTF-8 cannot encode, from JSON such as
        ``"\\ud800"``) is replaced by U+FFFD, so that encoding the answer never fails.
    """
    text = message.splitlines()[0] if message else "error"
    return {"error": encodable(text), "code": code, "params": encodable(params or {})}





class HttpError(Exception):
    """An error answered as ``{"error": message, "code": code, "params": params}`` with HTTP ``status``.

    ``code`` is a stable snake_case identifier that clients translate (with ``params`` filled in);
    ``message`` is the English sentence for scripts and logs.

    Attributes:
        status: the HTTP status to answer.
        message: one line for the person.
        code: the stable identifier, or ``None``.
        params: values the translation fills in.
    """

    def __init__(self, status: int, message: str, code: str | None = None,
                 params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.params = params or {}


class AuthError(HttpError, ValueError):
    """Bad account input or failed authentication (an :class:`HttpError`).

    ``status`` is 400 for bad input, 401 not logged in / wrong password, 409 name taken, 429 too many
    attempts.
    """
