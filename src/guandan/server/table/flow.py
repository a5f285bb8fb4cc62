"""A live table's game flow: one authoritative :class:`~guandan.core.match.Game` per room (~810 lines, see below).

Plain code with no I/O of its own (DESIGN.md section 6): it decides, and talks to what stores, sends
and coordinates only through the interfaces of :mod:`guandan.server.table.ports`, passed in by its
host (:class:`~guandan.server.table.ports.TableHost`; in the server the process's
:class:`~guandan.server.manager.TableManager`). Every change to a table (a person's action, a bot's
action, a clock running out, a connection opening or closing) runs under the table's
``asyncio.Lock``: validate with ``Game.check``, apply, hand the new record lines to the host's
:class:`~guandan.server.table.ports.RecordSink` (the record writer stores them off the event loop),
then send each connection (:class:`~guandan.server.table.ports.FrameSink`) its own ``state`` frame
(server contract, "Table websocket").

Bots and clocks: a seat with a ``bot`` acts through :func:`guandan.agents.base.make_agent` after
``settings.bot_delay_s`` seconds. A person's move clock is ``clock_lead_s`` when leading (and for
tribute and return) and ``clock_follow_s`` when following (docs/rules.md R53, AMB-25; room options of the
same names). When the clock runs out the heuristic bot plays that one move (notice
``timeout_move``); ``settings.timeouts_to_auto`` (2) consecutive timeouts turn 托管 on
(``auto[seat] = True``, reason ``timeouts``) until the person acts or turns it off. When it is the
person's turn and none of their tabs has been connected for ``away_grace_s`` seconds (a page reload
or a server restart is not an absence) the bot plays for the seat (reason ``away``) until a tab is
back. Otherwise ``auto`` changes only by the person's ``auto`` message (docs/table-contract.md
section 5). At a tournament table with a move clock there is no 托管 (R54): the clock runs for an
absent person too and its move is R53's (:mod:`guandan.server.table.competition`).

Slightly over ~800 lines on purpose: one lock and one timer per table make every path through a
table (actions, bots, clocks, the pause, restore) one class; what varies (boards, competitions,
views, frames) lives in the sibling modules.

Between deals: after every deal that does not end the game the table sends ``deal_result`` (with
the hands left) and pauses (``between``) until every person is ready or
``settings.ready_timeout_s`` passed (section 6).

Cluster mode (``settings.redis_url``, :mod:`guandan.server.cluster`): a process keeps a
:class:`Table` only for the rooms whose lease it holds; the table's connections are then one
``ChannelConn`` per seat (and one for spectators) that publishes the frames to the processes
holding the sockets, and every write is fenced by the lease. The table itself does not know.

Redaction (:mod:`guandan.server.table.views`; DESIGN.md section 2, docs/rules.md R32, R50): a seated
connection only ever receives the view of its own seat, spectators a public view.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from typing import Any

from guandan.agents.base import Agent
from guandan.agents.registry import make_agent
from guandan.core.deal import PLAY
from guandan.core.errors import IllegalAction
from guandan.core.match import Game
from guandan.core.plays import PlayT
from guandan.core.views import seat_view
from guandan.records import dumps, record_header, replay_lines

from . import competition, phrases
from .bots import (DIFFICULTY_AGENTS, SEARCH_DIFFICULTIES, SERVER_BOT_SPECS, bot_agent, bot_difficulty,
                   decide_searching)
from .frames import JsonText, SharedFrame
from .info import FINISHED, PLAYING, RoomInfo
from .ports import FrameSink, TableHost
from .views import (account_titles, deal_result_frame, game_summary, rebuild_deal_result, received_cards,
                    view_for, view_text)

log = logging.getLogger("guandan.server.tables")


class Table:
    """A room's live state: its :class:`RoomInfo`, the game once started, connections and timers.

    Every public coroutine takes :attr:`lock`; frames go out in the order changes happen.

    Attributes:
        info: the room; ``game``: the authoritative game (``None`` while waiting).
        conns: open connections (seated people and spectators; a person may have several tabs).
        auto: per seat, whether the heuristic bot is playing for the person (托管).
        deadline: ``(seat, epoch seconds)`` of the running move clock, or ``None``.
        seq: number of actions applied since the table was created or restored.
        game_id: the stored game's id once the game is over.
        auto_reason: per seat, why ``auto`` is on: ``player`` (its own choice), ``timeouts``
            (``timeouts_to_auto`` consecutive clock timeouts) or ``away`` (no open connection).
        timeouts: per seat, consecutive move-clock timeouts (reset by any action of the person).
        between: ``None`` during a deal; after a deal that did not end the game, the pause before
            the next one: ``{"deal", "pressed": [bool]*4, "deadline": epoch s, "result": frame}``.
        final: the ``game_over`` frame's content once the game is over.
    """

    def __init__(self, manager: TableHost, info: RoomInfo) -> None:
        #: the host (:class:`~guandan.server.table.ports.TableHost`; the process's ``TableManager``)
        self.manager = manager
        self.info = info
        self.game: Game | None = None
        self.lock = asyncio.Lock()
        self.conns: set[FrameSink] = set()
        self.auto = [False] * 4
        self.deadline: tuple[int, float] | None = None
        #: monotonic time before which an absent person keeps the seat (set when restored)
        self.restored_grace_until = 0.0
        self.seq = 0
        self.game_id: int | None = None
        self._lines: list[str] = []
        #: lines of :attr:`_lines` handed to the writer (stored, or queued to be)
        self._queued = 0
        self._task: asyncio.Task[None] | None = None
        self._plan: tuple[Any, ...] | None = None
        self._agents: dict[tuple[int, str], Agent] = {}
        self._closed = False
        self.auto_reason: list[str | None] = [None] * 4
        self.timeouts = [0] * 4
        #: moves the bot made for each person's seat while 托管 was on, and in which deals
        self.bot_moves = [0] * 4
        self.bot_deals: list[set[tuple[int, int]]] = [set() for _ in range(4)]
        self.between: dict[str, Any] | None = None
        self.final: dict[str, Any] | None = None
        #: cluster takeover: ``(seat, epoch s)`` of the previous owner's running move clock, kept
        #: by the next :meth:`_schedule` of that seat's clock instead of a fresh one
        self.resume_deadline: tuple[int, float] | None = None
        #: per seat (None: spectators): ``(game, key, view, JsonText)`` of the last state frame (:meth:`_state`)
        self._views: dict[int | None, tuple[Any, Any, dict[str, Any] | None, JsonText | None]] = {}
        #: ``(game, number of events)`` and what the seats' views of that position share (:func:`view_for`)
        self._shared: tuple[Any, dict[str, Any]] = (None, {})
        info.public_url = manager.public_url

    # -- queries ---------------------------------------------------------------------------
    @property
    def id(self) -> str:
        """The room id."""
        return self.info.id

    def connected(self) -> list[bool]:
        """Per seat: whether the seated person has at least one open connection."""
        out = [False] * 4
        for c in self.conns:
            s = self.info.seat_of(c.user_id)
            if s is not None:
                out[s] = True
        return out

    def seat_of(self, conn: FrameSink) -> int | None:
        """The seat of ``conn``'s account in this room, or ``None`` (spectator)."""
        return self.info.seat_of(conn.user_id)

    def record_text(self) -> str:
        """The record so far: header and events, one JSON object per line, ``\\n``-terminated."""
        if self.game is None:
            return ""
        self._sync_lines()
        return "".join(line + "\n" for line in self._lines)

    def _sync_lines(self) -> None:
        assert self.game is not None
        if not self._lines:
            header = record_header(self.game, self.info.preset, self.info.player_names())
            self._lines.append(dumps(self.info.with_board(header)))  # a board room: a board record
        for ev in self.game.events[len(self._lines) - 1 :]:
            self._lines.append(dumps(ev))

    def clock_frame(self) -> dict[str, Any]:
        """``{"seat": seat to act | None, "deadline_ms": epoch ms | None}``."""
        if self.game is None or self.game.over or self.between is not None:
            return {"seat": None, "deadline_ms": None}
        seat = self.game.to_act()
        if self.deadline is not None and self.deadline[0] == seat:
            return {"seat": seat, "deadline_ms": int(self.deadline[1] * 1000)}
        return {"seat": seat, "deadline_ms": None}

    def state_frame(self, seat: int | None, room: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``state`` frame for ``seat`` (``None``: spectator). ``view`` is ``None`` while the
        room waits for its game; ``seq`` counts the events of the game so far; ``room`` may pass
        the room summary when it was already built."""
        return self._state(seat, room)[0]

    def _state(self, seat: int | None, room: dict[str, Any] | None) -> tuple[dict[str, Any], JsonText | None]:
        """:meth:`state_frame` and the :class:`JsonText` of its ``view``. The view of a seat is made once
        per position (``self._views``: same game, same number of events, names, pause and delayed
        spectating) and shared by the frames until the position changes: a connect or disconnect
        re-sends the whole table an unchanged position. Every change of a game is an event."""
        names = [s.name or (f"bot:{bot_difficulty(s.bot)}" if s.bot else "") for s in self.info.seats]
        comp = self.manager.competitions.get(self.id)  # a tournament table: delayed spectating, match clock
        game = self.game
        delayed = comp is not None and seat is None and game is not None and not game.over
        key = None if game is None else (len(game.events), tuple(names), self.between is not None, delayed)
        hit = self._views.get(seat)
        if hit is not None and key is not None and hit[0] is game and hit[1] == key:
            view, text = hit[2], hit[3]
        else:
            shared = None
            if game is not None:
                at = self._shared[0]
                if at is None or at[0] is not game or at[1] != len(game.events):
                    self._shared = ((game, len(game.events)), {})
                shared = self._shared[1]
            view = None if game is None else view_for(game, seat, names, shared)
            if delayed:
                view = competition.spectator_view(game, names)
            if view is not None and not view.get("delayed"):
                view["received"] = received_cards(view["tribute_events"], seat)
            if view is not None and self.between is not None and not view.get("delayed"):
                view["legal_actions"] = []  # nothing can be played before the next deal starts
            text = None if view is None or game is None else view_text(view, game.rules, shared)
            self._views[seat] = (game, key, view, text)
        return {
            "type": "state",
            "role": "spectator" if seat is None else "seat",
            "seat": seat,
            "room": room if room is not None else self.info.summary(self.connected()),
            "view": view,
            # delayed spectating: not even whose turn it is (the order of turns shows who went out)
            "clock": {"seat": None, "deadline_ms": None} if delayed else self.clock_frame(),
            "auto": list(self.auto),
            "auto_reason": list(self.auto_reason),
            "timeouts": [0] * 4 if delayed else list(self.timeouts),
            "between": self.between_frame(),
            "final": self.final,
            "seq": 0 if self.game is None else len(self.game.events),
            "competition": None if comp is None else comp.frame(self.game),
            "phrases": phrases.policy_frame(phrases.table_off_reason(self.info, comp is not None)),  # R55
        }, text

    def between_frame(self) -> dict[str, Any] | None:
        """The state frame's ``between`` (docs/table-contract.md section 3), or ``None`` during a deal."""
        b = self.between
        if b is None:
            return None
        return {"deal": b["deal"], "ready": self.ready_flags(), "deadline_ms": int(b["deadline"] * 1000),
                "result": b["result"]}

    def ready_flags(self) -> list[bool]:
        """Between deals, per seat: ready for the next deal. Bots and seats in 托管 (including a person
        the bot covered while away) are always ready; a person once they sent ``ready``. A person who
        closed the page is not: the ready timeout starts the next deal (a server shutting down
        closes every page, and a restart must still find the pause)."""
        pressed = self.between["pressed"] if self.between is not None else [False] * 4
        return [bool(pressed[s]) or self.info.seats[s].bot is not None or self.auto[s] for s in range(4)]

    def notice(self, code: str, **params: Any) -> None:
        """Send every connection ``{"type": "notice", "code", "params"}`` (contract section 5)."""
        frame = {"type": "notice", "code": code, "params": params}
        hide = self.id in self.manager.competitions and self.game is not None and not self.game.over
        for c in list(self.conns):
            if not (hide and self.seat_of(c) is None):  # delayed spectating: no notice of the deal either
                c.send(frame)

    def _broadcast(self, frames: list[dict[str, Any]] | None = None) -> None:
        """Send ``frames`` (common to everyone) then each connection's own state frame."""
        cache: dict[int | None, dict[str, Any]] = {}
        room = self.info.summary(self.connected()) if self.conns else None
        room_text = None if room is None else JsonText(room)  # encoded once for the whole broadcast
        for c in list(self.conns):
            for f in frames or ():
                c.send(f)
            s = self.seat_of(c)
            if s not in cache:
                frame, text = self._state(s, room)
                cache[s] = SharedFrame(frame)  # serialised once per seat, its view once per position
                cache[s].parts = {k: t for k, t in (("view", text), ("room", room_text)) if t is not None}
            c.send(cache[s])

    # -- lifecycle -------------------------------------------------------------------------
    def start_game(self) -> None:
        """Create the game from the room's options and seed (status becomes ``playing``)."""
        self.game = self._new_game()
        self._lines = []
        self._sync_lines()
        self.info.status = PLAYING
        # the header and the first deal (a new Game has dealt already): stored before the API answers
        self.manager.writer.start(self.id, list(self._lines))
        self._queued = len(self._lines)

    def _new_game(self) -> Game:
        """A new game for the room. Its deals (R4), first leader (R51) and random ties (R46,
        AMB-04) come from ``secrets.SystemRandom``: no seed exists, so no client can compute the
        hands; the record stores every deal's hands (``"seed": null``, ``"hands": "explicit"``)
        and a restart replays from them. ``settings.seeded_deals`` (tests only) deals from
        ``random.Random(room seed)`` instead."""
        if self.info.board is not None:  # a board room: the board's one deal (TableHost.board_game)
            return self.manager.board_game(self.info.board)
        if getattr(self.manager.settings, "seeded_deals", False):
            return Game(self.info.rules, seed=self.info.seed, max_games=1)
        return Game(self.info.rules, rng=secrets.SystemRandom(), max_games=1)

    def restore_game(self) -> None:
        """Rebuild the game by replaying the stored record (raises ``RecordError`` if corrupt)."""
        lines = [ln for ln in self.info.record.split("\n") if ln.strip()]
        if not lines:
            self.game = self._new_game()
            self._lines = []
            self._queued = 0  # nothing stored: the header goes with the first action
            return
        if len(lines) == 1:
            # only the header is stored: the first deal's line never was, so no frame ever showed
            # its hands (a cluster publishes only what is stored); deal again, the header stays.
            # A line that is not a valid header is a damaged record (RecordError, as before).
            from guandan.records import RecordError, parse_header

            try:
                header = json.loads(lines[0])
            except ValueError:
                raise RecordError("line 1: not JSON") from None
            if not isinstance(header, dict) or header.get("format") != "pyguandan-record":
                raise RecordError("line 1: not a pyguandan record header")
            parse_header(1, header)
            self.game = self._new_game()
            self._lines = []
            self._sync_lines()
            self._queued = 1
            return
        result = self.manager.replay_board(lines) if self.info.board is not None else replay_lines(lines)
        self.game = result.game
        self._lines = []
        self._sync_lines()
        # the rows already stored (the record's lines); normally all of them
        self._queued = min(self.info.stored_lines, len(self._lines))
        self._restore_pause(lines)

    def shutdown(self) -> None:
        """Stop timers and refuse further changes (server shutdown); connections are closed."""
        self._closed = True
        self._cancel()
        for c in list(self.conns):
            c.close()

    # -- events (each takes the lock) ------------------------------------------------------
    async def connect(self, conn: FrameSink) -> None:
        """Register ``conn`` and send it the state. A seated person reconnecting takes the seat back
        from the bot (``auto`` cleared)."""
        async with self.lock:
            self.conns.add(conn)
            s = self.seat_of(conn)
            report = None
            if s is not None and self.auto_reason[s] == "away" and self.game is not None and not self.game.over:
                report = self._end_auto(s, notify=False)  # 托管 caused by absence ends when the person is back
            self._schedule()
            self._broadcast()
            if report is not None:  # after the state, so that a new connection gets its state first
                self.notice("bot_played", **report)

    async def disconnect(self, conn: FrameSink) -> None:
        """Forget ``conn``; if it was the seat's last tab and the seat is to act, the bot plays for it."""
        async with self.lock:
            self.conns.discard(conn)
            conn.close()
            if self._closed:
                return
            self._schedule()
            self._broadcast()

    async def refresh(self, info: RoomInfo) -> None:
        """Take new room data (seats changed, game started) and send everyone the state."""
        async with self.lock:
            self.info.name = info.name
            self.info.seats = info.seats
            self.info.status = info.status
            self.info.options = info.options
            self.info.default_clocks = info.default_clocks
            self._broadcast()

    async def begin(self, info: RoomInfo) -> None:
        """Start the room's game (called once the room has four filled seats)."""
        async with self.lock:
            info.public_url = self.manager.public_url
            self.info = info
            if self.game is None:
                self.start_game()
            self._schedule()
            self._broadcast()

    async def act(self, conn: FrameSink, action: Any) -> PlayT:
        """A person's action for their seat.

        Args:
            conn: the sending connection (its account must hold a seat).
            action: an action tuple ``(type, rank, cards)`` (faces; e.g. from ``action_from_json``).
        Returns:
            The normalised action applied.
        Raises:
            IllegalAction: not seated (``not_seated``), no game yet (``not_started``), or any core
                reason (``not_your_turn``, ``does_not_beat``, ...); the game is unchanged.
        """
        async with self.lock:
            seat = self._person_seat(conn)
            assert self.game is not None
            self._take_back(seat)
            act = self.game.check(action, seat)
            self._apply(seat, act)
            return act

    async def resolve_and_act(self, conn: FrameSink, cards: list[int], reading: tuple[str, int | None] | None) -> PlayT:
        """``act_cards``: find the action meant by ``cards`` (and the optional ``reading``) and apply it.

        In the tribute and return phases the one card is the tribute or return; in the play phase
        no cards is a pass, otherwise the readings of :func:`guandan.core.plays.classify` (R17) that
        are legal now are kept: one is applied, several without ``reading`` raise ``ambiguous``.

        Raises:
            IllegalAction: as :meth:`act`; ``not_a_reading`` when no reading fits, ``ambiguous``
                (its ``readings`` attribute lists ``[type, rank]`` of the legal readings).
        """
        from guandan.core.cards import rank_char

        async with self.lock:
            seat = self._person_seat(conn)
            game = self.game
            assert game is not None
            self._take_back(seat)
            if game.over:
                raise IllegalAction("game_over", "the game is over")
            if game.to_act() != seat:
                raise IllegalAction("not_your_turn", f"it is seat {game.to_act()}'s turn, not seat {seat}'s")
            phase = game.phase
            if phase in ("tribute", "return"):
                action: Any = (phase, None, tuple(cards))
            elif not cards:
                action = ("pass", None, ())
            else:
                legal = game.legal_readings(cards, seat)
                if reading is not None:
                    legal = [p for p in legal if (p[0], p[1]) == reading]
                    if not legal:
                        raise IllegalAction("not_a_reading", "these cards cannot be played as that reading")
                if len(legal) > 1:
                    err = IllegalAction("ambiguous", "these cards have several readings; choose one")
                    err.readings = [[t, None if r is None else rank_char(r)] for t, r, _ in legal]  # type: ignore[attr-defined]
                    raise err
                action = legal[0]
            act = game.check(action, seat)
            self._apply(seat, act)
            return act

    async def hint(self, conn: FrameSink) -> PlayT:
        """The heuristic bot's suggestion for the person's seat (their turn only).

        Raises:
            IllegalAction: not seated, not started, game over or not the seat's turn.
        """
        async with self.lock:
            seat = self._person_seat(conn)
            assert self.game is not None
            if self.game.over:
                raise IllegalAction("game_over", "the game is over")
            if self.game.to_act() != seat:
                raise IllegalAction("not_your_turn", f"it is seat {self.game.to_act()}'s turn, not seat {seat}'s")
            self.timeouts[seat] = 0
            return self._agent(seat, "heuristic").act(seat_view(self.game, seat))

    async def abandon(self) -> None:
        """End the game unfinished (``guandan loadtest`` on exit): timers stop, the room becomes
        ``finished`` and the game is stored with no winner (nobody rated), then every connection
        gets ``{"type": "game_over", "winner_team": null, "game_id"}``.

        Raises:
            IllegalAction: ``not_started`` (no game) or ``game_over`` (already over).
        """
        async with self.lock:
            if self.game is None:
                raise IllegalAction("not_started", "the game has not started")
            if self.game.over or self.info.status != PLAYING:
                raise IllegalAction("game_over", "the game is over")
            self.info.status = FINISHED
            self._closed = True
            self._cancel()
            self.deadline = None
            self._broadcast()
            self._store_new_lines()
            self.manager.writer.finish(self, self.record_text(), None)

    async def hints(self, conn: FrameSink) -> list[PlayT]:
        """Every sensible play for the person's seat, weakest first, bombs last
        (:func:`guandan.server.table.hints.hint_actions`; contract section 11). ``[]`` when following
        and no play beats the table.

        Raises:
            IllegalAction: not seated, not started, game over, between deals, not the seat's turn.
        """
        from .hints import hint_actions

        async with self.lock:
            seat = self._person_seat(conn)
            game = self.game
            assert game is not None
            if game.to_act() != seat:
                raise IllegalAction("not_your_turn", f"it is seat {game.to_act()}'s turn, not seat {seat}'s")
            self.timeouts[seat] = 0
            # computed on the event loop (about 1-15 ms): the bot's decomposition cache is not
            # thread-safe, and the bots use it on this thread
            return hint_actions(seat_view(game, seat), game.rules.full_house_joker_pair)

    async def set_auto(self, conn: FrameSink, on: bool) -> None:
        """托管 by the person's choice: on (reason ``player``, notice ``auto_on``) or off (notice
        ``bot_played`` when the bot moved meanwhile); either resets the count of timeouts.

        Raises:
            IllegalAction: ``not_seated`` (spectators), ``game_over``, ``no_auto_in_competition``.
        """
        async with self.lock:
            seat = self.seat_of(conn)
            if seat is None:
                raise IllegalAction("not_seated", "spectators have no seat to hand to the bot")
            if self.game is not None and self.game.over:
                raise IllegalAction("game_over", "the game is over")
            if on and competition.strict(self):
                raise IllegalAction("no_auto_in_competition", "no 托管 at a tournament table (R54)")
            self.timeouts[seat] = 0
            if on:
                self._auto_on(seat, "player")
                self.auto_reason[seat] = "player"
            elif self.auto[seat]:
                self._end_auto(seat)
            self._schedule()
            self._broadcast()

    def _take_back(self, seat: int) -> None:
        """The person acts again: the bot stops playing for the seat (托管 off), and the count of
        consecutive clock timeouts starts again from 0."""
        self.timeouts[seat] = 0
        if self.auto[seat]:
            self._end_auto(seat)
            self._schedule()
            self._broadcast()

    def _end_auto(self, seat: int, notify: bool = True) -> dict[str, int] | None:
        """托管 off for ``seat``; when the bot made moves for it meanwhile, every connection gets the
        notice ``bot_played`` (``{seat, moves, deals, reason}``, ``reason`` being why 托管 was on:
        ``away``, ``timeouts`` or ``player``; returned instead when ``notify`` is False)."""
        reason = self.auto_reason[seat] or "player"
        self.auto[seat] = False
        self.auto_reason[seat] = None
        report = None
        if self.bot_moves[seat]:
            report = {"seat": seat, "moves": self.bot_moves[seat], "deals": len(self.bot_deals[seat]),
                      "reason": reason}
            if notify:
                self.notice("bot_played", **report)
        self.bot_moves[seat] = 0
        self.bot_deals[seat] = set()
        return report

    def _auto_on(self, seat: int, reason: str) -> None:
        """托管 on for ``seat`` (``player``, ``timeouts`` or ``away``) and the notice ``auto_on``."""
        if not self.auto[seat]:
            self.auto[seat] = True
            self.auto_reason[seat] = reason
            self.notice("auto_on", seat=seat, reason=reason)

    def _person_seat(self, conn: FrameSink) -> int:
        seat = self.seat_of(conn)
        if seat is None:
            raise IllegalAction("not_seated", "spectators cannot act; take a seat first")
        if self.game is None:
            raise IllegalAction("not_started", "the game has not started")
        if self.info.status != PLAYING:
            raise IllegalAction("game_over", "the game has ended")
        if self.game.over:
            raise IllegalAction("game_over", "the game is over")
        if self.between is not None:
            err = IllegalAction("between_deals", "the next deal has not started yet")
            err.params = {"deadline_ms": int(self.between["deadline"] * 1000)}  # type: ignore[attr-defined]
            raise err
        return seat

    # -- internals (lock held) -------------------------------------------------------------
    def _agent(self, seat: int, name: str) -> Agent:
        key = (seat, name)
        if key not in self._agents:
            seeded = getattr(self.manager.settings, "seeded_deals", False)
            base = self.info.seed if seeded else secrets.randbits(62)
            self._agents[key] = make_agent(SERVER_BOT_SPECS.get(name, name), base * 8 + seat * 2 + (name == "heuristic"))
        return self._agents[key]

    def _seat_agent(self, seat: int) -> str:
        """The agent that plays bot seat ``seat`` (its stored name; a difficulty is mapped through
        :data:`DIFFICULTY_AGENTS`; an agent missing from this installation falls back to ``normal``)."""
        bot = self.info.seats[seat].bot or "heuristic"
        try:
            return bot_agent(bot)
        except ValueError:
            log.warning("room %s: bot %r is not installed; seat %d is played by the normal bot", self.id, bot, seat)
            return DIFFICULTY_AGENTS.get("normal", "heuristic")

    def _apply(self, seat: int, act: PlayT) -> None:
        game = self.game
        assert game is not None
        n0 = len(game.events)
        # what the deal-result frame needs from the deal before it is replaced by the next one
        ended = game.deal
        before = (game.game_number, game.deal_number, list(game.score.levels), list(game.score.points))
        game.apply_unchecked(act)
        self.seq += 1
        new = game.events[n0:]
        frames: list[dict[str, Any]] = []
        for ev in new:
            if ev["type"] == "deal_end":
                frames.append(account_titles(deal_result_frame(ev, ended, *before), self.info.base_points()))
        self._sync_lines()
        self._store_new_lines()
        if game.over:
            self._game_over(frames)
            return
        if frames:
            # the table pauses until every person is ready (or the ready timeout): contract section 6
            result = {k: v for k, v in frames[-1].items() if k != "type"}
            self._pause(result)
        self._schedule()
        self._broadcast(frames)

    def _game_over(self, frames: list[dict[str, Any]]) -> None:
        game = self.game
        assert game is not None
        self.info.status = FINISHED
        winner = game.winner if game.winner is not None or game.time_called or self.info.board else 0  # R58
        self.final = {"winner_team": winner, "game_id": None,
                      "summary": account_titles(game_summary(game), self.info.base_points())}
        self._schedule()
        self._broadcast(frames)
        # stored off the event loop after the pending appends; then game_over (with the game id)
        self.manager.writer.finish(self, self.record_text(), winner)

    def _pause(self, result: dict[str, Any]) -> None:
        """Start the pause between deals after the deal of ``result`` (a deal-result frame's content)."""
        self.between = {
            "deal": result["deal"],
            "pressed": [False] * 4,
            "deadline": time.time() + self.manager.ready_timeout_s,
            "result": result,
        }

    def _restore_pause(self, lines: list[str]) -> None:
        """After a restart: if the stored record ends between two deals (a ``deal_end`` and no action
        of the next deal yet), rebuild the deal result and pause again with a fresh deadline."""
        game = self.game
        if game is None or game.over:
            if game is not None and game.over:
                self.final = {"winner_team": game.winner, "game_id": self.game_id, "summary": game_summary(game)}
            return
        events = game.events
        last_end = max((i for i, ev in enumerate(events) if ev["type"] == "deal_end"), default=None)
        if last_end is None or any(ev["type"] == "action" for ev in events[last_end:]):
            return
        result = rebuild_deal_result(lines, last_end)
        if result is not None:
            account_titles(result, self.info.base_points())
            self._pause({k: v for k, v in result.items() if k != "type"})

    async def ready(self, conn: FrameSink) -> None:
        """``ready``: the person's seat is ready for the next deal (ignored outside the pause).

        Raises:
            IllegalAction: ``not_seated`` (spectators), ``not_started``.
        """
        async with self.lock:
            seat = self.seat_of(conn)
            if seat is None:
                raise IllegalAction("not_seated", "spectators have no seat")
            if self.game is None:
                raise IllegalAction("not_started", "the game has not started")
            self.timeouts[seat] = 0
            if self.between is None or self.between["pressed"][seat]:
                return
            self.between["pressed"][seat] = True
            self._schedule()
            self._broadcast()

    def _next_deal(self, by: str) -> None:
        """End the pause: the next deal's play starts (``by`` = ``ready`` or ``timeout``)."""
        assert self.game is not None
        self.between = None
        self.notice("next_deal", deal=self.game.deal_number, by=by)
        self._schedule()
        self._broadcast()

    def moved(self, room_id: str) -> None:
        """"Play again" created ``room_id``: tell every connection (``{"type": "moved", "room"}``)."""
        self.info.next_room = room_id
        for c in list(self.conns):
            c.send({"type": "moved", "room": room_id})

    def _store_new_lines(self) -> None:
        # appended off the event loop, in order, batched while a write runs (RecordWriter)
        if self._queued < len(self._lines):
            self.manager.writer.append(self.id, self._queued, self._lines[self._queued:])
            self._queued = len(self._lines)

    def _cancel(self) -> None:
        task = self._task
        self._task = None
        self._plan = None
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()

    def _schedule(self) -> None:
        """(Re)arm the one timer of the table: the end of the pause between deals, a bot move, the
        托管 move, or the person's clock.

        Idempotent: when the same timer is already armed for the same position it is kept, so a
        connection opening or closing never restarts a person's clock.

        Plans are ``(seq, seat, agent, mode, wait)`` with ``mode`` one of ``bot`` (a bot seat),
        ``auto`` (托管), ``away`` (nobody connected at the seat), ``clock`` (the person's move clock,
        R53) or ``between`` (the pause, contract section 6).
        """
        game = self.game
        if self._closed or self.manager.closing or game is None or game.over:
            self._cancel()
            self.deadline = None
            return
        seat = game.to_act()
        assert seat is not None
        info = self.info.seats[seat]
        delay = float(self.manager.settings_bot_delay)
        plan: tuple[Any, ...] | None
        if self.between is not None:
            all_ready = all(self.ready_flags())
            wait = delay if all_ready else max(0.0, self.between["deadline"] - time.time())
            plan = (self.seq, None, None, "between", wait, all_ready)
        elif info.bot is not None:
            plan = (self.seq, seat, self._seat_agent(seat), "bot", delay)
        else:
            strict = competition.strict(self)  # a tournament table: the clock runs, no 托管 (R54)
            if self.auto[seat] and not strict:
                plan = (self.seq, seat, "heuristic", "auto", delay)
            elif not self.connected()[seat] and not strict:
                # nobody at the seat: the bot takes over after a short grace (a page reload, a
                # server restart closing sockets) and stays until the person comes back
                grace = max(self.manager.away_grace_s, self.restored_grace_until - time.monotonic())
                plan = (self.seq, seat, "heuristic", "away", max(delay, grace))
            else:
                lead, follow = self.info.clocks
                clock = follow if (game.phase == PLAY and game.deal.top is not None) else lead
                plan = (self.seq, seat, "heuristic", "clock", float(clock)) if clock else None
        current = self._task is not None and not self._task.done() and self._task is not asyncio.current_task()
        if plan is not None and plan[3] == "between" and self._plan is not None and self._plan[3] == "between" \
                and plan[5] == self._plan[5] and current:
            return  # the same pause, same readiness: keep the timer
        if plan is not None and plan == self._plan and current:
            return
        self._cancel()
        self.deadline = None
        if plan is None:
            return
        _, _, agent, mode, wait = plan[:5]
        resume, self.resume_deadline = self.resume_deadline, None
        if mode == "clock":
            now = time.time()
            if resume is not None and resume[0] == seat:
                # the clock runs on across a takeover: the very deadline the old owner sent (one
                # reading of the clock, so the frames' deadline_ms is the same to the millisecond)
                at = max(now, resume[1])
            else:
                at = now + wait
            wait = at - now
            self.deadline = (seat, at)
        self._plan = plan
        if mode == "between":
            self._task = asyncio.get_running_loop().create_task(self._fire_between(wait, self.seq, plan[5]))
        else:
            self._task = asyncio.get_running_loop().create_task(self._fire(wait, seat, self.seq, agent, mode))

    async def _fire_between(self, delay: float, seq: int, all_ready: bool) -> None:
        try:
            await asyncio.sleep(delay)
            async with self.lock:
                if self._closed or self.between is None or self.seq != seq:
                    return
                self._next_deal("ready" if all_ready or all(self.ready_flags()) else "timeout")
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - never kill the server
            log.exception("room %s: starting the next deal failed", self.id)

    def _still(self, seat: int, seq: int) -> Game | None:
        """The game when seat ``seat`` is still to act in the position numbered ``seq`` (lock held)."""
        game = self.game
        if self._closed or game is None or game.over or self.seq != seq or game.to_act() != seat \
                or self.between is not None:
            return None
        return game

    async def _fire(self, delay: float, seat: int, seq: int, agent: str, mode: str) -> None:
        """Make the automatic move planned by :meth:`_schedule` after ``delay`` seconds.

        A searching bot (:data:`SEARCH_DIFFICULTIES`, ``bot`` mode) thinks off the event loop and
        without the table lock, once the host's ``search_gate`` admits it (:func:`decide_searching`;
        refused: the heuristic moves): the view is taken under the lock, and the
        answer is applied under the lock only if the table is still in that position (same
        ``seq``, same seat to act, no pause); a stale answer is discarded (whatever moved the
        table has re-armed the timer). If the search fails, the heuristic moves instead.
        """
        try:
            await asyncio.sleep(delay)
            if mode == "bot" and agent in SEARCH_DIFFICULTIES:
                async with self.lock:
                    game = self._still(seat, seq)
                    if game is None:
                        return
                    view = seat_view(game, seat)
                    bot = self._agent(seat, agent)
                # tables share the pool fairly; refused or failed: the heuristic moves (search_gate)
                act = await decide_searching(getattr(self.manager, "search_gate", None), self.id, bot, view,
                                             lambda: self._agent(seat, "heuristic"))
                async with self.manager.bot_gate, self.lock:
                    game = self._still(seat, seq)
                    if game is None or act not in view.legal_actions:
                        return  # the table moved on while the bot thought: discard the answer
                    self._apply(seat, act)
                return
            # automatic moves of all tables take turns, one per pass of the event loop, so that a
            # person's message never waits behind a backlog of bot moves (TableManager.bot_gate)
            async with self.manager.bot_gate:
                await self._fire_now(seat, seq, agent, mode)
                await asyncio.sleep(0)  # the I/O that arrived meanwhile runs before the next one
        except asyncio.CancelledError:
            raise
        except Exception:  # a failing bot must not kill the server; the table stays as it was
            log.exception("room %s: automatic move for seat %d failed", self.id, seat)

    async def _fire_now(self, seat: int, seq: int, agent: str, mode: str) -> None:
        """One automatic move for ``seat`` (``mode``: bot, auto, away, clock), if the table is still
        where it was when the move was planned (``seq``)."""
        async with self.lock:
            game = self._still(seat, seq)
            if game is None:
                return
            notices: list[tuple[str, dict[str, Any]]] = []
            if mode == "clock":
                # R53: the clock ran out; the bot makes this one move. Only timeouts_to_auto
                # consecutive timeouts turn 托管 on (contract section 5).
                self.timeouts[seat] += 1
                competition.timed_out(self, seat)  # R54: counted per pair at a tournament table
                limit = self.manager.timeouts_to_auto
                notices.append(("timeout_move", {"seat": seat, "timeouts": self.timeouts[seat], "limit": limit}))
                if self.timeouts[seat] >= limit and not competition.strict(self):
                    self._auto_on(seat, "timeouts")
            elif mode == "away":
                self._auto_on(seat, "away")
            if mode in ("auto", "away") or (mode == "clock" and self.auto[seat]):
                self.bot_moves[seat] += 1
                self.bot_deals[seat].add((game.game_number, game.deal_number))
            strict = mode == "clock" and competition.strict(self)  # R53's move at a tournament table
            act = competition.timeout_move(game) if strict else self._agent(seat, agent).act(seat_view(game, seat))
            self._apply(seat, act)
            for code, params in notices:
                self.notice(code, **params)
