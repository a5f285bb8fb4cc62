"""Old import path of the live tables, kept for code that imports from it (nothing in the package does).

The former ``tables`` module is now split, one concern a module (issue 24):
:mod:`guandan.server.table` (the game flow as plain code: ``flow``, ``info``, ``views``, ``frames``,
``bots``, ``ports``), :mod:`guandan.server.connections` (``Conn``), :mod:`guandan.server.roomstore`
(``RoomStore``, ``room_info``), :mod:`guandan.server.manager` (``TableManager``),
:mod:`guandan.server.record_writer` and :mod:`guandan.server.append_batcher`. Import from those;
patching a name here does not change the module that uses it.
"""

from __future__ import annotations

from .append_batcher import AppendBatcher
from .connections import MAX_QUEUE, Conn
from .manager import TableManager
from .record_writer import RecordWriter
from .roomstore import RoomStore, room_info
from .table.bots import (
    BOT_NAMES,
    BOT_PROCESSES,
    DIFFICULTIES,
    DIFFICULTY_AGENTS,
    DIFFICULTY_CANDIDATES,
    SEARCH_DIFFICULTIES,
    SERVER_BOT_SPECS,
    bot_agent,
    bot_difficulty,
    shutdown_bot_pool,
    think_off_loop,
)
from .table.flow import Table
from .table.frames import SharedFrame, error_frame, frame_json
from .table.info import DAMAGED, FINISHED, PLAYING, WAITING, RoomInfo, SeatInfo
from .table.views import (
    RESULT_CODES,
    deal_result_frame,
    game_summary,
    public_view,
    rebuild_deal_result,
    received_cards,
    view_for,
)

__all__ = [
    "BOT_NAMES", "BOT_PROCESSES", "DAMAGED", "DIFFICULTIES", "DIFFICULTY_AGENTS", "DIFFICULTY_CANDIDATES",
    "FINISHED", "MAX_QUEUE", "PLAYING", "RESULT_CODES", "SEARCH_DIFFICULTIES", "SERVER_BOT_SPECS", "WAITING",
    "AppendBatcher", "Conn", "RecordWriter", "RoomInfo", "RoomStore", "SeatInfo", "SharedFrame", "Table",
    "TableManager", "bot_agent", "bot_difficulty", "deal_result_frame", "error_frame", "frame_json",
    "game_summary", "public_view", "rebuild_deal_result", "received_cards", "room_info", "shutdown_bot_pool",
    "think_off_loop", "view_for",
]
