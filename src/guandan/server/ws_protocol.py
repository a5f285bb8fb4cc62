"""The websocket protocol class ``guandan serve`` gives uvicorn: uvicorn's sans-I/O websockets
protocol with a cheaper permessage-deflate (the compression level, which uvicorn does not expose).

uvicorn's ``websockets-sansio`` protocol offers permessage-deflate with a 4 KiB window
(``server_max_window_bits=12``), ``memLevel`` 5 and zlib's default level (6). At a table every
action sends a state frame to every connected seat, and a seat's frame carries its legal actions
(a first lead's frame is 20 KB at the median, up to 110 KB): compressing them was the server's
largest single cost. Measured 2026-12-06 on the online round load test (``guandan loadtest --round
-n 200``, timers around ``PerMessageDeflate.encode``, ``view_for`` and ``Table._state``): 40 ms of
every 250 ms went to deflate against 24 ms to making the views; at the round's start 434 ms went
to deflate in one stretch. On the first-lead frames of 40 seeded deals (``view_for``, JSON, then
zlib with uvicorn's window and memory settings) level 6 took 0.50 ms a frame for 9.6 % of the
size, level 1 took 0.15 ms for 12.5 %. :data:`DEFLATE_LEVEL` is therefore 1: the frames stay about 8x smaller than without
compression, for a third of the time.

Everything else is uvicorn's (handshake, ping, limits, close codes, the window and memory settings):
only the level is changed, in the offer uvicorn made, so a client sees the same negotiation as
before. Needs uvicorn 0.35 or later (its ``websockets-sansio`` protocol; the project asks for 0.44).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory

__all__ = ["DEFLATE_LEVEL", "TableSocketProtocol"]

#: zlib compression level of outgoing websocket messages (1 fastest … 9 smallest; zlib's default 6).
DEFLATE_LEVEL = 1


class TableSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol; with ``ws_per_message_deflate`` on (uvicorn's
    default) outgoing messages are compressed at :data:`DEFLATE_LEVEL` instead of zlib's default.
    Constructed by uvicorn, one per connection (``uvicorn.Config(ws=TableSocketProtocol)``); the
    arguments are uvicorn's. The offer is read at the handshake, so changing it here, before the
    connection has read anything, is enough."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for factory in self.conn.available_extensions:
            if isinstance(factory, ServerPerMessageDeflateFactory):
                factory.compress_settings = {**factory.compress_settings, "level": DEFLATE_LEVEL}
