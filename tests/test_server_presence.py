"""Presence made cheap (issue 25 "Speed and scale"): refreshes batched in memory
(:mod:`guandan.server.presence`), written in one transaction that never moves ``last_seen_at``
back (:func:`guandan.server.friends_store.write_seen`), and ``GET /api/friends`` answered in one
hand-off (:mod:`guandan.server.account_calls`, also the matchmaking queue's endpoints) that still checks
the session every time.
Real SQLite and PostgreSQL (the ``db_url`` fixture of ``test_server_storage.py``), no mocks.

Expected values follow the rules of :mod:`guandan.server.friends`: a due touch (30 s or more since
the stored value) is written at once when the stored value is 100 s old or more (or unset), else
noted in the batch; online = seen within 120 s.
"""

from __future__ import annotations

import asyncio
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
from guandan.server import app as app_module
from guandan.server.app import create_app
from guandan.server.models import User, UserSession
from guandan.server.presence import PresenceBatch
from guandan.server.settings import Settings

T0 = datetime(2026, 12, 6, 12, 0, 0, tzinfo=UTC)


pytestmark = pytest.mark.usefixtures("fast_hashing")  # tests/conftest.py


@pytest.fixture
def app(db_url: str) -> Iterator[Any]:  # noqa: F811
    application = create_app(Settings(db_url=db_url, bot_delay_s=0.0))
    with TestClient(application):
        yield application


@pytest.fixture(params=[0, 2], ids=["threads", "processes"])
def poll_app(request: pytest.FixtureRequest, db_url: str) -> Iterator[Any]:  # noqa: F811
    """The app with ``GET /api/friends`` answered by threads of its process, or by 2 worker
    processes (``Settings.friends_processes``, :mod:`guandan.server.process_calls`)."""
    application = create_app(Settings(db_url=db_url, bot_delay_s=0.0, friends_processes=request.param))
    with TestClient(application):
        yield application


def person(app: Any, name: str) -> TestClient:
    c = TestClient(app)
    r = c.post("/api/register", json={"name": name, "password": "secret-pw-1"})
    assert r.status_code == 200, r.text
    return c


def seen_of(app: Any, name: str) -> datetime | None:
    with app.state.session_factory() as db:
        return db.scalars(select(User.last_seen_at).where(User.name == name)).one()


def set_seen(app: Any, name: str, when: datetime | None) -> None:
    with app.state.session_factory() as db:
        db.execute(update(User).where(User.name == name).values(last_seen_at=when))
        db.commit()


# -- the rules and the batch, plain ------------------------------------------------------------------


def test_touch_at_once_rule() -> None:
    assert rules.TOUCH_AT_ONCE_S == 100 and rules.TOUCH_AT_ONCE_S + rules.PRESENCE_FLUSH_S < rules.ONLINE_WINDOW_S
    assert rules.touch_at_once(None, T0)
    assert rules.touch_at_once(T0 - timedelta(seconds=100), T0)
    assert not rules.touch_at_once(T0 - timedelta(seconds=99), T0)
    assert not rules.touch_at_once(T0 - timedelta(seconds=31), T0)


def test_batch_keeps_the_latest_time_and_takes_once() -> None:
    b = PresenceBatch()
    b.note(1, T0)
    b.note(1, T0 + timedelta(seconds=3))
    b.note(1, T0 + timedelta(seconds=1))  # older than the one noted: ignored
    b.note(2, T0)
    assert len(b) == 2
    assert b.take() == {1: T0 + timedelta(seconds=3), 2: T0}
    assert b.take() == {} and len(b) == 0


def test_a_failed_flush_keeps_the_accounts_for_the_next() -> None:
    b = PresenceBatch()
    b.note(7, T0)
    written: list[dict[int, datetime]] = []

    async def broken(pending: dict[int, datetime]) -> None:
        raise OSError("database away")

    async def working(pending: dict[int, datetime]) -> None:
        written.append(pending)

    with pytest.raises(OSError):
        asyncio.run(b.flush(broken))
    b.note(8, T0 + timedelta(seconds=2))
    assert asyncio.run(b.flush(working)) == 2
    assert written == [{7: T0, 8: T0 + timedelta(seconds=2)}]
    assert asyncio.run(b.flush(working)) == 0 and len(written) == 1


def test_socket_seen_first_then_refreshes() -> None:
    s = friends_store.SocketSeen()
    assert s.due(1000.0) and s.first
    assert not s.due(1029.0)
    assert s.due(1030.0) and not s.first


# -- the database ------------------------------------------------------------------------------------


