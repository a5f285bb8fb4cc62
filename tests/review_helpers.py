"""Games for the web review's tests (issue 22, 复盘): a finished game whose first deal holds a
clear mistake, stored in a live server's database like a game the server finished."""

from __future__ import annotations

from typing import Any

from guandan.agents.heuristic import HeuristicAgent
from guandan.core.match import Game
from guandan.core.plays import PASS, play_key
from guandan.core.views import seat_view
from guandan.records import record_lines

#: The tests' review budget: few worlds, three moves compared, no exact solver (seconds per deal).
TEST_BUDGET = "worlds=8,candidates=3,belief=1,solver=0"


def blunder(g: Game, s: int) -> Any:
    """The clear mistake of the review tests, or ``None``: when seat ``s`` could go out at once (R31)
    with nobody out yet, at least two cards in hand and an opponent down to at most two, it passes
    (following an opponent) or leads its lowest single instead."""
    d = g.deal
    if d.phase != "play" or min(d.n_cards) == 0:
        return None
    legal = g.legal_actions()
    outs = [a for a in legal if a[0] != "pass" and len(a[2]) == d.n_cards[s]]
    if not outs or min(d.n_cards[(s + 1) % 4], d.n_cards[(s + 3) % 4]) > 2 or d.n_cards[s] < 2:
        return None
    if d.top is None:
        return min((a for a in legal if a[0] == "single"), key=lambda a: play_key(a, d.level))
    return PASS if d.top_seat % 2 != s % 2 else None


def finished_mistake_game() -> tuple[list[str], int, int]:
    """A whole game of four heuristic bots in which, in the first deal, a seat that could go out
    at once (R31) with nobody out yet and an opponent down to at most two cards passes (following
    an opponent) or leads its lowest single instead (the position of tests/test_review.py, played
    on to the game's end).

    Returns:
        The record's lines, the seat and the index of the mistake among its decisions of deal 1.
    """
    for seed in (26, 185, 28):
        g = Game(seed=seed)
        agents = [HeuristicAgent(s) for s in range(4)]
        count = [0, 0, 0, 0]
        mistake = None
        while not g.over:
            s = g.to_act()
            act = None
            if mistake is None and g.deal_number == 1:
                act = blunder(g, s)
                if act is not None:
                    mistake = (s, count[s])
            if act is None:
                act = agents[s].act(seat_view(g, s))
            if g.deal_number == 1:
                count[s] += 1
            g.apply(act, s)
        if mistake is not None:
            return record_lines(g), mistake[0], mistake[1]
    raise AssertionError("no position found for the mistake")


def store_game(session_factory: Any, lines: list[str], winner_team: int | None = None) -> int:
    """Store a record as a finished (or, without ``game_over``, abandoned) game of four bots, as
    the server does when a game ends; returns the game's id."""
    from guandan.server.db import session_scope
    from guandan.server.games import record_finished_game

    with session_scope(session_factory) as db:
        row = record_finished_game(db, None, "\n".join(lines) + "\n", winner_team,
                                   [(None, "normal")] * 4)
        return int(row.id)
