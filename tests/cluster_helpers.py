"""Helpers of the cluster tests (``tests/test_cluster*.py``) and of the failover benchmark
(``scripts/failover_bench.py``): real ``guandan serve --redis`` processes on a fresh PostgreSQL
database, guest accounts over HTTP, and table websockets read by a thread each.

Services: PostgreSQL at ``GUANDAN_TEST_POSTGRES_URL`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``; each cluster gets a new database named
``<that database>_<random>``, dropped afterwards) and Redis at ``GUANDAN_TEST_REDIS_URL`` (default
``redis://127.0.0.1:6379/1``). Every key and channel of the test clusters carries the prefix
:data:`REDIS_PREFIX`, new for each test run (``GUANDAN_TEST_REDIS_PREFIX`` sets it), so that two
runs side by side on one Redis never see each other's rooms or table handovers. Within one run only ``tests/test_cluster.py``
starts clusters, one at a time (the module runs whole on one pytest-xdist worker). Ports
come from ``GUANDAN_TEST_PORT_BASE`` (default 18200) upwards. When a service is down the tests skip
with the reason, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

PG_URL = os.environ.get("GUANDAN_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("GUANDAN_TEST_REDIS_URL", "redis://127.0.0.1:6379/1")
#: The key prefix of this run's clusters (``guandan serve --redis-prefix``): one per test process.
REDIS_PREFIX = os.environ.get("GUANDAN_TEST_REDIS_PREFIX") or f"gdt{secrets.token_hex(4)}:"
PORT_BASE = int(os.environ.get("GUANDAN_TEST_PORT_BASE", "18200"))
#: CI (CI=true) must have PostgreSQL and Redis; elsewhere the tests skip without them.
REQUIRED = os.environ.get("CI", "").lower() == "true" or os.environ.get("GUANDAN_REQUIRE_POSTGRES") == "1"


def _unavailable(msg: str) -> None:
    if REQUIRED:
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


def redis_client() -> Any:
    """A client of the test Redis (``REDIS_URL``), pinged; fails (CI) or skips when it is missing."""
    try:
        import redis
    except ImportError:
        _unavailable("redis-py is not installed: pip install -e '.[cluster]' in the pyguandan checkout")
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
    try:
        client.ping()
    except Exception as e:  # noqa: BLE001
        _unavailable(f"Redis is not reachable at {REDIS_URL} ({e}); start it (redis-server --daemonize yes)")
    return client


def require_services() -> None:
    """Skip (fail under CI) with a clear message when PostgreSQL, Redis or redis-py is missing."""
    try:
        import redis
    except ImportError:
        _unavailable("redis-py is not installed: pip install -e '.[cluster]' in the pyguandan checkout")
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3).ping()
    except Exception as e:  # noqa: BLE001
        _unavailable(f"Redis is not reachable at {REDIS_URL} ({e}); start it (redis-server --daemonize yes) "
                     "or point GUANDAN_TEST_REDIS_URL at one")
    from sqlalchemy import create_engine, text

    from guandan.server.db import normalize_url

    engine = create_engine(normalize_url(PG_URL))
    try:
        with engine.connect() as c:
            c.execute(text("SELECT 1"))
    except Exception as e:  # noqa: BLE001
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        _unavailable(f"PostgreSQL is not reachable at {PG_URL} ({first}); start it or point "
                     "GUANDAN_TEST_POSTGRES_URL at one")
    finally:
        engine.dispose()


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new empty PostgreSQL database next to ``PG_URL``'s, dropped afterwards; yields its URL."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from guandan.server.db import normalize_url

    base = make_url(normalize_url(PG_URL))
    name = f"{base.database}_{secrets.token_hex(4)}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def free_port() -> int:
    """A free TCP port among ``PORT_BASE`` .. ``PORT_BASE + 199`` (tried in random order, so that
    runs side by side rarely pick the same one)."""
    import random

    ports = list(range(PORT_BASE, PORT_BASE + 200))
    random.shuffle(ports)
    for port in ports:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORT_BASE}-{PORT_BASE + 199}")


class Node:
    """One ``guandan serve --redis`` process (``url``, ``name``, ``proc``); its output goes to ``log``."""

    def __init__(self, db_url: str, name: str, *, lease_s: float = 1.5, bot_delay_s: float = 0.05,
                 extra: tuple[str, ...] = (), prefix: str | None = None, redis_url: str | None = None) -> None:
        self.name = name
        self.prefix = prefix or REDIS_PREFIX
        self.redis_url = redis_url or REDIS_URL
        self.db_url = db_url
        self.lease_s = lease_s
        self.bot_delay_s = bot_delay_s
        self.extra = extra
        self.lines: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self, timeout_s: float = 60.0) -> Node:
        """Start the process and wait until it serves (another port when the one picked was taken
        meanwhile). Raises RuntimeError when it does not."""
        for _ in range(4):
            try:
                return self._start(timeout_s)
            except RuntimeError as e:
                if "cannot listen" not in str(e):
                    raise
                self.lines = []
        return self._start(timeout_s)

    def _start(self, timeout_s: float) -> Node:
        port = free_port()
        cmd = [sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--port", str(port),
               "--db", self.db_url, "--redis", self.redis_url, "--redis-prefix", self.prefix, "--node-name", self.name, "--lease", str(self.lease_s),
               "--bot-delay", str(self.bot_delay_s), "--log-format", "kv", "--log-level", "info",
               # the sign-up limits are shared over the cluster through Redis and outlive one run
               "--guests-per-hour", "0", "--registrations-per-hour", "0", "--bot-games-per-address", "0",
               # the friends panel in the server's threads: worker processes cost each node a
               # forkserver and two interpreters (tests/test_server_process_calls.py covers them)
               "--friends-processes", "0", *self.extra]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        started = threading.Event()

        def read() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
                if "Application startup complete" in line:
                    started.set()

        threading.Thread(target=read, daemon=True).start()
        self.url = f"http://127.0.0.1:{port}"
        import httpx

        while not started.wait(0.1) and self.proc.poll() is None and timeout_s > 0:
            timeout_s -= 0.1
            if any(line.startswith("pyguandan server: open") for line in self.lines):
                try:  # also with --log-level warning, which hides uvicorn's startup line
                    if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                        started.set()
                except httpx.HTTPError:
                    pass
        if not started.is_set() or self.proc.poll() is not None:
            time.sleep(0.2)  # the reader thread has the last lines
            self.stop()
            raise RuntimeError(f"node {self.name} did not start:\n" + "\n".join(self.lines[-30:]))
        return self

    def kill(self) -> None:
        """``kill -9``: the process dies at once, holding its leases."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def term(self, timeout_s: float = 30.0) -> int:
        """SIGTERM (graceful shutdown) and wait; returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout_s)

    def stop(self) -> None:
        """Stop the process however it can be stopped."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    @property
    def alive(self) -> bool:
        """Whether the process runs."""
        return self.proc is not None and self.proc.poll() is None