def test_touch_notes_a_refresh_and_writes_a_comeback(app: Any) -> None:
    person(app, "alice")
    batch = PresenceBatch()
    with app.state.session_factory() as db:
        user = db.scalars(select(User).where(User.name == "alice")).one()
        # online (seen 40 s ago): noted, not written
        user.last_seen_at = T0 - timedelta(seconds=40)
        db.commit()
        assert friends_store.touch(db, user, T0, batch) is False
        assert batch.take() == {user.id: T0}
        # seen 20 s ago: not due, nothing at all
        assert friends_store.touch(db, user, T0 - timedelta(seconds=20), batch) is False and len(batch) == 0
        # seen 100 s ago: written at once, nothing noted
        user.last_seen_at = T0 - timedelta(seconds=100)
        db.commit()
        assert friends_store.touch(db, user, T0, batch) is True and len(batch) == 0
        db.commit()
    assert seen_of(app, "alice") == T0


def test_write_seen_moves_forward_only(app: Any) -> None:
    for name in ("ann", "ben", "cid"):
        person(app, name)
    set_seen(app, "ann", T0 - timedelta(seconds=40))
    set_seen(app, "ben", T0 + timedelta(seconds=10))  # another process wrote a later time
    set_seen(app, "cid", None)
    with app.state.session_factory() as db:
        ids = dict(db.execute(select(User.name, User.id).where(User.name.in_(["ann", "ben", "cid"]))).all())
    friends_store.write_seen_with(app.state.session_factory, {ids["ann"]: T0, ids["ben"]: T0, ids["cid"]: T0})
    assert seen_of(app, "ann") == T0
    assert seen_of(app, "ben") == T0 + timedelta(seconds=10)
    assert seen_of(app, "cid") == T0


def test_a_table_socket_writes_at_once_after_a_long_silence() -> None:
    seen = friends_store.SocketSeen()
    assert seen.due(1000.0) and seen.first  # at connect: at once
    assert not seen.due(1000.0 + rules.TOUCH_EVERY_S - 1)  # not due yet
    assert seen.due(1000.0 + rules.TOUCH_EVERY_S) and not seen.first  # a refresh: the batch
    t = 1000.0 + rules.TOUCH_EVERY_S
    # silent for TOUCH_AT_ONCE_S (100 s): the account may show offline before a batch is written
    assert seen.due(t + rules.TOUCH_AT_ONCE_S - 1) and not seen.first
    t = t + rules.TOUCH_AT_ONCE_S - 1
    assert seen.due(t + rules.TOUCH_AT_ONCE_S) and seen.first


# -- through the app ---------------------------------------------------------------------------------


@pytest.mark.parametrize("processes", [0, 2], ids=["threads", "processes"])
def test_a_refresh_waits_for_the_batch_and_shutdown_writes_it(db_url: str, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                              processes: int) -> None:
    # no periodic write during the test (a loaded machine may take 5 s to get here): only the shutdown's
    monkeypatch.setattr(app_module, "PRESENCE_FLUSH_S", 3600.0)
    application = create_app(Settings(db_url=db_url, bot_delay_s=0.0, friends_processes=processes))
    with TestClient(application):
        alice = person(application, "alice")
        forty_ago = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=40)
        set_seen(application, "alice", forty_ago)
        assert alice.get("/api/friends").status_code == 200
        assert seen_of(application, "alice") == forty_ago  # online anyway: not written yet
        # a worker process noted it and the server's batch has it
        assert len(application.state.presence) == 1
        assert alice.get("/api/me").status_code == 200
        assert seen_of(application, "alice") == forty_ago
        assert len(application.state.presence) == 1
    # the app's shutdown wrote the batch
    after = seen_of(application, "alice")
    assert after is not None and after > forty_ago + timedelta(seconds=39)
    assert len(application.state.presence) == 0


def test_coming_online_is_written_at_once(poll_app: Any) -> None:
    app = poll_app
    alice = person(app, "alice")
    set_seen(app, "alice", datetime.now(UTC) - timedelta(minutes=5))
    before = datetime.now(UTC) - timedelta(seconds=1)
    assert alice.get("/api/friends").status_code == 200
    seen = seen_of(app, "alice")
    assert seen is not None and seen >= before and len(app.state.presence) == 0


