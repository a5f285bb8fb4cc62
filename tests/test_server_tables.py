"""Rooms and live tables of the web server (server contract: rooms API, table websocket).

The server runs for real: uvicorn on a loopback port chosen by the OS, a fresh SQLite file per
test, the rooms and websocket routers of :mod:`guandan.server.api_rooms` / :mod:`guandan.server.ws`
over a :class:`~guandan.server.manager.TableManager`; clients are ``httpx`` and ``websockets``.
Accounts are made directly with :mod:`guandan.server.auth` (session cookie ``gd_session``).

What is checked against the rules (docs/rules.md):

* every game played through the websocket ends with a record that ``replay_lines`` verifies
  action by action (R-rules enforced by the core), and the winner of the ``game_over`` frame is
  the team that passed the target in that replay (R5-R7, R37);
* redaction (R32, R50, DESIGN.md section 2): every card named in a frame sent to a seat is in that
  seat's hand at that moment, was played or given by that seat, or is public (a play, or a revealed
  tribute/return); spectators only see public cards; ``deal`` events (all four hands) are never sent;
* move clocks (R53, AMB-25): when a person's clock runs out the heuristic bot plays for the seat;
* persistence: a new :class:`TableManager` on the same database continues a game mid-way.

Longer than ~800 lines on purpose: every game here is checked by the same live-server harness, replay
snapshots and redaction checker defined at the top of this module.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import Counter
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("websockets")

import uvicorn
from fastapi import FastAPI
from websockets.asyncio.client import connect

from guandan.core.cards import parse_card
from guandan.core.match import Game, action_from_json
from guandan.core.rules import RuleSet
from guandan.records import replay_lines
from guandan.server import auth, models
from guandan.server import db as dbmod
from guandan.server.api_rooms import make_rooms_router
from guandan.server.gamestore import GameStore
from guandan.server.settings import Settings
from guandan.server.manager import TableManager
from guandan.server.ws import make_ws_router

TIMEOUT = 20.0


# -- a live server ---------------------------------------------------------------------------------


def build_app(factory: Any, manager: TableManager, settings: Settings, rate_limit: int = 20) -> FastAPI:
    """The rooms and table routers with the manager's start/stop in the lifespan (the lead's
    ``create_app`` wires the same routers; the games here use a higher message rate limit so that
    scripted players are not slowed to 20 messages per second)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        await manager.start()
        yield
        await manager.shutdown()

    app = FastAPI(lifespan=lifespan)
    app.state.session_factory = factory
    app.include_router(make_rooms_router(factory, manager, settings))
    app.include_router(make_ws_router(factory, manager, settings, rate_limit=rate_limit))
    return app


