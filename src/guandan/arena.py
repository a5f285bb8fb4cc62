"""Compatibility module: the duplicate arena now lives in :mod:`guandan.evaluation.arena`.

``guandan.arena`` keeps working for code written against it; new code imports
``guandan.evaluation.arena`` (CHANGELOG.md, "Moved modules").
"""

from __future__ import annotations

from guandan.evaluation.arena import (
    Z95,
    ArenaResult,
    DealRecord,
    Progress,
    Timer,
    decision_summary,
    duplicate_match,
    game_hand_source,
    normal_ci,
    play_board_deal,
    play_duplicate_game,
    play_game,
    wilson,
)

__all__ = [
    "Z95", "ArenaResult", "DealRecord", "Progress", "Timer", "decision_summary", "duplicate_match",
    "game_hand_source", "normal_ci", "play_board_deal", "play_duplicate_game", "play_game", "wilson",
]
