"""Protocol bots as opponents of the Gymnasium wrapper (issue 9 item 4), through the compat host.

``SingleSeatEnv(seat=0, opponents=ProtocolBot(".venv-opp/bin/python ../shared/opponents/seat.py
njupt {url} --workdir {workdir}"))`` plays the learning seat against AI-competition protocol
clients (PROTOCOL.md), e.g. the 2020 competition bots:

* a :class:`~guandan.compat.host.CompatHost` (the same host as ``guandan compat serve``) serves
  ``ws://127.0.0.1:PORT/game/NAME`` from a background thread with its own event loop;
* seats are taken in connection order (PROTOCOL.md §1): the learning seat joins as an in-process
  link that never receives frames; each :class:`ProtocolBot` seat is one client process started
  from its command line (``{url}``, ``{name}``, ``{seat}``, ``{workdir}`` filled in, as
  ``guandan compat arena`` does); other opponent specs (``random``, ``heuristic``, an agent, a
  callable) play as in-process protocol clients (:func:`guandan.compat.client.join`);
* the host runs the game (the engine checks every action) and, when the learning seat must act,
  waits for :meth:`HostedSeat.act` with no timeout; after every finished deal it pauses until
  :meth:`HostedSeat.resume`, so the env reads a game that does not move under it.

Clients that fail to answer within ``timeout`` seconds are played by the host's fallback bot
(the heuristic) and counted in :attr:`HostedSeat.summary` (``fallback_decisions``), as in every
compat run. Games are seeded from ``seed`` (each game from the seed and its number, as the host
does), so a run is reproducible up to the clients' own randomness.
"""

from __future__ import annotations

import asyncio
import os
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from guandan.compat.host import CompatHost, serve
from guandan.core.match import Game
from guandan.core.rules import RuleSet


@dataclass(frozen=True)
class ProtocolBot:
    """An opponent seat played by an AI-competition protocol client process.

    Attributes:
        cmd: the client's command line with ``{url}`` (the address it connects to) and
            optionally ``{name}``, ``{seat}``, ``{workdir}`` (a private working directory per
            seat, created); split like a shell, run in the current directory.
        connect_timeout: seconds the client has to connect after it is started.
    """

    cmd: str
    connect_timeout: float = 60.0

    def __post_init__(self) -> None:
        if "{url}" not in self.cmd:
            raise ValueError("a ProtocolBot command must contain {url} (the address its client connects to)")


class HostedSeatError(RuntimeError):
    """The hosted game could not start or stopped (a client did not connect, the host failed)."""