class LiveServer:
    """uvicorn serving :func:`build_app` on ``127.0.0.1:<free port>`` in a thread."""

    def __init__(self, db_url: str, bot_delay_s: float = 0.0, away_grace_s: float = 2.0, rate_limit: int = 1000,
                 seeded_deals: bool = True) -> None:
        self.db_url = db_url
        engine = dbmod.make_engine(db_url)
        dbmod.migrate(engine)
        self.factory = dbmod.make_session_factory(engine)
        self.settings = Settings(db_url=db_url, bot_delay_s=bot_delay_s, seeded_deals=seeded_deals)
        self.manager = TableManager(self.factory, self.settings, away_grace_s=away_grace_s)
        self.app = build_app(self.factory, self.manager, self.settings, rate_limit)
        config = uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", ws="websockets-sansio")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.ws_base = f"ws://127.0.0.1:{self.port}"
        self.http = httpx.Client(base_url=self.base, timeout=TIMEOUT)

    def stop(self) -> None:
        self.http.close()
        self.server.should_exit = True
        self.thread.join(timeout=20)

    def user(self, name: str) -> str:
        """Create a registered-looking account ``name``; return its session token."""
        with self.factory() as db:
            u = models.User(name=name, password_hash=None, is_guest=False)
            db.add(u)
            db.flush()
            token = auth.create_session(db, u).cookie_token
            db.commit()
        return token

    def call(self, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        headers = {"cookie": f"gd_session={token}"} if token else {}
        r = self.http.request(method, path, json={} if body is None and method != "GET" else body, headers=headers)
        return r.status_code, r.json()

    def room_row(self, room_id: str) -> tuple[str, str]:
        """(status, record text) stored for the room: a live game's record is assembled from its
        ``game_events`` rows, a finished one is ``rooms.record``."""
        with self.factory() as db:
            room = db.get(models.Room, room_id)
            status, record = room.status, room.record
        if status == "playing":
            record = GameStore(self.factory).record_text(room_id)
        return status, record

    def make_room(self, owner: str, body: dict[str, Any] | None = None, seed: int = 1) -> str:
        """Create a room through the API, then fix its game seed in the database (the API never
        lets a player choose or see the seed: it decides every hand) so the test is repeatable."""
        status, data = self.call("POST", "/api/rooms", owner, body or {"preset": "official"})
        assert status == 200, data
        with self.factory() as db:
            db.get(models.Room, data["room"]["id"]).seed = seed
            db.commit()
        return data["room"]["id"]


@pytest.fixture
def live(tmp_path):
    servers: list[LiveServer] = []

    def start(bot_delay_s: float = 0.0, name: str = "t.db", away_grace_s: float = 2.0, rate_limit: int = 1000) -> LiveServer:
        s = LiveServer(f"sqlite:///{tmp_path / name}", bot_delay_s, away_grace_s, rate_limit)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


class WS:
    """A websocket client that keeps every frame it receives."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self.last_state: dict[str, Any] | None = None

    async def recv(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        frame = json.loads(raw)
        self.frames.append(frame)
        if frame["type"] == "state":
            self.last_state = frame
        return frame

    async def until(self, pred, timeout: float = TIMEOUT) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        end = time.monotonic() + timeout
        while True:
            f = await self.recv(max(0.01, end - time.monotonic()))
            if pred(f):
                return f

    async def send(self, obj: Any) -> None:
        await self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))


@asynccontextmanager
async def ws_client(server: LiveServer, room_id: str, token: str | None = None):
    headers = {"Cookie": f"gd_session={token}"} if token else {}
    async with connect(f"{server.ws_base}/ws/rooms/{room_id}", additional_headers=headers, max_size=None) as ws:
        yield WS(ws)


def is_state(f: dict[str, Any]) -> bool:
    return f["type"] == "state"


def my_turn(f: dict[str, Any]) -> bool:
    return f["type"] == "state" and f["view"] is not None and f["view"]["to_act"] == f["seat"] and bool(f["view"]["legal_actions"])


# -- redaction checker -----------------------------------------------------------------------------


def snapshots(record_text: str) -> dict[int, dict[str, Any]]:
    """For every number of game events ``n`` reached in the recorded game: each seat's hand
    (a Counter of faces), the faces each seat acted with so far, and the public faces so far
    (plays, revealed tributes and returns, the card turned face up for the first leader, R51)."""
    lines = [ln for ln in record_text.split("\n") if ln]
    header = json.loads(lines[0])
    events = [json.loads(ln) for ln in lines[1:]]
    game = Game(RuleSet.from_dict(header["options"]), seed=header["seed"], max_games=header["max_games"])
    own_acted: list[Counter[int]] = [Counter() for _ in range(4)]
    public: set[int] = set()
    seen = 0  # game events already scanned for public cards
    out: dict[int, dict[str, Any]] = {}

    def snap() -> None:
        nonlocal seen
        for ev in game.events[seen:]:
            if ev["type"] == "action" and ev["action"][0] not in ("tribute", "return"):
                public.update(parse_card(c) for c in ev["action"][2])
            elif ev["type"] == "tribute_paid":
                public.update(parse_card(t[2]) for t in ev["tributes"])
            elif ev["type"] == "returns_revealed":
                public.update(parse_card(t[2]) for t in ev["returns"])
            elif ev["type"] == "deal" and "turned_card" in ev:
                public.add(parse_card(ev["turned_card"]))  # R51: turned face up at the table
        seen = len(game.events)
        hands = [Counter({f: n for f, n in enumerate(game.deal.hands[s]) if n}) for s in range(4)]
        out[len(game.events)] = {"hands": hands, "acted": [Counter(c) for c in own_acted], "public": set(public)}

    snap()
    for ev in events:
        if ev["type"] == "action":
            act = action_from_json(ev["action"])
            own_acted[ev["seat"]].update(act[2])
            game.apply(act, ev["seat"])
            snap()
    assert game.events == events  # the live game and this replay agree event by event
    return out


def cards_in(obj: Any, skip: tuple[str, ...] = ("wilds", "between")) -> list[int]:
    """Every card face named anywhere in a JSON value (strings that read as one card)."""
    found: list[int] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in skip:
                found += cards_in(v, skip)
    elif isinstance(obj, list):
        for v in obj:
            found += cards_in(v, skip)
    elif isinstance(obj, str) and len(obj) == 2:
        try:
            found.append(parse_card(obj))
        except ValueError:
            pass
    return found


def check_redaction(frames: list[dict[str, Any]], seat: int | None, snaps: dict[int, dict[str, Any]]) -> int:
    """Assert that no frame shows a card the viewer cannot know; return the number of cards checked.

    The state's ``between.result.hands_left`` (亮牌: every seat's cards once the deal has ended) is
    public by design and checked apart (``test_deal_result_shows_the_hands_left``)."""
    checked = 0
    for f in frames:
        text = json.dumps(f)
        assert '"hands"' not in text, "a deal event (all hands) reached a client"
        assert '"seed"' not in text, "the game seed (which decides every hand) reached a client"
        if f["type"] != "state" or f["view"] is None:
            continue
        snap = snaps[f["seq"]]
        allowed = set(snap["public"])
        if seat is not None:
            allowed |= set(snap["hands"][seat]) | set(snap["acted"][seat])
            hand = Counter(parse_card(c) for c in f["view"]["hand"])
            assert hand == snap["hands"][seat], f"seat {seat} shown a hand that is not its own at seq {f['seq']}"
        else:
            assert f["view"]["hand"] == [] and f["view"]["legal_actions"] == []
        for face in cards_in(f):
            assert face in allowed, f"seat {seat} was shown hidden card {face} at seq {f['seq']}"
            checked += 1
    return checked


# -- rooms API -------------------------------------------------------------------------------------


def test_rooms_api_create_seat_bots_start_and_errors(live):
    s = live()
    alice, bob, carol = s.user("alice"), s.user("bob"), s.user("carol")

    # not logged in
    st, data = s.call("POST", "/api/rooms", None, {"preset": "official"})
    assert st == 401 and data == {"error": "log in first", "code": "login_required", "params": {}}
    # bad preset / bad option: the RuleConfigError line (docs/rules.md section P)
    st, data = s.call("POST", "/api/rooms", alice, {"preset": "nope"})
    assert st == 400 and "unknown preset 'nope'" in data["error"] and "official" in data["error"]
    st, data = s.call("POST", "/api/rooms", alice, {"preset": "official", "options": {"return_rule": "huge"}})
    assert st == 400 and "return_rule" in data["error"] and "\n" not in data["error"]
    st, data = s.call("POST", "/api/rooms", alice, {"preset": "official", "options": {"no_such": 1}})
    assert st == 400 and "unknown rule option 'no_such'" in data["error"]
    st, data = s.call("POST", "/api/rooms", alice, {"preset": "official", "clock_lead_s": -3})
    assert st == 400

    # create: the preset plus overrides; the creator sits in seat 0
    st, data = s.call(
        "POST", "/api/rooms", alice,
        {"name": "Friday", "preset": "anhui", "options": {"return_rule": "any"}, "clock_lead_s": 60, "clock_follow_s": 30},
    )
    assert st == 200, data
    room = data["room"]
    rid = room["id"]
    assert len(rid) == 8 and room["invite_url"] == f"/room/{rid}"
    assert room["name"] == "Friday" and room["preset"] == "anhui" and room["status"] == "waiting"
    assert room["owner"] == "alice"
    expected = RuleSet.preset("anhui").replace(return_rule="any", clock_lead_s=60, clock_follow_s=30)
    assert room["options"] == expected.to_dict()
    assert room["options"]["points"] is True  # anhui keeps its own options (docs/rules.md section P)
    assert room["clocks"] == {"lead_s": 60, "follow_s": 30, "default": False}
    # the overrides of the preset, spelled out for the UI (clocks apart)
    assert room["overrides"] == {}  # anhui already returns any card (R47 option); clocks are apart
    assert [x["user"] for x in room["seats"]] == ["alice", None, None, None]
    assert [x["kind"] for x in room["seats"]] == ["person", "empty", "empty", "empty"]
    assert all(x["connected"] is False and x["bot"] is None for x in room["seats"])

    # get / list
    st, data = s.call("GET", f"/api/rooms/{rid}")
    assert st == 200 and data["room"]["id"] == rid
    st, data = s.call("GET", "/api/rooms/nope1234")
    assert st == 404 and "error" in data
    st, data = s.call("GET", "/api/rooms")
    assert st == 200 and [r["id"] for r in data["rooms"]] == [rid]

    # seats: take, move, taken, bad value
    st, data = s.call("POST", f"/api/rooms/{rid}/seat", bob, {"seat": 2})
    assert st == 200 and data["room"]["seats"][2]["user"] == "bob"
    st, data = s.call("POST", f"/api/rooms/{rid}/seat", carol, {"seat": 2})
    assert st == 409 and "seat 2 is taken" in data["error"]
    st, data = s.call("POST", f"/api/rooms/{rid}/seat", bob, {"seat": 1})
    assert st == 200 and [x["user"] for x in data["room"]["seats"]] == ["alice", "bob", None, None]
    for bad in (4, -1, "1", None, True):
        st, data = s.call("POST", f"/api/rooms/{rid}/seat", carol, {"seat": bad})
        assert st == 400, bad
    st, data = s.call("POST", f"/api/rooms/{rid}/leave", carol)
    assert st == 409 and "no seat" in data["error"]

    # only the owner fills bots and starts; start needs four seats
    st, data = s.call("POST", f"/api/rooms/{rid}/start", alice)
    assert st == 409 and "empty: 2, 3" in data["error"]
    st, data = s.call("POST", f"/api/rooms/{rid}/bots", bob, {"bot": "heuristic"})
    assert st == 403
    st, data = s.call("POST", f"/api/rooms/{rid}/bots", alice, {"bot": "alphago"})
    assert st == 400 and "normal" in data["error"] and data["code"] == "bad_bot"
    assert data["params"]["bot"] == "alphago" and {"normal", "heuristic", "random"} <= set(data["params"]["valid"])
    st, data = s.call("POST", f"/api/rooms/{rid}/bots", alice, {"bot": "random"})
    assert st == 200 and [x["bot"] for x in data["room"]["seats"]] == [None, None, "random", "random"]
    # a person may take a bot's seat while the room waits
    st, data = s.call("POST", f"/api/rooms/{rid}/seat", carol, {"seat": 3})
    assert st == 200 and data["room"]["seats"][3] == {
        "seat": 3, "kind": "person", "user": "carol", "bot": None, "difficulty": None, "connected": False,
        "title": "秀才"}  # this room plays the anhui rules: a new account's title (0 points) is 秀才
    st, data = s.call("POST", f"/api/rooms/{rid}/start", bob)
    assert st == 403
    st, data = s.call("POST", f"/api/rooms/{rid}/start", alice)
    assert st == 200 and data["room"]["status"] == "playing"
    status, record = s.room_row(rid)
    assert status == "playing"
    header = json.loads(record.split("\n")[0])
    assert header["players"] == ["alice", "bob", "bot:random", "carol"] and header["options"] == expected.to_dict()

    # after the start: no seat changes, no second start
    st, data = s.call("POST", f"/api/rooms/{rid}/start", alice)
    assert st == 409
    st, data = s.call("POST", f"/api/rooms/{rid}/seat", bob, {"seat": 2})
    assert st == 409
    st, data = s.call("POST", f"/api/rooms/{rid}/bots", alice, {"bot": "random"})
    assert st == 409
    # leaving the game under way (issue 25, item 9): alice and carol still play, so the bot takes bob's seat
    st, data = s.call("POST", f"/api/rooms/{rid}/leave", bob)
    assert st == 200 and data["left"] == "bot" and data["room"]["status"] == "playing"


def _fill_and_start(s: LiveServer, owner: str, rid: str, bot: str = "heuristic") -> None:
    st, data = s.call("POST", f"/api/rooms/{rid}/bots", owner, {"bot": bot})
    assert st == 200, data
    st, data = s.call("POST", f"/api/rooms/{rid}/start", owner)
    assert st == 200, data


async def _play_until_over(c: WS, rng: random.Random, stop=None) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Play the client's seat with random legal actions until ``game_over`` (or ``stop(frame)``),
    pressing "ready" between deals."""
    while True:
        f = await c.recv()
        if f["type"] == "game_over":
            return f
        if stop is not None and stop(f):
            return f
        await _ready_if_paused(c, f)
        if my_turn(f):
            await c.send({"type": "act", "action": rng.choice(f["view"]["legal_actions"])})


