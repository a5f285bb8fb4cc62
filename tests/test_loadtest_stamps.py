"""The load generator times a reply at its arrival, not when its own coroutine gets to parse it
(``guandan.server.loadtest.stamped_connection``, ``recv``): on a small machine the client's queue of
frames to parse was most of a burst's measured latency (issue 21, "Speed and scale")."""

from __future__ import annotations

import asyncio
import time

import pytest

pytest.importorskip("websockets")

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

from guandan.server.loadtest import recv, stamped_connection


async def _stamps_while_the_client_is_busy() -> tuple[list[str], list[float], float, float]:
    """A server sends a plain message, a message in three fragments, and a third message, then a
    ping; the client's loop is blocked for 0.3 s after they were sent (the parse queue of other
    players), then reads them. Returns (messages, arrival stamps, when the sends ended, when the
    client started reading)."""
    sent_at: list[float] = []

    async def handler(ws):  # type: ignore[no-untyped-def]
        await ws.send("one")
        await ws.send(iter(["tw", "o-", "parts"]))
        await ws.send("three")
        sent_at.append(time.monotonic())
        await ws.ping()
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", create_connection=stamped_connection()) as ws:
            await asyncio.sleep(0.2)  # the frames arrive and are stamped by the loop's I/O callback
            time.sleep(0.3)  # the client's loop busy elsewhere (blocking on purpose)
            reading_at = time.monotonic()
            got = [await recv(ws) for _ in range(3)]
    return [m for m, _ in got], [t for _, t in got], sent_at[0], reading_at


def test_each_message_is_stamped_when_its_last_frame_arrives_not_when_it_is_read() -> None:
    messages, stamps, sent_end, reading_at = asyncio.run(_stamps_while_the_client_is_busy())
    assert messages == ["one", "two-parts", "three"]  # one stamp per message, fragments and pings aside
    assert stamps == sorted(stamps)
    # stamped before the 0.3 s the client spent elsewhere, within the 0.2 s after the sends
    assert all(reading_at - t >= 0.3 for t in stamps), (stamps, reading_at)
    assert all(t - sent_end < 0.2 for t in stamps), (stamps, sent_end)


def test_recv_of_a_plain_connection_stamps_the_hand_over() -> None:
    class Plain:
        async def recv(self) -> str:
            return "x"

    before = time.monotonic()
    message, at = asyncio.run(recv(Plain()))
    assert message == "x" and before <= at <= time.monotonic()
