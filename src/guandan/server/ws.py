"""The table websocket ``/ws/rooms/{id}`` (server contract, "Table websocket").

Authentication is the ``gd_session`` cookie (:func:`guandan.server.auth.user_from_token`); a
connection whose account holds a seat plays that seat, every other connection (anonymous ones too)
is a spectator. On connect and after every change the server sends a ``state`` frame.

Every client message is validated: at most :data:`MAX_MESSAGE_BYTES` bytes of UTF-8 text, a JSON
object, a known ``type``, at most :data:`RATE_LIMIT` messages per second per connection. Bad input
gets ``{"type": "error", "message": "one line", "reason": code}`` and the connection stays open;
the handler never raises.

Client messages: ``act`` (``action: [type, rank, [cards]]``), ``act_cards`` (``cards: ["TH", ...]``,
``reading: {type, rank} | null``; readings resolved with :func:`guandan.core.plays.classify`, R17),
``hint``, ``hints`` (every sensible play, weakest first), ``ready`` (between deals), ``ping``, and
``auto`` (``on: bool``, 托管 on/off for one's own seat) and ``phrase`` (``id``: a quick phrase,
:mod:`guandan.server.phrase_relay`). docs/table-contract.md has the frames.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from guandan.core.cards import parse_card, parse_rank
from guandan.core.errors import GuandanError, IllegalAction
from guandan.core.match import action_from_json, action_to_json

from .hardening import valid_room_id
from .connections import Conn
from .friends_store import SocketSeen, mark_seen
from .models import utcnow
from .phrase_relay import relay_phrase
from .table.flow import Table
from .table.frames import error_frame, frame_json

if TYPE_CHECKING:
    from .manager import TableManager

log = logging.getLogger("guandan.server.ws")

#: Largest accepted client message (bytes of UTF-8).
MAX_MESSAGE_BYTES = 4096
#: Largest websocket message the server reads at all (uvicorn ``ws_max_size``, set by
#: :func:`guandan.server.app.uvicorn_options`): a larger one is refused while it is read and the
#: socket is closed with 1009 (message too big). Between :data:`MAX_MESSAGE_BYTES` and this the
#: message is read and answered with a ``too_large`` error frame (the socket stays open).
#: uvicorn's own default is 16 MiB, read whole before any check.
MAX_FRAME_BYTES = 64 * 1024
#: Messages per second one connection may send; the excess is refused with ``rate_limited``.
RATE_LIMIT = 20
#: Client message types.
MESSAGE_TYPES = ("act", "act_cards", "hint", "hints", "ready", "ping", "auto", "phrase")
#: Websocket close code sent when the room does not exist.
CLOSE_NO_ROOM = 4404
#: Open sockets one seated account may hold in its room (in one process); a newer one closes the oldest.
MAX_TABS_PER_SEAT = 8
#: Websocket close code of a seated account's oldest socket closed by a newer one (:data:`MAX_TABS_PER_SEAT`).
CLOSE_TOO_MANY_TABS = 4429


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _parse_reading(r: Any) -> tuple[str, int | None] | None:
    if r is None:
        return None
    if not isinstance(r, dict) or not isinstance(r.get("type"), str):
        raise IllegalAction("malformed", "reading must be {type, rank} or null")
    rank = r.get("rank")
    if rank is not None and not isinstance(rank, str):
        raise IllegalAction("malformed", "reading rank must be a rank such as 'T', or null")
    return r["type"], None if rank is None else parse_rank(rank)


def _reason_params(table: Table, e: IllegalAction) -> dict[str, Any]:
    """The ``params`` of an illegal action's error frame (contract section 14): the error's own
    ``params``, ``seat`` (whose turn it is) for ``not_your_turn``, ``phase`` for ``wrong_phase``."""
    params: dict[str, Any] = dict(getattr(e, "params", None) or {})
    game = table.game
    if game is not None:
        if e.reason == "not_your_turn":
            params.setdefault("seat", game.to_act())
        elif e.reason == "wrong_phase":
            params.setdefault("phase", game.phase)
    return params


def check_message_text(conn: Conn, text: str | bytes | None, rate_limit: int) -> str | dict[str, Any]:
    """The checks every client message passes first, on whichever process holds the websocket
    (single process: :func:`handle_message`; cluster: before forwarding to the owner).

    Args:
        conn: the sender (its message rate is counted here). text: the websocket message.
        rate_limit: messages per second allowed per connection.
    Returns:
        The message as text, or the ``error`` frame to answer: ``malformed`` (empty),
        ``rate_limited`` (``{limit}``), ``too_large`` (``{bytes, max}``, over
        :data:`MAX_MESSAGE_BYTES`), ``bad_json`` (bytes that are not UTF-8).
    """
    if text is None:
        return error_frame("empty message", "malformed")
    if not conn.rate_ok(rate_limit):
        return error_frame(f"too many messages (at most {rate_limit} per second)", "rate_limited",
                           {"limit": rate_limit})
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_MESSAGE_BYTES:
        return error_frame(f"message too large ({size} bytes; at most {MAX_MESSAGE_BYTES})", "too_large",
                           {"bytes": size, "max": MAX_MESSAGE_BYTES})
    if isinstance(text, bytes):
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError:
            return error_frame("messages must be UTF-8 JSON text", "bad_json")
    return text


async def handle_message(
    table: Table, conn: Conn, text: str | bytes | None, rate_limit: int = RATE_LIMIT
) -> dict[str, Any] | None:
    """Validate and carry out one client message; return the reply frame for this connection
    (``None`` when the answer is the ``state`` frames the table sends everyone).

    Never raises: bad input, illegal actions and internal failures become ``error`` frames with
    ``reason`` one of ``too_large``, ``rate_limited``, ``bad_json``, ``not_object``,
    ``unknown_type``, ``malformed``, ``internal`` or an :class:`IllegalAction` reason
    (``not_your_turn``, ``does_not_beat``, ``ambiguous`` (with ``readings``), ``not_seated``,
    ``not_started``, ``between_deals``, ...), each with ``params`` (docs/table-contract.md section 14).
    """
    try:
        checked = check_message_text(conn, text, rate_limit)
        if isinstance(checked, dict):
            return checked
        text = checked
        try:
            msg = json.loads(text)
        except (ValueError, RecursionError):
            return error_frame("message is not valid JSON", "bad_json")
        if not isinstance(msg, dict):
            return error_frame("message must be a JSON object", "not_object")
        mtype = msg.get("type")
        if not isinstance(mtype, str) or mtype not in MESSAGE_TYPES:
            shown = mtype if isinstance(mtype, str) and len(mtype) <= 32 else "?"
            return error_frame(
                f"unknown message type {shown!r}; known: {', '.join(MESSAGE_TYPES)}", "unknown_type",
                {"type": shown, "known": list(MESSAGE_TYPES)},
            )
        if mtype == "ping":
            return {"type": "pong"}
        if mtype == "act":
            action = action_from_json(msg.get("action"))
            await table.act(conn, action)
            return None
        if mtype == "act_cards":
            cards = msg.get("cards")
            if not isinstance(cards, list) or len(cards) > 27 or not all(isinstance(c, str) for c in cards):
                return error_frame("cards must be a list of card strings such as 'TH'", "malformed")
            faces = [parse_card(c) for c in cards]
            await table.resolve_and_act(conn, faces, _parse_reading(msg.get("reading")))
            return None
        if mtype == "hint":
            act = await table.hint(conn)
            return {"type": "hint", "action": action_to_json(act)}
        if mtype == "hints":
            acts = await table.hints(conn)
            return {"type": "hints", "actions": [action_to_json(a) for a in acts]}
        if mtype == "ready":
            await table.ready(conn)
            return None
        if mtype == "auto":
            on = msg.get("on")
            if not isinstance(on, bool):
                return error_frame("auto needs on: true or false", "malformed")
            await table.set_auto(conn, on)
            return None
        if mtype == "phrase":  # a quick phrase by id (issue 25 item 3; R55): guandan.server.phrase_relay
            return await relay_phrase(table, conn, msg)
        return error_frame("unknown message type", "unknown_type")  # pragma: no cover
    except IllegalAction as e:
        extra = {"readings": e.readings} if hasattr(e, "readings") else {}
        return error_frame(_one_line(e), e.reason, _reason_params(table, e), **extra)
    except GuandanError as e:  # NotationError: a bad card or rank
        return error_frame(_one_line(e), "malformed")
    except (TypeError, AttributeError) as e:
        return error_frame(f"malformed message: {_one_line(e)}", "malformed")
    except Exception as e:  # never let one message break the connection
        log.exception("room %s: message failed", table.id)
        return error_frame(f"internal error: {_one_line(e)}", "internal")


def _user_of_token(session_factory: Callable[[], Any], token: str) -> tuple[int | None, str | None]:
    """``(user id, name)`` of a live session token, or ``(None, None)`` (blocking: run it in a thread)."""
    from .auth import user_from_token

    with session_factory() as db:
        user = user_from_token(db, token)
        out = (user.id, user.name) if user is not None else (None, None)
        db.commit()
    return out


def _frame_writer(websocket: WebSocket) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """``write(frame)``: send one frame's JSON text on ``websocket`` (:meth:`Conn.flush`)."""

    async def write(frame: dict[str, Any]) -> None:
        await websocket.send_text(frame_json(frame))

    return write