async def _ready_if_paused(c: WS, f: dict[str, Any]) -> None:
    """Between deals, send ``ready`` once for the client's seat."""
    if f["type"] == "state" and f.get("between") and f["seat"] is not None and not f["between"]["ready"][f["seat"]]:
        key = ("ready", f["between"]["deal"])
        if not getattr(c, "sent_ready", None) == key:
            c.sent_ready = key  # type: ignore[attr-defined]
            await c.send({"type": "ready"})


async def _until_my_turn(c: WS) -> dict[str, Any]:
    """The next state in which the client's seat must act, pressing "ready" between deals."""
    while True:
        f = await c.recv()
        await _ready_if_paused(c, f)
        if my_turn(f):
            return f


# -- a full game through the websocket ------------------------------------------------------------


def test_full_game_one_person_three_bots(live):
    s = live()
    alice = s.user("alice")
    rid = s.make_room(alice, {"preset": "official"})

    async def main() -> tuple[WS, dict[str, Any]]:
        async with ws_client(s, rid, alice) as c:
            first = await c.recv()
            assert first["type"] == "state" and first["role"] == "seat" and first["seat"] == 0
            assert first["view"] is None and first["room"]["seats"][0]["connected"] is True
            await asyncio.to_thread(_fill_and_start, s, alice, rid)
            over = await _play_until_over(c, random.Random(5))
            # the final state is sent before game_over
            return c, over

    c, over = asyncio.run(main())
    status, record = s.room_row(rid)
    assert status == "finished"
    result = replay_lines(record.split("\n")[:-1])
    assert result.complete and result.game.over
    assert over["winner_team"] == result.game.winner
    # the finished game is stored (games / game_players) under the id sent in game_over
    with s.factory() as db:
        row = db.get(models.GameRow, over["game_id"])
        assert row is not None and row.room_id == rid and row.record == record
        assert row.winner_team == result.game.winner
        assert [(p.seat, p.bot) for p in row.players] == [(0, None), (1, "heuristic"), (2, "heuristic"), (3, "heuristic")]
    states = [f for f in c.frames if is_state(f)]
    last = states[-1]
    assert last["view"]["phase"] == "game_over" and last["room"]["status"] == "finished"
    # the person acted through the socket: its actions are in the record
    person_actions = [json.loads(ln) for ln in record.split("\n")[1:-1]]
    assert any(e["type"] == "action" and e["seat"] == 0 for e in person_actions)
    # deal_result frames: one per deal_end event, every key of the event unchanged
    deal_ends = [e for e in person_actions if e["type"] == "deal_end"]
    results = [f for f in c.frames if f["type"] == "deal_result"]
    assert [{k: f[k] for k in e if k != "type"} for f, e in zip(results, deal_ends)] == \
        [{k: v for k, v in e.items() if k != "type"} for e in deal_ends]
    assert len(results) == len(deal_ends) and [f["deal"] for f in results] == list(range(1, len(results) + 1))
    # extra view keys of the contract (bots are named by difficulty, not by implementation)
    v = states[5]["view"]
    assert v["seat_names"] == ["alice", "bot:normal", "bot:normal", "bot:normal"]
    assert v["wilds"] == [v["level"] + "H"]  # the level's heart is wild (R8)
    assert len(v["last_actions"]) == 4 and states[5]["auto"] == [False] * 4
    assert states[5]["timeouts"] == [0] * 4 and states[5]["between"] is None
    # redaction for seat 0 over the whole game
    assert check_redaction(c.frames, 0, snapshots(record)) > 100


