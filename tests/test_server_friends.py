"""Friends (issue 25 item 2): requests, presence, invitations and the friends leaderboard, through the
real app on SQLite and PostgreSQL (the ``db_url`` fixture of ``test_server_storage.py``), and the
rules of :mod:`guandan.server.friends` as plain functions.

Expected values are worked out from the rules in the module docstring of
:mod:`guandan.server.friends`: online = seen within 120 s, writes at most every 30 s, invitations live
30 minutes, display rating = mu - 3 sigma rounded to one decimal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from test_server_storage import (
    db_url,  # noqa: F401 (fixture)
    pg_session_url,  # noqa: F401 (fixture)
)

from guandan.server import friends as rules
from guandan.server import friends_store
from guandan.server.app import create_app
from guandan.server.models import FriendInvite, FriendLink, Room, User
from guandan.server.settings import Settings

T0 = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)


pytestmark = pytest.mark.usefixtures("fast_hashing")  # tests/conftest.py


@pytest.fixture
def app(db_url: str) -> Iterator[Any]:  # noqa: F811
    application = create_app(Settings(db_url=db_url, bot_delay_s=0.0))
    with TestClient(application):  # lifespan: the table manager runs
        yield application


def person(app: Any, name: str) -> TestClient:
    c = TestClient(app)
    r = c.post("/api/register", json={"name": name, "password": "secret-pw-1"})
    assert r.status_code == 200, r.text
    return c


def refused(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "code", "params"} and body["code"] == code, body
    assert body["error"] and "\n" not in body["error"]
    return body


def befriend(a: TestClient, b: TestClient, b_name: str, a_name: str) -> None:
    assert a.post("/api/friends/requests", json={"name": b_name}).json() == {"outcome": "requested", "name": b_name}
    assert b.post("/api/friends/accept", json={"name": a_name}).json() == {"ok": True, "name": a_name}


def set_user(app: Any, name: str, **values: Any) -> None:
    with app.state.session_factory() as db:
        db.execute(update(User).where(User.name == name).values(**values))
        db.commit()


def room_of(c: TestClient, name: str = "friends room") -> str:
    r = c.post("/api/rooms", json={"name": name, "preset": "official"})
    assert r.status_code in (200, 201), r.text
    return str(r.json()["room"]["id"] if "room" in r.json() else r.json()["id"])


# -- requests ----------------------------------------------------------------------------------------


def test_request_accept_remove_flow(app: Any) -> None:
    alice, bob = person(app, "alice"), person(app, "bob")
    r = alice.post("/api/friends/requests", json={"name": "  BOB "})  # case and spaces ignored
    assert r.status_code == 200 and r.json() == {"outcome": "requested", "name": "bob"}
    a = alice.get("/api/friends").json()
    assert a["outgoing"][0]["name"] == "bob" and a["friends"] == [] and a["incoming"] == []
    b = bob.get("/api/friends").json()
    assert [x["name"] for x in b["incoming"]] == ["alice"] and b["friends"] == []
    # a pending request shows no presence to either side
    assert "online" not in json.dumps(b["incoming"]) and "table" not in json.dumps(a["outgoing"])
    assert bob.post("/api/friends/accept", json={"name": "alice"}).json() == {"ok": True, "name": "alice"}
    assert [f["name"] for f in alice.get("/api/friends").json()["friends"]] == ["bob"]
    assert [f["name"] for f in bob.get("/api/friends").json()["friends"]] == ["alice"]
    assert alice.post("/api/friends/remove", json={"name": "bob"}).json() == {"ok": True, "name": "bob"}
    assert bob.get("/api/friends").json()["friends"] == []
    with app.state.session_factory() as db:
        assert db.scalars(select(FriendLink)).all() == []


def test_crossed_requests_are_accepted_at_once(app: Any) -> None:
    alice, bob = person(app, "alice"), person(app, "bob")
    assert alice.post("/api/friends/requests", json={"name": "bob"}).json()["outcome"] == "requested"
    assert bob.post("/api/friends/requests", json={"name": "alice"}).json() == {"outcome": "accepted", "name": "alice"}
    assert [f["name"] for f in alice.get("/api/friends").json()["friends"]] == ["bob"]
    assert alice.get("/api/friends").json()["outgoing"] == []


def test_decline_then_ask_again(app: Any) -> None:
    alice, bob = person(app, "alice"), person(app, "bob")
    alice.post("/api/friends/requests", json={"name": "bob"})
    assert bob.post("/api/friends/decline", json={"name": "alice"}).json() == {"ok": True, "name": "alice"}
    assert alice.get("/api/friends").json()["outgoing"] == [] and bob.get("/api/friends").json()["incoming"] == []
    assert alice.post("/api/friends/requests", json={"name": "bob"}).json()["outcome"] == "requested"


def test_every_request_error_has_its_code(app: Any) -> None:
    alice, bob = person(app, "alice"), person(app, "bob")
    refused(alice.post("/api/friends/requests", json={"name": "alice"}), 400, "friend_self")
    body = refused(alice.post("/api/friends/requests", json={"name": "nobody"}), 404, "no_user")
    assert body["params"] == {"name": "nobody"}
    alice.post("/api/friends/requests", json={"name": "bob"})
    assert refused(alice.post("/api/friends/requests", json={"name": "bob"}), 409,
                   "request_pending")["params"] == {"name": "bob"}
    refused(alice.post("/api/friends/accept", json={"name": "bob"}), 404, "no_request")  # my own request
    bob.post("/api/friends/accept", json={"name": "alice"})
    refused(alice.post("/api/friends/requests", json={"name": "bob"}), 409, "already_friends")
    refused(bob.post("/api/friends/requests", json={"name": "alice"}), 409, "already_friends")
    refused(alice.post("/api/friends/decline", json={"name": "bob"}), 404, "no_request")
    refused(alice.post("/api/friends/remove", json={"name": "nobody"}), 404, "not_friends")
    refused(alice.post("/api/friends/requests", json={"name": 5}), 422, "invalid_request")
    refused(alice.post("/api/friends/requests", json={"name": "x" * 65}), 422, "invalid_request")
    # guests: none of their own, and nobody can add one
    guest = TestClient(app)
    gname = guest.post("/api/guest", json={}).json()["user"]["name"]
    refused(guest.get("/api/friends"), 403, "guest_no_friends")
    refused(guest.post("/api/friends/requests", json={"name": "alice"}), 403, "guest_no_friends")
    refused(alice.post("/api/friends/requests", json={"name": gname}), 400, "guest_target")
    refused(TestClient(app).get("/api/friends"), 401, "login_required")


# -- presence --------------------------------------------------------------------------------------


def test_presence_window_and_visibility(app: Any) -> None:
    alice, bob, carol = person(app, "alice"), person(app, "bob"), person(app, "carol")
    befriend(alice, bob, "bob", "alice")
    carol.post("/api/friends/requests", json={"name": "alice"})  # pending: no presence either way
    now = datetime.now(UTC)
    set_user(app, "bob", last_seen_at=now - timedelta(seconds=110))
    assert alice.get("/api/friends").json()["friends"][0]["online"] is True
    set_user(app, "bob", last_seen_at=now - timedelta(seconds=130))
    assert alice.get("/api/friends").json()["friends"][0]["online"] is False
    # bob's own request marks him seen again: online for alice
    bob.get("/api/me")
    assert alice.get("/api/friends").json()["friends"][0]["online"] is True
    # carol (a stranger with a pending request) sees no presence of alice at all
    c = carol.get("/api/friends").json()
    assert c["friends"] == [] and c["outgoing"] == [{"name": "alice", "sent_at": c["outgoing"][0]["sent_at"]}]
    # no endpoint of a stranger gives presence: the profile has no online field
    assert "online" not in carol.get("/api/users/alice").text and "last_seen" not in carol.get("/api/users/alice").text


def test_last_seen_is_written_at_most_every_30_seconds(app: Any) -> None:
    person(app, "alice")
    with app.state.session_factory() as db:
        user = db.scalars(select(User).where(User.name == "alice")).one()
        user.last_seen_at = None
        db.commit()
        assert friends_store.touch(db, user, T0) is True
        db.commit()
        assert friends_store.touch(db, user, T0 + timedelta(seconds=29)) is False
        assert friends_store.touch(db, user, T0 + timedelta(seconds=30)) is True
        db.commit()
        db.expire_all()
        assert db.scalars(select(User).where(User.name == "alice")).one().last_seen_at == T0 + timedelta(seconds=30)
        # the conditional write: another process's stale copy does not move a fresher value back
        friends_store.touch_id(db, user.id, T0 + timedelta(seconds=45))
        db.expire_all()
        assert db.get(User, user.id).last_seen_at == T0 + timedelta(seconds=30)


def test_seated_friend_shows_table_and_no_card(app: Any) -> None:
    alice, bob = person(app, "alice"), person(app, "bob")
    befriend(alice, bob, "bob", "alice")
    room = room_of(bob, "bob's table")
    f = alice.get("/api/friends").json()["friends"][0]
    assert f["online"] is True and f["table"] == {"room_id": room, "room_name": "bob's table", "status": "waiting"}
    assert bob.post(f"/api/rooms/{room}/bots", json={"bot": "easy"}).status_code == 200
    assert bob.post(f"/api/rooms/{room}/start", json={}).status_code == 200
    text = alice.get("/api/friends").text
    f = json.loads(text)["friends"][0]
    assert f["table"] == {"room_id": room, "room_name": "bob's table", "status": "playing"}
    # no card, hand or record: no card code such as "7H"/"SJ"/"BJ", no keys of the game's state
    assert not re.search(r'"(?:[2-9TJQKA][SHCD]|SJ|BJ)"', text), text
    for secret in ("hand", "cards", "record", "seed", "deal"):
        assert secret not in text.lower(), secret
    # offline: the table is not shown
    set_user(app, "bob", last_seen_at=datetime.now(UTC) - timedelta(minutes=5))
    f = alice.get("/api/friends").json()["friends"][0]
    assert f["online"] is False and f["table"] is None


# -- invitations -----------------------------------------------------------------------------------


def test_invitation_flow_and_errors(app: Any) -> None:
    alice, bob, carol = person(app, "alice"), person(app, "bob"), person(app, "carol")
    befriend(alice, bob, "bob", "alice")
    room = room_of(alice)
    refused(alice.post("/api/friends/invitations", json={"name": "carol", "room_id": room}), 404, "not_friends")
    refused(alice.post("/api/friends/invitations", json={"name": "bob", "room_id": "zzzzzzzz"}), 404, "no_room")
    other = room_of(carol)
    befriend(carol, bob, "bob", "carol")
    refused(alice.post("/api/friends/invitations", json={"name": "bob", "room_id": other}), 403, "invite_not_seated")
    r = alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room})
    assert r.status_code == 201, r.text
    inv = r.json()["invitation"]
    assert inv["to"] == "bob" and inv["room_id"] == room
    refused(alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room}), 409, "already_invited")
    got = bob.get("/api/friends").json()["invitations"]
    assert [(i["from"], i["room_id"], i["room_name"]) for i in got] == [("alice", room, "friends room")]
    sent = datetime.fromisoformat(got[0]["sent_at"].replace("Z", "+00:00"))
    assert datetime.fromisoformat(got[0]["expires_at"].replace("Z", "+00:00")) - sent == timedelta(minutes=30)
    # bob follows it: takes a seat; the invitation is gone, and he cannot be invited again while seated
    assert bob.post(f"/api/rooms/{room}/seat", json={"seat": 2}).status_code == 200
    assert bob.get("/api/friends").json()["invitations"] == []
    refused(alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room}), 409, "already_seated")
    refused(bob.post(f"/api/friends/invitations/{got[0]['id']}/dismiss", json={}), 404, "no_invitation")


def test_dismiss_and_expiry_and_room_start(app: Any) -> None:
    alice, bob = person(app, "alice"), person(app, "bob")
    befriend(alice, bob, "bob", "alice")
    room = room_of(alice)
    inv = alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room}).json()["invitation"]
    assert bob.post(f"/api/friends/invitations/{inv['id']}/dismiss", json={}).json() == {"ok": True}
    assert bob.get("/api/friends").json()["invitations"] == []
    # an expired invitation disappears, and may be sent again
    inv = alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room}).json()["invitation"]
    with app.state.session_factory() as db:
        db.execute(update(FriendInvite).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
        db.commit()
    assert bob.get("/api/friends").json()["invitations"] == []
    with app.state.session_factory() as db:
        assert db.scalars(select(FriendInvite)).all() == []  # cleaned up, not just hidden
    r = alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room})
    assert r.status_code == 201
    # the room starts: the invitation disappears, and no new one is accepted
    assert alice.post(f"/api/rooms/{room}/bots", json={"bot": "easy"}).status_code == 200
    assert alice.post(f"/api/rooms/{room}/start", json={}).status_code == 200
    assert bob.get("/api/friends").json()["invitations"] == []
    refused(alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room}), 409, "room_not_waiting")
    # a deleted room takes its invitations along (ON DELETE CASCADE), and purge clears dead rows
    room2 = room_of(alice, "second")
    alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room2})
    with app.state.session_factory() as db:
        db.delete(db.get(Room, room2))
        db.commit()
        assert db.scalars(select(FriendInvite)).all() == []
        assert friends_store.purge_invitations(db, datetime.now(UTC)) == 0


def test_removing_a_friend_drops_invitations(app: Any) -> None:
    alice, bob = person(app, "alice"), person(app, "bob")
    befriend(alice, bob, "bob", "alice")
    room = room_of(alice)
    alice.post("/api/friends/invitations", json={"name": "bob", "room_id": room})
    bob.post("/api/friends/remove", json={"name": "alice"})
    assert bob.get("/api/friends").json()["invitations"] == []


# -- leaderboard -----------------------------------------------------------------------------------


def test_friends_leaderboard(app: Any) -> None:
    alice, bob, carol = person(app, "alice"), person(app, "bob"), person(app, "carol")
    person(app, "dave")
    befriend(alice, bob, "bob", "alice")
    befriend(alice, carol, "carol", "alice")
    set_user(app, "alice", rating_mu=30.0, rating_sigma=3.0, games_played=4)  # 30 - 9 = 21.0
    set_user(app, "bob", rating_mu=40.0, rating_sigma=5.0, games_played=9)  # 40 - 15 = 25.0
    set_user(app, "dave", rating_mu=50.0, rating_sigma=1.0, games_played=9)  # 47.0, not a friend
    board = alice.get("/api/friends").json()["leaderboard"]  # carol: 25 - 25 = 0.0
    assert [(e["rank"], e["name"], e["rating"], e["me"]) for e in board] == [
        (1, "bob", 25.0, False), (2, "alice", 21.0, True), (3, "carol", 0.0, False)]
    # bob's board: alice is his only friend; carol is not his friend
    assert [e["name"] for e in bob.get("/api/friends").json()["leaderboard"]] == ["bob", "alice"]


# -- the rules as plain functions ------------------------------------------------------------------


def test_rules_plain() -> None:
    me = rules.Account(1, "a", False)
    assert rules.decide_request(me, rules.Account(2, "b", False), rules.THEY_ASKED, 3) == "accepted"
    assert rules.decide_request(me, rules.Account(2, "b", False), rules.NONE, 3) == "requested"
    with pytest.raises(rules.FriendError) as e:
        rules.decide_request(me, rules.Account(2, "b", False), rules.NONE, rules.MAX_FRIENDS)
    assert e.value.code == "too_many_friends"
    assert rules.is_online(T0 - timedelta(seconds=120), T0) and not rules.is_online(T0 - timedelta(seconds=121), T0)
    assert not rules.is_online(None, T0)
    assert rules.touch_due(None, T0) and not rules.touch_due(T0 - timedelta(seconds=29), T0)
    seats = [("r1", "one", "finished"), ("r2", "two", "waiting"), ("r3", "three", "playing")]
    assert rules.visible_table(True, seats) == {"room_id": "r3", "room_name": "three", "status": "playing"}
    assert rules.visible_table(False, seats) is None and rules.visible_table(True, seats[:1]) is None
    exp = rules.invite_expiry(T0)
    assert exp == datetime(2026, 12, 4, 12, 30, tzinfo=UTC)
    assert rules.invitation_live(exp, "waiting", False, T0 + timedelta(minutes=29))
    assert not rules.invitation_live(exp, "waiting", False, exp)
    assert not rules.invitation_live(exp, "playing", False, T0) and not rules.invitation_live(exp, None, False, T0)
    assert not rules.invitation_live(exp, "waiting", True, T0)
    board = rules.leaderboard([{"name": "b", "rating": 5.0, "games_played": 2}, {"name": "a", "rating": 5.0,
                                                                                "games_played": 2},
                               {"name": "c", "rating": 5.0, "games_played": 7}, {"name": "d", "rating": 9.5,
                                                                                 "games_played": 0}])
    assert [(e["rank"], e["name"]) for e in board] == [(1, "d"), (2, "c"), (3, "a"), (3, "b")]


def test_open_table_socket_keeps_the_account_online(app: Any) -> None:
    import time

    alice, bob = person(app, "alice"), person(app, "bob")
    befriend(alice, bob, "bob", "alice")
    room = room_of(bob)
    old = datetime.now(UTC) - timedelta(minutes=10)
    set_user(app, "bob", last_seen_at=old)
    assert alice.get("/api/friends").json()["friends"][0]["online"] is False
    with bob.websocket_connect(f"/ws/rooms/{room}") as ws:
        ws.receive_json()  # the first state frame
        ws.send_json({"type": "ping"})
        deadline = time.time() + 5
        while time.time() < deadline:
            with app.state.session_factory() as db:
                seen = db.scalars(select(User.last_seen_at).where(User.name == "bob")).one()
            if seen is not None and seen > old:
                break
            time.sleep(0.05)
        f = alice.get("/api/friends").json()["friends"][0]
    assert f["online"] is True and f["table"]["room_id"] == room


def test_block_and_unblock(app: Any) -> None:
    alice, bob, carol = person(app, "alice"), person(app, "bob"), person(app, "carol")
    befriend(alice, bob, "bob", "alice")
    room = room_of(bob)
    bob.post("/api/friends/invitations", json={"name": "alice", "room_id": room})
    # alice blocks bob: the friendship and bob's invitation end; only alice sees the block
    assert alice.post("/api/friends/block", json={"name": "BOB"}).json() == {"ok": True, "name": "bob"}
    a, b = alice.get("/api/friends").json(), bob.get("/api/friends").json()
    assert a["friends"] == [] and a["invitations"] == [] and a["blocked"] == [{"name": "bob"}]
    assert b["friends"] == [] and b["blocked"] == [] and b["outgoing"] == [] and b["incoming"] == []
    # no request either way while the block stands
    assert refused(bob.post("/api/friends/requests", json={"name": "alice"}), 403,
                   "request_blocked")["params"] == {"name": "alice"}
    refused(alice.post("/api/friends/requests", json={"name": "bob"}), 409, "you_blocked")
    refused(bob.post("/api/friends/invitations", json={"name": "alice", "room_id": room}), 404, "not_friends")
    refused(alice.post("/api/friends/block", json={"name": "bob"}), 409, "already_blocked")
    refused(alice.post("/api/friends/block", json={"name": "alice"}), 400, "friend_self")
    refused(alice.post("/api/friends/block", json={"name": "nobody"}), 404, "no_user")
    refused(alice.post("/api/friends/remove", json={"name": "bob"}), 404, "not_friends")
    refused(bob.post("/api/friends/accept", json={"name": "alice"}), 404, "no_request")
    # bob blocks alice back: two blocks, each shown to its blocker only and lifted by its blocker only
    assert bob.post("/api/friends/block", json={"name": "alice"}).json() == {"ok": True, "name": "alice"}
    assert bob.get("/api/friends").json()["blocked"] == [{"name": "alice"}]
    refused(bob.post("/api/friends/block", json={"name": "alice"}), 409, "already_blocked")
    # blocking a pending request from carol ends it
    carol.post("/api/friends/requests", json={"name": "alice"})
    alice.post("/api/friends/block", json={"name": "carol"})
    assert carol.get("/api/friends").json()["outgoing"] == []
    # alice lifts her block: bob's block still stands (before, one row held both and this lifted bob's too)
    assert alice.post("/api/friends/unblock", json={"name": "bob"}).json() == {"ok": True, "name": "bob"}
    assert [x["name"] for x in alice.get("/api/friends").json()["blocked"]] == ["carol"]
    assert bob.get("/api/friends").json()["blocked"] == [{"name": "alice"}]
    refused(alice.post("/api/friends/unblock", json={"name": "bob"}), 404, "not_blocked")
    refused(alice.post("/api/friends/requests", json={"name": "bob"}), 403, "request_blocked")
    refused(bob.post("/api/friends/requests", json={"name": "alice"}), 409, "you_blocked")
    # bob lifts his: requests go again
    assert bob.post("/api/friends/unblock", json={"name": "alice"}).json() == {"ok": True, "name": "alice"}
    assert bob.get("/api/friends").json()["blocked"] == []
    assert bob.post("/api/friends/requests", json={"name": "alice"}).json()["outcome"] == "requested"


def test_a_failed_presence_write_does_not_fail_the_request(tmp_path: Any) -> None:
    """Presence is best effort: on a database that refuses the write (a read-only SQLite file here),
    ``touch`` logs, rolls back and answers ``False`` instead of failing the request it rides on."""
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from guandan.server import db as gdb

    path = tmp_path / "ro.db"
    gdb.migrate(f"sqlite:///{path}")
    engine = gdb.make_engine(f"sqlite:///{path}")
    with Session(engine) as db:
        db.add(User(name="reader", is_guest=False))
        db.commit()
    engine.dispose()
    ro = create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    try:
        with Session(ro) as db:
            user = db.scalars(select(User).where(User.name == "reader")).one()
            assert friends_store.touch(db, user, T0) is False
            assert user.name == "reader" and user.last_seen_at is None
    finally:
        ro.dispose()


def test_crossed_requests_at_the_same_moment_make_one_friendship(app: Any) -> None:
    """Two people asking each other at the same moment: one request is stored, the other finds it and
    accepts it (the pair's primary key refuses a second row; the API retries once). Never two rows,
    never an error."""
    import threading

    for round_ in range(4):
        x, y = f"xav{round_}", f"yan{round_}"
        cx, cy = person(app, x), person(app, y)
        barrier = threading.Barrier(2)
        answers: dict[str, Any] = {}

        def ask(client: TestClient, me: str, other: str) -> None:
            barrier.wait()
            r = client.post("/api/friends/requests", json={"name": other})
            answers[me] = (r.status_code, r.json())

        threads = [threading.Thread(target=ask, args=(cx, x, y)), threading.Thread(target=ask, args=(cy, y, x))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert sorted(a[1]["outcome"] for a in answers.values()) == ["accepted", "requested"], answers
        assert [f["name"] for f in cx.get("/api/friends").json()["friends"]] == [y]


def test_every_friends_error_code_has_chinese_and_english_words() -> None:
    """Each code the friends' code raises is translated in both languages (i18n.js and
    i18n_friends.js, merged by the UI), with the same placeholders, and the Chinese has no English."""
    from pathlib import Path

    from test_ui_static import i18n_tables

    src = Path(rules.__file__).parent
    codes = set()
    for name in ("friends.py", "friends_store.py", "api_friends.py"):
        codes |= set(re.findall(r'FriendError\(\d+, "([a-z_]+)"', (src / name).read_text(encoding="utf-8")))
        codes |= set(re.findall(r'error\(\d+, [^\n]*?"([a-z_]+)",\s*\n?\s*\{', (src / name).read_text(encoding="utf-8")))
    assert {"guest_no_friends", "friend_self", "no_user", "already_friends", "request_pending", "no_request",
            "not_friends", "invite_not_seated", "already_invited", "request_blocked", "no_invitation"} <= codes
    tables = i18n_tables()
    for code in sorted(codes):
        en, zh = tables["en"].get(f"err_{code}"), tables["zh"].get(f"err_{code}")
        assert en and zh, code
        assert set(re.findall(r"\{(\w+)\}", en)) == set(re.findall(r"\{(\w+)\}", zh)), code
        assert not re.search(r"[A-Za-z]{2,}", re.sub(r"\{\w+\}", "", zh)), (code, zh)


def test_others_blocks_and_requests_do_not_fill_my_cap(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap of friends and requests counted every row naming me: 200 strangers blocking me (or
    asking me) locked me out of asking anyone (409 too_many_friends with nothing I could clear).
    It counts my friends and my own pending requests only (cap 2 here)."""
    from guandan.server import friends

    monkeypatch.setattr(friends, "MAX_FRIENDS", 2)
    vic = person(app, "capvictim")
    for n in ("capx1", "capx2"):
        assert person(app, n).post("/api/friends/block", json={"name": "capvictim"}).status_code == 200
    assert person(app, "capx3").post("/api/friends/requests", json={"name": "capvictim"}).status_code == 200
    person(app, "capfriend1")
    person(app, "capfriend2")
    person(app, "capfriend3")
    assert vic.post("/api/friends/requests", json={"name": "capfriend1"}).json()["outcome"] == "requested"
    assert vic.post("/api/friends/requests", json={"name": "capfriend2"}).json()["outcome"] == "requested"
    refused(vic.post("/api/friends/requests", json={"name": "capfriend3"}), 409, "too_many_friends")  # my own two
