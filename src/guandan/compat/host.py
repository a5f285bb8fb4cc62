"""Host AI-competition protocol clients (``guandan compat serve``; PROTOCOL.md §1-§9).

Clients connect to ``ws://HOST:PORT/game/{name}``; seats go by connection order (1st and 3rd
connections are seats 0 and 2) and the run starts when the fourth client connects. Every
decision is an ``act`` message answered by ``{"actIndex": i}``; an out-of-range or malformed
reply is noted and asked again (the same ``act`` message is sent again with an extra ``notice``
field), and a client that does not answer within the timeout, or has disconnected, is played
for that decision by the fallback bot (the heuristic), so no client can stall the game.
Every game is checked by the engine (``Game.apply``) and can be saved as a pyguandan record.
"""

from __future__ import annotations

import asyncio
import json
import re
import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from guandan.agents import make_agent
from guandan.core.match import Game
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view

from . import messages as M

log = logging.getLogger("guandan.compat")


@dataclass
class RunSummary:
    """Outcome of a hosted run.

    Attributes:
        games: games completed; ``victories``/``draws``: per seat (a seat wins when its team
        passes the target); ``fallback_decisions``: per seat, decisions the fallback bot made;
        ``bad_replies``: per seat, malformed or out-of-range replies; ``records``: files written;
        ``seconds``: wall time of the run; ``deals``: deals played.
    """

    games: int = 0
    deals: int = 0
    victories: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    draws: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    fallback_decisions: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    bad_replies: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    records: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=lambda: ["", "", "", ""])
    seconds: float = 0.0


#: Put in a link's inbox when its connection closes.
DISCONNECTED = object()


class SeatLink:
    """One connected client: its outgoing ``send`` and an inbox of parsed replies."""

    def __init__(self, seat: int, name: str, send: Callable[[str], Any]) -> None:
        self.seat = seat
        self.name = name
        self._send = send
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.connected = True

    async def send(self, obj: dict[str, Any]) -> None:
        if not self.connected:
            return
        try:
            await self._send(json.dumps(obj, ensure_ascii=False))
        except Exception:  # the peer went away while we were sending
            self.connected = False