@contextmanager
def cluster(n: int = 3, **kw: Any) -> Iterator[tuple[str, list[Node]]]:
    """``n`` nodes on a fresh database; yields ``(db_url, nodes)``; everything stopped afterwards."""
    require_services()
    with fresh_database() as db:
        nodes: list[Node] = []
        tag = secrets.token_hex(3)
        try:
            for i in range(n):
                nodes.append(Node(db, f"t{tag}-{i}", **kw).start())
            yield db, nodes
        finally:
            for node in nodes:
                node.stop()


def guest(url: str) -> tuple[str, str]:
    """A new guest account on the server at ``url``: ``(session token, name)``."""
    import httpx

    r = httpx.post(f"{url}/api/guest", json={}, timeout=30)
    r.raise_for_status()
    return r.cookies["gd_session"], r.json()["user"]["name"]


def api(url: str, path: str, token: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """POST ``body`` to ``url + path`` as ``token``; returns the JSON answer (raises on an error status)."""
    import httpx

    r = httpx.post(f"{url}{path}", json=body or {}, headers={"cookie": f"gd_session={token}"}, timeout=60)
    if r.status_code != 200:
        raise AssertionError(f"{path}: {r.status_code} {r.text[:300]}")
    return r.json()  # type: ignore[no-any-return]


def lease_holder(room: str, prefix: str | None = None) -> str | None:
    """The node name holding ``room``'s lease in Redis (keys ``prefix``, default :data:`REDIS_PREFIX`),
    or ``None``."""
    import redis

    v = redis.Redis.from_url(REDIS_URL).get(f"{prefix or REDIS_PREFIX}lease:{room}")
    return None if v is None else v.decode().rsplit(":", 1)[0]


#: Messages one :class:`Client` sends in any second at most: under the server's per-connection
#: limit (``guandan.server.ws.RATE_LIMIT``, 20 a second), so that a quick driver (four people
#: acting as soon as it is their turn) is paced instead of answered ``rate_limited``.
SEND_LIMIT = 18


class Client:
    """A table websocket read by a thread: every frame is kept (``frames``) and queued.

    Args:
        url: server URL; room: room id; token: session token (``None``: anonymous spectator).
    """

    def __init__(self, url: str, room: str, token: str | None, label: str = "") -> None:
        from websockets.sync.client import connect

        headers = {"Cookie": f"gd_session={token}"} if token else {}
        self.label = label
        self._stack = ExitStack()
        self.ws = self._stack.enter_context(connect("ws" + url[4:] + f"/ws/rooms/{room}", additional_headers=headers,
                                                    max_size=None, open_timeout=30))
        self.frames: list[dict[str, Any]] = []
        self.q: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.closed = threading.Event()
        self._sent_at: deque[float] = deque()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                f = json.loads(self.ws.recv())
                f["_t"] = time.monotonic()
                self.frames.append(f)
                self.q.put(f)
        except Exception:  # noqa: BLE001, S110 - closed
            pass
        finally:
            self.closed.set()
            self.q.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        """Send one message (JSON); first waits while :data:`SEND_LIMIT` messages went out in the
        last second."""
        now = time.monotonic()
        while self._sent_at and now - self._sent_at[0] >= 1.0:
            self._sent_at.popleft()
        if len(self._sent_at) >= SEND_LIMIT:
            time.sleep(1.0 - (now - self._sent_at.popleft()) + 0.02)
        self._sent_at.append(time.monotonic())
        self.ws.send(json.dumps(msg))

    def next(self, timeout_s: float = 30.0) -> dict[str, Any] | None:
        """The next frame not yet taken (``None`` when the socket closed). Raises TimeoutError."""
        try:
            return self.q.get(timeout=timeout_s)
        except queue.Empty:
            raise TimeoutError(f"{self.label}: no frame within {timeout_s} s") from None

    def wait(self, pred: Callable[[dict[str, Any]], bool], timeout_s: float = 30.0) -> dict[str, Any]:
        """Take frames until one satisfies ``pred``; returns it. Raises TimeoutError or EOFError."""
        end = time.monotonic() + timeout_s
        while True:
            f = self.next(max(0.01, end - time.monotonic()))
            if f is None:
                raise EOFError(f"{self.label}: the socket closed")
            if pred(f):
                return f

    def last_state(self) -> dict[str, Any] | None:
        """The newest ``state`` frame received."""
        for f in reversed(self.frames):
            if f.get("type") == "state":
                return f
        return None

    def close(self) -> None:
        """Close the socket."""
        try:
            self._stack.close()
        except Exception:  # noqa: BLE001, S110
            pass


def check_redaction(client_frames: list[dict[str, Any]], seat: int | None, dealt: dict[int, set[str]]) -> int:
    """Assert that no frame carries another seat's hidden cards (docs/rules.md R32, DESIGN.md section 2).

    A seated connection's state frames show its own seat only, and every card of their hand was dealt
    to that seat in that deal or given to it as tribute/return (R44-R50); a spectator's frames have
    no hand and no legal actions. No frame may carry a ``deal`` event's four hands (the only
    frame with every seat's cards is ``deal_result``, after the deal, 亮牌).

    Args:
        client_frames: frames of one connection; seat: its seat (``None``: spectator);
        dealt: deal number -> cards (text, with copies as ``card#n``) dealt to ``seat``.
    Returns:
        The number of state frames checked.
    """
    n = 0
    for f in client_frames:
        assert "hands" not in f, f"a {f.get('type')} frame carries every hand"
        if f.get("type") != "state" or f.get("view") is None:
            continue
        v = f["view"]
        n += 1
        assert f["seat"] == seat and v["seat"] == seat, (f["seat"], v["seat"], seat)
        if seat is None:
            assert v["hand"] == [] and v["legal_actions"] == [] and f["role"] == "spectator"
            continue
        allowed = dealt.get(v["deal"])
        if allowed is None:
            continue
        extra = set(v.get("received") or [])
        counts: dict[str, int] = {}
        for card in v["hand"]:
            counts[card] = counts.get(card, 0) + 1
            assert card in allowed or card in extra, f"seat {seat} shown card {card} it was not dealt"
            assert counts[card] <= 2
    return n


def record_of(db_url: str, room: str) -> str:
    """The room's stored record text (JSON Lines): its ``game_events`` rows while the game is live,
    else ``rooms.record``."""
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    try:
        with engine.connect() as c:
            rows = c.execute(text("SELECT line FROM game_events WHERE room_id = :id ORDER BY idx"),
                             {"id": room}).scalars().all()
            if rows:
                return "".join(line + "\n" for line in rows)
            return str(c.execute(text("SELECT record FROM rooms WHERE id = :id"), {"id": room}).scalar() or "")
    finally:
        engine.dispose()


def dealt_cards(record: str, seat: int) -> dict[int, set[str]]:
    """Deal number -> the cards (text) dealt to ``seat`` in each ``deal`` event of the record."""
    out: dict[int, set[str]] = {}
    for line in record.splitlines()[1:]:
        ev = json.loads(line)
        if ev.get("type") == "deal" and "hands" in ev:
            out[ev["deal"]] = set(ev["hands"][seat])
    return out
