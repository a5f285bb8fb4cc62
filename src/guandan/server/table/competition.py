"""A competition table (issue 21, online tournament rounds): what changes at a table of a tournament.

Plain code, no I/O (contract ``table-flow``). The server's :mod:`guandan.server.tournament_rounds`
registers one :class:`Competition` per room in ``TableHost.competitions``; the table's flow calls the
hooks below:

* **Match clock (R58).** :func:`call_time` at the deadline: the deal in progress is played to its end
  (tribute and return included) and the game ends there (:meth:`guandan.core.match.Game.call_time`);
  in the pause between two deals the game ends at once. The deadline is in the state frame (``competition``), so the
  table shows it, and it is stored by the server, so it survives a restart.
* **Delayed spectating.** A spectator never sees a deal in progress: :func:`spectator_view` replaces the
  public view by the levels, the deal number and the score (no hands, no plays of the current deal);
  finished deals reach everyone through the ``deal_result`` frames as at any table.
* **Extra deal (R58).** A drawn knock-out match is settled by one deal at level 2 won by the team that
  takes 头游: the server opens a new room with the same seats whose game is that one deal
  (``call_time(table, play_deal=True)`` as it starts).
* **Timeouts per pair (R54).** :func:`timed_out` counts each move-clock timeout against the seat's pair
  and tells the listener, which stores the count; the engine turns the 3rd and later ones into levels
  for the opponents. With a move clock there is no 托管 (:func:`strict`): an absent person's clock
  runs out like a present one's, and the clock's move is R53's (:func:`timeout_move`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from guandan.core.cards import rank_char
from guandan.core.plays import STRENGTH


@dataclass
class Competition:
    """One table of an online round: ``tournament_id``, ``round``, ``table`` (the match's table number),
    ``deadline`` (epoch seconds when the match clock runs out; None: untimed), ``timeouts`` per side
    (``[a, b]``: seats 0/2 and 1/3) and the ``listener`` (the server's rounds service: ``timed_out(room,
    side, count)`` is called with the table lock held and must not block)."""

    tournament_id: int
    round: int
    table: int
    deadline: float | None = None
    timeouts: list[int] = field(default_factory=lambda: [0, 0])
    listener: Any = None
    #: R58's extra deal of a drawn knock-out match: this game is one deal at level 2
    play_deal: bool = False
    #: the tournament's decision once the result is in (:func:`guandan.tournament.online.decision_of`):
    #: the game-over panel shows it instead of the winner by raw levels
    decision: dict[str, Any] | None = None

    def frame(self, game: Any) -> dict[str, Any]:
        """The state frame's ``competition`` object: ``{"tournament", "round", "table", "deadline_ms"
        (epoch ms or null), "time_called", "timeouts": [a, b], "decision"}`` (``decision``: null until
        the match's result is in the tournament, then what the standings say, after R54 penalties)."""
        return {"tournament": self.tournament_id, "round": self.round, "table": self.table,
                "deadline_ms": None if self.deadline is None else int(self.deadline * 1000),
                "time_called": bool(game is not None and game.time_called), "timeouts": list(self.timeouts),
                "decision": self.decision}


def spectator_view(game: Any, names: list[str]) -> dict[str, Any]:
    """What a spectator of a competition table sees during the game: the seats' names, the levels of
    both teams (as ``"2".."A"``), the level being played, the deal number and how many deals are over.
    No card and no action of the deal in progress (delayed spectating)."""
    return {"delayed": True, "seat_names": list(names),
            "levels": [rank_char(x) for x in game.score.levels],
            "level": rank_char(game.deal.level) if not game.over else None,
            "deal_number": game.deal_number, "deals_done": len(game.settlements), "over": bool(game.over)}


def timed_out(table: Any, seat: int) -> None:
    """A move-clock timeout of ``seat`` (R53) at a competition table: one more for its pair (R54)."""
    comp = table.manager.competitions.get(table.id)
    if comp is None:
        return
    side = seat % 2
    comp.timeouts[side] += 1
    if comp.listener is not None:
        comp.listener.timed_out(table.id, "ab"[side], comp.timeouts[side])


def call_time(table: Any, play_deal: bool = False) -> bool:
    """R58: the match clock of ``table`` ran out (call with the table lock held). Returns True when
    time was called now, False when the game is over, not started or time was already called.

    The game finishes the deal in progress, tribute and return included, even when no card of it has
    been given yet: a deal is in progress once the pause between deals is over. During the pause the
    game ends at once and is stored like any finished game. ``play_deal``: R58's extra deal: time is
    called as the game starts and its first deal is played (at level 2)."""
    game = table.game
    if game is None or game.over or game.time_called:
        return False
    game.call_time(play_deal=play_deal or table.between is None)
    table._sync_lines()
    table._store_new_lines()
    if game.over:
        table.between = None
        table._game_over([])
    else:
        table._broadcast()
    return True


def strict(table: Any) -> bool:
    """True at a timed competition table with a move clock: no 托管 there (R54: every move a person does
    not make in time is a timeout, counted for the pair), so the clock runs for a person's seat
    even when they are away or the bot would otherwise play for them, and a clock running out
    makes R53's move (:func:`timeout_move`), not the bot's."""
    lead, follow = table.info.clocks
    comp = table.manager.competitions.get(table.id)
    # only a timed match (a match clock, R58): an untimed one would never end with an absent pair
    return bool(lead or follow) and comp is not None and comp.deadline is not None


def timeout_move(game: Any) -> Any:
    """R53's move when a person's clock runs out at a tournament table: following, pass; leading,
    the smallest single (lowest in level order, R10); a tribute, the lowest card of the forced rank
    (the legal tributes are of that rank, R45); a return, the smallest eligible card (R47).

    Args:
        game: a :class:`~guandan.core.match.Game` waiting for a person's action.
    Returns:
        One of ``game.pending().actions``.
    """
    p = game.pending()
    acts = list(p.actions)
    level = game.deal.level
    passes = [a for a in acts if a[0] == "pass"]
    if passes:
        return passes[0]
    singles = [a for a in acts if a[0] in ("single", "tribute", "return")] or acts
    return min(singles, key=lambda a: (STRENGTH[level][a[1]] if a[1] is not None else 99, tuple(a[2])))


def seconds_left(comp: Competition) -> float | None:
    """Seconds until the match clock runs out (0 when it has), None when untimed."""
    return None if comp.deadline is None else max(0.0, comp.deadline - time.time())


__all__ = ["Competition", "call_time", "seconds_left", "spectator_view", "strict", "timed_out", "timeout_move"]