def _refused(r: Any, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["code"] == code and set(r.json()) == {"error", "code", "params"}


#: The endpoints answered in one hand-off (guandan.server.account_calls): each checks the session itself.
ONE_HAND_OFF = [("GET", "/api/friends"), ("GET", "/api/match"), ("POST", "/api/match/join"),
                ("POST", "/api/match/leave")]


@pytest.mark.parametrize(("method", "path"), ONE_HAND_OFF)
def test_the_session_is_checked_every_time(app: Any, method: str, path: str) -> None:
    session_checked(app, method, path)


def test_the_friends_panel_checks_the_session_in_a_worker_process_too(poll_app: Any) -> None:
    session_checked(poll_app, "GET", "/api/friends")


def session_checked(app: Any, method: str, path: str) -> None:
    """``method path`` answers a live session, and 401 ``login_required`` without a cookie, with
    an unknown token, with an expired session (which it deletes) and with a logged-out one."""

    def call(c: TestClient) -> Any:
        return c.request(method, path, json={} if method == "POST" else None)

    alice = person(app, "alice")
    assert call(alice).status_code in (200, 201)
    _refused(call(TestClient(app)), 401, "login_required")
    _refused(call(TestClient(app, cookies={"gd_session": "x" * 65})), 401, "login_required")
    # an expired session stops working and is deleted
    with app.state.session_factory() as db:
        db.execute(update(UserSession).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
        db.commit()
    _refused(call(alice), 401, "login_required")
    with app.state.session_factory() as db:
        assert db.scalars(select(UserSession)).all() == []
    # a logged-out session stops working at once
    bob = person(app, "bob")
    token = bob.cookies.get("gd_session")
    assert call(bob).status_code in (200, 201)
    assert bob.post("/api/logout", json={}).status_code == 200
    _refused(call(TestClient(app, cookies={"gd_session": token})), 401, "login_required")


@pytest.mark.parametrize("path", ["/api/match/join", "/api/match/bots"])
def test_the_session_is_checked_before_the_body(app: Any, path: str) -> None:
    bad = {"bot_level": 5}
    _refused(TestClient(app).post(path, json=bad), 401, "login_required")
    alice = person(app, "alice")
    with app.state.session_factory() as db:
        db.execute(update(UserSession).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
        db.commit()
    _refused(alice.post(path, json=bad), 401, "login_required")
    with app.state.session_factory() as db:
        assert db.scalars(select(UserSession)).all() == []  # the expired session deleted all the same
    bob = person(app, "bob")
    r = bob.post(path, json=bad)
    _refused(r, 422, "invalid_request")
    assert r.json()["params"] == {"field": "bot_level", "problem": "string_type"}
    for body in ([], "x", 3):
        _refused(bob.post(path, json=body), 422, "invalid_request")
    _refused(bob.post(path, content=b"", headers={"Content-Type": "application/json"}), 422, "invalid_request")


def test_a_full_pool_refuses_at_once_then_serves_again(app: Any) -> None:
    import threading

    from fastapi import HTTPException
    from starlette.requests import Request

    from guandan.server.account_calls import AccountCalls

    token = person(app, "alice").cookies.get("gd_session")
    request = Request({"type": "http", "method": "GET", "path": "/", "app": app,
                       "headers": [(b"cookie", f"gd_session={token}".encode())]})
    gate = threading.Event()

    def held(db: Any, me: Any) -> str:
        gate.wait(10)
        return me.name

    async def scenario() -> list[str]:
        calls = AccountCalls(1, "test-calls", max_waiting=1)  # one running, one waiting
        first = asyncio.ensure_future(calls.run(request, held))
        second = asyncio.ensure_future(calls.run(request, held))
        await asyncio.sleep(0.2)
        with pytest.raises(HTTPException) as refused:
            await calls.run(request, held)
        assert refused.value.status_code == 503 and refused.value.headers == {"Retry-After": "2"}
        assert refused.value.detail["code"] == "temporarily_unavailable"
        assert refused.value.detail["params"] == {"retry_s": 2}
        gate.set()
        out = [await first, await second, await calls.run(request, held)]  # served again once drained
        calls.close()
        return out

    assert asyncio.run(scenario()) == ["alice", "alice", "alice"]
    with pytest.raises(ValueError):
        AccountCalls(0, "none")
    with pytest.raises(ValueError):
        AccountCalls(1, "none", max_waiting=-1)


def test_joining_the_queue_marks_the_account_seen(app: Any) -> None:
    alice = person(app, "alice")
    set_seen(app, "alice", datetime.now(UTC) - timedelta(minutes=5))
    before = datetime.now(UTC) - timedelta(seconds=1)
    assert alice.post("/api/match/join", json={}).status_code == 201
    seen = seen_of(app, "alice")
    assert seen is not None and seen >= before


def test_the_call_pools_stop_with_the_app(tmp_path: Any) -> None:
    application = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'gd.db'}", bot_delay_s=0.0))
    with TestClient(application):
        alice = person(application, "alice")
        assert alice.get("/api/match").json()["status"] == "idle"
    assert len(application.state.call_pools) == 2
    for calls in application.state.call_pools:
        with pytest.raises(RuntimeError):
            calls._pool.submit(print)


def test_a_guest_gets_no_panel(poll_app: Any) -> None:
    app = poll_app
    guest = TestClient(app)
    assert guest.post("/api/guest", json={}).status_code == 200
    _refused(guest.get("/api/friends"), 403, "guest_no_friends")
