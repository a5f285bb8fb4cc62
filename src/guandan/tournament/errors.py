"""Errors of the tournament engine: one :class:`TournamentError` subclass per case.

Every error carries a stable ``code`` (a snake_case string the web layer and the CLI translate into the
player's language) and ``params`` (a dict of plain JSON values naming what went wrong: the round, the table,
the entry id, the bad value). The English message is for logs and the CLI only. All errors are
``ValueError`` subclasses, like the rules core's (DESIGN.md section 2).
"""

from __future__ import annotations

from typing import Any


class TournamentError(ValueError):
    """Base class. ``code``: stable identifier; ``params``: JSON-ready details of the case."""

    code = "tournament_error"

    def __init__(self, message: str, **params: Any) -> None:
        super().__init__(message)
        self.params: dict[str, Any] = params

    def to_dict(self) -> dict[str, Any]:
        """``{"code": ..., "params": {...}, "message": ...}`` for an API answer."""
        return {"code": self.code, "params": dict(self.params), "message": str(self)}


class ConfigError(TournamentError):
    """A tournament setting is invalid (format, rounds, tie-break name, group or knock-out size)."""

    code = "bad_config"


class StateError(TournamentError):
    """A saved tournament state cannot be read (bad JSON shape, unknown version, missing field)."""

    code = "bad_state"


class UnknownEntry(TournamentError):
    """An entry id that the tournament does not hold."""

    code = "unknown_entry"


class DuplicateEntry(TournamentError):
    """An entry id (or an entry name) that is already taken."""

    code = "duplicate_entry"


class EntryWithdrawn(TournamentError):
    """An action on an entry that has withdrawn (it is not paired again)."""

    code = "entry_withdrawn"


class UnknownRound(TournamentError):
    """A round number that has not been paired."""

    code = "unknown_round"


class UnknownTable(TournamentError):
    """A table number that the round does not have."""

    code = "unknown_table"


class NotEnoughEntries(TournamentError):
    """Fewer than two active entries, or too few for the groups and knock-out asked for."""

    code = "not_enough_entries"


class RoundIncomplete(TournamentError):
    """The previous round still has tables without a final result (pending or disputed)."""

    code = "round_incomplete"


class RoundHasResults(TournamentError):
    """Re-pairing a round after its first result (or a table's claim) exists."""

    code = "round_has_results"


class NoMoreRounds(TournamentError):
    """Every round the tournament was created with has been paired (or the knock-out has a champion)."""

    code = "no_more_rounds"


class ImpossibleLevel(TournamentError):
    """A level outside 2..A, or a pass of A by a side that is not at A (R6, R36, R37)."""

    code = "impossible_level"


class InvalidResult(TournamentError):
    """A result that contradicts itself: ``params["reason"]`` is one of the stable reasons
    ``negative_count``, ``not_a_count``, ``bye_table``, ``extra_deal_needed``, ``extra_deal_not_needed``,
    ``absent_with_play``, ``team_deals_needed``, ``team_deals_not_team``, ``bad_team_deal``,
    ``penalty_levels``, ``bad_side``, ``knockout_advanced`` (a correction or penalty that would change the
    winner of a knock-out match whose next round is paired)."""

    code = "invalid_result"


class NoWinner(TournamentError):
    """A knock-out match that nobody won, so nobody goes through: both entries absent (R58: absent is
    0 field points, never a win) or both sides lost the match by penalty (R54). ``params``: ``round``,
    ``table``, ``entries`` (the two entry ids) and ``reason`` (``"both_absent"`` or ``"both_lose"``).
    Raised when the next knock-out round (or, after the final, the champion) is asked for; the result
    itself is recorded as it happened, and a correction that names a winner lets the knock-out go on."""

    code = "no_winner"


class ResultAlreadyEntered(TournamentError):
    """A final result exists for the table: entering it again is refused (use a correction)."""

    code = "result_already_entered"


class NoResultToCorrect(TournamentError):
    """A correction or decision for a table that has no result or no dispute."""

    code = "no_result"


class NotAtTable(TournamentError):
    """A pair entering a table's result is not one of the table's two entries."""

    code = "not_at_table"


class NotDirector(TournamentError):
    """An organiser's action by someone who is neither the organiser nor a co-director."""

    code = "not_director"
