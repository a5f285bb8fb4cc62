"""Duplicate play (issue 22): boards (a fixed deal played by many), matchpoint scoring and the
board records that replay a play exactly. Plain functions over plain data, used by the server,
the CLI and bots-only events alike (DESIGN.md section 6); no web code here."""

from .boards import (
    BOARD_FORMAT,
    BOARD_VERSION,
    Board,
    BoardError,
    BoardPlay,
    BoardTribute,
    OneDealGame,
    deal_board,
    deal_board_set,
    play_board,
    side_result,
)
from .matchpoints import (
    SINGLE_RESULT_PCT,
    BoardTable,
    DayScores,
    Standing,
    matchpoints,
    percentages,
    week_leaderboard,
)

__all__ = [
    "BOARD_FORMAT", "BOARD_VERSION", "Board", "BoardError", "BoardPlay", "BoardTribute", "OneDealGame",
    "deal_board", "deal_board_set", "play_board", "side_result",
    "SINGLE_RESULT_PCT", "BoardTable", "DayScores", "Standing", "matchpoints", "percentages",
    "week_leaderboard",
]
