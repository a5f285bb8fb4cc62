"""Host AI-competition protocol clients (``guandan compat serve``; PROTOCOL.md §1-§9).

Clients connect to ``ws://HOST:PORT/game/{name}``; seats go by connection order (1st and 3rd
connections are seats 0 and 2) and the run starts when the fourth client connects. Every
decision is an ``act`` message answered by ``{"actIndex": i}``; an out-of-range or malformed
reply is noted and asked again (the same ``act`` message is sent again with an extra ``notice``
field), and a client that does not answer within the timeout, or has disconnected, is played
for that decision by the fallback bot (the heuristic), so no client can stall the game.
Every game is checked by the engine (``Game.apply``) and can be saved as a pyguandan record.

Hidden cards: unless a seed is given, every deal is shuffled, and the first leader drawn, by the
operating system's CSPRNG (:class:`secrets.SystemRandom`), so no client can compute other seats'
cards from its own (issue 11). With a seed the run is reproducible, and anyone who knows the seed
knows the cards. Unseeded records mark every deal's hands as explicit, so they replay without a seed.

Robustness (issue 11, issue 8): the first frame goes out only after all four clients have
connected plus :attr:`CompatHost.start_delay` seconds (ws4py clients parse the bytes that arrive
with the handshake on two threads and die when a frame follows the handshake at once); every send
has a timeout (a client that stops reading is treated as disconnected and the fallback bot plays
its seat); websocket pings are on; sockets are closed with code 1000 after ``gameResult``. Every
fallback decision is logged with its seat and reason, and the summary flags a seat played mostly
by the fallback bot.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import logging
import os
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from guandan.agents import make_agent
from guandan.core.match import Game, shuffle_deal, turned_card_leader
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view

from . import messages as M

log = logging.getLogger("guandan.compat")

#: Largest client message read (bytes; uvicorn ``ws_max_size``). A protocol reply is
#: ``{"actIndex": i}`` (docs/protocol.md section 5), or in the older form one action copied from
#: ``actionList`` (at most 27 cards): well under 1 KiB. A larger message is refused while it is
#: read and the socket closed with 1009 (message too big); uvicorn's default was 16 MiB.
MAX_FRAME_BYTES = 64 * 1024


@dataclass
class RunSummary:
    """Outcome of a hosted run.

    Attributes:
        games: games completed; ``victories``/``draws``: per seat (a seat wins when its team
        passes the target); ``fallback_decisions``: per seat, decisions the fallback bot made;
        ``bad_replies``: per seat, malformed or out-of-range replies; ``records``: files written;
        ``seconds``: wall time of the run; ``deals``: deals played. ``decisions``: per seat,
        decisions asked of that seat (by its client or the fallback bot);
        ``fallback_reasons``: per seat, ``{reason: count}`` of the fallback decisions (reasons
        ``timeout``, ``disconnected``, ``send timed out``); ``deal_results``: one entry per
        finished deal, ``{"game", "deal", "level", "winner_team", "upgrade", "result",
        "finish_order"}`` (the engine's settlement, R35); ``game_winners``: per game, the winning
        team (0: seats 0/2, 1: seats 1/3) or ``None`` for a draw; ``deal_hands``: ``(game, deal)
        -> the four hands dealt`` (text notation), to check that duplicate runs got the same cards.
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
    decisions: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    fallback_reasons: list[dict[str, int]] = field(default_factory=lambda: [{}, {}, {}, {}])
    deal_results: list[dict[str, Any]] = field(default_factory=list)
    game_winners: list[int | None] = field(default_factory=list)
    deal_hands: dict[tuple[int, int], list[list[str]]] = field(default_factory=dict)

    def fallback_share(self, seat: int) -> float:
        """Share of ``seat``'s decisions made by the fallback bot, in ``[0, 1]`` (0 when none)."""
        n = self.decisions[seat]
        return self.fallback_decisions[seat] / n if n else 0.0

    def mostly_fallback(self) -> list[int]:
        """Seats whose decisions were made mostly (more than half) by the fallback bot: their
        results belong to the fallback bot, not to the client that connected."""
        return [s for s in range(4) if self.decisions[s] and self.fallback_share(s) > 0.5]


#: Put in a link's inbox when its connection closes.
DISCONNECTED = object()


class SeatLink:
    """One connected client: its outgoing ``send`` and an inbox of parsed replies.

    Args:
        seat: 0-3; name: the ``{name}`` of the client's path.
        send: coroutine function sending one text frame.
        close: optional coroutine function ``close(code, reason)`` closing the socket.
        send_timeout: seconds one send may take; a send that takes longer (a client that stops
            reading fills the socket buffers) marks the link disconnected, so the fallback bot
            plays the seat and the other seats go on.
        on_drop: called once when the link is dropped after a send timeout (the server ends the
            connection).
    """

    def __init__(
        self,
        seat: int,
        name: str,
        send: Callable[[str], Any],
        close: Callable[[int, str], Any] | None = None,
        send_timeout: float = 10.0,
        on_drop: Callable[[], None] | None = None,
    ) -> None:
        self.seat = seat
        self.name = name
        self._send = send
        self._close = close
        self.send_timeout = send_timeout
        self.on_drop = on_drop
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.connected = True
        #: why the link stopped (``None`` while connected): ``disconnected`` or ``send timed out``
        self.lost_reason: str | None = None

    async def send(self, obj: dict[str, Any]) -> None:
        """Send ``obj`` as JSON; never raises and never waits longer than ``send_timeout``."""
        if not self.connected:
            return
        try:
            await asyncio.wait_for(self._send(json.dumps(obj, ensure_ascii=False)), self.send_timeout)
        except asyncio.TimeoutError:
            self.drop("send timed out")
        except Exception:  # the peer went away while we were sending
            self.mark_lost("disconnected")

    def mark_lost(self, reason: str) -> None:
        """Record that the client is gone (first reason wins)."""
        if self.connected:
            self.connected = False
            self.lost_reason = reason
            log.warning("seat %d: %s: %s; the fallback bot plays this seat from now on", self.seat, self.name, reason)

    def drop(self, reason: str) -> None:
        """Give up on the client (it stopped reading): mark it lost and end its connection."""
        was = self.connected
        self.mark_lost(reason)
        if was and self.on_drop is not None:
            self.on_drop()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the socket with ``code`` (1000: normal closure); never raises."""
        if not self.connected or self._close is None:
            return
        try:
            await asyncio.wait_for(self._close(code, reason), self.send_timeout)
        except asyncio.TimeoutError:
            self.drop("send timed out")
        except Exception:
            pass
        self.connected = False


class CompatHost:
    """Runs ``games`` games for four protocol clients.

    Args:
        rules: rule set (default preset ``aicomp``).
        games: number of full games (2 → passing A) to play.
        timeout: seconds a client has for one decision before the fallback bot plays it.
        record_dir: directory for one pyguandan record per game, or ``None``.
        seed: ``None`` (default): every deal is shuffled, and random ties and first leaders are
            drawn, by :class:`secrets.SystemRandom` (the cards cannot be computed by anyone).
            An int: reproducible runs; game ``g`` is seeded with a SHA-256 hash of the seed and
            ``g`` (so games differ and one game's generator state does not give the next), but
            anyone who knows the seed knows every card.
        max_deals: deals after which an unfinished game is scored a draw.
        preset: preset name stored in records.
        send_timeout: seconds one send to a client may take before that client is treated as
            disconnected (it stopped reading).
        start_delay: seconds between the fourth client's connection and the first frame (the
            ws4py handshake race, PROTOCOL.md §9).
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
        send_timeout: float = 10.0,
        start_delay: float = 0.3,
    ) -> None:
        if games < 1:
            raise ValueError("games must be at least 1")
        if timeout <= 0:
            raise ValueError("timeout must be positive seconds")
        if send_timeout <= 0:
            raise ValueError("send_timeout must be positive seconds")
        if start_delay < 0:
            raise ValueError("start_delay must be >= 0 seconds")
        if record_dir is not None:
            os.makedirs(record_dir, exist_ok=True)  # fail now (OSError), not after the first game
            if not os.access(record_dir, os.W_OK):
                raise OSError(f"cannot write records to {record_dir}")
        self.rules = rules or RuleSet.preset("aicomp")
        self.games = games
        self.timeout = timeout
        self.record_dir = record_dir
        self.seed = seed
        #: the source of every random draw of unseeded runs (shuffles, first leaders, ties)
        self.system_rng: random.Random | None = secrets.SystemRandom() if seed is None else None
        self.max_deals = max_deals
        self.preset = preset
        self.send_timeout = send_timeout
        self.start_delay = start_delay
        self.links: list[SeatLink] = []
        self.started = asyncio.Event()
        self.done = asyncio.Event()
        #: ``gameResult`` is being sent (or was): clients may now leave
        self.result_sent = False
        self.summary = RunSummary()
        bot_seed = seed if seed is not None else secrets.randbits(63)  # the fallback's play hides nothing
        self._fallback = [make_agent("heuristic", seed=bot_seed + s) for s in range(4)]

    # -- connections ------------------------------------------------------------------------
    def join(
        self,
        name: str,
        send: Callable[[str], Any],
        close: Callable[[int, str], Any] | None = None,
        on_drop: Callable[[], None] | None = None,
    ) -> SeatLink | None:
        """Register a new connection; returns its link, or ``None`` when the table is full.

        ``close(code, reason)`` closes the socket; ``on_drop()`` ends the connection of a client
        that stopped reading (see :class:`SeatLink`).
        """
        if len(self.links) >= 4:
            return None
        link = SeatLink(len(self.links), name, send, close, self.send_timeout, on_drop)
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
        if len(text) > MAX_FRAME_BYTES:
            return {"__bad__": "frame too large"}
        try:
            return json.loads(text)
        except (ValueError, RecursionError, TypeError):  # bad JSON, huge ints, deep nesting
            return {"__bad__": text[:200]}

    # -- the run ----------------------------------------------------------------------------
    async def broadcast(self, obj: dict[str, Any]) -> None:
        await asyncio.gather(*(link.send(obj) for link in self.links))

    async def run(self) -> RunSummary:
        """Wait for four clients, then play every game; returns the summary.

        The first frame is sent ``start_delay`` seconds after the fourth client connected; after
        ``gameResult`` every socket is closed with code 1000 (normal closure).
        """
        await self.started.wait()
        t0 = time.perf_counter()
        try:
            if self.start_delay:
                await asyncio.sleep(self.start_delay)
            for g in range(1, self.games + 1):
                await self._play_game(g)
                await self.broadcast({"type": "notify", "stage": "gameOver", "curTimes": g, "settingTimes": self.games})
            s = self.summary
            # set before sending: a client may leave the moment its own gameResult arrives, while
            # the others' are still being sent, and that is a normal finish, not a lost seat
            self.result_sent = True
            await self.broadcast({"type": "notify", "stage": "gameResult", "victoryNum": s.victories, "draws": s.draws})
            await asyncio.gather(*(link.close(1000, "run over") for link in self.links))
            for seat in s.mostly_fallback():
                log.warning(
                    "seat %d (%s): %d of %d decisions were made by the fallback bot: its results are the "
                    "fallback bot's", seat, s.names[seat], s.fallback_decisions[seat], s.decisions[seat],
                )
        finally:
            self.summary.seconds = time.perf_counter() - t0
            self.done.set()
        return self.summary

    def new_game(self, g: int) -> Game:
        """The engine game for game ``g`` (1-based) of the run.

        Seeded runs: ``random.Random`` seeded with SHA-256 of the seed and ``g`` (reproducible).
        Unseeded runs: the CSPRNG deals every deal and draws the first leader (R51, per the rule
        set's ``first_leader``) here, so that the record's header carries it and replays without
        a seed; the game's later deals are recorded as explicit hands.
        """
        if self.system_rng is None:
            assert self.seed is not None
            digest = hashlib.sha256(f"guandan-compat:{self.seed}:{g}".encode()).digest()
            return Game(self.rules, seed=int.from_bytes(digest[:16], "big"), max_games=1)
        rng = self.system_rng
        hands = shuffle_deal(rng)
        if self.rules.first_leader == "turned_card":
            leader = turned_card_leader(hands, 0, rng)
        else:
            leader = rng.randrange(4)
        return Game(self.rules, rng=rng, hands=hands, first_leader=leader, max_games=1)

    async def _play_game(self, g: int) -> None:
        game = self.new_game(g)
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
        self.summary.game_winners.append(None if draw else game.winner)
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
                self.summary.deal_hands[(self.summary.games + 1, ev["deal"])] = ev["hands"]
                levels = game.score.levels
                await asyncio.gather(*(link.send(M.beginning(deal, link.seat, levels)) for link in self.links))
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
                self.summary.deal_results.append({
                    "game": self.summary.games + 1, "deal": self._ended_deal_number,
                    "level": self._ended_deal.level, "winner_team": ev["winner_team"], "upgrade": ev["upgrade"],
                    "result": ev["result"], "finish_order": ev["finish_order"],
                })
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
        self._ended_deal_number = game.deal_number
        self.summary.decisions[seat] += 1
        link = self.links[seat]
        reason = link.lost_reason or "disconnected"
        if link.connected:
            actions = M.platform_actions(game)
            msg = M.act_message(game, seat, actions)
            while not link.inbox.empty():  # drop stale replies to earlier (timed-out) questions
                link.inbox.get_nowait()
            deadline = time.monotonic() + self.timeout
            await link.send(msg)
            reason = "timeout"
            while link.connected:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    reply = await asyncio.wait_for(link.inbox.get(), left)
                except asyncio.TimeoutError:
                    break
                if reply is DISCONNECTED:
                    reason = "disconnected"
                    break
                idx = _reply_index(reply, actions)
                if idx is not None:
                    return legal[idx]
                self.summary.bad_replies[seat] += 1
                notice = f"invalid reply {str(reply)[:80]}: send {{\"actIndex\": i}} with 0 <= i <= {len(actions) - 1}"
                log.warning("seat %d: %s", seat, notice)
                await link.send({**msg, "notice": notice})
            if not link.connected:
                reason = link.lost_reason or "disconnected"
        self.summary.fallback_decisions[seat] += 1
        reasons = self.summary.fallback_reasons[seat]
        reasons[reason] = reasons.get(reason, 0) + 1
        log.info(
            "fallback: seat %d (%s), game %d deal %d: %s", seat, link.name, self._game_index(game), game.deal_number,
            reason if reason != "timeout" else f"no valid answer within {self.timeout:g} s",
        )
        return self._fallback[seat].act(seat_view(game, seat))

    def _game_index(self, game: Game) -> int:
        return self.summary.games + 1  # the game being played is the one after those finished

    _acted_deal: Any = None
    _ended_deal: Any = None
    _ended_deal_number: int = 0
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
        task = asyncio.current_task()

        async def close(code: int, reason: str) -> None:
            await ws.close(code=code, reason=reason)

        def drop() -> None:  # the client stopped reading: end this connection's task
            if task is not None:
                task.cancel()

        link = host.join(name, ws.send_text, close, drop)
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
        except asyncio.CancelledError:
            if link.lost_reason != "send timed out":
                raise
        finally:
            if host.started.is_set() and not host.result_sent:
                link.mark_lost("disconnected")
            else:
                link.connected = False
            link.inbox.put_nowait(DISCONNECTED)
            host.leave(link)
            log.info("seat %d: %s disconnected", link.seat, name)

    return Starlette(routes=[WebSocketRoute("/game/{name}", endpoint)])


