"""The friends panel answered by worker processes (:mod:`guandan.server.process_calls`, issue 25
"Speed and scale"): which pool a server gets, the same answers as the threads, a worker that dies,
and workers that exit with the server. Real SQLite files and PostgreSQL (the ``db_url`` fixture of
``test_server_storage.py``), real processes; no mocks.

The answers' shapes follow docs/friends.md ("HTTP API"); the session and presence cases are in
``test_server_presence.py`` (its ``poll_app`` fixture runs them with both pools).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from test_server_storage import (
    db_url,  # noqa: F401 (fixture)
    pg_session_url,  # noqa: F401 (fixture)
)

from guandan.server.account_calls import AccountCalls
from guandan.server.app import create_app
from guandan.server.process_calls import DEPTH, ProcessCalls, in_memory_url, make_account_calls
from guandan.server.settings import Settings

pytestmark = pytest.mark.usefixtures("fast_hashing")  # tests/conftest.py


def person(app: Any, name: str) -> TestClient:
    c = TestClient(app)
    r = c.post("/api/register", json={"name": name, "password": "secret-pw-1"})
    assert r.status_code == 200, r.text
    return c


@pytest.fixture
def app(db_url: str) -> Iterator[Any]:  # noqa: F811
    application = create_app(Settings(db_url=db_url, bot_delay_s=0.0, friends_processes=2))
    with TestClient(application):
        yield application


def worker_pids(app: Any, n: int = 2) -> list[int]:
    """The process ids of the friends pool's workers, once there are ``n`` of them (the server
    starts 2)."""
    calls = app.state.call_pools[0]
    assert isinstance(calls, ProcessCalls)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pids = sorted(calls.pids)
        if len(pids) == n:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"not {n} workers: {calls.pids}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a child that exited but was not reaped yet is a zombie: not alive either
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(("url", "memory"), [
    ("sqlite://", True), ("sqlite:///:memory:", True), ("sqlite:///file:x?mode=memory&uri=true", True),
    ("sqlite:///file::memory:?uri=true", True),
    ("sqlite:///./guandan.db", False), ("sqlite:////tmp/gd.db", False),
    ("postgresql+psycopg://u@127.0.0.1:5432/gd", False), ("postgresql://u@h/db", False),
])
def test_in_memory_url(url: str, memory: bool) -> None:
    assert in_memory_url(url) is memory


def test_which_pool_a_server_gets(tmp_path: Any) -> None:
    file_url = f"sqlite:///{tmp_path / 'gd.db'}"
    threads = make_account_calls(0, 2, file_url, "t")
    assert isinstance(threads, AccountCalls) and threads.threads == 2
    threads.close()
    memory = make_account_calls(2, 3, "sqlite://", "t")  # another process cannot reach it
    assert isinstance(memory, AccountCalls) and memory.threads == 3
    memory.close()
    procs = make_account_calls(2, 2, file_url, "t")
    assert isinstance(procs, ProcessCalls) and procs.processes == 2 and procs.pids == []  # started by the app
    with pytest.raises(ValueError):
        make_account_calls(-1, 2, file_url, "t")
    with pytest.raises(ValueError):
        ProcessCalls(0, file_url)
    with pytest.raises(ValueError):
        ProcessCalls(1, file_url, max_waiting=-1)
    with pytest.raises(ValueError, match="in-memory"):
        ProcessCalls(1, "sqlite://")
    # the default Settings keep the threads; guandan serve passes 2 (its --friends-processes)
    assert Settings(db_url=file_url).friends_processes == 0


def test_the_workers_answer_as_the_threads_do(app: Any, db_url: str) -> None:  # noqa: F811
    alice, bob = person(app, "alice"), person(app, "bob")
    carol = person(app, "carol")
    assert alice.post("/api/friends/requests", json={"name": "bob"}).json() == {"outcome": "requested", "name": "bob"}
    assert bob.post("/api/friends/accept", json={"name": "alice"}).status_code == 200
    assert carol.post("/api/friends/requests", json={"name": "alice"}).status_code == 200
    panel = alice.get("/api/friends")
    assert panel.status_code == 200 and panel.headers["content-type"] == "application/json"
    body = panel.json()
    assert [(f["name"], f["online"], f["table"]) for f in body["friends"]] == [("bob", True, None)]
    assert [r["name"] for r in body["incoming"]] == ["carol"] and body["outgoing"] == []
    # equal rating and games share a rank (docs/friends.md "Friends leaderboard")
    assert [(row["rank"], row["name"], row["me"]) for row in body["leaderboard"]] == [
        (1, "alice", True), (1, "bob", False)]
    # a second server on the same database, with the threads: the same bytes for the same account
    threads_app = create_app(Settings(db_url=db_url, bot_delay_s=0.0, friends_processes=0))
    with TestClient(threads_app) as c:
        c.cookies.set("gd_session", alice.cookies.get("gd_session"))
        again = c.get("/api/friends")
    assert isinstance(threads_app.state.call_pools[0], AccountCalls)
    assert again.status_code == 200 and again.content == alice.get("/api/friends").content


def test_a_worker_that_dies_costs_at_most_a_retryable_503(app: Any) -> None:
    alice = person(app, "alice")
    assert alice.get("/api/friends").status_code == 200
    first = worker_pids(app)
    os.kill(first[0], signal.SIGKILL)
    answers = []
    for _ in range(20):
        r = alice.get("/api/friends")
        answers.append(r.status_code)
        if r.status_code == 200:
            break
        assert r.status_code == 503 and r.json()["code"] == "temporarily_unavailable", r.text
        assert r.headers["Retry-After"] == "2"
        time.sleep(0.1)
    assert answers[-1] == 200 and answers.count(503) <= 1, answers
    assert alice.get("/api/friends").status_code == 200
    now = worker_pids(app)  # the dead one replaced at once
    assert first[0] not in now and first[1] in now and not alive(first[0])


def test_the_workers_exit_with_the_server(db_url: str) -> None:  # noqa: F811
    application = create_app(Settings(db_url=db_url, bot_delay_s=0.0, friends_processes=2))
    with TestClient(application):
        pids = worker_pids(application)  # started with the server, before any poll
        assert all(alive(p) for p in pids)
        alice = person(application, "alice")
        assert alice.get("/api/friends").status_code == 200
    assert not any(alive(p) for p in pids)
    calls = application.state.call_pools[0]
    assert calls.pids == []
    with pytest.raises(RuntimeError):
        calls.start()


# -- the pool on its own: functions the workers import from this module ------------------------------


def held_name(db: Any, me: Any, seconds: float) -> str:
    """An endpoint's work that takes ``seconds``."""
    time.sleep(seconds)
    return str(me.name)


