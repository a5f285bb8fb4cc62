"""What the table shows: each seat's view, the spectators' view, deal results and the game summary.

Redaction (DESIGN.md section 2, docs/rules.md R32, R50): a seated connection only ever receives
:func:`guandan.core.views.seat_view` of its own seat (plus the public extra keys below), spectators
a public view with no hand and no legal actions; the raw ``Game.events`` (whose ``deal`` events
hold all four hands) are never sent.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable
from typing import Any

from guandan.core.cards import card_text, faces_of, rank_char, wild_face
from guandan.core.deal import PLAY, RETURN, TRIBUTE
from guandan.core.match import Game, action_to_json
from guandan.core.plays import PlayT
from guandan.core.rules import RuleSet
from guandan.core.scoring import anhui_title
from guandan.core.views import seat_view
from guandan.records import replay_lines

from .frames import JsonText

log = logging.getLogger("guandan.server.tables")

#: Result codes in words (docs/rules.md AMB-23): 1-2 双下, 1-3 单下, 1-4 平下.
RESULT_CODES = {"1-2": "double_down", "1-3": "single_down", "1-4": "flat_down"}


# -- views -----------------------------------------------------------------------------------------


def _last_actions(game: Game) -> list[list[Any] | None]:
    out: list[list[Any] | None] = [None] * 4
    d = game.deal
    if d.phase == PLAY and not game.over:
        for s, a in d.trick:
            out[s] = _action_json(a)
    return out


@functools.lru_cache(maxsize=8192)
def _action_json(act: PlayT) -> list[Any]:
    # actions are hashable tuples; converting each once saves most of the cost of the views
    return action_to_json(act)


@functools.lru_cache(maxsize=8192)
def _action_text(act: PlayT) -> str:
    # the compact JSON text of one action, made once: a deal's history is joined from these
    return json.dumps(_action_json(act), ensure_ascii=False, separators=(",", ":"))


@functools.lru_cache(maxsize=64)
def _rules_text(rules: RuleSet) -> JsonText:
    # RuleSet is frozen and hashable; to_dict (dataclasses.asdict, a deep copy) was a large part
    # of every state frame. The dict is shared by frames (never change it), and so is its text,
    # made once per rule set and spliced into every view (frames.spliced_json).
    return JsonText(rules.to_dict())


def _rules_json(rules: RuleSet) -> dict[str, Any]:
    # one cache for the dict and its text: the text is spliced only where the view holds this dict
    return _rules_text(rules).value  # type: ignore[no-any-return]


def _shared_history(shared: dict[str, Any]) -> Any:
    """A ``history_json`` for :meth:`SeatView.to_json` that makes the history list (and its text,
    joined from each action's cached text) once and keeps ``(history, JsonText)`` in ``shared``."""
    def convert(history: tuple[tuple[int, PlayT], ...]) -> Any:
        hit = shared.get("history")
        if hit is not None and hit[0] == history:
            return hit[1].value
        text = "[" + ",".join(f"[{s},{_action_text(a)}]" for s, a in history) + "]"
        shared["history"] = (history, JsonText([[s, _action_json(a)] for s, a in history], text=text))
        return shared["history"][1].value
    return convert


def _seat_json(game: Game, seat: int, shared: dict[str, Any] | None = None) -> dict[str, Any]:
    """``seat_view(game, seat).to_json()`` with cached converters: each action is converted once
    and the rule options dict is made once per rule set (the default converters spent most of a
    state frame's time copying dataclasses). With ``shared`` (a dict the caller keeps for one
    position of one game and empties when the position changes) the deal's history list is made
    once for every seat that sees the same history (:func:`view_text` then encodes it once)."""
    sv = seat_view(game, seat)
    return sv.to_json(action_json=_action_json, rules_json=_rules_json,
                      history_json=None if shared is None else _shared_history(shared))


def view_text(view: dict[str, Any], rules: RuleSet, shared: dict[str, Any] | None = None) -> JsonText:
    """The :class:`JsonText` of a view made by :func:`view_for`, taking the text of its rule options
    (made once per rule set) and of its history (made once per position, with ``shared`` as
    passed to :func:`view_for`) instead of encoding them for every seat; it parses to ``view``."""
    parts: dict[str, JsonText] = {"rules": _rules_text(rules)}
    hist = None if shared is None else shared.get("history")
    if hist is not None:
        parts["history"] = hist[1]
    return JsonText(view, parts=parts)


def public_view(game: Game, shared: dict[str, Any] | None = None) -> dict[str, Any]:
    """The spectators' view: the shape of ``seat_view(...).to_json()`` with ``seat: None``, no hand,
    no legal actions, tribute and return actions hidden until revealed (R50) and card counts above
    10 hidden under ``card_counts = le10`` (R32, AMB-24)."""
    d = game.deal
    # during tribute and return seat 0's history holds its own card, hidden from the others (R50):
    # the spectators' history is then made below, and seat 0's never enters what the seats share
    v = _seat_json(game, 0, shared if d.phase not in (TRIBUTE, RETURN) else None)
    v["seat"] = None
    v["hand"] = []
    v["legal_actions"] = []
    if d.phase in (TRIBUTE, RETURN):
        v["history"] = [[s, _action_json(a)] for s, a in d.history if a[0] not in ("tribute", "return")]
    if game.rules.card_counts == "le10":
        v["card_counts"] = [c if c <= 10 else None for c in d.n_cards]
    else:
        v["card_counts"] = list(d.n_cards)
    return v


def owed_to(game: Game) -> list[int]:
    """The seat(s) the seat to act pays its tribute to or returns its card to (public, R50).

    Tribute phase: a single tribute goes to 头游 (R44; in a 1-4 that is the payer's partner); a
    double tribute is shared out by the cards (R46), so both receivers are listed, 头游 (who takes
    the higher card) first, unless ``double_tribute_by = remaining_cards`` fixes it in advance (the
    payer with more cards left pays 头游). Return phase: the seat whose card the returner received
    (R47), or its 下家 under ``return_to = next_seat`` (AMB-07). ``[]`` in every other phase.
    """
    d = game.deal
    plan = getattr(d, "plan", None)
    if plan is None or game.over or plan.anti_tribute:
        return []
    head, mate = plan.head, (plan.head + 2) % 4
    if d.phase == TRIBUTE:
        if not plan.double:
            return [head]
        prev = getattr(d, "_prev", None)
        if game.rules.double_tribute_by == "remaining_cards" and prev is not None:
            a, b = plan.payers
            to_head = a if prev.rest[a] >= prev.rest[b] else b  # as Deal._assign_tributes
            return [head] if d.turn == to_head else [mate]
        return [head, mate]
    if d.phase == RETURN:
        return [target for receiver, target in plan.returns_due if receiver == d.turn][:1]
    return []


def turned_card(game: Game) -> dict[str, Any] | None:
    """R51: ``{"seat", "card"}`` of the card turned face up to pick the first leader, during the first
    deal of a game (public: it is turned face up at the table), else ``None`` (later deals, random
    first leader, a fixed leader)."""
    if game.over or game.deal.plan is not None or game.turned is None:
        return None
    seat, face = game.turned
    return {"seat": seat, "card": card_text(face)}


def view_for(game: Game, seat: int | None, names: list[str], shared: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``view`` of a state frame: :func:`seat_view` of ``seat`` (or :func:`public_view` when
    ``seat`` is ``None``) plus ``wilds`` (the level's heart, R8), ``seat_names``, ``last_actions``
    (each seat's latest action in the current trick, or ``None``), ``owed_to`` (:func:`owed_to`) and
    ``turned_card`` (:func:`turned_card`). ``shared``: a dict the caller keeps for one position of
    one game (empty it when the position changes), through which the seats' views share their
    history (:func:`view_text`)."""
    v = public_view(game, shared) if seat is None else _seat_json(game, seat, shared)
    v["wilds"] = [card_text(wild_face(game.deal.level))]
    v["seat_names"] = list(names)
    v["last_actions"] = _last_actions(game)
    v["owed_to"] = owed_to(game)
    v["turned_card"] = turned_card(game)
    return v


def received_cards(tribute_events: Iterable[dict[str, Any]], seat: int | None) -> list[str]:
    """Cards ``seat`` received this deal as tribute (``tribute_paid``) or return
    (``returns_revealed``), from the deal's public tribute events (R44-R50); ``[]`` for spectators."""
    if seat is None:
        return []
    out: list[str] = []
    for ev in tribute_events:
        if ev.get("type") == "tribute_paid":
            out += [card for _payer, receiver, card in ev["tributes"] if receiver == seat]
        elif ev.get("type") == "returns_revealed":
            out += [card for _giver, to, card in ev["returns"] if to == seat]
    return out


# -- deal results ----------------------------------------------------------------------------------


def deal_result_frame(ev: dict[str, Any], ended: Any, game_number: int, deal_number: int,
                      levels_before: list[int], points_before: list[int]) -> dict[str, Any]:
    """The ``deal_result`` frame (docs/table-contract.md section 4) of one ``deal_end`` event.

    Args:
        ev: the record's ``deal_end`` event (every key is kept: finish_order, result, winner_team,
            upgrade, levels, passed, failed, demoted, a_fails, and points/points_total under
            ``points``).
        ended: the :class:`~guandan.core.deal.Deal` that ended (its hands are the cards left).
        game_number, deal_number: the deal's position; levels_before: team levels (rank indexes)
            before it; points_before: Anhui points per seat before it.
    Returns:
        The frame, adding ``game``, ``deal``, ``level``, ``result_code`` (1-2 ``double_down`` 双下,
        1-3 ``single_down`` 单下, 1-4 ``flat_down`` 平下; docs/rules.md R35, AMB-23),
        ``levels_before``, ``hands_left`` (亮牌: every seat's cards at the end, card text) and, under
        ``points``, ``titles_before``/``titles`` (Anhui titles, docs/rules.md 2.1).
    """
    frame: dict[str, Any] = {**ev, "type": "deal_result"}
    frame.update(
        game=game_number,
        deal=deal_number,
        level=rank_char(ended.level),
        result_code=RESULT_CODES.get(ev["result"], ev["result"]),
        levels_before=[rank_char(x) for x in levels_before],
        hands_left=[[card_text(f) for f in faces_of(ended.hands[s])] for s in range(4)],
    )
    if "points_total" in ev:
        frame["titles_before"] = [anhui_title(p) for p in points_before]
        frame["titles"] = [anhui_title(p) for p in ev["points_total"]]
    return frame


def account_titles(frame: dict[str, Any], base: list[int | None]) -> dict[str, Any]:
    """Turn a frame's game-only Anhui titles into account titles (issue 21 item 7), in place.

    The table used to name titles from the current game's running points, so a player high on
    the ladder showed as 秀才. With ``base`` (per seat the account's points before this game,
    ``None`` for a bot or an empty seat) each person's ``titles`` become ``anhui_title(base +
    points_total)`` and ``titles_before`` ``anhui_title(base + points_total - points)``; seats
    without an account get ``None``. A frame without ``points_total`` (rules awarding no points)
    is returned unchanged.

    Args:
        frame: a ``deal_result`` frame (:func:`deal_result_frame`) or a ``game_over`` summary
            (:func:`game_summary`). base: four entries.
    Returns:
        ``frame``.
    """
    total = frame.get("points_total")
    if not isinstance(total, list) or len(total) != 4:
        return frame
    frame["titles"] = [None if b is None else anhui_title(b + total[s]) for s, b in enumerate(base)]
    if "titles_before" in frame:
        deal = frame.get("points") or [0, 0, 0, 0]
        frame["titles_before"] = [None if b is None else anhui_title(b + total[s] - deal[s])
                                  for s, b in enumerate(base)]
    return frame


def game_summary(game: Game) -> dict[str, Any]:
    """The ``summary`` of the ``game_over`` frame (contract section 8): ``deals`` played, final team
    ``levels``, and one entry per deal (``deal``, ``level``, ``finish_order``, ``result``,
    ``result_code``, ``winner_team``, ``upgrade``, ``levels``); ``points_total`` and ``titles``
    under ``points``."""
    results: list[dict[str, Any]] = []
    deal_no, level = 0, None
    for ev in game.events:
        if ev["type"] == "deal":
            deal_no, level = ev["deal"], ev["level"]
        elif ev["type"] == "deal_end":
            results.append({
                "deal": deal_no, "level": level, "finish_order": ev["finish_order"], "result": ev["result"],
                "result_code": RESULT_CODES.get(ev["result"], ev["result"]), "winner_team": ev["winner_team"],
                "upgrade": ev["upgrade"], "levels": ev["levels"],
            })
    out: dict[str, Any] = {"deals": len(results), "levels": [rank_char(x) for x in game.score.levels],
                           "results": results}
    if game.rules.points:
        out["points_total"] = list(game.score.points)
        out["titles"] = [anhui_title(p) for p in game.score.points]
    return out


def rebuild_deal_result(lines: list[str], end_index: int) -> dict[str, Any] | None:
    """The ``deal_result`` frame of the ``deal_end`` event at ``end_index`` of a record's events,
    rebuilt by replaying the record up to the deal's last action (after a server restart).

    Args:
        lines: the record's lines (header first). end_index: index of the ``deal_end`` event in the
            events (line ``end_index + 1``).
    Returns:
        The frame, or ``None`` when the record cannot be replayed that far.
    """
    from guandan.core.match import action_from_json

    events = [json.loads(ln) for ln in lines[1:end_index + 2]]
    last = max((i for i, ev in enumerate(events[:end_index]) if ev["type"] == "action"), default=None)
    if last is None:
        return None
    try:
        game = replay_lines(lines[: last + 1]).game
        ended = game.deal
        before = (game.game_number, game.deal_number, list(game.score.levels), list(game.score.points))
        n0 = len(game.events)
        game.apply(action_from_json(events[last]["action"]), events[last]["seat"])
        ev = next(e for e in game.events[n0:] if e["type"] == "deal_end")
    except Exception:  # a record that cannot be replayed: no result screen
        log.exception("cannot rebuild the deal result")
        return None
    return deal_result_frame(ev, ended, *before)
