"""The daily duplicate challenge (issue 22): what is decided, with no I/O (DESIGN.md section 6).

Each UTC day has one challenge: a set of boards (:data:`DEFAULT_BOARDS`, 12) dealt from the
operating system's secure random source (:func:`guandan.duplicate.deal_board_set` with no seed),
under a preset (``official``), against bots of one level (``normal``). A player plays each board
once, at seat :data:`PLAYER_SEAT` (everyone plays the same seat, so every result on a board is
comparable), with a bot partner and two bot opponents; the board's result for the player's side
is :func:`guandan.duplicate.side_result` (levels, R35; Anhui points under a points preset).

Scoring (:mod:`guandan.duplicate.matchpoints`): on each board, 1 matchpoint per result beaten, ½
per tie, as a percentage of the other results (a lone result scores 50 %); a day's standing is a
player's average percentage over the boards played, a week's over every board played Monday to
Sunday (ISO week, UTC). Only ranked plays (registered accounts) make the field; a guest plays
for fun and gets no percentage.

Who may see what (:func:`board_visible`): nothing about a board (cards, first leader, anyone's
result or play) is shown to a player before that player has played it (started it and its deal
ended), until the day's challenge closes (:func:`closes_at`, the next UTC midnight); then all of
it is public, every result with its record. The live leaderboards show players' averages and
board counts only, never a board's result.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from guandan.core.deal import DealResult
from guandan.core.rules import RuleSet
from guandan.duplicate import Board, DayScores, Standing, deal_board_set, side_result, week_leaderboard

__all__ = [
    "DEFAULT_BOARDS", "DEFAULT_BOTS", "DEFAULT_PRESET", "PLAYER_SEAT", "ChallengeConfig", "Play",
    "board_visible", "challenge_day", "closes_at", "day_scores", "deal_boards", "is_closed", "parse_day",
    "player_result", "standings_json", "week_days",
]

#: Boards of a day's challenge (issue 22: default 12).
DEFAULT_BOARDS = 12
#: The rule preset of the challenge.
DEFAULT_PRESET = "official"
#: The level of the three bots (partner and opponents).
DEFAULT_BOTS = "normal"
#: The seat every player plays (south); the partner is seat 2, the opponents seats 1 and 3.
PLAYER_SEAT = 0

_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class ChallengeConfig:
    """How a new day's challenge is made (server settings).

    Attributes:
        boards: boards per day (1-52).
        preset: the rule preset's name (``RuleSet.preset``).
        bots: the bots' level (``easy``, ``normal``, ``hard``, ``expert``).
        tribute_share: probability that a board starts after tribute (0-1).
    Raises:
        ValueError: a value out of range or an unknown preset.
    """

    boards: int = DEFAULT_BOARDS
    preset: str = DEFAULT_PRESET
    bots: str = DEFAULT_BOTS
    tribute_share: float = 0.5

    def __post_init__(self) -> None:
        if isinstance(self.boards, bool) or not isinstance(self.boards, int) or not 1 <= self.boards <= 52:
            raise ValueError(f"a challenge has 1-52 boards, not {self.boards!r}")
        RuleSet.preset(self.preset)  # raises for an unknown preset
        if not 0.0 <= float(self.tribute_share) <= 1.0:
            raise ValueError(f"tribute_share must be in [0, 1], not {self.tribute_share!r}")


def deal_boards(config: ChallengeConfig) -> list[Board]:
    """A new day's boards, numbered 1..``config.boards``, from :class:`secrets.SystemRandom` (no
    seed exists: the boards cannot be derived from anything public)."""
    rules = RuleSet.preset(config.preset)
    return deal_board_set(config.boards, rules, tribute_share=config.tribute_share, preset=config.preset)


# -- days ------------------------------------------------------------------------------------------


def challenge_day(now: datetime) -> date:
    """The challenge day of the moment ``now`` (an aware datetime): its UTC date.

    Raises:
        ValueError: ``now`` is naive (no time zone).
    """
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    return now.astimezone(UTC).date()


def closes_at(day: date) -> datetime:
    """When the challenge of ``day`` closes: the next UTC midnight (aware datetime)."""
    return datetime.combine(day + timedelta(days=1), time(0, 0), tzinfo=UTC)


def is_closed(day: date, now: datetime) -> bool:
    """Whether the challenge of ``day`` is closed at ``now`` (everything about it is public)."""
    return now >= closes_at(day)


def week_days(day: date) -> list[date]:
    """The seven days, Monday first, of the ISO week (UTC) holding ``day``."""
    monday = day - timedelta(days=day.weekday())
    return [monday + timedelta(days=i) for i in range(7)]


def parse_day(text: Any) -> date:
    """A day from its ISO text ``YYYY-MM-DD``.

    Raises:
        ValueError: not a string of that shape, or not a date.
    """
    if not isinstance(text, str) or not _DAY_RE.fullmatch(text):
        raise ValueError("a day is written YYYY-MM-DD")
    return date.fromisoformat(text)


# -- plays and visibility --------------------------------------------------------------------------


@dataclass(frozen=True)
class Play:
    """One account's play of one board (plain data read from the store).

    Attributes:
        board: the board's number (1-based).
        player: the account's id; ``name``: its name.
        ranked: a registered account's play (in the field); a guest's is not.
        result: the side's result (:func:`player_result`), ``None`` while the deal is played.
        room: the room it is played in; ``game``: the stored game's id once finished.
    """

    board: int
    player: int
    name: str
    ranked: bool
    result: int | None
    room: str | None = None
    game: int | None = None

    @property
    def finished(self) -> bool:
        """The deal ended (the result is known)."""
        return self.result is not None


def board_visible(board: int, viewer: int | None, plays: Iterable[Play], closed: bool) -> bool:
    """Whether ``viewer`` (an account id, ``None`` for nobody logged in) may see anything about
    board ``board``: its cards, its first leader, its results and their records.

    Before the day's challenge closes, only when the viewer has finished a *ranked* play of the
    board: a board started but not finished shows nothing more than the live table's own seat
    view, and a guest's play (unranked, free to make) shows nothing, or a guest account could
    learn a board and then play it ranked. After the close, to everyone except a viewer whose
    own play of it is still unfinished (a board started just before midnight is not finished
    with every hand in view).
    """
    unfinished = viewer is not None and any(p.board == board and p.player == viewer and not p.finished
                                            for p in plays)
    if closed:
        return not unfinished
    if viewer is None:
        return False
    return any(p.board == board and p.player == viewer and p.finished and p.ranked for p in plays)


def player_result(rules: RuleSet, result: DealResult, seat: int = PLAYER_SEAT) -> int:
    """The result of a finished board deal for the side of ``seat``
    (:func:`guandan.duplicate.side_result`: ``+3/+2/+1`` or ``-1/-2/-3`` levels, R35; Anhui
    points under a points preset)."""
    return side_result(rules, result, seat % 2)


# -- scoring ---------------------------------------------------------------------------------------


def day_scores(n_boards: int, plays: Iterable[Play]) -> DayScores:
    """The day's score tables: every ranked, finished play, keyed by account id
    (:class:`guandan.duplicate.DayScores`)."""
    scores = DayScores(range(1, n_boards + 1))
    for p in plays:
        if p.ranked and p.result is not None and 1 <= p.board <= n_boards:
            scores.add(p.board, p.player, p.result)
    return scores


def standings_json(standings: Sequence[Standing], names: dict[Hashable, str]) -> list[dict[str, Any]]:
    """Leaderboard lines as JSON: ``{rank, name, pct, boards}`` (``pct`` rounded to 0.01)."""
    return [{"rank": s.rank, "name": names.get(s.player, "?"), "pct": round(s.pct, 2), "boards": s.boards}
            for s in standings]


def week_standings(days: Iterable[DayScores]) -> list[Standing]:
    """The week's leaderboard: the average percentage over every board played on ``days``."""
    return week_leaderboard(days)