def broken(db: Any, me: Any) -> str:
    raise ValueError(f"no panel for {me.name}")


class KeywordOnlyError(Exception):
    """Pickles, but cannot be rebuilt from its args (a required keyword argument)."""

    def __init__(self, *, code: str) -> None:
        super().__init__(code)


def untravelled(db: Any, me: Any) -> str:
    raise KeywordOnlyError(code=me.name)


def big(db: Any, me: Any, n: int) -> str:
    """An answer larger than a pipe's buffer (it reaches the server in several reads)."""
    return str(me.name) * n


def test_a_full_pool_refuses_at_once_and_other_errors_come_back_as_raised(tmp_path: Any) -> None:
    from fastapi import HTTPException
    from starlette.requests import Request

    url = f"sqlite:///{tmp_path / 'gd.db'}"
    application = create_app(Settings(db_url=url, bot_delay_s=0.0))
    with TestClient(application):
        tokens = {n: person(application, n).cookies.get("gd_session") for n in ["alice"] + [f"player{i}" for i in range(12)]}
    # no app.state.presence here: every due mark is written by the worker itself
    requests = {n: Request({"type": "http", "method": "GET", "path": "/", "app": type("A", (), {"state": object()})(),
                            "headers": [(b"cookie", f"gd_session={t}".encode())]}) for n, t in tokens.items()}
    request = requests["alice"]

    async def scenario() -> list[str]:
        calls = ProcessCalls(1, url, max_waiting=1)  # one running, one in its pipe, one waiting
        assert DEPTH == 2
        with pytest.raises(RuntimeError):
            await calls.run(request, held_name, 0.0)  # not started
        calls.start()
        assert await calls.run(request, held_name, 0.0) == "alice"  # the worker is up
        held = [asyncio.ensure_future(calls.run(request, held_name, s)) for s in (1.0, 0.0, 0.0)]
        await asyncio.sleep(0.2)
        assert len(calls._queue) == 1 and len(calls._workers[0].sent) == 2
        with pytest.raises(HTTPException) as refused:
            await calls.run(request, held_name, 0.0)
        assert refused.value.status_code == 503 and refused.value.headers == {"Retry-After": "2"}
        assert refused.value.detail["code"] == "temporarily_unavailable"
        out = [await f for f in held] + [await calls.run(request, held_name, 0.0)]  # served again once drained
        with pytest.raises(ValueError, match="no panel for alice") as raised:
            await calls.run(request, broken)
        assert any("in a friends worker process" in note for note in raised.value.__notes__)
        assert await calls.run(request, held_name, 0.0) == "alice"  # the worker lives on
        with pytest.raises(RuntimeError, match="cannot be sent: TypeError"):
            await calls.run(request, untravelled)
        assert await calls.run(request, big, 100_000) == "alice" * 100_000
        # answers never go to another request: many accounts at once, each gets its own
        names = [f"player{i}" for i in range(12)]
        wide = ProcessCalls(2, url)
        wide.start()
        got = await asyncio.gather(*(wide.run(requests[n], held_name, 0.01 * (i % 3)) for i, n in enumerate(names)))
        assert got == names
        await wide.aclose()
        await calls.aclose()
        with pytest.raises(RuntimeError):
            await calls.run(request, held_name, 0.0)
        return out

    assert asyncio.run(scenario()) == ["alice"] * 4


