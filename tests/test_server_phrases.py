"""Quick phrases and emotes (issue 25 item 3; R55): the rules of :mod:`guandan.server.table.phrases` as plain
functions, and the ``phrase`` message through the real app's table websocket (SQLite).

Expected values come from the rules in the module docstring: one phrase per 3 s, at most 5 in any 60 s;
off at tournament tables, board rooms and rated tables (four people); only seated people send; the
frame carries the seat and the id, never text.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from guandan.server.app import create_app
from guandan.server.models import AccountModeration, User
from guandan.server.phrase_relay import relay_phrase
from guandan.server.settings import Settings
from guandan.server.table import phrases
from guandan.server.table.info import RoomInfo, SeatInfo

STATIC = Path(__file__).resolve().parents[1] / "src" / "guandan" / "server" / "static"


# -- the rules as plain functions ----------------------------------------------------------------------


def test_limiter_gap_and_burst() -> None:
    lim = phrases.PhraseLimiter()  # 3 s apart, at most 5 in 60 s
    assert lim.take("a", 100.0) == 0.0
    assert lim.take("a", 101.0) == 2.0  # 3 s after 100
    assert lim.take("b", 101.0) == 0.0  # another person is counted apart
    for t in (103.0, 106.0, 109.0, 112.0):  # the 2nd..5th phrase, each 3 s after the one before
        assert lim.take("a", t) == 0.0
    # six phrases in 60 s are too many: the oldest (100) must be 60 s old, so wait until 160
    assert lim.take("a", 115.0) == 45.0
    assert lim.take("a", 159.5) == 0.5
    assert lim.take("a", 160.0) == 0.0
    # a refused try counts nothing: the next is 3 s after 160
    assert lim.wait("a", 162.0) == 1.0


def test_limiter_forgets_idle_people() -> None:
    lim = phrases.PhraseLimiter()
    lim.take("a", 0.0)
    lim.take("b", 50.0)
    lim.forget_before(60.0)  # a's last phrase is 60 s old: forgotten; b's is 10 s old
    assert set(lim._sent) == {"b"}


def test_policy_order_and_rated_tables() -> None:
    assert phrases.phrase_policy(tournament=True, board=True, rated=True) == "tournament"
    assert phrases.phrase_policy(tournament=False, board=True, rated=True) == "board"
    assert phrases.phrase_policy(tournament=False, board=False, rated=True) == "rated"
    assert phrases.phrase_policy(tournament=False, board=False, rated=False) is None
    assert phrases.is_rated_table(["person"] * 4)
    assert not phrases.is_rated_table(["person", "person", "person", "bot"])
    assert not phrases.is_rated_table(["person", "empty", "person", "person"])
    assert not phrases.is_rated_table(["person"] * 3)
    assert phrases.policy_frame("rated") == {"on": False, "off_reason": "rated"}
    assert phrases.policy_frame(None) == {"on": True, "off_reason": None}


#: what a phrase's words may not contain: a rank, a suit, a card or combination name, a count (R55)
CARD_WORDS = re.compile(
    r"\b(?:[2-9]|10|ace|king|queen|jack|joker|bomb|pair|triple|straight|flush|plate|tube|pass|lead|wild|heart|"
    r"spade|club|diamond|card|cards|tribute)s?\b|对子|三张|顺子|炸|王|牌|张|红桃|黑桃|梅花|方块|逢人配|级|不要|要不起|过|出|钢板|连对",
    re.IGNORECASE)


def _table_words(text: str, name: str) -> dict[str, str]:
    m = re.search(r"export const " + name + r" = \{(.*?)\n\};", text, re.S)
    assert m is not None, name
    return dict(re.findall(r'^\s*(\w+): "((?:[^"\\]|\\.)*)",?$', m.group(1), re.M))


def test_every_id_has_words_in_both_languages_and_none_speaks_of_cards() -> None:
    text = (STATIC / "js" / "i18n_phrases.js").read_text(encoding="utf-8")
    en, zh = _table_words(text, "PHRASES_EN"), _table_words(text, "PHRASES_ZH")
    assert set(en) == set(zh)
    for pid in phrases.PHRASE_IDS:
        assert f"ph_{pid}" in en and f"ph_{pid}" in zh, pid
    for pid in phrases.PHRASES:
        for words in (en[f"ph_{pid}"], zh[f"ph_{pid}"]):
            assert CARD_WORDS.search(words) is None, (pid, words)
    assert len(phrases.PHRASES) == 10 and len(phrases.EMOTES) == 8


# -- a fake table for the relay's refusals that need no database ----------------------------------------


class _Sink:
    def __init__(self, user_id: int | None) -> None:
        self.user_id = user_id
        self.session_key = None
        self.frames: list[dict[str, Any]] = []

    def send(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)

    def close(self, code: int = 1000, reason: str = "") -> None:  # pragma: no cover - not used
        pass


class _Host:
    def __init__(self) -> None:
        self.competitions: dict[str, Any] = {}


class _Table:
    def __init__(self, seats: list[SeatInfo], board: dict[str, Any] | None = None) -> None:
        self.info = RoomInfo(id="r1", name="r", preset="official", options={}, status="playing", owner=None,
                             owner_id=None, seed=0, seats=seats, board=board)
        self.manager = _Host()
        self.conns: set[Any] = set()

    @property
    def id(self) -> str:
        return self.info.id

    def seat_of(self, conn: Any) -> int | None:
        return self.info.seat_of(conn.user_id)


def _seats(*users: int | None) -> list[SeatInfo]:
    return [SeatInfo(seat=i, user_id=u, name=None if u is None else f"p{u}", bot=None if u is not None else "heuristic")
            for i, u in enumerate(users)]


def test_relay_off_at_a_tournament_table_and_a_board_room() -> None:
    t = _Table(_seats(1, None, 2, None))
    me, other = _Sink(1), _Sink(2)
    t.conns = {me, other}
    t.manager.competitions["r1"] = object()
    out = asyncio.run(relay_phrase(t, me, {"id": "hello"}, now=0.0))
    assert out is not None and out["reason"] == "phrases_off" and out["params"] == {"why": "tournament"}
    t.manager.competitions.clear()
    t.info.board = {"id": "b"}
    out = asyncio.run(relay_phrase(t, me, {"id": "hello"}, now=0.0))
    assert out is not None and out["params"] == {"why": "board"}
    assert me.frames == [] and other.frames == []  # nothing went out
    t.info.board = None
    assert asyncio.run(relay_phrase(t, me, {"id": "hello"}, now=0.0)) is None
    assert other.frames == [{"type": "phrase", "seat": 0, "id": "hello"}] == me.frames


# -- through the app's websocket -------------------------------------------------------------------------


pytestmark = pytest.mark.usefixtures("fast_hashing")  # tests/conftest.py


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    application = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'p.db'}", bot_delay_s=0.0))
    with TestClient(application):
        yield application


def person(app: Any, name: str) -> TestClient:
    c = TestClient(app)
    r = c.post("/api/register", json={"name": name, "password": "secret-pw-1"})
    assert r.status_code == 200, r.text
    return c


def state(ws: Any) -> dict[str, Any]:
    while True:
        f = ws.receive_json()
        if f["type"] == "state":
            return f


def until_type(ws: Any, kind: str) -> dict[str, Any]:
    while True:
        f = ws.receive_json()
        if f["type"] == kind:
            return f


def test_phrase_goes_to_everyone_by_seat_and_id(app: Any) -> None:
    a = person(app, "ann")
    rid = a.post("/api/rooms", json={"preset": "official"}).json()["room"]["id"]
    assert a.post(f"/api/rooms/{rid}/bots", json={"bot": "heuristic"}).status_code == 200
    watcher = person(app, "wat")
    with a.websocket_connect(f"/ws/rooms/{rid}") as ws, watcher.websocket_connect(f"/ws/rooms/{rid}") as sw:
        assert state(ws)["phrases"] == {"on": True, "off_reason": None}  # one person and three bots
        state(sw)
        ws.send_json({"type": "phrase", "id": "nice_play"})
        assert until_type(ws, "phrase") == {"type": "phrase", "seat": 0, "id": "nice_play"}
        assert until_type(sw, "phrase") == {"type": "phrase", "seat": 0, "id": "nice_play"}
        ws.send_json({"type": "phrase", "id": "love"})  # at once: 3 s have not passed
        err = until_type(ws, "error")
        assert err["reason"] == "phrase_too_fast" and err["params"]["wait_s"] == 3
        ws.send_json({"type": "phrase", "id": "say anything"})
        err = until_type(ws, "error")
        assert err["reason"] == "unknown_phrase" and err["params"]["id"] == "say anything"
        assert set(err["params"]["known"]) == phrases.PHRASE_IDS
        ws.send_json({"type": "phrase", "text": "A♠ here"})  # no free text: an id or nothing
        assert until_type(ws, "error")["reason"] == "unknown_phrase"
        sw.send_json({"type": "phrase", "id": "hello"})  # a spectator
        assert until_type(sw, "error")["reason"] == "not_seated"
        ws.send_json({"type": "ping"})
        assert until_type(ws, "pong") == {"type": "pong"}  # nothing else was sent to the room meanwhile


def test_phrases_off_at_a_rated_table(app: Any) -> None:
    names = ["pat", "pam", "pip", "pod"]
    cs = [person(app, n) for n in names]
    rid = cs[0].post("/api/rooms", json={"preset": "official"}).json()["room"]["id"]
    for seat, c in enumerate(cs[1:], start=1):
        assert c.post(f"/api/rooms/{rid}/seat", json={"seat": seat}).status_code == 200
    with cs[1].websocket_connect(f"/ws/rooms/{rid}") as ws:
        assert state(ws)["phrases"] == {"on": False, "off_reason": "rated"}
        ws.send_json({"type": "phrase", "id": "hello"})
        err = until_type(ws, "error")
        assert err["reason"] == "phrases_off" and err["params"] == {"why": "rated"}


def test_a_muted_account_is_refused_with_the_end_of_its_mute(app: Any) -> None:
    a = person(app, "mia")
    rid = a.post("/api/rooms", json={"preset": "official"}).json()["room"]["id"]
    a.post(f"/api/rooms/{rid}/bots", json={"bot": "heuristic"})
    until = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=5)
    with app.state.session_factory() as db:
        uid = db.query(User).filter(User.name == "mia").one().id
        db.add(AccountModeration(user_id=uid, is_admin=False, phrases_muted_until=until))
        db.commit()
    with a.websocket_connect(f"/ws/rooms/{rid}") as ws:
        state(ws)
        ws.send_json({"type": "phrase", "id": "hello"})
        err = until_type(ws, "error")
        assert err["reason"] == "phrases_muted"
        assert err["params"] == {"until": until.isoformat().replace("+00:00", "Z")}


def test_phrases_off_at_a_tournament_table(tmp_path: Path) -> None:
    """An online tournament match (two bot pairs, docs/tournaments.md "Online rounds") is a tournament
    table: every state frame says phrases are off there, with the reason (R55)."""
    import json as _json

    import httpx
    from browser_helpers import LiveServer
    from websockets.sync.client import connect

    srv = LiveServer(tmp_path / "t.db", bot_delay_s=0.2)
    try:
        c = httpx.Client(base_url=srv.base, timeout=60)
        assert c.post("/api/register", json={"name": "orga", "password": "secret-pw-1"}).status_code == 200
        r = c.post("/api/tournaments", json={"venue": "online", "name": "Cup", "rounds": 1})
        assert r.status_code == 201, r.text
        t = r.json()["tournament"]
        entries = [{"name": f"P{i}", "players": [f"p{i}x", f"p{i}y"], "bot": "normal", "seed": i} for i in (1, 2)]
        assert c.post(f"/api/tournaments/{t['id']}/entries", json={"version": t["version"], "entries": entries}).status_code == 200
        v = c.get(f"/api/tournaments/{t['id']}").json()["version"]
        r = c.post(f"/api/tournaments/{t['id']}/rounds", json={"version": v})
        assert r.status_code == 200, r.text
        room = c.get(f"/api/tournaments/{t['id']}").json()["online_tables"][0]["room"]
        with connect(srv.base.replace("http", "ws") + f"/ws/rooms/{room}") as ws:
            frame = _json.loads(ws.recv(timeout=30))
            while frame["type"] != "state":
                frame = _json.loads(ws.recv(timeout=30))
        assert frame["competition"] is not None
        assert frame["phrases"] == {"on": False, "off_reason": "tournament"}
    finally:
        srv.stop()


def test_a_muted_spammer_costs_one_database_read_per_five_seconds() -> None:
    """The relay reads an account's mute through its host's ``run_db`` and reuses it for MUTE_CACHE_S (5 s):
    twenty phrases in a second from a muted person cost one read; the next read comes 5 s later."""
    from guandan.server import phrase_relay

    until = datetime.now(UTC) + timedelta(hours=1)
    reads: list[int] = []

    class Host(_Host):
        session_factory = object()

        async def run_db(self, fn: Any, factory: Any, user_id: int, now: datetime) -> datetime:
            reads.append(user_id)
            return until

    t = _Table(_seats(7, None, None, None))
    t.manager = Host()
    me = _Sink(7)
    t.conns = {me}
    for i in range(20):
        out = asyncio.run(relay_phrase(t, me, {"id": "hello"}, now=i * 0.05))
        assert out is not None and out["reason"] == "phrases_muted"
    assert reads == [7]
    asyncio.run(relay_phrase(t, me, {"id": "hello"}, now=phrase_relay.MUTE_CACHE_S))
    assert reads == [7, 7]
    assert me.frames == []