async def _writer(websocket: WebSocket, conn: Conn) -> None:
    """Send the connection's queued frames in order (:meth:`Conn.flush`) until it closes."""
    write = _frame_writer(websocket)
    try:
        while not conn.ended:
            await conn.wake.wait()
            conn.wake.clear()
            await conn.flush(write)
    except Exception:  # noqa: BLE001, S110 - the peer went away; the reader notices
        pass
    finally:
        conn.closed = True
        if websocket.application_state == WebSocketState.CONNECTED:
            try:
                await websocket.close(code=conn.close_code, reason=conn.close_reason[:120])
            except Exception:  # noqa: BLE001, S110 - already closed by the peer
                pass


def origin_allowed(websocket: WebSocket, settings: Any) -> bool:
    """Whether the websocket's ``Origin`` may open a table: no ``Origin`` (not a browser), the
    server's own origin (same host and port as the ``Host`` header), or one of
    ``settings.allowed_origins`` (``--allowed-origins``). A page on another site cannot open a
    socket with the visitor's cookie (cross-site websocket hijacking)."""
    origin = websocket.headers.get("origin")
    if origin is None:
        return True
    origin = origin.rstrip("/").lower()
    allowed = {o.rstrip("/").lower() for o in getattr(settings, "allowed_origins", ()) or ()}
    if origin in allowed:
        return True
    host = (websocket.headers.get("host") or "").lower()
    return origin.split("://", 1)[-1] == host and origin.startswith(("http://", "https://"))