def test_no_hidden_cards_for_any_seat_or_spectator(live):
    """Four people and one anonymous spectator; every action goes through the websocket."""
    s = live()
    names = ["ann", "ben", "cat", "dan"]
    tokens = [s.user(n) for n in names]
    # a short game (target 8, three levels per win) that still has tribute and return phases
    opts = {"return_rule": "any", "target_level": "8", "upgrade": [3, 3, 3]}
    rid = s.make_room(tokens[0], {"preset": "official", "options": opts})
    for seat in (1, 2, 3):
        st, data = s.call("POST", f"/api/rooms/{rid}/seat", tokens[seat], {"seat": seat})
        assert st == 200, data
    rng = random.Random(11)

    async def main() -> tuple[list[WS], WS, dict[str, Any]]:
        async with ws_client(s, rid, tokens[0]) as c0, ws_client(s, rid, tokens[1]) as c1, \
                ws_client(s, rid, tokens[2]) as c2, ws_client(s, rid, tokens[3]) as c3, ws_client(s, rid) as spec:
            clients = [c0, c1, c2, c3]
            st, data = await asyncio.to_thread(s.call, "POST", f"/api/rooms/{rid}/start", tokens[0])
            assert st == 200, data
            seq = -1
            over = None
            pauses: list[int] = []
            while over is None:
                # every client gets the same sequence of states; the one to act answers
                frames = []
                for c in clients + [spec]:
                    f = await c.until(
                        lambda f, seq=seq: f["type"] == "game_over"
                        or (f["type"] == "state" and f["view"] is not None and f["seq"] > seq)
                    )
                    frames.append(f)
                if any(f["type"] == "game_over" for f in frames):
                    over = next(f for f in frames if f["type"] == "game_over")
                    break
                seqs = {f["seq"] for f in frames}
                assert len(seqs) == 1, seqs
                seq = seqs.pop()
                if frames[0]["between"] is not None:
                    # between deals nobody can act until the four people are ready
                    assert all(f["between"] == frames[0]["between"] for f in frames)
                    assert all(v == [] for f in frames for v in [f["view"]["legal_actions"]])
                    for c in clients:
                        await c.send({"type": "ready"})
                    frames = [await c.until(lambda f: f["type"] == "state" and f["between"] is None)
                              for c in clients + [spec]]
                    pauses.append(seq)
                views = [f["view"] for f in frames]
                if views[0]["phase"] == "game_over":
                    continue
                to_act = views[0]["to_act"]
                # only the seat to act gets legal actions; the spectator is spectator-shaped
                assert [bool(v["legal_actions"]) for v in views] == [s_ == to_act for s_ in range(4)] + [False]
                assert frames[4]["role"] == "spectator" and frames[4]["seat"] is None
                await clients[to_act].send({"type": "act", "action": rng.choice(views[to_act]["legal_actions"])})
            for c in clients + [spec]:
                if not any(f["type"] == "game_over" for f in c.frames):
                    await c.until(lambda f: f["type"] == "game_over")
            assert pauses, "the game had several deals, so the table paused between them"
            return clients, spec, over

    clients, spec, over = asyncio.run(main())
    status, record = s.room_row(rid)
    assert status == "finished"
    snaps = snapshots(record)
    game_end = replay_lines(record.split("\n")[:-1]).game
    assert over["winner_team"] == game_end.winner
    # the game had tribute phases, so hidden tributes/returns were exercised
    types = [json.loads(ln)["type"] for ln in record.split("\n")[1:-1]]
    assert "tribute_paid" in types and "returns_revealed" in types
    for seat, c in enumerate(clients):
        assert check_redaction(c.frames, seat, snaps) > 100
    assert check_redaction(spec.frames, None, snaps) > 100


