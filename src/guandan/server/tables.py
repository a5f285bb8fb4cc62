"""Live tables: one authoritative :class:`~guandan.core.match.Game` per room being played.

A :class:`TableManager` holds a :class:`Table` for every room that is being played or that has an
open websocket. Every change to a table (a person's action, a bot's action, a clock running out, a
connection opening or closing) runs under the table's ``asyncio.Lock``: validate with
``Game.check``, apply, persist the new record lines, then send each connection its own ``state``
frame (server contract, "Table websocket").

Persistence (issue 10, :mod:`guandan.server.gamestore`): the live game's record (header + events,
:func:`guandan.records.record_lines`) is stored as one ``game_events`` row per line; an action
appends its new lines (one small insert, off the event loop: :class:`RecordWriter`).
:meth:`TableManager.restore` rebuilds every room with status ``playing`` by replaying the rows
(:func:`guandan.records.replay_lines`), so a server restart loses nothing; when the game is over the
complete record is assembled from the rows into ``games`` and ``rooms.record``.

Bots and clocks: a seat with a ``bot`` acts through :func:`guandan.agents.base.make_agent` after
``settings.bot_delay_s`` seconds. A person's move clock is ``clock_lead_s`` when leading (and for
tribute and return) and ``clock_follow_s`` when following (RULES.md R53, AMB-25; room options of the
same names). When the clock runs out the heuristic bot plays that one move (notice
``timeout_move``); ``settings.timeouts_to_auto`` (2) consecutive timeouts turn 托管 on
(``auto[seat] = True``, reason ``timeouts``) until the person acts or turns it off. When it is the
person's turn and none of their tabs has been connected for ``away_grace_s`` seconds (a page reload
or a server restart is not an absence) the bot plays for the seat (reason ``away``) until a tab is
back. Otherwise ``auto`` changes only by the person's ``auto`` message (docs/table-contract.md
section 5).

Between deals: after every deal that does not end the game the table sends ``deal_result`` (with
the hands left) and pauses (``between``) until every person is ready or
``settings.ready_timeout_s`` passed (section 6).

Cluster mode (``settings.redis_url``, :mod:`guandan.server.cluster`): a process keeps a
:class:`Table` only for the rooms whose lease it holds; the table's connections are then one
``ChannelConn`` per seat (and one for spectators) that publishes the frames to the processes
holding the sockets, and every write is fenced by the lease.

Redaction (DESIGN.md section 2, RULES.md R32, R50): a seated connection only ever receives
:func:`guandan.core.views.seat_view` of its own seat (plus the public extra keys below), spectators
a public view with no hand and no legal actions; the raw ``Game.events`` (whose ``deal`` events
hold all four hands) are never sent.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import logging
import secrets
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from guandan.agents.base import AGENT_NAMES, Agent, make_agent
from guandan.core.cards import card_text, faces_of, rank_char, wild_face
from guandan.core.deal import PLAY
from guandan.core.errors import IllegalAction
from guandan.core.match import Game, action_to_json
from guandan.core.plays import PlayT
from guandan.core.rules import RuleSet
from guandan.core.scoring import anhui_title
from guandan.core.views import seat_view
from guandan.records import dumps, record_header, replay_lines

from .gamestore import DuplicateEventError, GameStore, StoredRecordError

log = logging.getLogger("guandan.server.tables")

#: Room statuses (server contract, table ``rooms``).
WAITING, PLAYING, FINISHED = "waiting", "playing", "finished"
#: Status of a room whose stored game cannot be restored (a record that is not UTF-8 or does not
#: replay): listed and shown, never played; the other rooms restore normally.
DAMAGED = "damaged"
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
#: Result codes in words (RULES.md AMB-23): 1-2 双下, 1-3 单下, 1-4 平下.
RESULT_CODES = {"1-2": "double_down", "1-3": "single_down", "1-4": "flat_down"}


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


#: Largest number of frames queued for one connection before it is closed as too slow.
MAX_QUEUE = 2000


@dataclass
class SeatInfo:
    """One seat of a room: ``seat`` 0-3, the person (``user_id``, ``name``) or ``bot`` name, or empty."""

    seat: int
    user_id: int | None = None
    name: str | None = None
    bot: str | None = None

    @property
    def filled(self) -> bool:
        """True when a person or a bot holds the seat."""
        return self.user_id is not None or self.bot is not None


@dataclass
class RoomInfo:
    """A room as stored in the ``rooms`` / ``room_seats`` tables (server contract).

    Attributes:
        id: 8-character room id; ``name``, ``preset``: as created; ``options``: ``RuleSet.to_dict()``.
        status: ``waiting``, ``playing`` or ``finished``; ``owner``/``owner_id``: the creator.
        seed: unused (``0``) unless ``settings.seeded_deals`` (tests); ``seats``: four :class:`SeatInfo`.
        record: the JSON Lines record text so far (``""`` before the game starts).
    """

    id: str
    name: str
    preset: str
    options: dict[str, Any]
    status: str
    owner: str | None
    owner_id: int | None
    seed: int
    seats: list[SeatInfo]
    record: str = ""
    #: lines of ``record`` already stored as ``game_events`` rows (the next index to append)
    stored_lines: int = 0
    #: the R53 default clocks apply when the game starts with more than one person (set at creation)
    default_clocks: bool = False
    #: ``Settings.public_url`` (for the UI's invite link), set by the server
    public_url: str | None = None
    #: the room created by "play again", once there is one
    next_room: str | None = None

    @property
    def rules(self) -> RuleSet:
        """The room's rule set (raises ``RuleConfigError`` if the stored options are invalid)."""
        return RuleSet.from_dict(self.options)

    @property
    def clocks(self) -> tuple[float | None, float | None]:
        """``(lead_s, follow_s)`` move clocks in seconds, ``None`` = no clock (R53)."""
        return self.options.get("clock_lead_s"), self.options.get("clock_follow_s")

    def seat_of(self, user_id: int | None) -> int | None:
        """The seat held by ``user_id``, or ``None``."""
        if user_id is None:
            return None
        for s in self.seats:
            if s.user_id == user_id:
                return s.seat
        return None

    def player_names(self) -> list[str]:
        """Four names for a game record: the person's name, ``bot:<difficulty>``, or ``seatN``."""
        return [s.name or (f"bot:{bot_difficulty(s.bot)}" if s.bot else f"seat{s.seat}") for s in self.seats]

    def overrides(self) -> dict[str, Any]:
        """The rule options that differ from the room's preset (RULES.md section P), clocks excluded:
        what the UI spells out ("打到 8"). Unknown presets compare with ``official``."""
        base = _preset_options(self.preset)
        return {
            k: v for k, v in self.options.items()
            if k not in ("clock_lead_s", "clock_follow_s") and base.get(k, object()) != v
        }

    def summary(self, connected: Iterable[bool] = (False,) * 4) -> dict[str, Any]:
        """The contract's ``room`` object (docs/table-contract.md section 1): id, name, preset,
        options, ``overrides``, status, owner, seats (``{seat, kind, user, bot, difficulty,
        connected}``, ``bot`` being the difficulty), ``invite_url`` (a path), ``public_url``,
        ``clocks`` (seconds or null, and ``default``) and ``next_room``."""
        conn = list(connected)
        lead, follow = self.clocks
        seats = []
        for s in self.seats:
            diff = bot_difficulty(s.bot)
            kind = "person" if s.user_id is not None else "bot" if s.bot is not None else "empty"
            seats.append({"seat": s.seat, "kind": kind, "user": s.name, "bot": diff, "difficulty": diff,
                          "connected": bool(conn[s.seat])})
        return {
            "id": self.id,
            "name": self.name,
            "preset": self.preset,
            "options": self.options,
            "overrides": self.overrides(),
            "status": self.status,
            "owner": self.owner,
            "seats": seats,
            "invite_url": f"/room/{self.id}",
            "public_url": self.public_url,
            "clocks": {"lead_s": lead, "follow_s": follow, "default": bool(self.default_clocks)},
            "next_room": self.next_room,
        }