class _EnvHost(CompatHost):
    """A compat host whose learning seat is decided by :class:`HostedSeat` (no timeout) and that
    pauses after every finished deal until the env resumes it."""

    def __init__(self, learner: int, events: queue.Queue[tuple[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.learner = learner
        self.events = events
        self.game: Game | None = None
        self._settled = 0
        self._waiter: asyncio.Future[Any] | None = None

    def new_game(self, g: int) -> Game:
        game = super().new_game(g)
        self.game = game
        self._settled = 0
        return game

    async def _announce(self, game: Game, seen: int) -> int:
        seen = await super()._announce(game, seen)
        if len(game.settlements) > self._settled:
            self._settled = len(game.settlements)
            await self._wait_env("deal_end")
        return seen

    async def _decide(self, game: Game, seat: int) -> Any:
        if seat != self.learner:
            return await super()._decide(game, seat)
        deal = game.deal  # the bookkeeping CompatHost._decide keeps for its notifications
        self._acted_deal = deal
        self._last_top = (deal.top_seat, deal.top)
        self._ended_deal = deal
        self._ended_deal_number = game.deal_number
        self.summary.decisions[seat] += 1
        return await self._wait_env("act")

    async def _wait_env(self, kind: str) -> Any:
        self._waiter = asyncio.get_running_loop().create_future()
        self.events.put((kind, None))
        try:
            return await self._waiter
        finally:
            self._waiter = None


class HostedSeat:
    """One learning seat in a game hosted by the compat host (see the module docstring).

    Args:
        seat: the learning seat 0..3.
        opponents: per other seat (in seat order, skipping ``seat``): a :class:`ProtocolBot`, an
            agent name, an agent with ``act(view)`` or a callable ``f(view) -> action``.
        rules: the rule set; ``seed``: seed of the host's games (``None``: random cards).
        timeout: seconds a protocol client has per decision before the fallback bot plays it.
        workdir: directory for the clients' working directories and logs (a temporary one by
            default, removed by :meth:`close`).
    Raises:
        HostedSeatError: the host did not start or a client did not connect (with its log's tail).
    """

    def __init__(self, seat: int, opponents: Sequence[Any], rules: RuleSet, seed: int | None = None,
                 timeout: float = 30.0, workdir: str | None = None, preset: str | None = "aicomp") -> None:
        self.seat = seat
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.host = _EnvHost(seat, self.events, rules=rules, games=1_000_000, timeout=timeout, seed=seed,
                             preset=preset)
        self._tmp = None if workdir is not None else tempfile.TemporaryDirectory(prefix="guandan-rl-protocol-")
        self.workdir = workdir if workdir is not None else self._tmp.name  # type: ignore[union-attr]
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[str] = []
        self._closed = False
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="guandan-rl-host", daemon=True)
        self._thread.start()
        self._server: Any = None  # concurrent.futures.Future of the host's task
        self._task: asyncio.Task[Any] | None = None
        self._clients: list[Any] = []
        try:
            self._start(list(opponents))
        except BaseException:
            self.close()
            raise

    # -- start-up -------------------------------------------------------------------------------
    def _call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the host's loop and return its result."""
        async def wrap() -> Any:
            return fn()
        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result(30)

    def _start(self, opponents: list[Any]) -> None:
        from guandan.compat.arena import fill_command
        from guandan.compat.client import join

        port: dict[str, int] = {}
        ready = threading.Event()

        def on_ready(p: int) -> None:
            port["port"] = p
            ready.set()

        async def run_host() -> Any:
            self._task = asyncio.current_task()
            return await serve(self.host, "127.0.0.1", 0, on_ready)

        self._server = asyncio.run_coroutine_threadsafe(run_host(), self.loop)
        deadline = time.monotonic() + 30
        while not ready.wait(0.05):
            if self._server.done():
                self._server.result()  # raises the OSError
            if time.monotonic() > deadline:
                raise HostedSeatError("the compat host did not start within 30 s")
        base = f"ws://127.0.0.1:{port['port']}/game/"
        specs = iter(opponents)
        for s in range(4):
            if s == self.seat:
                async def _noop(_text: str) -> None:
                    return None

                link = self._call(lambda: self.host.join(f"learner-s{s}", _noop))
                link.send_timeout = float("inf")
                continue
            spec = next(specs)
            name = f"opponent-s{s}"
            connect_timeout = 30.0
            if isinstance(spec, ProtocolBot):
                work = os.path.join(self.workdir, f"seat{s}")
                os.makedirs(work, exist_ok=True)
                cmd = fill_command(spec.cmd, base + name, name, s, work)
                log_path = os.path.join(self.workdir, f"seat{s}.log")
                self.logs.append(log_path)
                with open(log_path, "wb") as log_file:
                    try:
                        self.procs.append(subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT,
                                                           stdin=subprocess.DEVNULL, start_new_session=True))
                    except OSError as e:
                        raise HostedSeatError(f"cannot start the protocol bot ({cmd[0]}): {e.strerror or e}") from None
                connect_timeout = spec.connect_timeout
            else:
                agent = _as_agent(spec, s)
                url = base + name
                self._clients.append(asyncio.run_coroutine_threadsafe(join(url, agent, threaded=True), self.loop))
            deadline = time.monotonic() + connect_timeout
            while len(self.host.links) <= s:  # connection order decides the seats
                if isinstance(spec, ProtocolBot) and self.procs[-1].poll() is not None:
                    tail = open(self.logs[-1], encoding="utf-8", errors="replace").read()[-600:]
                    raise HostedSeatError(
                        f"the protocol bot of seat {s} exited with status {self.procs[-1].returncode} "
                        f"before connecting:\n{tail}")
                if self._server.done():
                    self._server.result()
                    raise HostedSeatError("the compat host stopped")
                if time.monotonic() > deadline:
                    raise HostedSeatError(f"seat {s} did not connect within {connect_timeout:g} s")
                time.sleep(0.02)

    # -- the env's side -------------------------------------------------------------------------
    @property
    def game(self) -> Game:
        """The game being played (read it only between :meth:`next_event` and the next
        :meth:`act` / :meth:`resume`: the host waits then)."""
        assert self.host.game is not None
        return self.host.game

    @property
    def summary(self) -> Any:
        """The host's :class:`~guandan.compat.host.RunSummary` (fallback decisions, bad replies)."""
        return self.host.summary

    def next_event(self, timeout: float = 600.0) -> str:
        """Wait until the host needs the env: ``"act"`` (the learning seat must act) or
        ``"deal_end"`` (a deal just ended; the host waits for :meth:`resume`).

        Raises:
            HostedSeatError: nothing within ``timeout`` seconds, or the host stopped.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                kind, _ = self.events.get(timeout=0.1)
                return kind
            except queue.Empty:
                pass
            if self._server is not None and self._server.done():
                exc = self._server.exception()
                raise HostedSeatError(f"the compat host stopped: {exc!r}" if exc else "the compat host stopped")
            if time.monotonic() > deadline:
                raise HostedSeatError(f"the hosted game did not reach the learning seat within {timeout:g} s")

    def _release(self, value: Any) -> None:
        waiter = self.host._waiter
        if waiter is None:
            raise HostedSeatError("the host is not waiting for the env")
        self.loop.call_soon_threadsafe(waiter.set_result, value)

    def act(self, action: Any) -> None:
        """Answer the learning seat's decision with an engine action (checked by the host's
        ``Game.apply``: an illegal one stops the host, so check it first)."""
        self._release(action)

    def resume(self) -> None:
        """Let the host go on after a ``deal_end`` event."""
        self._release(None)

    def close(self) -> None:
        """Stop the client processes, the host and its thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        from guandan.compat.arena import stop_process

        async def stop_host() -> None:
            self.host.result_sent = True  # disconnections from here on are expected, not lost seats
            tasks = [t for t in (self._task,) if t is not None and not t.done()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self.loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(stop_host(), self.loop).result(30)
            except BaseException:  # noqa: BLE001 - the host failed while stopping: nothing left to do
                pass
        for c in self._clients:
            c.cancel()
        for p in self.procs:
            stop_process(p, 2.0)
        if self.loop.is_running():
            async def drain() -> None:
                rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for t in rest:
                    t.cancel()
                await asyncio.gather(*rest, return_exceptions=True)

            try:
                asyncio.run_coroutine_threadsafe(drain(), self.loop).result(15)
            except BaseException:  # noqa: BLE001
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self.loop.close()
        if self._tmp is not None:
            self._tmp.cleanup()


class _CallableAgent:
    """An agent wrapper for a callable ``f(view) -> action``."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn

    def act(self, view: Any) -> Any:
        return self.fn(view)


def _as_agent(spec: Any, seat: int) -> Any:
    from guandan.agents import make_agent

    if isinstance(spec, str):
        return make_agent(spec, seat)
    if hasattr(spec, "act"):
        return spec
    if callable(spec):
        return _CallableAgent(spec)
    raise ValueError(f"an opponent is a ProtocolBot, a name (random, heuristic), an agent or a callable, not {spec!r}")
