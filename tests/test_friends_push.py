"""The lobby's friends stream (issue 25 items 2 and "Speed and scale"; ``server/friends_push.py``).

* the hub's bookkeeping as plain code: which streams are read when, what each is sent, sessions
  that end, nudges, the cap per session;
* one sweep with a compute function that fails, and the body of a stream;
* the batched panel reads against the one-account panel, on SQLite and PostgreSQL;
* a real ``guandan serve``: the stream's first panel is ``GET /api/friends``'s, a friend request
  reaches the other side's stream at once, logout ends the stream, guests and strangers are
  refused, and a server stopped with streams open exits at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

pytest.importorskip("fastapi")

from guandan.server import friends_store as store  # noqa: E402
from guandan.server.friends_push import (  # noqa: E402
    CLOSE,
    KEEPALIVE,
    MAX_STREAMS_PER_SESSION,
    RETRY_S,
    FriendsHub,
    FriendsPush,
    Mailbox,
    event,
)
from test_server_storage import db_url, pg_session_url  # noqa: E402,F401 (fixtures)

# -- the hub (plain code) ----------------------------------------------------------------------------


def test_new_streams_are_read_first_and_a_sweep_takes_at_most_batch_max_sessions() -> None:
    hub = FriendsHub(period_s=20, batch_max=2)
    a, _ = hub.open("ka", 1, now=0.0)
    hub.settle({"ka": 1}, {1: b"{}"}, now=0.0)  # a read once: due at 20
    b, _ = hub.open("kb", 2, now=5.0)
    c, _ = hub.open("kc", 3, now=6.0)
    assert hub.due(10.0) == ["kb", "kc"]  # the new ones; a is not due
    assert hub.due(25.0) == ["kb", "kc"]  # new streams before the overdue one, two at most
    hub.settle({"kb": 2, "kc": 3}, {2: b"[2]", 3: b"[3]"}, now=25.0)
    assert hub.due(25.0) == ["ka"] and (b.due, c.due) == (45.0, 45.0)


def test_settle_sends_changes_only_then_a_keepalive() -> None:
    hub = FriendsHub(period_s=20, keepalive_s=45)
    s, _ = hub.open("k", 7, now=0.0)
    assert hub.settle({"k": 7}, {7: b'{"v":1}'}, now=0.0) == [(s, b'event: friends\ndata: {"v":1}\n\n')]
    assert hub.settle({"k": 7}, {7: b'{"v":1}'}, now=20.0) == []  # unchanged
    assert hub.settle({"k": 7}, {7: b'{"v":1}'}, now=44.0) == []  # 44 s silent: not yet
    assert hub.settle({"k": 7}, {7: b'{"v":1}'}, now=46.0) == [(s, KEEPALIVE)]
    assert hub.settle({"k": 7}, {7: b'{"v":2}'}, now=50.0) == [(s, event(b'{"v":2}'))]
    assert s.due == 70.0


def test_one_read_serves_every_stream_of_the_account_and_a_dead_session_is_closed() -> None:
    hub = FriendsHub(period_s=20)
    phone, _ = hub.open("phone", 4, now=0.0)
    laptop, _ = hub.open("laptop", 4, now=3.0)
    other, _ = hub.open("other", 5, now=3.0)
    out = hub.settle({"phone": 4}, {4: b"[]"}, now=3.0)
    assert sorted(m for _, m in out) == [event(b"[]")] * 2 and {s for s, _ in out} == {phone, laptop}
    assert laptop.due == 23.0 and other.due == float("-inf")
    out = hub.settle({"laptop": None, "other": 5}, {5: b"[5]"}, now=4.0)  # laptop logged out
    assert (laptop, CLOSE) in out and (other, event(b"[5]")) in out
    assert hub.streams == {phone, other}


def test_nudge_revoke_and_the_cap_per_session() -> None:
    hub = FriendsHub(period_s=20)
    s, _ = hub.open("k", 1, now=0.0)
    t, _ = hub.open("j", 2, now=0.0)
    hub.settle({"k": 1, "j": 2}, {1: b"1", 2: b"2"}, now=0.0)
    assert hub.due(1.0) == []
    assert hub.nudge({1}, now=1.0) == 1 and hub.due(1.0) == ["k"]
    assert hub.revoke("k") == [s] and hub.streams == {t}
    opened = [hub.open("many", 3, now=float(i)) for i in range(MAX_STREAMS_PER_SESSION + 2)]
    assert [e for _, evicted in opened for e in evicted] == [opened[0][0], opened[1][0]]  # the oldest go
    assert sum(1 for x in hub.streams if x.key == "many") == MAX_STREAMS_PER_SESSION


def test_mailbox_keeps_the_newest_panel_and_ends_with_close() -> None:
    async def go() -> list[bytes]:
        box = Mailbox()
        box.put(event(b"1"))
        box.put(event(b"2"))  # replaces the unsent 1
        box.put(KEEPALIVE)  # nothing to keep alive while a panel waits
        got = [await box.get()]
        box.put(KEEPALIVE)
        got.append(await box.get())
        box.put(CLOSE)
        box.put(event(b"3"))  # after the end: dropped
        got.append(await box.get())
        return got

    assert asyncio.run(go()) == [event(b"2"), KEEPALIVE, CLOSE]


# -- sweeps and stream bodies --------------------------------------------------------------------------


def test_a_failed_read_is_tried_again_later_and_a_stream_body_is_events() -> None:
    clock = [100.0]
    calls: list[list[str]] = []
    fail = [True]

    async def compute(keys: list[str], now: datetime) -> Any:
        calls.append(list(keys))
        if fail[0]:
            raise OSError("database unreachable")
        return dict.fromkeys(keys, 9), {9: b'{"friends":[]}'}

    async def go() -> list[bytes]:
        push = FriendsPush(compute, clock=lambda: clock[0])
        body = push.events("key", 9)
        first = await body.__anext__()  # registers the stream
        assert await push.sweep() == 0 and calls == [["key"]]  # failed: postponed
        assert await push.sweep() == 0 and calls == [["key"]]
        clock[0] += RETRY_S
        fail[0] = False
        assert await push.sweep() == 1
        got = [first, await body.__anext__()]
        assert push.revoke("key") == 1
        with pytest.raises(StopAsyncIteration):
            await body.__anext__()
        assert push.hub.streams == set()
        return got

    assert asyncio.run(go()) == [b"retry: 5000\n\n", b'event: friends\ndata: {"friends":[]}\n\n']


def test_after_close_all_a_new_stream_ends_at_once() -> None:
    async def compute(keys: list[str], now: datetime) -> Any:
        raise AssertionError("no read expected")

    async def go() -> list[bytes]:
        push = FriendsPush(compute)
        assert push.close_all() == 0
        return [m async for m in push.events("k", 1)]

    assert asyncio.run(go()) == []


# -- the batched reads ---------------------------------------------------------------------------------


def test_batched_panels_equal_each_accounts_own_panel(db_url: str) -> None:  # noqa: F811
    from sqlalchemy.orm import sessionmaker

    from guandan.server.auth import create_session, create_guest, name_key, token_key
    from guandan.server.db import make_engine
    from guandan.server.models import Room, RoomSeat, User

    engine = make_engine(db_url)
    factory = sessionmaker(engine, expire_on_commit=False)
    now = datetime.now(UTC)
    try:
        with factory() as db:
            users = [User(name=n, name_key=name_key(n), password_hash="x", is_guest=False,
                          last_seen_at=now - timedelta(seconds=s))
                     for n, s in (("ann", 10), ("bo", 500), ("cy", 60), ("di", 5), ("ed", 1000))]
            db.add_all(users)
            db.flush()
            ann, bo, cy, di, ed = users
            for a, b in ((ann, bo), (ann, cy), (bo, cy), (di, ann)):
                store.send_request(db, a, b.name)
                if (a, b) != (di, ann):
                    store.answer_request(db, b, a.name, True)
            store.block(db, ed, "bo")
            db.add(Room(id="RM0001", name="cy's table", status="waiting", preset="official", owner_id=cy.id))
            db.flush()
            db.add(RoomSeat(room_id="RM0001", seat=0, user_id=cy.id))
            db.flush()
            store.invite(db, cy, "ann", "RM0001", now)
            store.invite(db, cy, "bo", "RM0001", now)
            tokens = {u.name: create_session(db, u).cookie_token for u in users}  # type: ignore[attr-defined]
            guest = create_guest(db)
            guest_token = create_session(db, guest).cookie_token  # type: ignore[attr-defined]
            db.commit()
        with factory() as db:
            alone = {u.id: store.overview(db, u, now) for u in users}
        with factory() as db:
            together = store.overviews(db, users, now)
        assert together == alone
        assert alone[ann.id]["invitations"][0]["from"] == "cy" and alone[bo.id]["friends"][0]["name"] == "ann"
        assert alone[cy.id]["friends"] == [
            {"name": "ann", "rating": alone[cy.id]["friends"][0]["rating"], "games_played": 0, "online": True,
             "table": None},
            {"name": "bo", "rating": alone[cy.id]["friends"][1]["rating"], "games_played": 0, "online": False,
             "table": None}]
        assert [f["name"] for f in alone[ann.id]["incoming"]] == ["di"]
        assert alone[ed.id]["blocked"] == [{"name": "bo"}] and alone[bo.id]["blocked"] == []
        keys = [token_key(tokens["ann"]), token_key(tokens["bo"]), token_key(guest_token), "0" * 64]
        with factory() as db:
            accounts, texts = store.panels_json(db, keys, now)
        assert accounts == {keys[0]: ann.id, keys[1]: bo.id, keys[2]: None, keys[3]: None}
        assert set(texts) == {ann.id, bo.id}
        with factory() as db:
            assert json.loads(texts[ann.id]) == store.overview(db, ann, now)
        # bo (offline for 500 s) was marked seen by the read, before the panels were read: online for ann
        assert [(f["name"], f["online"]) for f in alone[ann.id]["friends"]] == [("cy", True), ("bo", False)]
        assert [(f["name"], f["online"]) for f in json.loads(texts[ann.id])["friends"]] == [("bo", True), ("cy", True)]
    finally:
        engine.dispose()


# -- a real server -------------------------------------------------------------------------------------


def _serve(db: str) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--host", "127.0.0.1", "--port", "0",
           "--db", db, "--log-level", "info", "--guests-per-hour", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    end = time.monotonic() + 60
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if "open http://" in line:
            return proc, line.split("open ", 1)[1].split()[0].rstrip("/")
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("the server did not start")


def test_streams_of_a_real_server(tmp_path: Any) -> None:
    import httpx

    proc, url = _serve(f"sqlite:///{tmp_path / 'push.db'}")
    try:
        async def go() -> None:
            async with httpx.AsyncClient(base_url=url, timeout=20) as amy, \
                    httpx.AsyncClient(base_url=url, timeout=20) as ben, httpx.AsyncClient(base_url=url, timeout=20) as g:
                for c, n in ((amy, "amy"), (ben, "ben")):
                    r = await c.post("/api/register", json={"name": n, "password": "secret-pw-1"})
                    assert r.status_code == 200, r.text
                assert (await g.post("/api/guest", json={})).status_code == 200
                r = await g.get("/api/friends/stream")
                assert r.status_code == 403 and r.json()["code"] == "guest_no_friends"
                r = await httpx.AsyncClient(base_url=url).get("/api/friends/stream")
                assert r.status_code == 401 and r.json()["code"] == "login_required"
                async with amy.stream("GET", "/api/friends/stream") as s:
                    assert s.status_code == 200 and s.headers["content-type"].startswith("text/event-stream")
                    assert s.headers["cache-control"] == "no-cache" and s.headers["x-accel-buffering"] == "no"
                    lines = s.aiter_lines()

                    async def next_panel() -> dict[str, Any]:
                        while True:
                            line = await asyncio.wait_for(lines.__anext__(), 10)
                            if line.startswith("data: "):
                                return dict(json.loads(line[6:]))

                    first = await next_panel()
                    assert first == (await amy.get("/api/friends")).json()
                    assert first["incoming"] == []
                    t = time.monotonic()
                    assert (await ben.post("/api/friends/requests", json={"name": "amy"})).status_code == 200
                    pushed = await next_panel()  # nudged: the next sweep, not the 20 s period
                    assert time.monotonic() - t < 5
                    assert [x["name"] for x in pushed["incoming"]] == ["ben"]
                    assert (await amy.get("/healthz")).json()["friends_streams"] == 1
                    assert (await amy.post("/api/logout", json={})).status_code == 200
                    with pytest.raises(StopAsyncIteration):  # the session's stream ends
                        while True:
                            await asyncio.wait_for(lines.__anext__(), 10)
                assert (await ben.get("/healthz")).json()["friends_streams"] == 0
                async with ben.stream("GET", "/api/friends/stream") as s:  # left open for the stop below
                    assert s.status_code == 200
                    kept = s.aiter_lines()  # kept: a dropped iterator would close the connection
                    assert await asyncio.wait_for(kept.__anext__(), 10) == "retry: 5000"
                    t = time.monotonic()
                    proc.send_signal(signal.SIGINT)
                    await asyncio.to_thread(proc.wait, 20)
                    assert time.monotonic() - t < 10  # an open stream does not hold the stop
                    with pytest.raises(StopAsyncIteration):  # the server ended it
                        while True:
                            await asyncio.wait_for(kept.__anext__(), 10)

        asyncio.run(go())
        assert proc.returncode == 128 + signal.SIGINT  # uvicorn's stop by Ctrl+C, the signal re-raised after it
        assert proc.stdout is not None
        rest = proc.stdout.read()
        assert "Traceback" not in rest and "ERROR" not in rest and "Waiting for connections" not in rest, rest
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
