"""The small interfaces a live table talks to, passed in from outside (DESIGN.md section 6).

The game flow (:class:`guandan.server.table.flow.Table`) decides; it does not store, send or
coordinate. What it needs from the process it runs in is described here as ``typing.Protocol``
classes, each with a single-process and a cluster implementation side by side:

==================  ==========================================  ==========================================
interface           single process                              cluster
==================  ==========================================  ==========================================
:class:`FrameSink`  :class:`guandan.server.connections.Conn`     :class:`guandan.server.cluster.proxy.ChannelConn`
:class:`RecordSink` :class:`guandan.server.record_writer.RecordWriter` (the same writer; its store is fenced)
:class:`Ownership`  :class:`guandan.server.manager.SoleOwner`   :class:`guandan.server.cluster.node.ClusterNode`
:class:`TableHost`  :class:`guandan.server.manager.TableManager` (with a cluster node attached or not)
==================  ==========================================  ==========================================
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .flow import Table


class FrameSink(Protocol):
    """Where one connection's frames go (a websocket's queue, or a cluster channel of one seat).

    Attributes:
        user_id: the account behind it (``None``: an anonymous spectator); the table finds the
            seat from it (``RoomInfo.seat_of``).
        session_key: the login session it was opened with (logout closes it), or ``None``.
    """

    user_id: int | None
    session_key: str | None

    def send(self, frame: dict[str, Any]) -> None:
        """Queue ``frame`` (a JSON-ready dict); never blocks."""

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Stop sending; the socket (if any) closes with ``code`` and ``reason``."""


class RecordSink(Protocol):
    """Where a table's record lines (JSON Lines, header first) are stored, in order, off the loop."""

    def start(self, room_id: str, lines: list[str]) -> None:
        """Queue a new game's header and first events (the room becomes ``playing``)."""

    def append(self, room_id: str, index: int, lines: list[str]) -> None:
        """Queue ``lines`` as the record's lines ``index``, ``index + 1``, ..."""

    def finish(self, table: Table, record: str, winner: int | None) -> None:
        """Queue the end of ``table``'s game (stored, then ``game_over`` is sent to everyone)."""


class Ownership(Protocol):
    """Who may write a table: one process owns each live table (fencing, cluster leases)."""

    def check_lease(self, room: str) -> None:
        """Raise (an error whose ``fenced`` attribute is true) when this process may no longer
        write ``room`` (blocking; database threads call it)."""

    def demote(self, room: str, why: str) -> None:
        """The table was found owned by another process: stop it here at once."""


class TableHost(Protocol):
    """What a :class:`~guandan.server.table.flow.Table` reads from the process hosting it.

    Attributes:
        settings: server settings (``seeded_deals`` is read; tests deal from the room seed).
        writer: where the record lines go.
        bot_gate: the lock automatic moves of every table take in turn (one per loop pass).
        search_gate: the fair share of the searching bots' process pool between tables
            (:class:`~guandan.server.table.search_gate.SearchGate`), or ``None`` (first come,
            first served).
        closing: the process is shutting down (no timer is armed any more).
        away_grace_s: seconds before the bot covers a person with no open connection.
    """

    settings: Any
    #: room id -> :class:`~guandan.server.table.competition.Competition` of the tournament tables
    competitions: dict[str, Any]
    writer: RecordSink
    bot_gate: asyncio.Lock
    search_gate: Any
    closing: bool
    away_grace_s: float

    @property
    def settings_bot_delay(self) -> float:
        """Seconds a bot waits before acting."""

    @property
    def ready_timeout_s(self) -> float:
        """The longest pause between deals (seconds)."""

    @property
    def timeouts_to_auto(self) -> int:
        """Consecutive clock timeouts that turn 托管 on."""

    @property
    def public_url(self) -> str | None:
        """The server's public URL (invite links), or ``None``."""

    def board_game(self, board: dict[str, Any]) -> Any:
        """A board room's game: the board's (``Board.to_json``) one deal at the start of play,
        over when that deal ends (raises ``BoardError`` for a bad board)."""

    def replay_board(self, lines: list[str]) -> Any:
        """A board room's stored record replayed (a ``ReplayResult`` whose game is over at the
        deal's end; raises ``RecordError`` when it does not replay)."""


__all__ = ["FrameSink", "Ownership", "RecordSink", "TableHost"]
