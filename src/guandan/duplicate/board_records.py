"""Records of board plays: JSON Lines that replay a play of a board exactly.

The format is the game record's (:mod:`guandan.records`, version 1) with one more header field,
``"board"``: the board's JSON object (:meth:`Board.to_json`). The header's ``seed`` is ``null``
and ``hands`` is ``"explicit"``; the events are the game's events from the board's ``deal`` event
through its ``deal_end`` (tribute and return actions included, as the board fixed them): a
board play is one deal, so the record stops there and :func:`guandan.records.replay` (which
expects a game's next deal) does not read it. :func:`replay_board_lines` does: it rebuilds the
deal from the board (:meth:`Board.start_game`), compares every event the board produces, and
re-applies every other action through :meth:`Game.check` / :meth:`Game.apply`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from guandan.core.errors import GuandanError, IllegalAction
from guandan.core.match import Game, action_from_json
from guandan.records import RecordError, ReplayResult, dumps, parse_header, record_header

from .boards import Board, BoardError, BoardPlay

__all__ = ["board_record_lines", "is_board_record", "replay_board_lines"]


def board_record_lines(play: BoardPlay, players: Sequence[str] | None = None) -> list[str]:
    """The record of one board play as lines (no line ends): header, then every event.

    Args:
        play: the play (:func:`~guandan.duplicate.boards.play_board`).
        players: four seat names (default ``seat0`` ... ``seat3``).
    Raises:
        ValueError: not four player names.
    """
    game = play.board.start_game()
    header = record_header(game, play.board.preset, players, seed=None, hands="explicit")
    header["board"] = play.board.to_json()
    return [dumps(header)] + [dumps(ev) for ev in play.events]


def is_board_record(header: dict[str, Any]) -> bool:
    """Whether a record header (a parsed first line) is a board play's."""
    return isinstance(header, dict) and isinstance(header.get("board"), dict)


def _canon(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def replay_board_lines(
    lines: Sequence[str],
    on_event: Callable[[int, dict[str, Any], Game], None] | None = None,
    *,
    one_deal: bool = False,
) -> ReplayResult:
    """Replay and verify a board play's record (module docstring).

    Args:
        lines: the record's lines, header first.
        on_event: called as ``(line number, recorded event, game)`` after each event is verified
            (as :func:`guandan.records.replay_lines` does).
        one_deal: replay into a :class:`~guandan.duplicate.boards.OneDealGame` (over at the
            deal's end; a live table restored from its stored lines).
    Returns:
        A :class:`~guandan.records.ReplayResult`; ``complete`` is true when the record reaches
        the deal's ``deal_end``.
    Raises:
        RecordError: a corrupt line, a header without a valid board or whose options differ
            from the board's, an illegal action, or an event that differs from the replayed game.
    """
    if not lines:
        raise RecordError(1, "empty record (no header)")
    try:
        header = json.loads(lines[0])
    except (json.JSONDecodeError, RecursionError, ValueError):
        raise RecordError(1, "the header is not valid JSON") from None
    if not isinstance(header, dict):
        raise RecordError(1, "the header is not a JSON object")
    rules = parse_header(1, header)
    if not is_board_record(header):
        raise RecordError(1, "not a board record (no 'board' in the header)")
    try:
        board = Board.from_json(header["board"], check=False)
        game = board.start_game(one_deal=one_deal)
    except BoardError as e:
        raise RecordError(1, f"bad board: {e}") from None
    if board.rules != rules:
        raise RecordError(1, "the header's options differ from the board's")
    events: list[tuple[int, dict[str, Any]]] = []
    k = 0
    n_actions = 0
    ended = False
    for line_no, text in enumerate(lines[1:], 2):
        try:
            ev = json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError):
            raise RecordError(line_no, "not valid JSON") from None
        if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
            raise RecordError(line_no, "an event is a JSON object with a 'type'")
        if ended:
            raise RecordError(line_no, "a board record ends with its deal_end event")
        events.append((line_no, ev))
        if k < len(game.events):
            if _canon(ev) != _canon(game.events[k]):
                raise RecordError(line_no, f"{ev['type']} event differs from the replayed board")
            k += 1
        elif ev["type"] == "action":
            try:
                seat = ev["seat"]
                act = action_from_json(ev["action"])
                game.check(act, seat)
            except IllegalAction as e:
                raise RecordError(line_no, f"illegal action ({e.reason}): {e}") from None
            except (GuandanError, KeyError, TypeError, AttributeError) as e:
                raise RecordError(line_no, f"malformed action: {e}") from None
            game.apply(act, seat)
            k += 1
            n_actions += 1
        else:
            raise RecordError(line_no, f"unexpected {ev['type']} event: the replayed board produced none here")
        ended = ev["type"] == "deal_end"
        if on_event is not None:
            on_event(line_no, ev, game)
    return ReplayResult(header=header, game=game, events=events, n_lines=len(lines), n_actions=n_actions,
                        n_deals=1, complete=ended)