async def serve(
    host: CompatHost,
    bind: str = "127.0.0.1",
    port: int = 23456,
    ready: Callable[[int], None] | None = None,
    ping_interval: float | None = 20.0,
    ping_timeout: float | None = 20.0,
) -> RunSummary:
    """Serve ``host`` on ``bind:port`` until its run is over; returns the summary.

    Args:
        ready: called with the bound port once the server listens (``port=0`` picks a free one).
        ping_interval, ping_timeout: websocket keep-alive pings, seconds (``None``: off); a client
            that does not answer a ping within ``ping_timeout`` is disconnected and the fallback
            bot plays its seat.

    A client message over :data:`MAX_FRAME_BYTES` is refused while it is read: the socket is
    closed with 1009 (before the run starts the seat is freed; during the run the fallback bot
    plays it).
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
        build_app(host), host=bind, port=port, log_level="warning", lifespan="off",
        ws_ping_interval=ping_interval, ws_ping_timeout=ping_timeout, ws_max_size=MAX_FRAME_BYTES,
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
    try:
        summary = await host.run()
        await asyncio.sleep(0.05)  # let the last frames flush
    finally:  # also when cancelled: stop uvicorn cleanly, so that no connection task is left behind
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(serve_task), 15)
        except (asyncio.TimeoutError, asyncio.CancelledError, SystemExit):
            serve_task.cancel()
    return summary
