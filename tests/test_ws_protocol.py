"""``guandan.server.ws_protocol.TableSocketProtocol``: uvicorn's websocket protocol with outgoing
messages deflated at level 1 (issue 21: deflate at zlib's default level was the server's largest
single cost under load)."""

from __future__ import annotations

import asyncio
import json
import zlib

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.asyncio.client import connect

from guandan.server.app import uvicorn_options
from guandan.server.settings import Settings
from guandan.server.ws import MAX_FRAME_BYTES
from guandan.server.ws_protocol import DEFLATE_LEVEL, TableSocketProtocol


def _protocols(**config: object) -> tuple[WebSocketsSansIOProtocol, TableSocketProtocol]:
    """uvicorn's own protocol and ours, made as uvicorn makes them, on one config."""
    out = []
    for cls in (WebSocketsSansIOProtocol, TableSocketProtocol):
        cfg = uvicorn.Config(Starlette(), ws=cls, **config)  # type: ignore[arg-type]
        cfg.load()
        loop = asyncio.new_event_loop()
        try:
            out.append(cls(config=cfg, server_state=ServerState(), app_state={}, _loop=loop))
        finally:
            loop.close()
    return out[0], out[1]  # type: ignore[return-value]


def test_the_offer_is_uvicorns_but_for_the_level() -> None:
    theirs, ours = _protocols(ws_max_size=MAX_FRAME_BYTES)
    [their_factory] = theirs.conn.available_extensions
    [factory] = ours.conn.available_extensions
    assert factory.name == "permessage-deflate"
    assert factory.compress_settings == {**their_factory.compress_settings, "level": 1}
    assert "level" not in their_factory.compress_settings  # uvicorn leaves zlib's default (6)
    assert {k: v for k, v in vars(factory).items() if k != "compress_settings"} == {
        k: v for k, v in vars(their_factory).items() if k != "compress_settings"}
    assert ours.conn.max_message_size == theirs.conn.max_message_size == MAX_FRAME_BYTES
    assert DEFLATE_LEVEL == 1


def test_deflate_switched_off_offers_nothing() -> None:
    _, ours = _protocols(ws_per_message_deflate=False)
    assert ours.conn.available_extensions == []


def test_guandan_serve_uses_it() -> None:
    assert uvicorn_options(Settings())["ws"] is TableSocketProtocol


async def _echo(ws: WebSocket) -> None:
    await ws.accept()
    async for text in ws.iter_text():
        await ws.send_text(text)


def test_a_large_message_goes_out_deflated_and_comes_back_whole() -> None:
    app = Starlette(routes=[WebSocketRoute("/echo", _echo)])
    message = json.dumps({"legal_actions": [["single", str(r), [f"{r}H"]] for r in range(2, 15)] * 150})
    assert 40_000 < len(message) < MAX_FRAME_BYTES
    level1 = zlib.compressobj(1, zlib.DEFLATED, -12, 5)
    level1_size = len(level1.compress(message.encode()) + level1.flush(zlib.Z_SYNC_FLUSH)) - 4

    async def run() -> tuple[str, str | None]:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                                ws=TableSocketProtocol, ws_max_size=MAX_FRAME_BYTES)
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            async with connect(f"ws://127.0.0.1:{port}/echo", max_size=None) as ws:
                sizes: list[int] = []
                orig = ws.protocol.reader.feed_data  # the compressed bytes as they arrive
                ws.protocol.reader.feed_data = lambda data: (sizes.append(len(data)), orig(data))[1]  # type: ignore[method-assign]
                await ws.send(message)
                back = await ws.recv()
                negotiated = ws.response.headers.get("Sec-WebSocket-Extensions") if ws.response else None
                assert sum(sizes) < len(message) // 4  # it came compressed
                assert abs(sum(sizes) - level1_size) <= 16, (sum(sizes), level1_size)  # at level 1 (plus the frame header)
                return str(back), negotiated
        finally:
            server.should_exit = True
            await task

    back, negotiated = asyncio.run(run())
    assert back == message
    assert negotiated is not None and negotiated.startswith("permessage-deflate")
