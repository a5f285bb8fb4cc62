"""The fair share of the searching bots' process pool between tables (issue 26, item 7):
guandan.server.table.search_gate.SearchGate and its use by the tables (bots.decide_searching)."""

from __future__ import annotations

import asyncio
import time

import pytest

from guandan.server.table.bots import decide_searching, make_search_gate
from guandan.server.table.search_gate import SearchGate


async def _settle() -> None:
    """Let every task that is ready run until it waits again (a few passes of the loop)."""
    for _ in range(10):
        await asyncio.sleep(0)


def test_a_full_queue_gives_the_place_to_the_table_served_least_recently():
    """``max_waiting`` 1, the slot held by table A, A's next decision waiting: table B (never
    admitted) arrives and takes A's place in the queue; A's waiting decision is refused (the
    heuristic moves for it). A newcomer from A itself would have been the one refused."""
    async def main() -> None:
        gate = SearchGate(slots=1, max_wait_s=30, max_waiting=1)
        assert await gate.acquire("A")
        again = asyncio.get_running_loop().create_task(gate.acquire("A"))
        await _settle()
        assert gate.waiting() == ["A"]
        b = asyncio.get_running_loop().create_task(gate.acquire("B"))
        await _settle()
        assert again.done() and again.result() is False and gate.waiting() == ["B"]
        assert await gate.acquire("A") is False  # A was admitted most recently: the newcomer is refused
        assert gate.waiting() == ["B"]
        gate.release("A")
        await _settle()
        assert b.result() is True and gate.running == {"B": 1}

    asyncio.run(main())


def test_waiting_decisions_are_admitted_least_recently_served_table_first():
    """Two slots held by A and B; C, A, D and B wait in that order. Service stamps: A then B were
    admitted, C and D never. Each release admits the next by last service, not by arrival: the
    never-served C and D first (C came first), then A (served before B), then B."""
    async def main() -> None:
        gate = SearchGate(slots=2, max_wait_s=30, max_waiting=10)
        assert await gate.acquire("A") and await gate.acquire("B")
        loop = asyncio.get_running_loop()
        tasks = {}
        for t in ("C", "A", "D", "B"):
            tasks[t] = loop.create_task(gate.acquire(t))
            await _settle()
        assert gate.waiting() == ["C", "D", "A", "B"]
        order = []
        for holder in ("A", "B", "C", "D", "A"):
            gate.release(holder)
            await _settle()
            order += [t for t, task in tasks.items() if task.done() and t not in order]
        assert order == ["C", "D", "A", "B"]
        assert all(task.result() is True for task in tasks.values())
        assert gate.running == {"B": 1}  # C, D, A released in turn; B's last decision runs
        assert gate.waiting() == []

    asyncio.run(main())


def test_a_decision_that_waits_too_long_is_refused_and_the_heuristic_moves():
    """One slot held; a decision of B waits 0.2 s (max_wait_s) and is refused: acquire answers
    False after about 0.2 s, the queue is empty again, nothing of B runs. Through
    decide_searching the refused decision is the fallback agent's move and the search agent is
    never asked."""
    async def main() -> None:
        gate = SearchGate(slots=1, max_wait_s=0.2, max_waiting=4)
        assert await gate.acquire("A")
        t0 = time.monotonic()
        assert await gate.acquire("B") is False
        waited = time.monotonic() - t0
        assert 0.19 <= waited < 0.6, waited
        assert gate.waiting() == [] and gate.running == {"A": 1} and gate.refused == 1

        class Agent:
            def __init__(self, move: str) -> None:
                self.move, self.asked = move, 0

            def act(self, view: object) -> str:
                self.asked += 1
                return self.move

        search, heuristic = Agent("searched"), Agent("heuristic")
        t0 = time.monotonic()
        move = await decide_searching(gate, "B", search, object(), lambda: heuristic)  # type: ignore[arg-type]
        assert move == "heuristic" and search.asked == 0 and heuristic.asked == 1
        assert time.monotonic() - t0 >= 0.19
        assert gate.running == {"A": 1}  # the refused decision holds nothing

    asyncio.run(main())


def test_release_wakes_the_next_waiting_decision_at_once():
    """One slot: B waits behind A (max_wait_s 30); A's release admits B within the same few loop
    passes (no polling), and B's release leaves the gate empty."""
    async def main() -> None:
        gate = SearchGate(slots=1, max_wait_s=30, max_waiting=4)
        assert await gate.acquire("A")
        b = asyncio.get_running_loop().create_task(gate.acquire("B"))
        await _settle()
        assert not b.done() and gate.waiting() == ["B"]
        t0 = time.monotonic()
        gate.release("A")
        await _settle()
        assert b.done() and b.result() is True and time.monotonic() - t0 < 0.05
        assert gate.running == {"B": 1} and gate.waiting() == []
        gate.release("B")
        assert gate.running == {} and gate.waiting() == []
        with pytest.raises(KeyError):
            gate.release("B")

    asyncio.run(main())