# -- reconnect, clocks, restart --------------------------------------------------------------------


def test_reconnect_restores_the_view_and_bot_covers_absence(live):
    """Two people and two bots. While ann is away the bot plays her seat (auto); a new tab of her
    account gets the full state back (same hand as the stored game) and auto is cleared."""
    s = live(away_grace_s=0.2)
    ann, ben = s.user("ann"), s.user("ben")
    rid = s.make_room(ann, {"preset": "official"})
    assert s.call("POST", f"/api/rooms/{rid}/seat", ben, {"seat": 1})[0] == 200

    async def main() -> None:
        async with ws_client(s, rid, ben) as b:
            async with ws_client(s, rid, ann) as a1, ws_client(s, rid, ann) as a2:
                await asyncio.to_thread(_fill_and_start, s, ann, rid)
                # both tabs of ann get the same seat-0 view
                f1 = await a1.until(is_state_with_view)
                f2 = await a2.until(lambda f: is_state_with_view(f) and f["seq"] == f1["seq"])
                assert f1["view"] == f2["view"] and f1["role"] == f2["role"] == "seat"
            # ann closed both tabs: play ben's turns until the bot has played for ann (auto[0])
            seen_auto = False
            rng = random.Random(3)
            while True:
                f = await b.recv()
                await _ready_if_paused(b, f)
                if f["type"] == "state" and f["view"] is not None:
                    if f["auto"][0]:
                        seen_auto = True
                        assert f["room"]["seats"][0]["connected"] is False and f["auto_reason"][0] == "away"
                    if seen_auto and my_turn(f) and any(e[0] == 0 for e in f["view"]["history"]):
                        break
                    if my_turn(f):
                        await b.send({"type": "act", "action": rng.choice(f["view"]["legal_actions"])})
            assert seen_auto
            on = [f for f in b.frames if f["type"] == "notice" and f["code"] == "auto_on"]
            assert on and on[0]["params"] == {"seat": 0, "reason": "away"}
            # ann never acted: every seat-0 action of this deal was the bot's
            moves_for_ann = len([e for e in b.last_state["view"]["history"] if e[0] == 0])
            # it is ben's turn and he waits: ann reconnects with a new tab
            async with ws_client(s, rid, ann) as a3:
                g = await a3.recv()
                assert g["type"] == "state" and g["seat"] == 0 and g["auto"][0] is False
                _status, record = s.room_row(rid)
                snap = snapshots(record)[g["seq"]]
                assert Counter(parse_card(c) for c in g["view"]["hand"]) == snap["hands"][0]
                assert g["view"]["history"] == b.last_state["view"]["history"]
                assert g["room"]["seats"][0]["connected"] is True
                bf = await b.until(lambda f: f["type"] == "state" and f["auto"][0] is False)
                assert bf["room"]["seats"][0]["connected"] is True
                # the notice of what the bot did while ann was away reached both (ann's new tab too)
                note = await b.until(lambda f: f["type"] == "notice" and f["code"] == "bot_played")
                assert (await a3.until(lambda f: f["type"] == "notice"))["params"] == note["params"]
                assert note["params"]["seat"] == 0 and note["params"]["moves"] >= moves_for_ann >= 1
                assert note["params"]["deals"] >= 1
                assert note["params"]["reason"] == "away"  # 托管 was on because ann had no tab open

    asyncio.run(main())


