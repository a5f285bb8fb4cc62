"""Board rooms: a room whose game is one duplicate board's deal (the daily challenge, issue 22).

The live table (:mod:`guandan.server.table.flow`) cannot import :mod:`guandan.duplicate` (its
import contract); it asks its host (:class:`~guandan.server.table.ports.TableHost`, the
:class:`~guandan.server.manager.TableManager`) for the game of a room that carries a board
(``RoomInfo.board``), and the manager answers with these two functions. The game starts at the
board's play phase (its tribute already exchanged, :meth:`Board.start_game`) and is over when
the deal ends (:class:`~guandan.duplicate.boards.OneDealGame`); its record is a board record
(:mod:`guandan.duplicate.board_records`), which a restart replays with :func:`replay_board`.
"""

from __future__ import annotations

from typing import Any

from guandan.core.match import Game
from guandan.duplicate.board_records import replay_board_lines
from guandan.duplicate.boards import Board
from guandan.records import ReplayResult

__all__ = ["board_game", "replay_board"]


def board_game(board: dict[str, Any]) -> Game:
    """The game of a board room: ``board``'s deal at the start of play, over at the deal's end.

    Args:
        board: the board's JSON object (:meth:`Board.to_json`).
    Raises:
        BoardError: the board is malformed or cannot start (R7, R44-R49).
    """
    return Board.from_json(board, check=False).start_game(one_deal=True)


def replay_board(lines: list[str]) -> ReplayResult:
    """A board room's stored record (header with ``board``, then its events) replayed and
    verified; the game is over if the record reaches the deal's end.

    Raises:
        RecordError: the record does not replay (:func:`replay_board_lines`).
    """
    return replay_board_lines(lines, one_deal=True)
