"""One open websocket as the tables see it: who it is and its queue of outgoing frames.

:class:`Conn` is the single-process implementation of :class:`guandan.server.table.ports.FrameSink`
(the cluster's, :class:`guandan.server.cluster.proxy.ChannelConn`, publishes frames to the
processes holding the sockets instead).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

#: Largest number of frames queued for one connection before it is closed as too slow.
MAX_QUEUE = 2000


class Conn:
    """One open websocket: who it is (``user_id``/``name``, ``None`` for anonymous spectators) and
    its outgoing queue (frames are queued under the table lock and written by the socket's writer
    task, so a slow client never blocks a table).

    Attributes:
        recent: monotonic times (seconds) of the messages received in the last second (rate limit).
    """

    def __init__(self, user_id: int | None = None, name: str | None = None) -> None:
        self.user_id = user_id
        self.name = name
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.closed = False
        self.recent: deque[float] = deque()
        #: websocket close code and reason the writer sends (1000 unless :meth:`close` says otherwise)
        self.close_code = 1000
        self.close_reason = ""
        #: ``auth.token_key`` of the login session the connection was opened with (logout closes it)
        self.session_key: str | None = None
        #: the client's address (connection caps)
        self.address = ""
        #: monotonic time the connection was opened (the oldest tabs of a seat are closed first)
        self.opened = time.monotonic()
        #: set when a frame (or the close) is queued: wakes the socket's writer task
        self.wake = asyncio.Event()
        #: a :meth:`flush` is writing (one at a time, so frames leave in the order they were queued)
        self.sending = False
        #: the close was reached in the queue: the writer closes the socket
        self.ended = False

    def send(self, frame: dict[str, Any]) -> None:
        """Queue ``frame`` (a JSON-ready dict); a connection more than :data:`MAX_QUEUE` frames
        behind is closed."""
        if self.closed:
            return
        if self.queue.qsize() >= MAX_QUEUE:
            # 1013 "try again later": the client reconnects and gets the whole state again
            self.close(1013, f"too slow: more than {MAX_QUEUE} frames behind")
            return
        self.queue.put_nowait(frame)
        self.wake.set()

    async def flush(self, write: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """Write the frames queued now with ``write``, in queue order, until the queue is empty.

        Called by the socket's writer task when woken, and by its reader right after it handled a
        message, so that the answer to a player's own message (their state frame after a move, an
        error) leaves at once instead of after the frames the event loop has queued for every
        other connection meanwhile (issue 21: 200 simultaneous moves were all answered only
        after the whole batch's frames). One flush runs at a time: a call while another is
        writing returns at once (the running one sends what is queued), so frames are never
        reordered. Reaching the close sets :attr:`ended` and wakes the writer, which closes.

        Raises:
            Exception: whatever ``write`` raises (the peer went away); the frame is dropped.
        """
        if self.sending:
            return
        self.sending = True
        try:
            while True:
                try:
                    frame = self.queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                if frame is None:
                    self.ended = True
                    self.wake.set()
                    return
                await write(frame)
        finally:
            self.sending = False

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Ask the writer to stop (queues ``None``); it closes the websocket with ``code`` and
        ``reason`` (at most 120 bytes)."""
        if not self.closed:
            self.closed = True
            self.close_code, self.close_reason = code, reason
            self.queue.put_nowait(None)
            self.wake.set()

    def rate_ok(self, limit: int, now: float | None = None) -> bool:
        """Record one received message; False when more than ``limit`` arrived in the last second."""
        t = time.monotonic() if now is None else now
        while self.recent and t - self.recent[0] >= 1.0:
            self.recent.popleft()
        if len(self.recent) >= limit:
            return False
        self.recent.append(t)
        return True