def _address_counts(manager: TableManager) -> dict[str, int]:
    counts = getattr(manager, "ws_per_address", None)
    if counts is None:
        counts = manager.ws_per_address = {}  # type: ignore[attr-defined]
    return counts


def _over_cap(manager: TableManager, table: Table, address: str, settings: Any,
              user_id: int | None = None) -> str | None:
    """Why a new websocket is refused, or ``None``.

    A socket of an account that holds a seat in the room is never refused, and never counted
    against the room's cap (a crowd of spectators cannot lock the players out; the number of its
    tabs is bounded by :func:`_close_extra_tabs` instead). Any other socket (a spectator, anonymous
    or not) is refused when ``settings.max_ws_per_room`` spectator sockets are open in the room (in
    this process), or ``settings.max_ws_per_address`` sockets of any kind from its address (all rooms).
    """
    if user_id is not None and table.info.seat_of(user_id) is not None:
        return None
    per_room = int(getattr(settings, "max_ws_per_room", 200) or 0)
    per_address = int(getattr(settings, "max_ws_per_address", 50) or 0)
    if per_room and sum(1 for c in table.conns if table.info.seat_of(c.user_id) is None) >= per_room:
        return _cap_text("room", settings)
    if per_address and _address_counts(manager).get(address, 0) >= per_address:
        return _cap_text("address", settings)
    return None