class CompatHost:
    """Runs ``games`` games for four protocol clients.

    Args:
        rules: rule set (default preset ``aicomp``).
        games: number of full games (2 → passing A) to play.
        timeout: seconds a client has for one decision before the fallback bot plays it.
        record_dir: directory for one pyguandan record per game, or ``None``.
        seed: seed for the games' shuffles (game ``g`` uses ``seed + g``); ``None``: random.
        max_deals: deals after which an unfinished game is scored a draw.
        preset: preset name stored in records.
    """

    def __init__(
        self,
        rules: RuleSet | None = None,
        games: int = 1,
        timeout: float = 30.0,
        record_dir: str | None = None,
        seed: int | None = None,
        max_deals: int = 500,
        preset: str | None = "aicomp",
    ) -> None:
        if games < 1:
            raise ValueError("games must be at least 1")
        if timeout <= 0:
            raise ValueError("timeout must be positive seconds")
        if record_dir is not None:
            os.makedirs(record_dir, exist_ok=True)  # fail now (OSError), not after the first game
            if not os.access(record_dir, os.W_OK):
                raise OSError(f"cannot write records to {record_dir}")
        self.rules = rules or RuleSet.preset("aicomp")
        self.games = games
        self.timeout = timeout
        self.record_dir = record_dir
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        self.max_deals = max_deals
        self.preset = preset
        self.links: list[SeatLink] = []
        self.started = asyncio.Event()
        self.done = asyncio.Event()
        self.summary = RunSummary()
        self._fallback = [make_agent("heuristic", seed=self.seed + s) for s in range(4)]

    # -- connections ------------------------------------------------------------------------
    def join(self, name: str, send: Callable[[str], Any]) -> SeatLink | None:
        """Register a new connection; returns its link, or ``None`` when the table is full."""
        if len(self.links) >= 4:
            return None
        link = SeatLink(len(self.links), name, send)
        self.links.append(link)
        self.summary.names[link.seat] = name
        log.info("seat %d: %s connected", link.seat, name)
        if len(self.links) == 4:
            self.started.set()
        return link

    def leave(self, link: SeatLink) -> None:
        """A client left. Before the run starts its seat is freed and later seats move up, so
        that seats keep following the order of the connections still open."""
        if self.started.is_set() or link not in self.links:
            return
        self.links.remove(link)
        for i, other in enumerate(self.links):
            other.seat = i
        self.summary.names = [lk.name for lk in self.links] + [""] * (4 - len(self.links))

    @staticmethod
    def parse_reply(text: Any) -> Any:
        """Parse a client's frame; anything unreadable becomes a ``{"__bad__": ...}`` marker."""
        if not isinstance(text, str):
            return {"__bad__": "binary frame"}
        if len(text) > 65536:
            return {"__bad__": "frame too large"}
        try:
            return json.loads(text)
        except (ValueError, RecursionError, TypeError):  # bad JSON, huge ints, deep nesting
            return {"__bad__": text[:200]}

    # -- the run ----------------------------------------------------------------------------
    async def broadcast(self, obj: dict[str, Any]) -> None:
        await asyncio.gather(*(link.send(obj) for link in self.links))

    async def run(self) -> RunSummary:
        """Wait for four clients, then play every game; returns the summary."""
        await self.started.wait()
        t0 = time.perf_counter()
        try:
            for g in range(1, self.games + 1):
                await self._play_game(g)
                await self.broadcast({"type": "notify", "stage": "gameOver", "curTimes": g, "settingTimes": self.games})
            s = self.summary
            await self.broadcast({"type": "notify", "stage": "gameResult", "victoryNum": s.victories, "draws": s.draws})
        finally:
            self.summary.seconds = time.perf_counter() - t0
            self.done.set()
        return self.summary

    async def _play_game(self, g: int) -> None:
        game = Game(self.rules, seed=self.seed + g, max_games=1)
        seen = 0
        draw = False
        while True:
            seen = await self._announce(game, seen)
            if game.over:
                break
            if game.deal_number > self.max_deals:
                draw = True
                break
            seat = game.to_act()
            assert seat is not None
            action = await self._decide(game, seat)
            game.apply(action, seat)
        self.summary.games += 1
        self.summary.deals += game.deal_number if not game.over else game.deal_number
        if draw or game.winner is None:
            for s in range(4):
                self.summary.draws[s] += 1
        else:
            for s in range(4):
                if s % 2 == game.winner:
                    self.summary.victories[s] += 1
        if self.record_dir:
            from guandan.records import write_record

            os.makedirs(self.record_dir, exist_ok=True)
            path = os.path.join(self.record_dir, f"game-{g:04d}.jsonl")
            write_record(path, game, self.preset, [link.name or f"seat{link.seat}" for link in self.links])
            self.summary.records.append(path)

    async def _announce(self, game: Game, seen: int) -> int:
        """Send the notifications for every game event after index ``seen``."""
        events = game.events
        deal = game.deal
        while seen < len(events):
            ev = events[seen]
            seen += 1
            t = ev["type"]
            if t == "deal":
                for link in self.links:
                    await link.send(M.beginning(deal, link.seat))
            elif t == "anti_tribute":
                await self.broadcast(
                    {"type": "notify", "stage": "anti-tribute", "antiNums": len(ev["seats"]), "antiPos": ev["seats"]}
                )
            elif t == "tribute_paid":
                await self.broadcast({"type": "notify", "stage": "tribute", "result": _platform_result(ev["tributes"])})
            elif t == "returns_revealed":
                await self.broadcast({"type": "notify", "stage": "back", "result": _platform_result(ev["returns"])})
            elif t == "deal_end":
                assert self._ended_deal is not None
                await self.broadcast(M.episode_over(self._ended_deal))
            elif t == "action":
                act_ev = ev["action"]
                if act_ev[0] not in ("tribute", "return"):
                    d = self._acted_deal
                    assert d is not None
                    from guandan.core.match import action_from_json

                    act = action_from_json(act_ev)
                    top_seat, top = (d.top_seat, d.top) if d.top is not None else self._last_top
                    await self.broadcast(M.play_notify(d, ev["seat"], act, top_seat, top))
        return seen

    async def _decide(self, game: Game, seat: int) -> Any:
        """Ask ``seat``'s client (or the fallback bot) for an action; returns an engine action."""
        legal = game.legal_actions()
        deal = game.deal
        self._acted_deal = deal
        # remember the top play before the action (a trick-ending pass clears it)
        self._last_top = (deal.top_seat, deal.top)
        self._ended_deal = deal
        link = self.links[seat]
        if link.connected:
            actions = M.platform_actions(game)
            msg = M.act_message(game, seat, actions)
            while not link.inbox.empty():  # drop stale replies to earlier (timed-out) questions
                link.inbox.get_nowait()
            deadline = time.monotonic() + self.timeout
            await link.send(msg)
            while link.connected:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    reply = await asyncio.wait_for(link.inbox.get(), left)
                except asyncio.TimeoutError:
                    break
                if reply is DISCONNECTED:
                    break
                idx = _reply_index(reply, actions)
                if idx is not None:
                    return legal[idx]
                self.summary.bad_replies[seat] += 1
                notice = f"invalid reply {str(reply)[:80]}: send {{\"actIndex\": i}} with 0 <= i <= {len(actions) - 1}"
                log.warning("seat %d: %s", seat, notice)
                await link.send({**msg, "notice": notice})
            log.warning("seat %d: no valid answer in time; the fallback bot plays this decision", seat)
        self.summary.fallback_decisions[seat] += 1
        return self._fallback[seat].act(seat_view(game, seat))

    _acted_deal: Any = None
    _ended_deal: Any = None
    _last_top: Any = (None, None)