class RoomStore:
    """Database access of the live tables, through the storage helper's models (server contract).

    Args:
        session_factory: a zero-argument callable returning a SQLAlchemy ``Session`` usable as a
            context manager (``sessionmaker``).
    """

    def __init__(self, session_factory: Callable[[], Any]) -> None:
        self.session_factory = session_factory
        #: the live games' rows (``game_events``)
        self.games = GameStore(session_factory)

    def load(self, room_id: str) -> RoomInfo | None:
        """The room ``room_id`` with its seats, or ``None`` when there is no such room.

        ``info.record`` is the game's record: for a ``playing`` room assembled from its
        ``game_events`` rows (``info.stored_lines`` of them); a playing room whose record is
        still in ``rooms.record`` (written by an older server) is moved into rows first. For a
        finished room, ``rooms.record``; for a damaged one, ``""`` (it may not even be UTF-8).

        Raises:
            StoredRecordError: the rows of a playing room have a missing index.
        """
        from . import models

        from sqlalchemy.orm import defer

        with self.session_factory() as db:
            room = db.get(models.Room, room_id, options=[defer(models.Room.record)])
            if room is None:
                return None
            info = room_info(db, room)
            if room.status == PLAYING:
                legacy = room.record or ""
            elif room.status != DAMAGED:
                info.record = room.record or ""
                return info
            else:
                return info
        lines = self.games.load(room_id)
        if not lines and legacy.strip():
            lines = [ln for ln in legacy.split("\n") if ln.strip()]
            self.games.append(room_id, 0, lines)
            self._clear_record(room_id)
        info.record = "".join(ln + "\n" for ln in lines)
        info.stored_lines = len(lines)
        return info

    def _clear_record(self, room_id: str) -> None:
        from . import models

        rooms = models.Room.__table__
        with self.session_factory() as db:
            db.execute(rooms.update().where(rooms.c.id == room_id).values(record=""))
            db.commit()

    def mark_damaged(self, room_id: str) -> None:
        """Set the room's status to :data:`DAMAGED` (its record is not read)."""
        from . import models

        rooms = models.Room.__table__
        with self.session_factory() as db:
            db.execute(rooms.update().where(rooms.c.id == room_id).values(status=DAMAGED))
            db.commit()

    def playing_ids(self) -> list[str]:
        """Ids of every room whose status is ``playing``."""
        from sqlalchemy import select

        from . import models

        with self.session_factory() as db:
            return list(db.scalars(select(models.Room.id).where(models.Room.status == PLAYING)))

    def save(self, room_id: str, record: str, status: str) -> None:
        """Store the room's whole record text and status in ``rooms`` (the fallback when storing
        a finished game fails; live games append rows instead: :class:`GameStore`)."""
        from . import models

        with self.session_factory() as db:
            # a Core statement built once: the ORM path costs more than SQLite itself here
            db.connection().execute(_save_statement(), {"b_id": room_id, "b_record": record, "b_status": status, "b_ts": models.utcnow()})
            db.commit()

    def game_id_of(self, room_id: str) -> int | None:
        """The id of the stored game played in ``room_id`` (the latest), or ``None``."""
        from sqlalchemy import select

        from . import models

        try:
            with self.session_factory() as db:
                return db.scalars(
                    select(models.GameRow.id).where(models.GameRow.room_id == room_id).order_by(models.GameRow.id.desc())
                ).first()
        except Exception:  # noqa: BLE001 - only used for a link
            log.exception("room %s: looking up its game failed", room_id)
            return None

    def finish(self, info: RoomInfo, record: str | None, winner_team: int | None) -> int | None:
        """Mark the room finished and store the game assembled from its rows
        (:meth:`GameStore.finish`; ``record``, the live game's text, wins if the rows differ).

        Returns:
            The stored game's id (``None`` when the room is no longer ``playing``: its game was
            stored already and is not stored twice).
        """
        players = [{"seat": s.seat, "user_id": s.user_id, "bot": s.bot} for s in info.seats]
        return self.games.finish(info.id, winner_team, players, record)


@functools.lru_cache(maxsize=1)
def _save_statement() -> Any:
    from sqlalchemy import bindparam

    from . import models

    rooms = models.Room.__table__
    return (
        rooms.update()
        .where(rooms.c.id == bindparam("b_id"))
        .values(record=bindparam("b_record"), status=bindparam("b_status"), updated_at=bindparam("b_ts"))
    )


def _touch(room: Any) -> None:
    if hasattr(room, "updated_at"):
        from datetime import datetime

        room.updated_at = datetime.now(UTC)


def room_info(db: Any, room: Any) -> RoomInfo:
    """Build a :class:`RoomInfo` from a ``models.Room`` row (seats and names loaded through ``db``)."""
    seats = [SeatInfo(s) for s in range(4)]
    for row in room.seats:
        if 0 <= row.seat < 4:
            user = row.user if row.user_id is not None else None
            seats[row.seat] = SeatInfo(row.seat, row.user_id, user.name if user is not None else None, row.bot)
    owner = room.owner if room.owner_id is not None else None
    return RoomInfo(
        id=room.id,
        name=room.name,
        preset=room.preset,
        options=dict(room.options or {}),
        status=room.status,
        owner=owner.name if owner is not None else None,
        owner_id=room.owner_id,
        seed=int(room.seed or 0),
        seats=seats,
        record="" if "record" in _unloaded(room) else (room.record or ""),
        default_clocks=bool(getattr(room, "default_clocks", False)),
    )