def test_one_table_cannot_hold_more_than_its_share():
    """Two slots. Alone, table A may hold both (its share is ceil(2/1) = 2). With B's decision
    waiting, the share is ceil(2/2) = 1: when one of A's decisions ends, B gets the slot even
    though A's third decision came first, and A's waits until A holds less than its share."""
    async def main() -> None:
        loop = asyncio.get_running_loop()
        gate = SearchGate(slots=2, max_wait_s=30, max_waiting=10)
        assert await gate.acquire("A") and await gate.acquire("A")
        assert gate.running == {"A": 2}
        a3 = loop.create_task(gate.acquire("A"))
        await _settle()
        b = loop.create_task(gate.acquire("B"))
        await _settle()
        assert gate.waiting() == ["B", "A"]  # B never served: first in line
        gate.release("A")
        await _settle()
        assert b.result() is True and not a3.done() and gate.running == {"A": 1, "B": 1}
        gate.release("B")  # A holds 1 and is alone again with a waiting decision: share 2
        await _settle()
        assert a3.result() is True and gate.running == {"A": 2}

        # a free slot is not given to a table at its share while another table runs: four
        # slots, A holds 2 = ceil(4/2) beside B's 1; A's third decision waits for nothing
        gate2 = SearchGate(slots=4, max_wait_s=0.1, max_waiting=10)
        for t in ("A", "A", "B"):
            assert await gate2.acquire(t)
        t0 = time.monotonic()
        assert await gate2.acquire("A") is False and time.monotonic() - t0 >= 0.09
        assert gate2.running == {"A": 2, "B": 1}
        assert await gate2.acquire("B")  # B holds 1 < 2: the free slot is B's
        assert gate2.running == {"A": 2, "B": 2}

    asyncio.run(main())


def test_a_full_queue_refuses_a_newcomer_served_more_recently():
    """``max_waiting`` 2, one slot held by A; B then C wait (never served). A newcomer of A
    (served most recently) is refused at once, without waiting; the queue keeps B and C."""
    async def main() -> None:
        loop = asyncio.get_running_loop()
        gate = SearchGate(slots=1, max_wait_s=30, max_waiting=2)
        assert await gate.acquire("A")
        b, c = loop.create_task(gate.acquire("B")), loop.create_task(gate.acquire("C"))
        await _settle()
        t0 = time.monotonic()
        assert await gate.acquire("A") is False and time.monotonic() - t0 < 0.05
        assert gate.waiting() == ["B", "C"] and not b.done() and not c.done()
        gate.release("A")
        await _settle()
        assert b.result() is True and not c.done()
        gate.release("B")
        await _settle()
        assert c.result() is True

    asyncio.run(main())


def test_a_cancelled_waiting_decision_leaves_the_queue():
    """A table closed while its bot waited (the task is cancelled): its place is freed and it
    holds no slot afterwards."""
    async def main() -> None:
        gate = SearchGate(slots=1, max_wait_s=30, max_waiting=1)
        assert await gate.acquire("A")
        b = asyncio.get_running_loop().create_task(gate.acquire("B"))
        await _settle()
        b.cancel()
        await _settle()
        assert b.cancelled() and gate.waiting() == []
        gate.release("A")
        assert gate.running == {}

    asyncio.run(main())


def test_the_server_gate_follows_the_settings():
    """make_search_gate: the pool's 2 slots, 1 s and 4 waiting by default; 0 s: no gate.
    Bad values are refused."""
    from guandan.server.settings import Settings

    gate = make_search_gate(Settings(db_url="sqlite://"))
    assert gate is not None and (gate.slots, gate.max_wait_s, gate.max_waiting) == (2, 1.0, 4)
    assert make_search_gate(Settings(db_url="sqlite://", search_max_wait_s=0)) is None
    with pytest.raises(ValueError):
        SearchGate(slots=0)
    with pytest.raises(ValueError):
        SearchGate(slots=1, max_wait_s=0)


def test_a_table_whose_search_is_refused_plays_the_heuristic_move(monkeypatch):
    """The table's wiring: a ``hard`` bot at seat 0 while another table holds both slots of the
    server's gate (max_wait_s 0.1). The bot still moves within a fraction of a second, its move
    is the heuristic's for that view, and no search was started. Before the gate the decision
    went to the pool whatever the other tables did."""
    pytest.importorskip("fastapi")
    from test_server_bots import bot_table

    from guandan.agents.heuristic import HeuristicAgent
    from guandan.core.views import seat_view
    from guandan.server.table import bots

    searched: list[object] = []

    async def never(agent: object, view: object) -> object:
        searched.append(view)
        raise AssertionError("the search must not run")

    monkeypatch.setattr(bots, "think_off_loop", never)

    async def main() -> None:
        table = bot_table({0: "hard"}, room="gateT001")
        gate = SearchGate(slots=2, max_wait_s=0.1, max_waiting=4)
        table.manager.search_gate = gate  # type: ignore[misc]
        assert await gate.acquire("other") and await gate.acquire("other")
        game = table.game
        assert game is not None
        expected = HeuristicAgent().act(seat_view(game, 0))
        t0 = time.monotonic()
        table._schedule()
        for _ in range(300):
            if table.seq:
                break
            await asyncio.sleep(0.01)
        assert list(game.deal.history) == [(0, expected)]
        assert 0.09 <= time.monotonic() - t0 < 2.0 and searched == [] and gate.refused == 1
        assert gate.running == {"other": 2}
        table.shutdown()

    asyncio.run(main())