def _platform_result(rows: list[list[Any]]) -> list[list[Any]]:
    from guandan.core.cards import parse_card

    from .notation import card_to_platform

    return [[a, b, card_to_platform(parse_card(c))] for a, b, c in rows]


def _reply_index(reply: Any, actions: list[list[Any]]) -> int | None:
    """``{"actIndex": i}`` (current form) or the action itself (older clients, PROTOCOL.md §5)."""
    if isinstance(reply, dict) and "actIndex" in reply:
        i = reply["actIndex"]
        if isinstance(i, str) and re.fullmatch(r"\s*[0-9]{1,9}\s*", i):
            i = int(i)  # tolerated: some clients send the index as a string
        if isinstance(i, bool) or not isinstance(i, int):
            return None
        return i if 0 <= i < len(actions) else None
    if isinstance(reply, list):
        for i, a in enumerate(actions):
            if a == reply:
                return i
    return None


def build_app(host: CompatHost) -> Any:
    """The Starlette application with the websocket route ``/game/{name}``."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        name = ws.path_params.get("name", "")
        link = host.join(name, ws.send_text)
        if link is None:
            await ws.close(code=1013, reason="table full")
            return
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("text")
                if data is None:
                    data = message.get("bytes")
                await link.inbox.put(host.parse_reply(data))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            link.connected = False
            await link.inbox.put(DISCONNECTED)
            host.leave(link)
            log.info("seat %d: %s disconnected", link.seat, name)

    return Starlette(routes=[WebSocketRoute("/game/{name}", endpoint)])


async def serve(host: CompatHost, bind: str = "127.0.0.1", port: int = 23456, ready: Callable[[int], None] | None = None) -> RunSummary:
    """Serve ``host`` on ``bind:port`` until its run is over; returns the summary.

    Args:
        ready: called with the bound port once the server listens (``port=0`` picks a free one).
    Raises:
        OSError: the port cannot be bound.
    """
    import uvicorn

    import socket

    if not 0 <= port <= 65535:
        raise OSError(f"port {port} is not in 0..65535")
    try:  # check the address and port first, so that a busy port or a bad address is a clean OSError
        infos = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(infos[0][4])
    except (OSError, UnicodeError) as e:
        raise OSError(str(e)) from None
    # uvicorn binds its own socket (a socket handed in from outside was measured 10x slower on
    # loopback: small frames then wait for delayed acknowledgements)
    config = uvicorn.Config(
        build_app(host), host=bind, port=port, log_level="warning", lifespan="off", ws_ping_interval=None
    )
    server = uvicorn.Server(config)
    serve_task = asyncio.create_task(server.serve())
    while not server.started:
        if serve_task.done():
            try:
                serve_task.result()
            except SystemExit:
                pass
            raise OSError(f"cannot listen on {bind}:{port}")
        await asyncio.sleep(0.01)
    bound = port
    for srv in server.servers:
        for sock in srv.sockets:
            bound = sock.getsockname()[1]
    if ready is not None:
        ready(bound)
    summary = await host.run()
    await asyncio.sleep(0.05)  # let the last frames flush
    server.should_exit = True
    await serve_task
    return summary
