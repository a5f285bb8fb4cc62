"""Seat views: what one seat may see (DESIGN.md section 2; docs/rules.md R32, R48, R50).

A view holds the seat's own hand, public history, card counts (per ``card_counts``), levels,
tribute/return/anti-tribute events (public, R50) and, when the seat must act, its legal
actions. It never contains another seat's hidden cards: permuting the other seats' unplayed
cards leaves every view unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cards import card_text, faces_of, rank_char
from .deal import PLAY
from .match import GAME_OVER, Game, action_to_json
from .plays import PlayT
from .rules import RuleSet


@dataclass(frozen=True)
class SeatView:
    """Everything seat ``seat`` may know now.

    Attributes:
        seat: the viewing seat (0-3).
        phase: ``tribute``, ``return``, ``play`` or ``game_over``.
        to_act: seat to act, or ``None``.
        hand: own cards (faces, ascending).
        card_counts: per-seat cards left; ``None`` for a seat whose count is hidden (``le10``).
        level: the deal's level (rank index); ``levels``: team levels ``[team02, team13]``.
        game_number, deal_number: position in the match.
        trick: the current trick as ``(seat, action)`` pairs, oldest first.
        top: the play to beat and its seat (``None`` when leading).
        finished: seats out so far, in order.
        history: every public action of this deal as ``(seat, action)``; tribute and return
            actions are listed once they are public (R50).
        tribute_events: public tribute/return/anti-tribute/jiefeng events of this deal.
        legal_actions: the seat's legal actions when it must act, else empty.
        a_fails: failed target attempts per team; ``points``: Anhui cumulative points per seat.
        rules: the rule options in force (public).
    """

    seat: int
    phase: str
    to_act: int | None
    hand: tuple[int, ...]
    card_counts: tuple[int | None, ...]
    level: int
    levels: tuple[int, int]
    game_number: int
    deal_number: int
    trick: tuple[tuple[int, PlayT], ...]
    top: PlayT | None
    top_seat: int | None
    finished: tuple[int, ...]
    history: tuple[tuple[int, PlayT], ...]
    tribute_events: tuple[dict[str, Any], ...]
    legal_actions: tuple[PlayT, ...]
    a_fails: tuple[int, int]
    points: tuple[int, int, int, int]
    rules: RuleSet = field(default_factory=RuleSet)

    def to_json(
        self,
        action_json: Callable[[PlayT], Any] | None = None,
        rules_json: Callable[[RuleSet], dict[str, Any]] | None = None,
        history_json: Callable[[tuple[tuple[int, PlayT], ...]], Any] | None = None,
    ) -> dict[str, Any]:
        """A JSON-ready dict with cards in text notation.

        Args:
            action_json: converts one action (default :func:`~guandan.core.match.action_to_json`);
                a caller may pass a cached version (the web server converts each action once).
            rules_json: converts the rule set (default ``RuleSet.to_dict``, a fresh deep copy); a
                caller may pass a cached one whose dict it never changes.
            history_json: converts :attr:`history` (default: ``[[seat, action_json(action)], ...]``);
                the web server passes one that makes the list once per position and shares it
                between the seats that see the same history.
        Returns:
            The same keys and values whatever converters are passed.
        """
        if action_json is None:
            action_json = action_to_json
        return {
            "seat": self.seat,
            "phase": self.phase,
            "to_act": self.to_act,
            "hand": [card_text(f) for f in self.hand],
            "card_counts": list(self.card_counts),
            "level": rank_char(self.level),
            "levels": [rank_char(x) for x in self.levels],
            "game": self.game_number,
            "deal": self.deal_number,
            "trick": [[s, action_json(a)] for s, a in self.trick],
            "top": None if self.top is None else action_json(self.top),
            "top_seat": self.top_seat,
            "finished": list(self.finished),
            "history": ([[s, action_json(a)] for s, a in self.history] if history_json is None
                        else history_json(self.history)),
            "tribute_events": list(self.tribute_events),
            "legal_actions": [action_json(a) for a in self.legal_actions],
            "a_fails": list(self.a_fails),
            "points": list(self.points),
            "rules": self.rules.to_dict() if rules_json is None else rules_json(self.rules),
        }


def seat_view(game: Game, seat: int) -> SeatView:
    """Build the view of ``seat`` (0-3) of ``game``.

    Raises:
        ValueError: ``seat`` is not 0-3.
    """
    if seat not in (0, 1, 2, 3):
        raise ValueError(f"seat must be 0-3, not {seat!r}")
    d = game.deal
    hand = faces_of(d.hands[seat])
    counts: list[int | None] = list(d.n_cards)
    if game.rules.card_counts == "le10":
        counts = [c if (s == seat or c <= 10) else None for s, c in enumerate(d.n_cards)]
    # tribute and return actions become public together (R50); hide them while pending
    if d.phase in ("tribute", "return"):
        history = tuple((s, a) for s, a in d.history if s == seat or a[0] not in ("tribute", "return"))
    else:
        history = tuple(d.history)
    # public events of the current deal: everything after its "deal" event except hands
    public = ("anti_tribute", "tribute_paid", "returns_revealed", "jiefeng")
    events = tuple(ev for ev in game.events[game.deal_event_index + 1 :] if ev["type"] in public)
    to_act = game.to_act()
    legal = tuple(game.legal_actions()) if to_act == seat else ()
    return SeatView(
        seat=seat,
        phase=game.phase,
        to_act=to_act,
        hand=hand,
        card_counts=tuple(counts),
        level=d.level,
        levels=(game.score.levels[0], game.score.levels[1]),
        game_number=game.game_number,
        deal_number=game.deal_number,
        trick=tuple(d.trick) if d.phase == PLAY else (),
        top=d.top if game.phase != GAME_OVER else None,
        top_seat=d.top_seat,
        finished=tuple(d.finished),
        history=history,
        tribute_events=events,
        legal_actions=legal,
        a_fails=(game.score.a_fails[0], game.score.a_fails[1]),
        points=(game.score.points[0], game.score.points[1], game.score.points[2], game.score.points[3]),
        rules=game.rules,
    )