def processes() -> dict[int, tuple[int, str]]:
    """Every process now running: pid -> (parent pid, whole command line), read from ``/proc``."""
    found: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            continue
        # the name in brackets may hold spaces; the parent pid is the second field after it
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        found[int(entry)] = (ppid, args)
    return found


def test_guandan_serve_starts_two_workers_and_stops_them(tmp_path: Any) -> None:
    import subprocess
    import sys

    base = [sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--port", "0",
            "--db", f"sqlite:///{tmp_path / 'gd.db'}", "--log-level", "warning"]
    bad = subprocess.run([*base, "--friends-processes", "17"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--friends-processes must be between 0 and 16" in bad.stderr
    p = subprocess.Popen(base, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and "open http://" in p.stdout.readline()
        deadline = time.monotonic() + 30
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            # the workers are children of the forkserver, itself a child of the server; read from
            # /proc, not `ps`, whose columns are cut at 80 characters when its output is a pipe
            rows = processes()
            forkservers = {pid for pid, (ppid, args) in rows.items() if ppid == p.pid and "forkserver" in args}
            workers = [pid for pid, (ppid, _) in rows.items() if ppid in forkservers]
            time.sleep(0.1)
        assert len(workers) == 2
    finally:
        p.terminate()
        p.wait(timeout=30)
    time.sleep(0.5)
    assert not any(alive(w) for w in workers)


def names_and_seen(db: Any, ids: list[int], batch: Any) -> list[str]:
    """A plain call's work (``ProcessCalls.call``): the names of ``ids``, each account noted seen in ``batch``."""
    from datetime import UTC, datetime

    from sqlalchemy import select

    from guandan.server.models import User

    rows = db.execute(select(User.id, User.name).where(User.id.in_(ids)).order_by(User.id)).all()
    for uid, _ in rows:
        batch.note(uid, datetime(2026, 12, 7, 22, 0, tzinfo=UTC))
    return [name for _, name in rows]


def test_a_plain_call_runs_without_a_session_on_both_pools_and_brings_its_presence_notes_back(
        tmp_path: Any) -> None:
    """``call(factory, batch, fn, *args)``: the friends streams' sweeps run ``fn(db, *args, batch)``
    with no session to check, in a worker process (its notes added to the server's batch when the
    answer comes) or in a thread of the server."""
    from datetime import UTC, datetime

    from guandan.server.presence import PresenceBatch

    url = f"sqlite:///{tmp_path / 'gd.db'}"
    application = create_app(Settings(db_url=url, bot_delay_s=0.0))
    with TestClient(application):
        ids = [person(application, n).get("/api/me").json()["user"]["id"] for n in ("ann", "bob")]
    factory = application.state.session_factory

    async def scenario() -> None:
        for pool in (ProcessCalls(1, url), AccountCalls(1, "t")):
            if isinstance(pool, ProcessCalls):
                pool.start()
            batch = PresenceBatch()
            assert await pool.call(factory, batch, names_and_seen, ids) == ["ann", "bob"]
            assert batch.take() == dict.fromkeys(ids, datetime(2026, 12, 7, 22, 0, tzinfo=UTC))
            await pool.aclose()

    asyncio.run(scenario())


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="SCHED_BATCH is Linux's")
def test_the_workers_run_as_background_work_for_the_scheduler(app: Any) -> None:
    """A worker woken by a request must not preempt the event loop on its core (``background``:
    SCHED_BATCH); the server itself keeps the normal policy."""
    pids = worker_pids(app)
    deadline = time.monotonic() + 30  # set as the worker's first step, once it has imported the server's modules
    while time.monotonic() < deadline and any(os.sched_getscheduler(pid) != os.SCHED_BATCH for pid in pids):
        time.sleep(0.05)
    assert [os.sched_getscheduler(pid) for pid in pids] == [os.SCHED_BATCH] * 2
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