def _cap_text(which: str, settings: Any) -> str:
    """The refusal of a socket over the room's (``which="room"``) or the address's cap."""
    if which == "room":
        return f"this room has too many spectators (at most {int(getattr(settings, 'max_ws_per_room', 200) or 0)}); " \
            "try again later"
    return f"too many connections from your address (at most {int(getattr(settings, 'max_ws_per_address', 50) or 0)}); " \
        "close some tabs"


async def _cluster_cap(cluster: Any, table: Any, room_id: str, address: str, settings: Any,
                       user_id: int | None) -> tuple[str | None, bool | None]:
    """Cluster mode: the caps of :func:`_over_cap` counted over every process (the cluster node's
    ``admit_socket``, :mod:`guandan.server.cluster.sockets`).

    Returns:
        ``(refusal or None, counted)``: ``counted`` is ``None`` when nothing was counted (refused,
        or Redis out of reach: then only this process's counts applied, logged), else whether the
        socket was counted as a spectator's (pass it to ``release_socket`` when it closes).
    """
    seated = user_id is not None and table.info.seat_of(user_id) is not None
    try:
        which = await cluster.admit_socket(room_id, address, spectator=not seated, seated=seated,
                                           per_room=int(getattr(settings, "max_ws_per_room", 200) or 0),
                                           per_address=int(getattr(settings, "max_ws_per_address", 50) or 0))
    except Exception as e:  # noqa: BLE001 - Redis out of reach: this process's caps still hold
        log.warning("room %s: counting the socket in the cluster failed (%s); this process's caps apply", room_id,
                    _one_line(e))
        return None, None
    if which is not None:
        return _cap_text(which, settings), None
    return None, not seated


def _close_extra_tabs(table: Table, conn: Conn) -> None:
    """Keep at most :data:`MAX_TABS_PER_SEAT` open sockets of ``conn``'s seated account in the room
    (in this process): the oldest beyond that are closed with :data:`CLOSE_TOO_MANY_TABS`. A seated
    account's new socket is never refused, so this is what bounds them."""
    if conn.user_id is None or table.info.seat_of(conn.user_id) is None:
        return
    mine = sorted((c for c in table.conns if isinstance(c, Conn) and c.user_id == conn.user_id and not c.closed),
                  key=lambda c: c.opened)
    for old in mine[:max(0, len(mine) - MAX_TABS_PER_SEAT)]:
        old.close(CLOSE_TOO_MANY_TABS, f"more than {MAX_TABS_PER_SEAT} tabs of this seat; the oldest closed")


