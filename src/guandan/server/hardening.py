"""Protections of the web server against hostile input (README "Security").

* :class:`GuardMiddleware` (pure ASGI, outermost): reads a request body only up to
  ``settings.max_body_bytes`` (a larger ``Content-Length``, or a chunked body that grows past the
  limit, gets 413 ``body_too_large`` at once and the rest is never read); requires
  ``Content-Type: application/json`` on every state-changing request (``POST``, ``PUT``,
  ``PATCH``, ``DELETE``), also one with an empty body (415 ``unsupported_media_type``): a page on
  another origin, a sibling subdomain included (its requests carry the SameSite=Lax cookie), can
  send a form or a "simple" ``fetch`` (no ``Content-Type``, ``text/plain``, a form type) without
  asking the server, but not ``application/json``, which needs a CORS preflight this server never
  grants; so it cannot start, abandon or join someone's game, nor log them out. Adds the security
  headers of :data:`SECURITY_HEADERS` to every answer.
* :func:`install_catch_all` answers anything unexpected with 500 ``internal_error`` as JSON, never a
  traceback; :class:`GuardMiddleware` gives that answer itself and does not re-raise, so the
  connection stays usable (Starlette's outermost error middleware re-raises after its 500, and
  uvicorn then closes the connection: the next request on it was reset).
* :func:`check_text` rejects text that no database stores: lone UTF-16 surrogates and NUL
  characters (400 ``invalid_text``); :func:`bad_text_field` finds such text anywhere in a parsed
  JSON body (the rooms API refuses it before reading any field, so no answer echoes it).
* :func:`valid_room_id` tells whether a string can be a room id (ids are ``secrets.token_urlsafe(6)``).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from .errors import AuthError, error_body

log = logging.getLogger("guandan.server")

#: Content-Security-Policy of every page: only same-origin scripts, styles, images and sockets; no
#: framing (clickjacking), no plugins, no <base> changes.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
#: Headers added to every HTTP answer (the API docs page at ``/api/docs`` loads Swagger UI from a
#: CDN, so it gets every header but the CSP).
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
_NO_CSP_PATHS = ("/api/docs", "/api/redoc")
_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
_ROOM_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,16}")
_BAD_TEXT_RE = re.compile("[\x00\ud800-\udfff]")


def valid_room_id(room_id: object) -> bool:
    """Whether ``room_id`` has the shape of a room id: 1-16 of ``A-Z a-z 0-9 _ -``."""
    return isinstance(room_id, str) and _ROOM_ID_RE.fullmatch(room_id) is not None


def bad_text(value: object) -> bool:
    """Whether ``value`` is a string holding a NUL character or a lone surrogate (not storable)."""
    return isinstance(value, str) and _BAD_TEXT_RE.search(value) is not None


def bad_text_field(data: object) -> str | None:
    """Where the first string holding a NUL character or a lone surrogate is in parsed JSON
    ``data`` (keys included): a dotted path such as ``options.return_rule`` or ``players.2``
    (``"?"`` stands for a key that is itself such a string; ``""`` for ``data`` itself); ``None``
    when there is none. Iterative, so any depth ``json.loads`` accepted is fine."""
    stack: list[tuple[object, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if bad_text(value):
                return path
        elif isinstance(value, dict):
            for k, v in value.items():
                key = "?" if bad_text(k) else str(k)[:64]
                sub = f"{path}.{key}" if path else key
                if bad_text(k):
                    return sub
                stack.append((v, sub))
        elif isinstance(value, list):
            stack.extend((v, f"{path}.{i}" if path else str(i)) for i, v in enumerate(value))
    return None


def check_text(value: object, field: str) -> None:
    """Refuse text no database can store.

    Raises:
        ValueError subclass ``AuthError(400, ..., "invalid_text", {"field": field})``: ``value``
            holds a NUL character or a lone UTF-16 surrogate.
    """
    if bad_text(value):
        raise AuthError(400, f"{field} holds a character that is not allowed (NUL or a lone surrogate)",
                        "invalid_text", {"field": field})


async def _send_json(send: Any, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]],
                     close: bool = True) -> None:
    raw = json.dumps(body).encode()  # ASCII: every string encodes, lone surrogates included
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode()),
               *([(b"connection", b"close")] if close else []), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw, "more_body": False})


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class GuardMiddleware:
    """Body limit, ``application/json`` on every state-changing request, and security headers (see
    the module docstring). Refusals are answered here, before the app sees the request: 400
    ``bad_request`` (a bad ``Content-Length``), 413 ``body_too_large``, 415 ``unsupported_media_type``.

    Args:
        app: the ASGI app to protect.
        max_body_bytes: largest request body read (bytes); more gives 413 ``body_too_large``.
    """

    def __init__(self, app: Any, max_body_bytes: int = 16 * 1024) -> None:
        self.app = app
        self.max_body_bytes = int(max_body_bytes)

    def _headers(self, path: str) -> list[tuple[bytes, bytes]]:
        out = list(SECURITY_HEADERS)
        if not path.startswith(_NO_CSP_PATHS):
            out.append((b"content-security-policy", CSP.encode()))
        return out

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = self._headers(scope.get("path", ""))
        limit = self.max_body_bytes
        too_large = error_body(f"the request body is too large (at most {limit} bytes)", "body_too_large",
                               {"max_bytes": limit})
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                declared = -1
            if declared < 0:
                await _send_json(send, 400, error_body("bad Content-Length", "bad_request"), extra)
                return
            if declared > limit:
                await _send_json(send, 413, too_large, extra)
                return
        chunks: list[bytes] = []
        total = 0
        disconnected = False
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                disconnected = True
                break
            part = message.get("body", b"")
            total += len(part)
            if total > limit:  # a chunked body (no Content-Length) that keeps growing
                await _send_json(send, 413, too_large, extra)
                return
            chunks.append(part)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        content_type = headers.get(b"content-type", b"").decode("latin-1")
        if scope.get("method") in _BODY_METHODS and not _is_json(content_type):
            # also with an empty body: a cross-origin form or no-cors fetch can send any other type
            await _send_json(send, 415, error_body("send the request with Content-Type: application/json (also "
                                                   "when the body is empty)", "unsupported_media_type"), extra)
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed and not disconnected:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive() if not disconnected else {"type": "http.disconnect"}

        started = False

        async def send_with_headers(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                have = {k.lower() for k, _ in message.get("headers", [])}
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + [h for h in extra if h[0] not in have]
            await send(message)

        try:
            await self.app(scope, replay, send_with_headers)
        except Exception as exc:  # noqa: BLE001 - answered here, never re-raised (see the module docstring)
            method, path = str(scope.get("method", "")), str(scope.get("path", ""))
            status, answer, more = unexpected_answer(exc, method, path)
            if not started:
                await _send_json(send, status, answer, [*more, *extra], close=False)
            # else: the answer was under way; the server ends that connection (nothing else can)


def unexpected_answer(exc: BaseException, method: str,
                      path: str) -> tuple[int, dict[str, Any], list[tuple[bytes, bytes]]]:
    """The answer to an exception nothing else handled: ``(status, body, extra headers)``.

    A database pool that stays exhausted for ``settings.db_timeout_s`` gives 503 ``database_busy``
    (``Retry-After: 2``); anything else 500 ``internal_error``, logged with its traceback (the
    answer holds neither the traceback nor the exception's text)."""
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    if isinstance(exc, PoolTimeout):
        busy = error_body("the server is busy; try again in a moment", "database_busy")
        return 503, busy, [(b"retry-after", b"2")]
    log.error("%s %s failed", method, path[:200], exc_info=exc)
    return 500, error_body("internal server error", "internal_error"), []


def install_catch_all(app: FastAPI) -> None:
    """Answer any unexpected exception of a request as 500 ``{"error", "code": "internal_error"}``
    (one line, no traceback; the traceback goes to the server log). A database pool that stays
    exhausted for ``settings.db_timeout_s`` gives 503 ``database_busy`` (:func:`unexpected_answer`).

    With :class:`GuardMiddleware` installed (``create_app``) the middleware answers first and the
    connection stays open; this handler serves an app without it."""
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        status, body, more = unexpected_answer(exc, request.method, request.url.path)
        return JSONResponse(body, status_code=status, headers={k.decode(): v.decode() for k, v in more})

    app.add_exception_handler(Exception, unexpected)
    app.add_exception_handler(PoolTimeout, unexpected)


__all__ = ["CSP", "GuardMiddleware", "SECURITY_HEADERS", "bad_text", "bad_text_field", "check_text",
           "install_catch_all", "unexpected_answer", "valid_room_id"]
