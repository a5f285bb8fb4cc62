"""Play pyguandan bots on any host that speaks the AI-competition protocol (``guandan compat join``).

The client keeps what the messages reveal (hand, seat, levels, the current trick, card counts,
public tribute/return events) in a :class:`~guandan.core.views.SeatView` and asks its agent
only when an ``act`` message arrives; the agent's choice is sent back as ``{"actIndex": i}``.
It tolerates both ``null`` and ``[null, null, null]`` for an empty current action (PROTOCOL.md §2).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from guandan.agents.base import Agent
from guandan.core.cards import parse_rank
from guandan.core.plays import PlayT
from guandan.core.views import SeatView

from .notation import action_from_platform, card_from_platform

log = logging.getLogger("guandan.compat.client")


@dataclass
class ClientStats:
    """What a client saw: decisions made, deals and games finished, the final ``gameResult``."""

    decisions: int = 0
    deals: int = 0
    games: int = 0
    seat: int | None = None
    result: dict[str, Any] | None = None
    messages: int = 0
    stages: dict[str, int] = field(default_factory=dict)


def _empty(action: Any) -> bool:
    return action is None or (isinstance(action, list) and all(x is None for x in action))


class ProtocolState:
    """Turns protocol messages into seat views for an agent."""

    def __init__(self) -> None:
        self.seat = 0
        self.level = 0
        self.history: list[tuple[int, PlayT]] = []
        self.trick: list[tuple[int, PlayT]] = []
        self.finished: list[int] = []
        self.events: list[dict[str, Any]] = []
        self.deal_number = 0
        self.game_number = 1

    def on_notify(self, msg: dict[str, Any]) -> None:
        stage = msg.get("stage")
        if stage == "beginning":
            self.seat = int(msg["myPos"])
            if isinstance(msg.get("curRank"), str):  # sent by our host and the DanZero-family ones
                try:
                    self.level = parse_rank(msg["curRank"])
                except ValueError:
                    pass
            self.history, self.trick, self.finished, self.events = [], [], [], []
            self.deal_number += 1
        elif stage == "play":
            pos = msg.get("curPos", -1)
            act_data = msg.get("curAction")
            if isinstance(pos, int) and pos >= 0 and not _empty(act_data):
                try:
                    act = action_from_platform(act_data, self.level)
                except ValueError:
                    return
                self.history.append((pos, act))
                self.trick.append((pos, act))
        elif stage in ("tribute", "back", "anti-tribute"):
            self.events.append(dict(msg))
        elif stage == "gameOver":
            self.game_number += 1
            self.deal_number = 0

    def view(self, msg: dict[str, Any], actions: list[PlayT]) -> SeatView:
        """The seat view for an ``act`` message whose actions are already converted."""
        stage = msg.get("stage")
        self.level = parse_rank(msg.get("curRank", "2"))
        hand = tuple(sorted(card_from_platform(c) for c in msg.get("handCards", [])))
        info = msg.get("publicInfo") or [{} for _ in range(4)]
        counts = tuple(int(p.get("rest", 0)) if isinstance(p, dict) else None for p in info)
        for s, c in enumerate(counts):
            if c == 0 and s not in self.finished:
                self.finished.append(s)
        team = self.seat & 1
        levels = [0, 0]
        levels[team] = parse_rank(msg.get("selfRank", "2"))
        levels[1 - team] = parse_rank(msg.get("oppoRank", "2"))
        top: PlayT | None = None
        top_seat: int | None = None
        g_pos, g_act = msg.get("greaterPos", -1), msg.get("greaterAction")
        if stage == "play" and isinstance(g_pos, int) and g_pos >= 0 and not _empty(g_act):
            try:
                top = action_from_platform(g_act, self.level)
                top_seat = g_pos
            except ValueError:
                top = None
        if top is None:
            self.trick = []
        trick: list[tuple[int, PlayT]] = []
        for s, p in enumerate(info):
            area = p.get("playArea") if isinstance(p, dict) else None
            if not _empty(area):
                try:
                    trick.append((s, action_from_platform(area, self.level)))
                except ValueError:
                    pass
        phase = {"play": "play", "tribute": "tribute", "back": "return"}.get(str(stage), "play")
        return SeatView(
            seat=self.seat,
            phase=phase,
            to_act=self.seat,
            hand=hand,
            card_counts=counts,
            level=self.level,
            levels=(levels[0], levels[1]),
            game_number=self.game_number,
            deal_number=self.deal_number,
            trick=tuple(trick) if top is not None else (),
            top=top,
            top_seat=top_seat,
            finished=tuple(self.finished),
            history=tuple(self.history),
            tribute_events=tuple(self.events),
            legal_actions=tuple(actions),
            a_fails=(0, 0),
            points=(0, 0, 0, 0),
        )


def choose_index(agent: Agent, state: ProtocolState, msg: dict[str, Any]) -> int:
    """Convert ``actionList``, ask the agent, and return the index of its choice.

    Falls back to index 0 when the agent's action is not in the list (never expected).
    """
    state.level = parse_rank(msg.get("curRank", "2"))
    raw = msg.get("actionList") or []
    converted: list[PlayT] = []
    keep: list[int] = []
    for i, a in enumerate(raw):
        try:
            converted.append(action_from_platform(a, state.level))
            keep.append(i)
        except ValueError:
            log.warning("cannot read action %r; skipping it", a)
    if not converted:
        return 0
    choice = agent.act(state.view(msg, converted))
    key = (choice[0], choice[1], tuple(sorted(choice[2])))
    for i, a in zip(keep, converted):
        if (a[0], a[1], tuple(sorted(a[2]))) == key:
            return i
    log.warning("agent chose %r, not in the action list; answering index 0", choice)
    return keep[0]


async def join(
    url: str, agent: Agent, stats: ClientStats | None = None, delay: float = 0.0, threaded: bool = False
) -> ClientStats:
    """Connect to ``url`` (``ws://HOST:PORT/game/NAME``) and play until the host closes.

    Args:
        url: the host's game address.
        agent: the bot that decides.
        stats: optional object to fill in (also returned).
        delay: seconds to wait before each reply (to watch a game).
        threaded: decide in a worker thread, so that a slow agent does not hold up an event loop
            shared with other tasks (an in-process host, other clients).
    Raises:
        OSError: cannot connect.
    """
    import websockets

    stats = stats or ClientStats()
    state = ProtocolState()
    async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
        async for text in ws:
            msg = json.loads(text)
            stats.messages += 1
            stage = str(msg.get("stage"))
            stats.stages[stage] = stats.stages.get(stage, 0) + 1
            if msg.get("type") == "act" and "actionList" in msg:
                if threaded:
                    idx = await asyncio.to_thread(choose_index, agent, state, msg)
                else:
                    idx = choose_index(agent, state, msg)
                if delay:
                    await asyncio.sleep(delay)
                await ws.send(json.dumps({"actIndex": idx}))
                stats.decisions += 1
                continue
            state.on_notify(msg)
            if stage == "beginning":
                stats.seat = state.seat
            elif stage == "episodeOver":
                stats.deals += 1
            elif stage == "gameOver":
                stats.games += 1
            elif stage == "gameResult":
                stats.result = msg
                break
    return stats
