"""``Conn.flush``: a socket's frames leave in the order they were queued, whether its writer task or its
reader sends them, and a reader's flush sends the player's answer before frames queued later for
other connections (issue 21, the round load test's start)."""

from __future__ import annotations

import asyncio
from typing import Any

from guandan.server.connections import Conn


def test_two_flushes_at_once_never_reorder_frames() -> None:
    """The first flush is suspended in its write (a full socket buffer); frames queued meanwhile and
    a second flush (the writer woken by them) must not overtake the frame being written."""

    async def main() -> list[int]:
        conn = Conn(1, "ann")
        sent: list[int] = []
        gate = asyncio.Event()

        async def write(frame: dict[str, Any]) -> None:
            if frame["n"] == 0:
                await gate.wait()  # the first write waits, as under flow control
            sent.append(frame["n"])

        conn.send({"n": 0})
        first = asyncio.create_task(conn.flush(write))
        await asyncio.sleep(0)  # the first flush took frame 0 and waits in its write
        for n in (1, 2, 3):
            conn.send({"n": n})
        await conn.flush(write)  # a second flush while the first writes: returns at once
        assert sent == []
        gate.set()
        await first
        return sent

    assert asyncio.run(main()) == [0, 1, 2, 3]


def test_the_close_ends_a_flush_and_wakes_the_writer() -> None:
    async def main() -> tuple[list[int], bool, bool]:
        conn = Conn(None, None)
        sent: list[int] = []

        async def write(frame: dict[str, Any]) -> None:
            sent.append(frame["n"])

        conn.send({"n": 1})
        conn.close(1013, "too slow")
        conn.send({"n": 2})  # after the close: dropped
        conn.wake.clear()
        await conn.flush(write)
        return sent, conn.ended, conn.wake.is_set()

    assert asyncio.run(main()) == ([1], True, True)


def test_the_movers_answer_leaves_before_frames_queued_for_other_sockets() -> None:
    """Two sockets, each with a writer task as in ``ws.py``: a frame is queued for both (a move at a
    table with two people), then the mover's reader flushes at once. The mover's frame is written
    before the other socket's, although the other socket's writer was woken first."""
    from guandan.server.ws import _writer

    class Socket:
        application_state = None

        def __init__(self, name: str, log: list[str]) -> None:
            self.name, self.log = name, log

        async def send_text(self, text: str) -> None:
            self.log.append(f"{self.name}:{text}")

    async def main() -> list[str]:
        log: list[str] = []
        other, mover = Conn(2, "bo"), Conn(1, "ann")
        tasks = [asyncio.create_task(_writer(Socket("other", log), other)),  # type: ignore[arg-type]
                 asyncio.create_task(_writer(Socket("mover", log), mover))]  # type: ignore[arg-type]
        await asyncio.sleep(0)
        other.send({"seq": 5})  # the broadcast of the move queues the other socket's frame first
        mover.send({"seq": 5})

        async def write(frame: dict[str, Any]) -> None:
            log.append("mover:" + ('{"seq":%d}' % frame["seq"]))

        await mover.flush(write)  # what the mover's reader does right after the move
        other.close()
        mover.close()
        await asyncio.gather(*tasks)
        return log

    assert asyncio.run(main()) == ['mover:{"seq":5}', 'other:{"seq":5}']
