"""The decisions of one seat in one deal of a record, each with what the seat saw then.

A record (JSON Lines, :mod:`guandan.records`; or a board play's record,
:mod:`guandan.duplicate.board_records`) is replayed and verified; just before each action of the
reviewed seat in the chosen deal the replay keeps the seat's view
(:func:`guandan.core.views.seat_view`: own hand, public history, counts, tribute events) and,
apart from it, a copy of the real deal (every hand) for the "what would have won" evaluation.

A deal that began with tribute is played from the hands after the tribute and the return
(R43-R47): the play-phase positions hold those hands. In a game record the tribute and return
are the seats' own decisions (R45, R47: which copy, which card) and are listed as such. A board
play starts after the exchange (:meth:`guandan.duplicate.boards.Board.start_game`): the board
fixed the tribute and return, so they are no decisions of the seat, and the seat's decisions are
its plays from the board after tribute.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from guandan.core.cards import cards_text, faces_of
from guandan.core.deal import PLAY, Deal
from guandan.core.match import Game, action_from_json
from guandan.core.plays import RETURN_TYPE, TRIBUTE_TYPE, PlayT
from guandan.core.rules import RuleSet
from guandan.core.views import SeatView, seat_view
from guandan.duplicate.board_records import is_board_record, replay_board_lines
from guandan.records import RecordError, read_lines, replay_lines

__all__ = ["Decision", "DealDecisions", "deal_decisions", "load_lines"]


@dataclass(frozen=True)
class Decision:
    """One action of the reviewed seat.

    Attributes:
        index: 0-based among the seat's decisions in the deal.
        turn: 0-based index of the action among all actions of the deal.
        game, deal: the record's game and deal numbers.
        seat: the deciding seat.
        phase: ``tribute``, ``return`` or ``play``.
        played: the action taken.
        view: what the seat could see just before acting (no hidden cards).
        real: the real deal just before acting (every hand): for the real-hands view only.
    """

    index: int
    turn: int
    game: int
    deal: int
    seat: int
    phase: str
    played: PlayT
    view: SeatView
    real: Deal = field(repr=False)


@dataclass
class DealDecisions:
    """The reviewed deal.

    Attributes:
        number: the deal's 1-based place in the record (``--deal N``).
        game, deal: its game and deal numbers in the record.
        deals: deals in the record.
        seat: the reviewed seat.
        rules: the record's rule set.
        players: the four seat names of the header.
        level: the deal's level (rank index).
        decisions: the seat's decisions, in order.
        end: the deal's ``deal_end`` event (``None`` when the record stops before it).
        board: the board's JSON object for a board play's record, else ``None`` (its ``hands``
            are the hands as dealt, before any tribute).
        start_hands: the four hands (card text, in face order) when the play phase began: after
            the tribute and return (R43-R47), the hands actually played; ``None`` when the record
            stops before the play phase.
    """

    number: int
    game: int
    deal: int
    deals: int
    seat: int
    rules: RuleSet
    players: list[str]
    level: int
    decisions: list[Decision]
    end: dict[str, Any] | None
    board: dict[str, Any] | None = None
    start_hands: list[list[str]] | None = None


def load_lines(source: str | os.PathLike[str] | IO[str] | IO[bytes]) -> list[str]:
    """A record's lines (see :func:`guandan.records.read_lines`).

    Raises:
        OSError: the file cannot be read.
        RecordError: not UTF-8.
    """
    return read_lines(source)


def deal_decisions(lines: Sequence[str], seat: int, deal: int = 1) -> DealDecisions:
    """Replay the record and collect ``seat``'s decisions in its ``deal``-th deal.

    For a board play's record the board's tribute and return (fixed by the board, already made
    when its play starts) are not the seat's decisions: the decisions are the seat's plays, from
    the hands after the exchange (module docstring). ``turn`` still counts every action of the
    deal in the record, the exchange included.

    Args:
        lines: the record's lines (header first).
        seat: the reviewed seat, 0-3.
        deal: 1-based deal number within the record (deal events in order).
    Raises:
        ValueError: a seat outside 0-3 or a deal number the record does not have.
        RecordError: the record does not replay (see :func:`guandan.records.replay_lines`).
    """
    if seat not in (0, 1, 2, 3) or isinstance(seat, bool):
        raise ValueError(f"seat must be 0-3, not {seat!r}")
    if isinstance(deal, bool) or not isinstance(deal, int) or deal < 1:
        raise ValueError(f"deal must be a positive int, not {deal!r}")
    header_line = lines[0] if lines else ""
    try:
        header = json.loads(header_line) if header_line else None
    except (json.JSONDecodeError, ValueError):
        header = None
    board = isinstance(header, dict) and is_board_record(header)
    state: dict[str, Any] = {"deal_no": 0, "turn": 0, "capture": None, "where": (0, 0), "level": 0, "end": None,
                             "start": None}
    decisions: list[Decision] = []

    def on_event(_line: int, ev: dict[str, Any], game: Game) -> None:
        t = ev["type"]
        if t == "deal":
            state["deal_no"] += 1
            state["turn"] = 0
            if state["deal_no"] == deal:
                state["where"] = (ev["game"], ev["deal"])
        in_deal = state["deal_no"] == deal
        if board and t == "action" and ev["action"][0] in (TRIBUTE_TYPE, RETURN_TYPE):
            # the board's own exchange: the replayed game already stands after it, at the start
            # of play, and the position kept before it is the seat's first play's
            state["turn"] += 1
            return
        if in_deal and state["start"] is None and state["end"] is None and game.deal.phase == PLAY:
            state["start"] = [cards_text(faces_of(h)).split() for h in game.deal.hands]
        if t == "action" and in_deal:
            if ev["seat"] == seat:
                cap = state["capture"]
                if cap is None:  # pragma: no cover - a verified replay always captured it
                    raise RecordError(_line, "no position before this action")
                view, real = cap
                decisions.append(Decision(len(decisions), state["turn"], state["where"][0], state["where"][1],
                                          seat, view.phase, action_from_json(ev["action"]), view, real))
            state["turn"] += 1
        elif t == "deal_end" and in_deal:
            state["end"] = ev
        state["capture"] = None
        if state["deal_no"] == deal and state["end"] is None and not game.over and game.to_act() == seat:
            state["capture"] = (seat_view(game, seat), game.deal.clone())
            state["level"] = game.deal.level

    result = replay_board_lines(lines, on_event) if board else replay_lines(lines, on_event)
    if state["deal_no"] < deal:
        raise ValueError(f"the record has {state['deal_no']} deal(s), not a deal {deal}")
    game, deal_num = state["where"]
    return DealDecisions(
        number=deal, game=game, deal=deal_num, deals=state["deal_no"], seat=seat,
        rules=result.game.rules, players=list(result.header["players"]),
        level=decisions[0].view.level if decisions else state["level"], decisions=decisions, end=state["end"],
        board=result.header["board"] if board else None, start_hands=state["start"],
    )