def is_state_with_view(f: dict[str, Any]) -> bool:
    return f["type"] == "state" and f["view"] is not None


def test_clock_timeouts_play_one_move_then_auto_after_two(live):
    """R53 / AMB-25 with 0.3 s clocks (docs/table-contract.md section 5): a timeout plays ONE move
    for the person and leaves 托管 off; the second consecutive timeout turns it on; the cancel
    (``auto off``) takes the seat back; an action resets the count of timeouts."""
    s = live(bot_delay_s=0.01)
    ann = s.user("ann")
    rid = s.make_room(ann, {"preset": "official", "clock_lead_s": 0.3, "clock_follow_s": 0.3})

    def mine(x: dict[str, Any]) -> int:
        return sum(1 for e in x["view"]["history"] if e[0] == 0)

    async def main() -> None:
        async with ws_client(s, rid, ann) as a:
            await a.recv()
            await asyncio.to_thread(_fill_and_start, s, ann, rid)
            f = await a.until(my_turn)
            clock = f["clock"]
            assert clock["seat"] == 0 and clock["deadline_ms"] is not None
            left = clock["deadline_ms"] / 1000 - time.time()
            assert -0.5 < left <= 0.35
            # first timeout: one move is played, a notice says so, 托管 stays off
            note = await a.until(lambda x: x["type"] == "notice" and x["code"] == "timeout_move")
            assert note["params"] == {"seat": 0, "timeouts": 1, "limit": 2}
            g = a.last_state
            assert g["auto"][0] is False and g["timeouts"][0] == 1 and mine(g) == mine(f) + 1
            # second consecutive timeout: 托管 on (auto_on notice with reason timeouts)
            on = await a.until(lambda x: x["type"] == "notice" and x["code"] == "auto_on")
            assert on["params"] == {"seat": 0, "reason": "timeouts"}
            h = await a.until(lambda x: x["type"] == "state" and x["auto"][0])
            assert h["auto_reason"][0] == "timeouts" and h["timeouts"][0] == 2
            # the bot keeps playing for seat 0 (no clock for a seat in 托管) ...
            k0 = await a.until(lambda x: x["type"] == "state" and x["view"] is not None and mine(x) >= mine(h) + 1
                               or (x["type"] == "state" and x["view"] is not None and x["view"]["deal"] != h["view"]["deal"]))
            assert k0["auto"][0] is True
            # ... until the cancel button: 托管 off, count reset, the notice reports the bot's moves
            await a.send({"type": "auto", "on": False})
            off = await a.until(lambda x: x["type"] == "state" and x["auto"][0] is False)
            assert off["timeouts"][0] == 0 and off["auto_reason"][0] is None
            report = [x for x in a.frames if x["type"] == "notice" and x["code"] == "bot_played"]
            assert len(report) == 1 and report[0]["params"]["seat"] == 0 and report[0]["params"]["moves"] >= 1
            assert report[0]["params"]["reason"] == "timeouts"  # 托管 came from the two timeouts
            # the clock runs again; one more timeout counts from 1 again and 托管 stays off
            k = await a.until(lambda x: my_turn(x) and x["clock"]["deadline_ms"] is not None)
            assert k["auto"][0] is False and k["clock"]["seat"] == 0
            note = await a.until(lambda x: x["type"] == "notice" and x["code"] == "timeout_move")
            assert note["params"]["timeouts"] == 1
            # an action of the person resets the count to 0
            m = await a.until(my_turn)
            await a.send({"type": "act", "action": m["view"]["legal_actions"][-1]})
            n = await a.until(lambda x: x["type"] == "state" and x["seq"] > m["seq"])
            assert n["timeouts"][0] == 0 and n["auto"][0] is False

    asyncio.run(main())


