"""Building the platform's server messages from a pyguandan game (PROTOCOL.md §2).

Pure functions: the host decides when to send what; these only shape the JSON objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guandan.core.cards import rank_char
from guandan.core.deal import Deal, team_of
from guandan.core.match import Game
from guandan.core.plays import PASS_TYPE, PlayT

from .notation import action_to_platform, card_to_platform

#: Empty current/greater action as real servers send it (PROTOCOL.md §2: bots accept both forms).
EMPTY_ACTION: list[None] = [None, None, None]


def hand_cards(deal: Deal, seat: int) -> list[str]:
    """A seat's hand in platform notation, ascending by face."""
    hand = deal.hands[seat]
    return [card_to_platform(f) for f in range(54) for _ in range(hand[f])]


def beginning(deal: Deal, seat: int, team_levels: Sequence[int] | None = None) -> dict[str, Any]:
    """``beginning`` notify: the dealt hand, the seat and the levels (PROTOCOL.md §2).

    Args:
        deal: the new deal (its ``level`` is the rank played, R7).
        seat: the receiving seat, 0-3.
        team_levels: the levels of team 0 (seats 0/2) and team 1 (seats 1/3) as rank indices
            0..12; when given, ``selfRank``/``oppoRank`` are added.
    Returns:
        ``{"type": "notify", "stage": "beginning", "handCards", "myPos", "curRank"[, "selfRank",
        "oppoRank"]}``: ``curRank`` is the level of this deal, ``selfRank``/``oppoRank`` the levels of
        the seat's team and of the other team, in platform rank notation (``'2'``..``'A'``), as the
        ``act`` messages carry them. The manual lists only ``handCards``/``myPos`` here, but clients
        of the DanZero family read the three ranks from ``beginning`` (extra keys are harmless to the
        others).
    """
    msg: dict[str, Any] = {
        "type": "notify", "stage": "beginning", "handCards": hand_cards(deal, seat), "myPos": seat,
        "curRank": rank_char(deal.level),
    }
    if team_levels is not None:
        team = team_of(seat)
        msg["selfRank"] = rank_char(team_levels[team])
        msg["oppoRank"] = rank_char(team_levels[1 - team])
    return msg


def _last_action(deal: Deal) -> tuple[int, list[Any]]:
    if not deal.trick:
        return -1, list(EMPTY_ACTION)
    seat, act = deal.trick[-1]
    return seat, action_to_platform(act)


def _greater(deal: Deal) -> tuple[int, list[Any]]:
    if deal.top is None or deal.top_seat is None:
        return -1, list(EMPTY_ACTION)
    return deal.top_seat, action_to_platform(deal.top)


def public_info(deal: Deal) -> list[dict[str, Any]]:
    """Per seat: cards left (``rest``) and its last action in the current trick (``playArea``)."""
    area: list[list[Any] | None] = [None, None, None, None]
    for s, act in deal.trick:
        area[s] = action_to_platform(act)
    return [{"rest": deal.n_cards[s], "playArea": area[s]} for s in range(4)]


def play_notify(deal: Deal, seat: int, act: PlayT, top_seat: int | None, top: PlayT | None) -> dict[str, Any]:
    """``play`` notify after ``seat`` acted: its action, and the current top play and owner."""
    return {
        "type": "notify",
        "stage": "play",
        "curPos": seat,
        "curAction": action_to_platform(act),
        "greaterPos": -1 if top_seat is None else top_seat,
        "greaterAction": list(EMPTY_ACTION) if top is None else action_to_platform(top),
    }


def act_message(game: Game, seat: int, actions: list[list[Any]]) -> dict[str, Any]:
    """``act`` message for ``seat`` (stage ``play``, ``tribute`` or ``back``)."""
    deal = game.deal
    stage = {"play": "play", "tribute": "tribute", "return": "back"}[deal.phase]
    levels = game.score.levels
    team = team_of(seat)
    if stage == "play":
        cur_pos, cur_act = _last_action(deal)
        g_pos, g_act = _greater(deal)
    else:
        cur_pos, cur_act, g_pos, g_act = -1, list(EMPTY_ACTION), -1, list(EMPTY_ACTION)
    return {
        "type": "act",
        "stage": stage,
        "handCards": hand_cards(deal, seat),
        "publicInfo": public_info(deal),
        "selfRank": rank_char(levels[team]),
        "oppoRank": rank_char(levels[1 - team]),
        "curRank": rank_char(deal.level),
        "curPos": cur_pos,
        "curAction": cur_act,
        "greaterPos": g_pos,
        "greaterAction": g_act,
        "actionList": actions,
        "indexRange": len(actions) - 1,
    }


def platform_actions(game: Game) -> list[list[Any]]:
    """The seat to act's legal actions in platform form; PASS first when following (§2, §9)."""
    acts = game.legal_actions()
    out = [action_to_platform(a) for a in acts]
    # the engine already lists PASS first when following; assert the protocol's expectation
    assert all(a[0] != PASS_TYPE for a in acts[1:])
    return out


def episode_over(deal: Deal) -> dict[str, Any]:
    """``episodeOver`` notify: finishing order (all four seats), the level just played, and the
    cards of seats that still held some."""
    res = deal.result
    assert res is not None
    order = list(res.finish_order)
    rest = [s for s in range(4) if s not in order]
    rest.sort(key=lambda s: (res.rest[s], s))
    order += rest
    rest_cards = [
        [s, [card_to_platform(f) for f in res.rest_cards[s]]] for s in range(4) if res.rest_cards and res.rest_cards[s]
    ]
    return {"type": "notify", "stage": "episodeOver", "order": order, "curRank": rank_char(deal.level), "restCards": rest_cards}