def _unloaded(room: Any) -> set[str]:
    try:
        from sqlalchemy import inspect

        return set(inspect(room).unloaded)
    except Exception:  # noqa: BLE001 - not an ORM object (tests pass plain objects)
        return set()


# -- connections -----------------------------------------------------------------------------------


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

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Ask the writer to stop (queues ``None``); it closes the websocket with ``code`` and
        ``reason`` (at most 120 bytes)."""
        if not self.closed:
            self.closed = True
            self.close_code, self.close_reason = code, reason
            self.queue.put_nowait(None)

    def rate_ok(self, limit: int, now: float | None = None) -> bool:
        """Record one received message; False when more than ``limit`` arrived in the last second."""
        t = time.monotonic() if now is None else now
        while self.recent and t - self.recent[0] >= 1.0:
            self.recent.popleft()
        if len(self.recent) >= limit:
            return False
        self.recent.append(t)
        return True


def error_frame(message: str, reason: str | None = None, params: dict[str, Any] | None = None,
                **extra: Any) -> dict[str, Any]:
    """The contract's ``{"type": "error", "message", "reason", "params"}`` frame (``message`` one line).

    ``reason`` is the stable code the UI translates (with ``params`` filled in), as ``code`` is in HTTP
    errors (:mod:`guandan.server.errors`).
    """
    frame: dict[str, Any] = {"type": "error", "message": message.splitlines()[0] if message else "error",
                             "reason": reason, "params": params or {}}
    frame.update(extra)
    return frame


# -- views -----------------------------------------------------------------------------------------


def _last_actions(game: Game) -> list[list[Any] | None]:
    out: list[list[Any] | None] = [None] * 4
    d = game.deal
    if d.phase == PLAY and not game.over:
        for s, a in d.trick:
            out[s] = _action_json(a)
    return out


@functools.lru_cache(maxsize=8192)
def _action_json(act: PlayT) -> list[Any]:
    # actions are hashable tuples; converting each once saves most of the cost of the views
    return action_to_json(act)


@functools.lru_cache(maxsize=64)
def _rules_json(rules: RuleSet) -> dict[str, Any]:
    # RuleSet is frozen and hashable; to_dict (dataclasses.asdict, a deep copy) was a large part
    # of every state frame. The dict is shared by frames: never change it.
    return rules.to_dict()


@functools.lru_cache(maxsize=64)
def _preset_options(preset: str) -> dict[str, Any]:
    """The options of ``preset`` (``RuleSet()`` for an unknown preset name); shared, read-only."""
    try:
        return RuleSet.preset(preset).to_dict()
    except Exception:  # noqa: BLE001 - a custom or unknown preset name
        return RuleSet().to_dict()


def _seat_json(game: Game, seat: int) -> dict[str, Any]:
    """``seat_view(game, seat).to_json()`` with cached converters: each action is converted once
    and the rule options dict is made once per rule set (the default converters spent most of a
    state frame's time copying dataclasses)."""
    return seat_view(game, seat).to_json(action_json=_action_json, rules_json=_rules_json)


def public_view(game: Game) -> dict[str, Any]:
    """The spectators' view: the shape of ``seat_view(...).to_json()`` with ``seat: None``, no hand,
    no legal actions, tribute and return actions hidden until revealed (R50) and card counts above
    10 hidden under ``card_counts = le10`` (R32, AMB-24)."""
    v = _seat_json(game, 0)
    d = game.deal
    v["seat"] = None
    v["hand"] = []
    v["legal_actions"] = []
    if d.phase in ("tribute", "return"):
        v["history"] = [[s, _action_json(a)] for s, a in d.history if a[0] not in ("tribute", "return")]
    if game.rules.card_counts == "le10":
        v["card_counts"] = [c if c <= 10 else None for c in d.n_cards]
    else:
        v["card_counts"] = list(d.n_cards)
    return v


def view_for(game: Game, seat: int | None, names: list[str]) -> dict[str, Any]:
    """The ``view`` of a state frame: :func:`seat_view` of ``seat`` (or :func:`public_view` when
    ``seat`` is ``None``) plus ``wilds`` (the level's heart, R8), ``seat_names`` and ``last_actions``
    (each seat's latest action in the current trick, or ``None``)."""
    v = public_view(game) if seat is None else _seat_json(game, seat)
    v["wilds"] = [card_text(wild_face(game.deal.level))]
    v["seat_names"] = list(names)
    v["last_actions"] = _last_actions(game)
    return v


def received_cards(tribute_events: Iterable[dict[str, Any]], seat: int | None) -> list[str]:
    """Cards ``seat`` received this deal as tribute (``tribute_paid``) or return
    (``returns_revealed``), from the deal's public tribute events (R44-R50); ``[]`` for spectators."""
    if seat is None:
        return []
    out: list[str] = []
    for ev in tribute_events:
        if ev.get("type") == "tribute_paid":
            out += [card for _payer, receiver, card in ev["tributes"] if receiver == seat]
        elif ev.get("type") == "returns_revealed":
            out += [card for _giver, to, card in ev["returns"] if to == seat]
    return out


# -- deal results ----------------------------------------------------------------------------------


def deal_result_frame(ev: dict[str, Any], ended: Any, game_number: int, deal_number: int,
                      levels_before: list[int], points_before: list[int]) -> dict[str, Any]:
    """The ``deal_result`` frame (docs/table-contract.md section 4) of one ``deal_end`` event.

    Args:
        ev: the record's ``deal_end`` event (every key is kept: finish_order, result, winner_team,
            upgrade, levels, passed, failed, demoted, a_fails, and points/points_total under
            ``points``).
        ended: the :class:`~guandan.core.deal.Deal` that ended (its hands are the cards left).
        game_number, deal_number: the deal's position; levels_before: team levels (rank indexes)
            before it; points_before: Anhui points per seat before it.
    Returns:
        The frame, adding ``game``, ``deal``, ``level``, ``result_code`` (1-2 ``double_down`` 双下,
        1-3 ``single_down`` 单下, 1-4 ``flat_down`` 平下; RULES.md R35, AMB-23),
        ``levels_before``, ``hands_left`` (亮牌: every seat's cards at the end, card text) and, under
        ``points``, ``titles_before``/``titles`` (Anhui titles, RULES.md 2.1).
    """
    frame: dict[str, Any] = {**ev, "type": "deal_result"}
    frame.update(
        game=game_number,
        deal=deal_number,
        level=rank_char(ended.level),
        result_code=RESULT_CODES.get(ev["result"], ev["result"]),
        levels_before=[rank_char(x) for x in levels_before],
        hands_left=[[card_text(f) for f in faces_of(ended.hands[s])] for s in range(4)],
    )
    if "points_total" in ev:
        frame["titles_before"] = [anhui_title(p) for p in points_before]
        frame["titles"] = [anhui_title(p) for p in ev["points_total"]]
    return frame


def game_summary(game: Game) -> dict[str, Any]:
    """The ``summary`` of the ``game_over`` frame (contract section 8): ``deals`` played, final team
    ``levels``, and one entry per deal (``deal``, ``level``, ``finish_order``, ``result``,
    ``result_code``, ``winner_team``, ``upgrade``, ``levels``); ``points_total`` and ``titles``
    under ``points``."""
    results: list[dict[str, Any]] = []
    deal_no, level = 0, None
    for ev in game.events:
        if ev["type"] == "deal":
            deal_no, level = ev["deal"], ev["level"]
        elif ev["type"] == "deal_end":
            results.append({
                "deal": deal_no, "level": level, "finish_order": ev["finish_order"], "result": ev["result"],
                "result_code": RESULT_CODES.get(ev["result"], ev["result"]), "winner_team": ev["winner_team"],
                "upgrade": ev["upgrade"], "levels": ev["levels"],
            })
    out: dict[str, Any] = {"deals": len(results), "levels": [rank_char(x) for x in game.score.levels],
                           "results": results}
    if game.rules.points:
        out["points_total"] = list(game.score.points)
        out["titles"] = [anhui_title(p) for p in game.score.points]
    return out


def rebuild_deal_result(lines: list[str], end_index: int) -> dict[str, Any] | None:
    """The ``deal_result`` frame of the ``deal_end`` event at ``end_index`` of a record's events,
    rebuilt by replaying the record up to the deal's last action (after a server restart).

    Args:
        lines: the record's lines (header first). end_index: index of the ``deal_end`` event in the
            events (line ``end_index + 1``).
    Returns:
        The frame, or ``None`` when the record cannot be replayed that far.
    """
    from guandan.core.match import action_from_json

    events = [json.loads(ln) for ln in lines[1:end_index + 2]]
    last = max((i for i, ev in enumerate(events[:end_index]) if ev["type"] == "action"), default=None)
    if last is None:
        return None
    try:
        game = replay_lines(lines[: last + 1]).game
        ended = game.deal
        before = (game.game_number, game.deal_number, list(game.score.levels), list(game.score.points))
        n0 = len(game.events)
        game.apply(action_from_json(events[last]["action"]), events[last]["seat"])
        ev = next(e for e in game.events[n0:] if e["type"] == "deal_end")
    except Exception:  # noqa: BLE001 - a record that cannot be replayed: no result screen
        log.exception("cannot rebuild the deal result")
        return None
    return deal_result_frame(ev, ended, *before)


# -- tables ----------------------------------------------------------------------------------------


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

    def __init__(self, manager: TableManager, info: RoomInfo) -> None:
        self.manager = manager
        self.info = info
        self.game: Game | None = None
        self.lock = asyncio.Lock()
        self.conns: set[Conn] = set()
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

    def seat_of(self, conn: Conn) -> int | None:
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
            self._lines.append(dumps(record_header(self.game, self.info.preset, self.info.player_names())))
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
        names = [s.name or (f"bot:{bot_difficulty(s.bot)}" if s.bot else "") for s in self.info.seats]
        view = None if self.game is None else view_for(self.game, seat, names)
        if view is not None:
            view["received"] = received_cards(view["tribute_events"], seat)
        if view is not None and self.between is not None:
            view["legal_actions"] = []  # nothing can be played before the next deal starts
        return {
            "type": "state",
            "role": "spectator" if seat is None else "seat",
            "seat": seat,
            "room": room if room is not None else self.info.summary(self.connected()),
            "view": view,
            "clock": self.clock_frame(),
            "auto": list(self.auto),
            "auto_reason": list(self.auto_reason),
            "timeouts": list(self.timeouts),
            "between": self.between_frame(),
            "final": self.final,
            "seq": 0 if self.game is None else len(self.game.events),
        }

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
        for c in list(self.conns):
            c.send(frame)

    def _broadcast(self, frames: list[dict[str, Any]] | None = None) -> None:
        """Send ``frames`` (common to everyone) then each connection's own state frame."""
        cache: dict[int | None, dict[str, Any]] = {}
        room = self.info.summary(self.connected()) if self.conns else None
        for c in list(self.conns):
            for f in frames or ():
                c.send(f)
            s = self.seat_of(c)
            if s not in cache:
                cache[s] = SharedFrame(self.state_frame(s, room))  # serialised once per seat
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
        result = replay_lines(lines)
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
    async def connect(self, conn: Conn) -> None:
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

    async def disconnect(self, conn: Conn) -> None:
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

    async def act(self, conn: Conn, action: Any) -> PlayT:
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

    async def resolve_and_act(self, conn: Conn, cards: list[int], reading: tuple[str, int | None] | None) -> PlayT:
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

    async def hint(self, conn: Conn) -> PlayT:
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

    async def hints(self, conn: Conn) -> list[PlayT]:
        """Every sensible play for the person's seat, weakest first, bombs last
        (:func:`guandan.server.hints.hint_actions`; contract section 11). ``[]`` when following
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

    async def set_auto(self, conn: Conn, on: bool) -> None:
        """托管 by the person's choice: on (reason ``player``, notice ``auto_on``) or off (notice
        ``bot_played`` when the bot moved meanwhile); either resets the count of timeouts.

        Raises:
            IllegalAction: ``not_seated`` (spectators), ``game_over``.
        """
        async with self.lock:
            seat = self.seat_of(conn)
            if seat is None:
                raise IllegalAction("not_seated", "spectators have no seat to hand to the bot")
            if self.game is not None and self.game.over:
                raise IllegalAction("game_over", "the game is over")
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

    def _person_seat(self, conn: Conn) -> int:
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
                frames.append(deal_result_frame(ev, ended, *before))
        self._sync_lines()
        self._store_new_lines()
        if game.over:
            self.info.status = FINISHED
            winner = game.winner if game.winner is not None else 0
            self.final = {"winner_team": winner, "game_id": None, "summary": game_summary(game)}
            self._schedule()
            self._broadcast(frames)
            # stored off the event loop after the pending appends; then game_over (with the game id)
            self.manager.writer.finish(self, self.record_text(), winner)
            return
        if frames:
            # the table pauses until every person is ready (or the ready timeout): contract section 6
            result = {k: v for k, v in frames[-1].items() if k != "type"}
            self._pause(result)
        self._schedule()
        self._broadcast(frames)

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
            self._pause({k: v for k, v in result.items() if k != "type"})

    async def ready(self, conn: Conn) -> None:
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
            if self.auto[seat]:
                plan = (self.seq, seat, "heuristic", "auto", delay)
            elif not self.connected()[seat]:
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
        if mode == "clock" and resume is not None and resume[0] == seat:
            wait = max(0.0, resume[1] - time.time())  # the clock runs on across a takeover
        if mode == "clock":
            self.deadline = (seat, time.time() + wait)
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
        without the table lock (:func:`think_off_loop`): the view is taken under the lock, and the
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
                try:
                    act = await think_off_loop(bot, view)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - a failed search: the heuristic moves
                    log.exception("room %s: search for seat %d failed; the heuristic moves", self.id, seat)
                    act = self._agent(seat, "heuristic").act(view)
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
                limit = self.manager.timeouts_to_auto
                notices.append(("timeout_move", {"seat": seat, "timeouts": self.timeouts[seat], "limit": limit}))
                if self.timeouts[seat] >= limit:
                    self._auto_on(seat, "timeouts")
            elif mode == "away":
                self._auto_on(seat, "away")
            if mode in ("auto", "away") or (mode == "clock" and self.auto[seat]):
                self.bot_moves[seat] += 1
                self.bot_deals[seat].add((game.game_number, game.deal_number))
            act = self._agent(seat, agent).act(seat_view(game, seat))
            self._apply(seat, act)
            for code, params in notices:
                self.notice(code, **params)


class TableManager:
    """Every live :class:`Table`, by room id.

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session`` (``sessionmaker``).
        settings: server settings; ``bot_delay_s`` (seconds a bot waits before acting) is used.
        store: the database adaptor (default :class:`RoomStore` over ``session_factory``).
        away_grace_s: seconds the table waits for a person with no open connection before the
            bot plays for the seat (at least ``bot_delay_s``); the bot then keeps the seat (auto)
            until the person reconnects or acts.
    """

    def __init__(
        self,
        session_factory: Callable[[], Any],
        settings: Any = None,
        store: RoomStore | None = None,
        *,
        away_grace_s: float = 2.0,
    ) -> None:
        self.session_factory = session_factory
        self.settings = settings
        self.store = store or RoomStore(session_factory)
        self.away_grace_s = float(away_grace_s)
        #: after a restart, pages reconnect with backoff (up to ~20 s): at a restored table an
        #: absent person is not replaced by the bot for this many seconds (see :meth:`start`)
        self.restart_grace_s = 25.0
        self.closing = False
        self.tables: dict[str, Table] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        #: automatic moves (bots, 托管, clock timeouts) of every table take this in turn, one
        #: per pass of the event loop: people's messages are handled between two of them, so a
        #: person's action is answered at once however many bot moves are due (loadtest p99)
        self.bot_gate = asyncio.Lock()
        #: database work of the tables runs here, never on the event loop
        self.db_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="guandan-db")
        self._again_lock = threading.Lock()
        self.writer = RecordWriter(self)
        #: old room id -> the room "play again" made of it (kept after the old table is dropped)
        self.moved: dict[str, str] = {}
        #: cluster mode (``settings.redis_url``): this process's :class:`~guandan.server.cluster.ClusterNode`
        self.cluster: Any = None
        redis_url = getattr(settings, "redis_url", None)
        if redis_url:
            from .cluster import ClusterNode, make_store_fenced

            self.cluster = ClusterNode(self, redis_url, getattr(settings, "node_name", "node"),
                                       float(getattr(settings, "lease_s", 3.0)))
            make_store_fenced(self.store, self.cluster.check_lease)

    @property
    def settings_bot_delay(self) -> float:
        """``settings.bot_delay_s`` (seconds), 0.6 when no settings were given."""
        return float(getattr(self.settings, "bot_delay_s", 0.6))

    @property
    def ready_timeout_s(self) -> float:
        """``settings.ready_timeout_s``: the longest pause between deals (seconds, default 20)."""
        return float(getattr(self.settings, "ready_timeout_s", 20.0))

    @property
    def timeouts_to_auto(self) -> int:
        """``settings.timeouts_to_auto``: consecutive clock timeouts that turn 托管 on (default 2)."""
        return max(1, int(getattr(self.settings, "timeouts_to_auto", 2)))

    @property
    def public_url(self) -> str | None:
        """``settings.public_url`` (for invite links), or ``None``."""
        url = getattr(self.settings, "public_url", None)
        return url.rstrip("/") if isinstance(url, str) and url else None

    def next_room(self, room_id: str) -> str | None:
        """The room "play again" created from ``room_id`` while this server runs (any process of
        a cluster), or ``None``."""
        if self.cluster is not None:
            return self.cluster.next_room(room_id)  # type: ignore[no-any-return]
        t = self.tables.get(room_id)
        return t.info.next_room if t is not None else self.moved.get(room_id)

    def connected(self, room_id: str) -> list[bool]:
        """Per seat of ``room_id``: whether the seated person has an open connection (callable
        from a worker thread: a set changed meanwhile is read again). In a cluster: a connection
        on any live process."""
        if self.cluster is not None:
            return self.cluster.connected(room_id)  # type: ignore[no-any-return]
        t = self.tables.get(room_id)
        for _ in range(5):
            try:
                return t.connected() if t is not None else [False] * 4
            except RuntimeError:  # the loop changed the connections while this thread read them
                continue
        return [False] * 4

    async def run_db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run the blocking ``fn(*args)`` (database work) in :attr:`db_executor`; returns its result."""
        return await asyncio.get_running_loop().run_in_executor(self.db_executor, functools.partial(fn, *args))

    def restore(self, db: Any = None) -> int:
        """Rebuild every room with status ``playing`` by replaying its stored record.

        Timers (bots, clocks) start when the event loop runs (:meth:`start`); call this before
        serving. ``db`` is accepted for symmetry with the storage API and unused (each room is
        loaded with its own session). Rooms whose record cannot be replayed are logged and skipped.

        Returns:
            The number of tables restored (0 in cluster mode: the processes take the playing
            rooms over through their leases once they run).
        """
        n = 0
        if self.cluster is not None:
            return 0
        for room_id in self.store.playing_ids():
            if room_id in self.tables:
                continue
            table = self._restore_one(room_id)
            if table is None:
                continue
            self.tables[room_id] = table
            n += 1
        return n

    def _restore_one(self, room_id: str) -> Table | None:
        """Load and replay one playing room; a room that fails (a record that is not UTF-8, does
        not parse or does not replay) is marked :data:`DAMAGED` with a one-line log, and the other
        rooms go on (issue 11: one corrupt record stopped the server)."""
        try:
            info = self.store.load(room_id)
            if info is None:
                return None
            table = Table(self, info)
            table.restore_game()
            return table
        except Exception as e:  # noqa: BLE001 - a corrupt record must not stop the server
            text = (str(e).strip().splitlines() or [type(e).__name__])[0]
            log.error("room %s: cannot restore the game (%s); the room is marked %s", room_id, text, DAMAGED)
            try:
                self.store.mark_damaged(room_id)
            except Exception as e2:  # noqa: BLE001
                log.error("room %s: cannot mark the room %s: %s", room_id, DAMAGED, str(e2).splitlines()[0])
            return None

    async def start(self) -> int:
        """Restore the playing rooms and arm their bots and clocks (call at application startup).

        Returns:
            The number of tables restored (cluster mode: 0; the cluster node starts and takes
            free playing rooms over within ``lease_s / 3`` seconds).

        Raises:
            redis.exceptions.ConnectionError: cluster mode and Redis cannot be reached.
        """
        if self.cluster is not None:
            await self.cluster.start()
            return 0
        n = self.restore()
        until = time.monotonic() + self.restart_grace_s
        for table in list(self.tables.values()):
            table.restored_grace_until = until
            async with table.lock:
                table._schedule()
        return n

    async def shutdown(self) -> None:
        """Stop every timer and close every connection (call at application shutdown). In a
        cluster the tables are handed over: each finishes its action in progress, is stored, and
        its lease is released so that another process takes it at once."""
        if self.cluster is not None:
            await self.cluster.stop()
        self.closing = True
        for table in list(self.tables.values()):
            table.shutdown()
        await self.writer.flush()
        self.db_executor.shutdown(wait=False)

    async def open(self, room_id: str) -> Table | None:
        """The table of ``room_id`` for a new connection, loading the room if needed (``None``: no
        such room). A finished room gets a table showing the final state."""
        table = self.tables.get(room_id)
        if table is not None:
            return table
        lock = self._locks.setdefault(room_id, asyncio.Lock())
        async with lock:
            table = self.tables.get(room_id)
            if table is not None:
                return table
            table = await self.load_table(room_id)
            if table is not None:
                self.tables[room_id] = table
                if table.info.status == PLAYING:
                    async with table.lock:
                        table._schedule()
            return table

    async def load_table(self, room_id: str, schedule: bool = True) -> Table | None:
        """A new :class:`Table` of ``room_id`` from the database (game replayed from the stored
        record; a finished room gets its final state and stored game id), not registered and
        with no timer armed. ``None`` when there is no such room. ``schedule`` is accepted for
        the cluster's takeover and unused."""
        try:
            info = await self.run_db(self.store.load, room_id)
        except StoredRecordError as e:  # a row is missing: the game cannot be rebuilt
            log.error("room %s: cannot restore the game (%s); the room is marked %s", room_id, e, DAMAGED)
            await self.run_db(self.store.mark_damaged, room_id)
            info = await self.run_db(self.store.load, room_id)
        if info is None:
            return None
        table = Table(self, info)
        if info.status in (PLAYING, FINISHED) and info.record:
            try:
                table.restore_game()
            except Exception as e:  # noqa: BLE001 - a corrupt record must not stop the server
                log.error("room %s: cannot restore the game: %s", room_id, e)
        if info.status == FINISHED and table.final is not None:
            table.game_id = table.final["game_id"] = await self.run_db(self.store.game_id_of, room_id)
        info.next_room = await self.run_db(self.next_room, room_id) if self.cluster is not None \
            else self.moved.get(room_id)
        return table

    async def room_changed(self, room_id: str) -> None:
        """Reload ``room_id`` from the database and send its connections the new state (seats taken,
        bots added, players left). In a cluster every process's connections of the room hear it."""
        if self.cluster is not None:
            await self.cluster.room_changed(room_id)
            return
        table = self.tables.get(room_id)
        if table is None:
            return
        info = await self.run_db(self.store.load, room_id)
        if info is not None:
            await table.refresh(info)

    async def start_game(self, room_id: str) -> Table:
        """Start the game of ``room_id`` (its four seats filled; the caller checked the owner).

        Returns:
            The live table.
        Raises:
            LookupError: no such room.
            TimeoutError: cluster mode: no process could own the room in time.
        """
        if self.cluster is not None:
            await self.cluster.call(room_id, "start")
            return self.tables.get(room_id)  # type: ignore[return-value]
        info = await self.run_db(self.store.load, room_id)
        if info is None:
            raise LookupError(f"no room {room_id!r}")
        table = self.tables.get(room_id)
        if table is None:
            table = Table(self, info)
            self.tables[room_id] = table
        await table.begin(info)
        await self.writer.wait(room_id)  # the started game is stored when the API answers
        return table

    def revoke_session(self, session_key: str) -> int:
        """Close every websocket opened with the login session ``session_key`` (``auth.token_key``
        of its token) with code 4401 ``logged out``; call on the event loop (logout does).

        Returns:
            The number of connections closed (in a cluster: those of this process; the other
            processes close theirs when they hear of it).
        """
        n = 0
        if self.cluster is not None:
            for proxy in list(self.cluster.proxies.values()):
                for c in list(proxy.conns):
                    if c.session_key is not None and c.session_key == session_key:
                        c.close(4401, "logged out")
                        n += 1
            asyncio.get_running_loop().create_task(self.cluster.revoke_session(session_key))
            return n
        for table in list(self.tables.values()):
            for c in list(table.conns):
                if c.session_key is not None and c.session_key == session_key:
                    c.close(4401, "logged out")
                    n += 1
        return n

    async def moved_to(self, room_id: str, new_id: str) -> None:
        """"Play again" made ``new_id`` from the finished room ``room_id``: remember it and send every
        connection of the old room ``{"type": "moved", "room": new_id}``."""
        if self.cluster is not None:
            await self.run_db(self.cluster.set_next_room, room_id, new_id)
            await self.cluster.call(room_id, "moved", take=False, new=new_id)
            return
        self.moved[room_id] = new_id
        if len(self.moved) > 100_000:  # bound memory; the oldest entries go first
            for k in list(self.moved)[:50_000]:
                del self.moved[k]
        table = self.tables.get(room_id)
        if table is not None:
            async with table.lock:
                table.moved(new_id)
                table._broadcast()

    async def abandon(self, room_id: str) -> None:
        """End ``room_id``'s game unfinished (:meth:`Table.abandon`, at the owner in a cluster) and
        wait until it is stored.

        Raises:
            LookupError: no live table for the room.
            IllegalAction: no game, or the game is over.
        """
        if self.cluster is not None:
            await self.cluster.call(room_id, "abandon")
            return
        table = self.tables.get(room_id)
        if table is None:
            raise LookupError(f"no live table {room_id!r}")
        await table.abandon()
        await self.writer.wait(room_id)

    def again_lock(self, room_id: str) -> Any:
        """The lock "play again" of ``room_id`` holds (one new room, even from several processes)."""
        if self.cluster is not None:
            return self.cluster.lock(f"again:{room_id}")
        return self._again_lock

    def _finished(self, table: Table) -> None:
        """A game ended: drop the table once nobody is connected (kept while people look at it)."""
        if self.cluster is not None:
            asyncio.get_running_loop().create_task(self.cluster.release(table.id))
            return
        if not table.conns:
            self.tables.pop(table.id, None)

    def forget_if_idle(self, room_id: str) -> None:
        """Drop a waiting or finished room's table when it has no connection (memory)."""
        t = self.tables.get(room_id)
        if t is not None and not t.conns and (t.game is None or t.game.over):
            self.tables.pop(room_id, None)