def test_auto_on_by_choice_survives_a_reconnect(live):
    """托管 chosen with the button stays on over a page reload (only absence-托管 ends by itself),
    and any action turns it off."""
    s = live(bot_delay_s=0.05)
    ann = s.user("ann")
    rid = s.make_room(ann, {"preset": "official"})

    async def main() -> None:
        async with ws_client(s, rid, ann) as a:
            await a.recv()
            await asyncio.to_thread(_fill_and_start, s, ann, rid)
            await a.until(my_turn)
            await a.send({"type": "auto", "on": True})
            f = await a.until(lambda x: x["type"] == "state" and x["auto"][0])
            assert f["auto_reason"][0] == "player"
        async with ws_client(s, rid, ann) as a2:
            g = await a2.recv()
            assert g["auto"][0] is True and g["auto_reason"][0] == "player"
            await a2.send({"type": "auto", "on": False})
            t = await a2.until(lambda x: x["type"] == "state" and x["auto"][0] is False)
            if not my_turn(t):
                t = await _until_my_turn(a2)
            await a2.send({"type": "auto", "on": True})
            await a2.until(lambda x: x["type"] == "state" and x["auto"][0])
            # an action while in 托管 (it may still be seat 0's turn): 托管 off at once
            if a2.last_state["view"]["to_act"] == 0 and a2.last_state["view"]["legal_actions"]:
                await a2.send({"type": "act", "action": a2.last_state["view"]["legal_actions"][-1]})
                x = await a2.until(lambda x: x["type"] == "state" and x["seq"] > t["seq"])
                assert x["auto"][0] is False and x["auto_reason"][0] is None

    asyncio.run(main())


def test_restart_mid_game_continues_to_the_end(live):
    """Stop the server in the middle of the second deal, start a new server (new TableManager) on
    the same database: the game goes on from the stored record and ends with a verified record."""
    s1 = live()
    ann = s1.user("ann")
    rid = s1.make_room(ann, {"preset": "official"})
    rng = random.Random(7)

    async def first_half() -> dict[str, Any]:
        async with ws_client(s1, rid, ann) as a:
            await a.recv()
            await asyncio.to_thread(_fill_and_start, s1, ann, rid)
            f = await _play_until_over(a, rng, stop=lambda f: my_turn(f) and f["view"]["deal"] >= 2)
            assert f["type"] == "state"
            # stop the server while it waits for ann (the bots cannot move on)
            await asyncio.to_thread(s1.stop)
            return f

    before = asyncio.run(first_half())
    status, record_mid = s1.room_row(rid)
    assert status == "playing"
    assert len([ln for ln in record_mid.split("\n") if ln]) == before["seq"] + 1

    s2 = live()  # same database file: a new TableManager restores the room
    assert rid in s2.manager.tables

    async def second_half() -> dict[str, Any]:
        async with ws_client(s2, rid, ann) as a:
            f = await a.recv()
            if f["between"] is not None:
                # stopped before the deal's first action: the record cannot tell whether the pause
                # had ended, so the restored table shows the result again until ann is ready
                assert before["view"]["history"] == [] and f["view"]["legal_actions"] == []
                await a.send({"type": "ready"})
                f = await a.until(lambda x: x["type"] == "state" and x["between"] is None)
            assert f["seq"] == before["seq"] and f["view"] == before["view"]
            await a.send({"type": "act", "action": rng.choice(f["view"]["legal_actions"])})
            return await _play_until_over(a, rng)

    over = asyncio.run(second_half())
    status, record = s2.room_row(rid)
    assert status == "finished" and record.startswith(record_mid)
    result = replay_lines(record.split("\n")[:-1])
    assert result.complete and over["winner_team"] == result.game.winner


# -- guandan serve / guandan loadtest --------------------------------------------------------------


def test_loadtest_against_a_started_server():
    """``run_loadtest`` starts ``guandan serve`` on a free loopback port, plays two tables through
    the real API (guest accounts, rooms, bots, websockets) and reports throughput and latency."""
    from guandan.server.loadtest import percentile, run_loadtest

    before = time.monotonic()
    report = run_loadtest(tables=2, deals=1, timeout_s=120)
    after = time.monotonic()
    assert report.errors == [] and report.n_errors == 0
    assert report.tables_done == 2 and not report.timed_out
    assert report.url.startswith("http://127.0.0.1:")
    # a deal has at least 27 actions by the first player out, and the scripted players acted
    assert report.actions >= 2 * 27 and report.person_actions >= 2
    assert report.actions_per_s > 0 and 0 < report.p50_ms <= report.p99_ms <= report.max_ms
    assert report.p99_ms <= report.p99_parsed_ms  # each sample's arrival comes before its parse
    # every sample with its arrival on this machine's monotonic clock, inside the run; not in the JSON
    assert len(report.samples) == report.person_actions
    assert all(before < at < after and ms > 0 for at, ms in report.samples)
    latencies = [ms for _, ms in report.samples]
    assert round(max(latencies), 2) == report.max_ms and round(percentile(latencies, 0.99), 2) == report.p99_ms
    assert "samples" not in report.to_json() and report.to_json()["p99_ms"] == report.p99_ms


