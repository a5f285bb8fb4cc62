"""Error hierarchy of the rules core.

Every error the core raises for bad input derives from :class:`GuandanError`, itself a
``ValueError``, so callers can catch one class (DESIGN.md section 2).
"""

from __future__ import annotations


class GuandanError(ValueError):
    """Base class of every error raised by :mod:`guandan.core` for bad input."""


class NotationError(GuandanError):
    """A card or rank could not be read. ``token`` is the offending text."""

    def __init__(self, token: str, message: str | None = None) -> None:
        self.token = token
        super().__init__(message or f"bad card notation {token!r}")


class RuleConfigError(GuandanError):
    """An unknown rule option or an invalid value for a known option (docs/rules.md section P)."""


class IllegalAction(GuandanError):
    """An action that the rules do not allow in the current state.

    ``reason`` is a machine-readable code (one of :data:`REASONS`); ``str(error)`` is a
    one-line human explanation.
    """

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


#: Machine-readable reasons carried by :class:`IllegalAction`.
REASONS = (
    "game_over",  # nothing is pending
    "wrong_phase",  # e.g. a play during the tribute phase
    "not_your_turn",
    "not_in_hand",  # the cards are not all in the acting seat's hand
    "not_a_reading",  # the cards cannot be read as the declared play (R9-R22, R17)
    "ambiguous",  # the declared reading is missing and several exist (R17, EC-47)
    "does_not_beat",  # the play does not beat the table (R23-R26)
    "must_lead",  # a leader tried to pass (R27, EC-23)
    "tribute_not_highest",  # tribute must be the highest non-wild card (R45, EC-31)
    "return_too_high",  # the return exceeds the rank limit (R47, EC-38)
    "malformed",  # not an action at all
)