class AppendBatcher:
    """Gathers the record appends of every table into one database transaction
    (:meth:`GameStore.append_many`), so that N tables acting at once cost one insert of N rows
    instead of N transactions (each of which held the interpreter in a worker thread, slowing
    the event loop). While one write runs the next appends queue up and go in the next.

    A failed multi-room write is repeated room by room, so that only the room at fault sees the
    error (:class:`DuplicateEventError` for a line stored twice) and the others are stored.

    Args:
        manager: the :class:`TableManager` (its ``store.games`` and ``db_executor``).
    """

    def __init__(self, manager: TableManager) -> None:
        self.manager = manager
        self._queue: list[tuple[str, int, list[str], asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        #: transactions run (multi-room writes and one-room fallbacks)
        self.transactions = 0

    async def append(self, room_id: str, index: int, lines: list[str]) -> None:
        """Store ``lines`` at ``index``, ... of the room's record with the next batch.

        Raises:
            DuplicateEventError, sqlalchemy errors: as :meth:`GameStore.append` for this room.
        """
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((room_id, index, lines, fut))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        await fut

    async def _run(self) -> None:
        games = self.manager.store.games
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                self.transactions += 1
                await self.manager.run_db(games.append_many, [(r, i, ls) for r, i, ls, _ in batch])
                for *_, fut in batch:
                    if not fut.done():
                        fut.set_result(None)
                continue
            except asyncio.CancelledError:
                for *_, fut in batch:
                    fut.cancel()
                raise
            except Exception as e:  # noqa: BLE001 - told to the rooms concerned
                if len(batch) == 1:
                    if not batch[0][3].done():
                        batch[0][3].set_exception(e)
                    continue
            for room_id, index, lines, fut in batch:  # one by one: only the faulty room fails
                try:
                    self.transactions += 1
                    await self.manager.run_db(games.append, room_id, index, lines)
                    if not fut.done():
                        fut.set_result(None)
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # noqa: BLE001
                    if not fut.done():
                        fut.set_exception(e)


class RecordWriter:
    """Stores the tables' record lines off the event loop (issue 11: a blocking save on the loop
    froze every table while the connection pool was exhausted; issue 10: append-only rows).

    Per room, writes run one at a time, in order, in :attr:`TableManager.db_executor`; lines
    appended while a write runs are merged into one batch (one transaction, one multi-row insert),
    so a slow database gets fewer, larger writes and no action waits for it. A failed write is
    retried with a growing pause (up to :data:`RETRIES` times); nothing is lost while the
    database comes back. A retry refused as a duplicate (:class:`~guandan.server.gamestore.
    DuplicateEventError`) whose rows equal the batch means the failed try had in fact been
    stored: it counts as done. Any other duplicate means another writer stored different lines
    (two owners of one table): it is logged as an error, counted in :attr:`lost`, and the room's
    later appends are dropped (they would leave holes); the game's end then stores the live
    record. A game's end (:meth:`finish`) is stored after the room's pending appends, then
    ``game_over`` is sent.

    Args:
        manager: the :class:`TableManager` (its ``store`` and ``db_executor``).
    """

    #: attempts of one write before it is given up (logged)
    RETRIES = 30

    def __init__(self, manager: TableManager) -> None:
        self.manager = manager
        self._pending: dict[str, deque[list[Any]]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: rooms whose rows conflict with this server's (appends dropped until the game ends)
        self._broken: set[str] = set()
        #: writes that failed for good (tests and monitoring)
        self.lost = 0
        #: writes that failed once and were retried
        self.retried = 0
        #: appends of all rooms gathered into one transaction
        self._batch = AppendBatcher(manager)
        #: write transactions run and record lines stored by them (benchmarks)
        self.batches = 0
        self.lines_written = 0
        #: per room, record lines stored so far (index of the first line not known stored); the
        #: cluster publishes a change's frames once its lines are stored (:meth:`wait_stored`)
        self.stored: dict[str, int] = {}
        self._progress: dict[str, asyncio.Event] = {}

    def start(self, room_id: str, lines: list[str]) -> None:
        """Queue a new game's header and first events (:meth:`GameStore.start`: the room becomes
        ``playing``)."""
        self._queue(room_id, ["start", 0, list(lines)])

    def append(self, room_id: str, index: int, lines: list[str]) -> None:
        """Queue record ``lines`` for indices ``index``, ``index + 1``, ... (:meth:`GameStore.append`)."""
        self._queue(room_id, ["append", index, list(lines)])

    def finish(self, table: Table, record: str, winner: int | None) -> None:
        """Queue the end of ``table``'s game: store it (``RoomStore.finish``), then send every
        connection ``{"type": "game_over", "winner_team", "game_id"}``."""
        self._queue(table.id, ["finish", table, record, winner])

    def _queue(self, room_id: str, item: list[Any]) -> None:
        q = self._pending.setdefault(room_id, deque())
        if q and q[-1][0] == "finish":  # nothing is written after a game's end
            return
        if item[0] == "append" and q and q[-1][0] == "append" and q[-1][1] + len(q[-1][2]) == item[1]:
            q[-1][2].extend(item[2])  # one batch with the lines still waiting
        else:
            q.append(item)
        task = self._tasks.get(room_id)
        if task is None or task.done():
            self._tasks[room_id] = asyncio.get_running_loop().create_task(self._run(room_id))

    def _fenced(self, room_id: str, q: Any, broken: bool) -> None:
        """A write refused because this process lost the table's lease (cluster): drop the room's
        queued writes (``broken``: and its later lines until the game ends) and hand the table to
        the new owner, which stores them."""
        q.clear()
        if broken:
            self._broken.add(room_id)
        if self.manager.cluster is not None:
            self.manager.cluster.demote(room_id, "fenced before a write")

    async def _run(self, room_id: str) -> None:
        games = self.manager.store.games
        q = self._pending.get(room_id)
        while q:
            item = q.popleft()
            if item[0] == "finish":
                self._broken.discard(room_id)
                for attempt in range(self.RETRIES):
                    try:
                        await self._finish(*item[1:])
                        break
                    except asyncio.CancelledError:
                        raise
                    except Exception as e:  # noqa: BLE001 - retried (storing is compare-and-set)
                        if getattr(e, "fenced", False):  # cluster: the new owner stores the end
                            self._fenced(room_id, q, broken=False)
                            break
                        self.retried += 1
                        if attempt == self.RETRIES - 1:
                            self.lost += 1
                            log.exception("room %s: storing the end of the game failed for good", room_id)
                        else:
                            log.warning("room %s: storing the end of the game failed; retrying", room_id)
                            await asyncio.sleep(min(5.0, 0.2 * (attempt + 1)))
                continue
            if room_id in self._broken:
                continue
            kind, index, lines = item
            for attempt in range(self.RETRIES):
                try:
                    if kind == "start":
                        await self.manager.run_db(games.start, room_id, lines[0], lines[1:])
                    elif attempt == 0:
                        await self._batch.append(room_id, index, lines)
                    else:
                        await self.manager.run_db(games.append, room_id, index, lines)
                    self.batches += 1
                    self.lines_written += len(lines)
                    self._stored_through(room_id, index + len(lines))
                    break
                except asyncio.CancelledError:
                    raise
                except DuplicateEventError:
                    if attempt > 0:
                        try:
                            stored = await self.manager.run_db(games.lines, room_id, index, index + len(lines))
                        except Exception:  # noqa: BLE001 - compared again on the next try
                            stored = None
                        if stored == lines:  # the earlier, failed-looking try had been stored
                            self._stored_through(room_id, index + len(lines))
                            break
                        if stored is None:
                            await asyncio.sleep(min(5.0, 0.2 * (attempt + 1)))
                            continue
                    self.lost += 1
                    self._broken.add(room_id)
                    log.error("room %s: record line %d is stored already with other content (another server "
                              "writes this table?); this server stops storing its lines", room_id, index)
                    if self.manager.cluster is not None:  # another owner took the table: stop here
                        self.manager.cluster.demote(room_id, "a record line was stored by another owner")
                    break
                except Exception as e:  # noqa: BLE001 - retried
                    if getattr(e, "fenced", False):  # cluster: the lease is lost; the new owner writes
                        self._fenced(room_id, q, broken=True)
                        break
                    self.retried += 1
                    if attempt == self.RETRIES - 1:
                        self.lost += 1
                        self._broken.add(room_id)
                        log.exception("room %s: writing the record failed for good", room_id)
                    else:
                        log.warning("room %s: writing the record failed; retrying", room_id)
                        await asyncio.sleep(min(5.0, 0.2 * (attempt + 1)))
        self._pending.pop(room_id, None)
        self._tasks.pop(room_id, None)
        ev = self._progress.pop(room_id, None)
        if ev is not None:
            ev.set()  # the writer stopped: nobody waits for lines it will not write

    async def _finish(self, table: Table, record: str, winner: int | None) -> None:
        try:
            table.game_id = await self.manager.run_db(self.manager.store.finish, table.info, record, winner)
        except Exception as e:  # the game is stored as the room's record at least
            if getattr(e, "fenced", False):  # cluster: no longer the owner; the new owner stores it
                raise
            log.exception("room %s: storing the finished game failed", table.id)
            await self.manager.run_db(self.manager.store.save, table.id, record, FINISHED)
        go: dict[str, Any] = {"type": "game_over", "winner_team": winner, "game_id": table.game_id}
        if table.game is not None and table.game.over:
            go["summary"] = game_summary(table.game)
        table.final = {k: v for k, v in go.items() if k != "type"}
        table._broadcast()  # the state a reloaded page gets now carries the stored game's id
        for c in list(table.conns):
            c.send(go)
        self.manager._finished(table)

    def _stored_through(self, room_id: str, n: int) -> None:
        if n > self.stored.get(room_id, 0):
            self.stored[room_id] = n
        ev = self._progress.pop(room_id, None)
        if ev is not None:
            ev.set()

    async def wait_stored(self, room_id: str, n: int, timeout_s: float = 30.0) -> None:
        """Wait (at most ``timeout_s`` seconds) until the room's record lines ``0 .. n - 1`` are
        stored, or its writer has nothing left to do (a finished game, a refused write); unlike
        :meth:`wait`, lines queued later (the next bot move) are not waited for."""
        end = time.monotonic() + timeout_s
        while self.stored.get(room_id, 0) < n:
            task = self._tasks.get(room_id)
            left = end - time.monotonic()
            if task is None or task.done() or left <= 0:
                return
            ev = self._progress.setdefault(room_id, asyncio.Event())
            try:
                await asyncio.wait_for(ev.wait(), left)
            except TimeoutError:
                return

    def forget(self, room_id: str) -> None:
        """Drop what is known of ``room_id``'s stored lines (its game ended or moved away)."""
        self.stored.pop(room_id, None)

    async def wait(self, room_id: str, timeout_s: float = 30.0) -> None:
        """Wait (at most ``timeout_s`` seconds) until the room's queued writes are done."""
        task = self._tasks.get(room_id)
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=timeout_s)

    async def flush(self, timeout_s: float = 30.0) -> None:
        """Wait (at most ``timeout_s`` seconds) until every queued write is done."""
        end = time.monotonic() + timeout_s
        while self._tasks and time.monotonic() < end:
            await asyncio.wait(list(self._tasks.values()), timeout=max(0.01, end - time.monotonic()))


def frame_json(frame: dict[str, Any]) -> str:
    """Compact JSON text of a frame (UTF-8 kept); a :class:`SharedFrame` is serialised only once."""
    if isinstance(frame, SharedFrame):
        return frame.text()
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


class SharedFrame(dict):  # type: ignore[type-arg]
    """A frame queued for several connections (every spectator gets the same state frame): its
    JSON text is made once, when the first writer sends it, not once per connection. Do not change
    it after queueing."""

    __slots__ = ("_text",)

    def text(self) -> str:
        """The compact JSON text (cached)."""
        try:
            return self._text
        except AttributeError:
            self._text: str = json.dumps(self, ensure_ascii=False, separators=(",", ":"))
            return self._text


__all__ = [
    "BOT_NAMES",
    "DAMAGED",
    "Conn",
    "RoomInfo",
    "RoomStore",
    "SeatInfo",
    "Table",
    "TableManager",
    "error_frame",
    "frame_json",
    "public_view",
    "room_info",
    "view_for",
]