def test_loadtest_writes_its_samples(tmp_path: Any) -> None:
    """``guandan loadtest --samples FILE``: one CSV line per latency sample; an unwritable FILE is
    refused before the run starts."""
    from typer.testing import CliRunner

    from guandan.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["loadtest", "-n", "1", "--samples", str(tmp_path / "no-such-dir" / "s.csv")])
    assert r.exit_code == 2 and "--samples: cannot write" in r.output and "Traceback" not in r.output
    out = tmp_path / "s.csv"
    r = runner.invoke(app, ["loadtest", "-n", "2", "--samples", str(out), "--json", "--no-replay-check"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout.strip().splitlines()[-1])
    lines = out.read_text().splitlines()
    assert lines[0] == "arrived_monotonic_s,latency_ms"
    rows = [tuple(float(x) for x in ln.split(",")) for ln in lines[1:]]
    assert len(rows) == report["person_actions"] >= 2
    assert all(0 < at <= time.monotonic() and ms > 0 for at, ms in rows)
    assert abs(max(ms for _, ms in rows) - report["max_ms"]) <= 0.01


def test_loadtest_spreads_tables_over_two_urls_and_replays_every_record():
    """Two URLs of one real ``guandan serve`` process (``127.0.0.1`` and ``localhost``): the tables
    are created through one URL and played and watched through the other; every stored game of
    the run is downloaded and replays through the rules engine (issue 10, item 4)."""
    from guandan.server.loadtest import run_load, spawn_server

    with spawn_server() as url:
        other = url.replace("127.0.0.1", "localhost")
        report = asyncio.run(run_load([url, other], tables=2, deals=1, timeout_s=120, spectators=1))
    assert report.urls == [url, other]
    assert report.errors == [] and report.n_errors == 0
    assert report.tables_done == 2 and report.person_actions >= 2 and report.actions >= 2 * 27
    # both tables' games were stored (abandoned after their deal) and replay action by action
    assert report.records_checked == 2 and report.records_ok == 2
    # the spectators saw every action as a state frame, without any hand
    assert report.spectator_frames >= report.actions and report.spectator_p50_ms is not None


def test_loadtest_names_unreachable_urls():
    from guandan.server.loadtest import LoadTestError, run_load, split_urls

    assert split_urls(["http://127.0.0.1:1,http://localhost:2/", "http://127.0.0.1:1"]) == \
        ["http://127.0.0.1:1", "http://localhost:2"]
    with pytest.raises(LoadTestError, match=r"cannot reach http://127.0.0.1:9: nothing answers"):
        asyncio.run(run_load("http://127.0.0.1:9", tables=1))
    with pytest.raises(LoadTestError, match="only targets this machine"):
        split_urls("http://127.0.0.1:1,http://example.com:2")


def test_loadtest_refuses_other_hosts_and_percentiles():
    from guandan.server.loadtest import LoadTestError, check_loopback, percentile

    assert check_loopback("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert check_loopback("http://localhost:1") == "http://localhost:1"
    for bad in ("http://example.com:8000", "http://10.0.0.2:80", "ftp://127.0.0.1", "127.0.0.1:8000"):
        with pytest.raises(LoadTestError):
            check_loopback(bad)
    samples = [float(x) for x in range(1, 101)]  # 1..100
    assert percentile(samples, 0.5) == 50.0 and percentile(samples, 0.99) == 99.0 and percentile([], 0.5) is None


def test_cli_serve_and_loadtest_bad_arguments_are_one_line():
    from typer.testing import CliRunner

    from guandan.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["serve", "--db", "sqlite:////no-such-dir/x/guandan.db", "--port", "0"])
    assert r.exit_code == 2 and "cannot open the database" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["serve", "--port", "70000"])
    assert r.exit_code == 2 and "--port" in r.output
    r = runner.invoke(app, ["loadtest", "--tables", "0"])
    assert r.exit_code == 2 and "--tables" in r.output
    r = runner.invoke(app, ["loadtest", "--tables", "1", "--url", "http://192.0.2.1:8000"])
    assert r.exit_code == 2 and "only targets this machine" in r.output
    r = runner.invoke(app, ["loadtest", "--tables", "1", "--url", "http://127.0.0.1:9", "--url", "http://127.0.0.1:7"])
    assert r.exit_code == 2 and "cannot reach http://127.0.0.1:9" in r.output and "127.0.0.1:7" in r.output
    assert "Traceback" not in r.output


def test_account_titles_at_the_table() -> None:
    """Issue 21 item 7: the table names each person's title from their account's Anhui points plus
    this game's, not from this game's points alone; bots have none; rules without points none."""
    from guandan.server.table.info import RoomInfo, SeatInfo
    from guandan.server.table.views import account_titles

    # seat 0 has 120 points (舉人, 100-399), seat 2 has 98 (秀才, 0-99); the deal was won 1-2: +4 each
    frame = {"points": [4, -4, 4, -4], "points_total": [4, -4, 4, -4], "titles_before": ["秀才"] * 4,
             "titles": ["秀才", "平民", "秀才", "平民"]}
    account_titles(frame, [120, None, 98, None])
    assert frame["titles_before"] == ["舉人", None, "秀才", None]
    assert frame["titles"] == ["舉人", None, "舉人", None]  # 98 + 4 = 102: seat 2 becomes 舉人
    plain = {"result": "1-2"}
    assert account_titles(plain, [5, None, 5, None]) == {"result": "1-2"}  # no points: unchanged
    seats = [SeatInfo(0, 7, "ann", None, 450), SeatInfo(1, None, None, "normal"), SeatInfo(2, 8, "bob", None, -3),
             SeatInfo(3, None, None, "normal")]
    anhui = RoomInfo("r1", "t", "anhui", {"points": True}, "waiting", "ann", 7, 0, seats)
    assert [s["title"] for s in anhui.summary()["seats"]] == ["九品主簿", None, "平民", None]
    official = RoomInfo("r2", "t", "official", {"points": False}, "waiting", "ann", 7, 0, seats)
    assert [s["title"] for s in official.summary()["seats"]] == [None] * 4