def make_ws_router(
    session_factory: Callable[[], Any],
    manager: TableManager,
    settings: Any = None,
    *,
    rate_limit: int = RATE_LIMIT,
) -> APIRouter:
    """The table websocket as a FastAPI router (include it in the app).

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session`` (cookie lookup).
        manager: the application's :class:`TableManager`.
        settings: server settings (unused; kept for a uniform router signature).
        rate_limit: messages per second per connection (the contract's 20 by default).
    Returns:
        An ``APIRouter`` serving ``/ws/rooms/{room_id}``.
    """
    from .auth import COOKIE_NAME

    router = APIRouter()

    @router.websocket("/ws/rooms/{room_id}")
    async def room_socket(websocket: WebSocket, room_id: str) -> None:
        user_id: int | None = None
        name: str | None = None
        cluster = manager.cluster
        if not origin_allowed(websocket, settings):
            await websocket.close(code=1008)  # before the handshake: the client gets HTTP 403
            return
        try:
            token = websocket.cookies.get(COOKIE_NAME)
            if token:  # looked up in the manager's thread pool, never on the event loop
                user_id, name = await manager.run_db(_user_of_token, session_factory, token)
            opener = cluster.open if cluster is not None else manager.open  # cluster: any process serves it
            table = await opener(room_id) if valid_room_id(room_id) else None
        except Exception:
            log.exception("websocket for room %s: set-up failed", room_id)
            table = None
            await websocket.accept()
            await websocket.send_text(frame_json(error_frame("the server could not open this room", "internal")))
            await websocket.close(code=1011)
            return
        await websocket.accept()
        if table is None:
            await websocket.send_text(frame_json(error_frame(f"no room {room_id!r}", "no_room", {"room": room_id[:16]})))
            await websocket.close(code=CLOSE_NO_ROOM)
            return
        if table.info.board is not None and table.info.seat_of(user_id) is None:
            # a daily-challenge board is secret until the day closes: nobody watches it (its record
            # is public once the day closes: replay and review)
            await websocket.send_text(frame_json(error_frame("only its player may open a board of the daily challenge",
                                                             "board_private", {"room": room_id[:16]})))
            await websocket.close(code=CLOSE_NO_ROOM)
            return
        address = websocket.client.host if websocket.client is not None else "unknown"
        refusal = _over_cap(manager, table, address, settings, user_id)
        counted: bool | None = None  # cluster mode: counted over every process (as a spectator's?)
        if refusal is None and cluster is not None:
            refusal, counted = await _cluster_cap(cluster, table, room_id, address, settings, user_id)
        if refusal is not None:
            await websocket.send_text(frame_json(error_frame(refusal, "too_many_connections")))
            await websocket.close(code=1013, reason="too many connections")
            return
        conn = Conn(user_id, name)
        conn.address = address
        if token and user_id is not None:
            from .auth import token_key

            conn.session_key = token_key(token)
        counts = _address_counts(manager)
        counts[address] = counts.get(address, 0) + 1
        writer = asyncio.create_task(_writer(websocket, conn))
        write = _frame_writer(websocket)
        seen = SocketSeen()  # friends' presence: an open table socket keeps its account online
        batch = getattr(websocket.app.state, "presence", None)
        try:
            await table.connect(conn)
            _close_extra_tabs(table, conn)
            while not conn.closed:
                if user_id is not None and seen.due():
                    if seen.first or batch is None:  # at connect or after a long silence: written now
                        seen.spawn(manager.run_db(mark_seen, session_factory, user_id))
                    else:  # a refresh: with the others, every few seconds
                        batch.note(user_id, utcnow())
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if message["type"] != "websocket.receive":
                    continue
                text = message.get("text")
                if text is None:
                    text = message.get("bytes")
                if cluster is not None:
                    reply = await table.handle(conn, text, rate_limit)  # forwarded to the owner
                else:
                    reply = await handle_message(table, conn, text, rate_limit)
                if reply is not None:
                    conn.send(reply)
                # the answer first: this player's own frames leave now, not after every frame the
                # event loop queued for other connections meanwhile (Conn.flush keeps their order)
                try:
                    await conn.flush(write)
                except Exception:  # noqa: BLE001, S110 - the peer went away: the next receive says so
                    pass
        except (WebSocketDisconnect, RuntimeError):
            pass
        except Exception:
            log.exception("websocket for room %s failed", room_id)
        finally:
            try:
                await table.disconnect(conn)
            except Exception:
                log.exception("room %s: disconnect failed", room_id)
            conn.close()
            if counted is not None:
                await cluster.release_socket(room_id, address, spectator=counted)
            counts[address] = counts.get(address, 1) - 1
            if counts[address] <= 0:
                counts.pop(address, None)
            try:
                await asyncio.wait_for(writer, timeout=1.0)
            except (TimeoutError, asyncio.CancelledError, Exception):  # noqa: BLE001 - never raise
                writer.cancel()
            (cluster if cluster is not None else manager).forget_if_idle(room_id)

    return router


__all__ = ["CLOSE_TOO_MANY_TABS", "MAX_FRAME_BYTES", "MAX_MESSAGE_BYTES", "MAX_TABS_PER_SEAT", "MESSAGE_TYPES",
           "RATE_LIMIT", "handle_message", "make_ws_router"]
