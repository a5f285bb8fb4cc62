"""Bot levels offered by the server and the process pool that runs the searching bots' decisions.

A seat with a ``bot`` acts through :func:`guandan.agents.base.make_agent`; ``hard`` and ``expert``
search (about a second of CPU a decision) in :data:`BOT_PROCESSES` worker processes
(:func:`think_off_loop`), so they never stall the other tables of the process.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
from collections.abc import Callable
from typing import Any

from guandan.agents.base import Agent
from guandan.agents.registry import AGENT_NAMES
from guandan.core.plays import PlayT

from .search_gate import DEFAULT_MAX_WAIT_S, SearchGate

log = logging.getLogger("guandan.server.tables")

#: Bot difficulties and the agents (``guandan.agents.AGENT_NAMES``) that can play each, best first.
#: ``hard`` and ``expert`` search (about a second of CPU a decision); their decisions are made off
#: the event loop (:data:`SEARCH_DIFFICULTIES`, :func:`think_off_loop`), so they never stall the
#: other tables of the process.
DIFFICULTY_CANDIDATES: dict[str, tuple[str, ...]] = {
    "easy": ("easy",),
    "normal": ("normal", "heuristic"),
    "hard": ("hard", "search"),
    "expert": ("expert",),
}
#: Agents whose decisions are searched (seconds of CPU): decided in the bot process pool.
SEARCH_DIFFICULTIES: frozenset[str] = frozenset({"hard", "search", "expert"})
#: The agent spec each searching agent plays with in the server: one process per decision (the
#: pool runs :data:`BOT_PROCESSES` decisions at a time) and a time budget that keeps a decision
#: within about a second (``guandan.agents.levels`` options).
SERVER_BOT_SPECS: dict[str, str] = {
    "hard": "hard:budget=0.8,workers=1",
    "search": "hard:budget=0.8,workers=1",
    "expert": "expert:budget=0.8,workers=1",
}
#: Processes deciding searching bots' moves (shared by every table of the server process).
BOT_PROCESSES = 2


def _installed(agent: str) -> bool:
    """Whether ``agent`` can play here: a known agent name, and NumPy (the ``[bots]`` extra) for
    the learned ``expert``."""
    if agent not in AGENT_NAMES:
        return False
    if agent == "expert":
        import importlib.util

        return importlib.util.find_spec("numpy") is not None
    return True


#: The one table from a difficulty offered to players to the agent that plays it: only the
#: difficulties whose agent exists in this installation (``expert`` needs NumPy).
DIFFICULTY_AGENTS: dict[str, str] = {
    d: next(a for a in cands if _installed(a))
    for d, cands in DIFFICULTY_CANDIDATES.items()
    if any(_installed(a) for a in cands)
}
#: Difficulties offered to players (``easy``, ``normal``, ``hard``, ``expert`` where available).
DIFFICULTIES: tuple[str, ...] = tuple(DIFFICULTY_AGENTS)
#: Bot names accepted by the bots API: the difficulties, plus the old agent names ``heuristic``
#: (= ``normal``) and ``random`` (the uniform random bot, for tests).
BOT_NAMES: tuple[str, ...] = DIFFICULTIES + tuple(n for n in ("heuristic", "random") if n not in DIFFICULTIES)


def bot_agent(bot: str) -> str:
    """The agent name stored for a seat given a bot name of the API (a difficulty or an agent).

    Raises:
        ValueError: neither a difficulty offered here nor a known agent.
    """
    if bot in DIFFICULTY_AGENTS:
        return DIFFICULTY_AGENTS[bot]
    if bot in AGENT_NAMES:
        return bot
    raise ValueError(f"unknown bot {bot!r}; valid: {', '.join(BOT_NAMES)}")


def bot_difficulty(agent: str | None) -> str | None:
    """The difficulty shown for a stored bot (agent) name: ``normal`` for ``heuristic``, the name
    itself for an agent that is a difficulty, ``random`` for the test bot; ``None`` for no bot."""
    if agent is None:
        return None
    for d, cands in DIFFICULTY_CANDIDATES.items():
        if agent in cands:
            return d
    return agent
_BOT_POOL: Any = None


def _bot_pool() -> Any:
    """The process pool of the searching bots (created on first use; ``forkserver``/``spawn``:
    the server process runs threads, so it is never forked)."""
    global _BOT_POOL
    if _BOT_POOL is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        _BOT_POOL = ProcessPoolExecutor(BOT_PROCESSES, mp_context=ctx)
    return _BOT_POOL


def shutdown_bot_pool(wait: bool = False) -> None:
    """Stop the searching bots' processes (a later decision starts a new pool).

    Args:
        wait: block until the workers have exited (at most the decision in progress, under a
            second). The server's shutdown waits: uvicorn ends a SIGTERM'd process by raising the
            signal again, so no ``atexit`` hook runs, and a worker that was never told to stop was
            left behind with its ``forkserver`` and resource tracker (three orphaned processes
            after every ``guandan serve`` that had run a ``hard`` bot).
    """
    global _BOT_POOL
    pool, _BOT_POOL = _BOT_POOL, None
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=True)


atexit.register(shutdown_bot_pool)


def _decide(agent: Agent, view: Any) -> PlayT:
    """One decision in a bot process: ``agent.act(view)`` (module-level so that it pickles)."""
    return agent.act(view)


def make_search_gate(settings: Any) -> SearchGate | None:
    """The server's :class:`~guandan.server.table.search_gate.SearchGate` over the
    :data:`BOT_PROCESSES` pool: ``settings.search_max_wait_s`` (seconds a decision may wait,
    default 1; 0: no gate, the pool's first come, first served) and ``settings.search_max_waiting``
    (decisions waiting at once, default ``2 * BOT_PROCESSES``).

    Raises:
        ValueError: a negative ``search_max_waiting``.
    """
    wait = float(getattr(settings, "search_max_wait_s", DEFAULT_MAX_WAIT_S))
    if not wait > 0:
        return None
    return SearchGate(BOT_PROCESSES, wait, int(getattr(settings, "search_max_waiting", 2 * BOT_PROCESSES)))


async def decide_searching(gate: SearchGate | None, table_id: str, agent: Agent, view: Any,
                           fallback: Callable[[], Agent]) -> PlayT:
    """A searching bot's decision for table ``table_id``: ``agent.act(view)`` in the bot process
    pool once ``gate`` admits it (:class:`~guandan.server.table.search_gate.SearchGate`: the
    tables share the pool fairly), else -- refused by the gate, or the search failed -- the
    heuristic's move, ``fallback().act(view)``, on the event loop (milliseconds). ``gate`` None:
    straight to the pool (first come, first served).

    Raises:
        asyncio.CancelledError: the caller was cancelled (the slot is released).
    """
    if gate is not None and not await gate.acquire(table_id):
        return fallback().act(view)
    try:
        return await think_off_loop(agent, view)
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - a failed search: the heuristic moves
        log.exception("room %s: a bot's search failed; the heuristic moves", table_id)
        return fallback().act(view)
    finally:
        if gate is not None:
            gate.release(table_id)


async def think_off_loop(agent: Agent, view: Any) -> PlayT:
    """``agent.act(view)`` in the bot process pool, awaited without blocking the event loop.

    The agent and the view are pickled to a worker process (the agent's counters there are not
    copied back). Raises whatever the decision raised, or ``BrokenProcessPool`` when a worker died
    (the pool is then dropped, and the next decision starts a fresh one).
    """
    from concurrent.futures.process import BrokenProcessPool

    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(_bot_pool(), _decide, agent, view)
    except BrokenProcessPool:
        shutdown_bot_pool()
        raise
