"""pyguandan rules core: the standard library only, no I/O, no printing, no global randomness.

Public API (see the README for an example)::

    from guandan.core import Game, RuleSet, parse_cards, classify, beats, legal_plays
"""

from .cards import (
    RANK_CHARS,
    card_text,
    card_unicode,
    cards_text,
    counts_of,
    parse_card,
    parse_cards,
    parse_rank,
    rank_char,
    wild_face,
)
from .deal import Deal, DealResult, deal_outcome, partner, team_of
from .errors import GuandanError, IllegalAction, NotationError, RuleConfigError
from .match import Game, Pending, action_from_json, action_to_json, shuffle_deal
from .movegen import legal_plays
from .plays import (
    PASS,
    PLAY_TYPES,
    Play,
    PlayT,
    as_play,
    beats,
    canonical,
    classify,
    play_key,
)
from .rules import PRESET_NAMES, PRESETS, RuleSet, apply_overrides, parse_override
from .scoring import MatchScore, Settlement, anhui_points, anhui_title, settle
from .views import SeatView, seat_view


def legal_actions(game: Game) -> list[PlayT]:
    """Legal actions of the seat to act in ``game`` (PASS first when following)."""
    return game.legal_actions()


def check(game: Game, action: object, seat: int | None = None) -> PlayT:
    """Validate ``action``; raises :class:`IllegalAction` with a machine-readable reason."""
    return game.check(action, seat)


def apply(game: Game, action: object, seat: int | None = None) -> PlayT:
    """Check and apply ``action`` to ``game``; returns the normalised action."""
    return game.apply(action, seat)


__all__ = [
    "RANK_CHARS", "card_text", "card_unicode", "cards_text", "counts_of", "parse_card",
    "parse_cards", "parse_rank", "rank_char", "wild_face",
    "Deal", "DealResult", "deal_outcome", "partner", "team_of",
    "GuandanError", "IllegalAction", "NotationError", "RuleConfigError",
    "Game", "Pending", "action_from_json", "action_to_json", "shuffle_deal",
    "legal_plays", "PASS", "PLAY_TYPES", "Play", "PlayT", "as_play", "beats", "canonical",
    "classify", "play_key", "PRESET_NAMES", "PRESETS", "RuleSet", "apply_overrides",
    "parse_override", "MatchScore", "Settlement", "anhui_points", "anhui_title", "settle",
    "SeatView", "seat_view", "legal_actions", "check", "apply",
]
