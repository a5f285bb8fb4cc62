"""The attack of issue 26 items 1-7, repeated against this checkout's ``guandan serve``: "after" figures.

Every item starts its own real servers (``python -c 'from guandan.cli import main; main()' serve``,
the code on ``PYTHONPATH``) on free loopback ports, with fresh SQLite files or fresh PostgreSQL
databases (``tests/cluster_helpers.py``: PostgreSQL at ``GUANDAN_TEST_POSTGRES_URL``, Redis at
``GUANDAN_TEST_REDIS_URL``), attacks them, stops them, and reports figures:

1. One server per database: a live one-deal game of four bots on server A; a second server on the
   same database while A runs (must exit 2); then ``pg_terminate_backend`` of A's advisory-lock
   connection with a second server B started at once (as the attack did), at a random moment and
   just after A's lock watch checked the lock (the worst moment): how long A takes to exit, when B
   serves, whether both served at once, and the stored game (``games`` rows of the room, its
   ``game_events`` rows, the record replayed; a game whose rows stop growing is "stalled").
   The same with the database's ``idle_session_timeout = 5s`` (a second server after 12 s must
   exit 2) and on SQLite with a symlinked and a hard-linked path (must exit 2).
2. Failover of a seat's "away" 托管: two cluster processes (PostgreSQL + Redis), a quick game owned
   by A whose person closed the page; ``kill -9`` A; the longest wait for a move seen on B.
3. Spectators against seated players: 200 anonymous spectator sockets from 42 addresses
   (``X-Forwarded-For``), then the seated person's socket; 55 sockets from one address to one
   process, and to each of two cluster processes (``--max-ws-per-address`` 50): how many open.
4. Targeted lock-out: 30 wrong passwords for one account from 3 addresses, then the owner's
   correct password from a new address: its HTTP status.
5. Login flood: wrong logins from 20 addresses (6 at once each, each for a new name) and, during
   it, N correct logins from N other addresses: their statuses and seconds.
6. Large websocket messages: 50 sockets each sending 2 messages of 16 MiB; the server's
   VmRSS/VmHWM (``/proc/PID/status``) before and after.
7. Quick games: one guest asking again and again, then one address making a new guest for each
   quick game (``--quick-rate`` a second for ``--quick-seconds``); the statuses and codes; and the
   seconds per move of another table (four ``normal`` bots, ``--bot-delay`` 0.6) before and during.

Limits lifted for the set-up, and why: items 3-7 start servers with ``--forwarded-allow-ips
127.0.0.1`` (one machine plays many client addresses through ``X-Forwarded-For``); item 4/5's
server with ``--registrations-per-hour 0`` (twelve owner accounts are registered from the script);
the cluster processes of items 2 and 3 run ``--guests-per-hour 0 --registrations-per-hour 0
--bot-games-per-address 0`` (``tests/cluster_helpers.Node``: the sign-up counts are shared through
Redis and outlive one run). Item 7 keeps every default limit (that is what it measures).

Usage::

    PYTHONPATH=src .venv/bin/python scripts/attack_issue26.py                # every item
    PYTHONPATH=src .venv/bin/python scripts/attack_issue26.py --items 1,6 --json out.json
    PYTHONPATH=/other/src .venv/bin/python scripts/attack_issue26.py --items 4,5   # another version: before/after

(Items 4 and 5 replace ``tests/login_flood_check.py``, which measured the same two attacks.)

Prints one JSON object: ``{"item1": {...}, ..., "loadavg": {...}}`` (load average before and
after each item). Exit status 0 whatever the figures say (they are for a person to judge); 2 when
PostgreSQL or Redis is missing for an item that needs them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

SERVE = [sys.executable, "-c", "from guandan.cli import main; main()", "serve"]
REFUSED_LINE = "another guandan server is already serving the database"
MIB = 1 << 20


# -- servers -----------------------------------------------------------------------------------------


class Server:
    """One ``guandan serve`` process on a free port; its stdout and stderr lines are kept.

    Args:
        db: database path or URL; extra: more ``guandan serve`` options.
    """

    def __init__(self, db: str, *extra: str) -> None:
        cmd = [*SERVE, "--port", "0", "--db", db, "--log-level", "warning", *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.out: list[str] = []
        self.err: list[str] = []
        self.url = ""
        self._open = threading.Event()
        self.started_at = time.monotonic()
        threading.Thread(target=self._read, args=(self.proc.stdout, self.out, True), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.err, False), daemon=True).start()

    def _read(self, stream: Any, into: list[str], watch: bool) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))
            if watch and not self.url:
                m = re.search(r"open (http://\S+?)/?\s", line + " ")
                if m:
                    self.url = m.group(1).rstrip("/")
                    self._open.set()

    def wait(self, timeout_s: float = 90.0) -> bool:
        """Wait until it serves (True) or exits (False)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self._open.wait(0.1):
                return True
            if self.proc.poll() is not None:
                time.sleep(0.2)
                return self._open.is_set()
        return False

    def exit_code(self, timeout_s: float) -> int | None:
        """Its exit status once it exits within ``timeout_s`` (``None``: still running)."""
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def memory_kb(self) -> dict[str, int]:
        """``VmRSS`` and ``VmHWM`` of the process, in kB."""
        out = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(rest.split()[0])
        return out

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after 20 s; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def last_err(self) -> str:
        """Its last non-empty stderr line."""
        lines = [ln for ln in self.err if ln.strip()]
        return lines[-1] if lines else ""


def _http(url: str, method: str, path: str, body: Any = None, token: str | None = None,
          xff: str | None = None, timeout: float = 60.0) -> httpx.Response:
    headers = {}
    if token:
        headers["cookie"] = f"gd_session={token}"
    if xff:
        headers["x-forwarded-for"] = xff
    with httpx.Client(timeout=timeout, limits=httpx.Limits(max_keepalive_connections=0)) as h:
        if method == "GET":
            return h.get(url + path, headers=headers)
        return h.post(url + path, json={} if body is None else body, headers=headers)


def _guest(url: str, xff: str | None = None) -> str:
    r = _http(url, "POST", "/api/guest", {}, xff=xff)
    r.raise_for_status()
    return r.cookies["gd_session"]


def _ok(r: httpx.Response) -> dict[str, Any]:
    if r.status_code != 200:
        raise RuntimeError(f"{r.request.url.path}: {r.status_code} {r.text[:300]}")
    return r.json()  # type: ignore[no-any-return]


def _bots_room(url: str, *, single_deal: bool, bot: str, xff: str | None = None) -> str:
    """A room of four ``bot`` bots started by a new guest who left the seat; its id."""
    token = _guest(url, xff)
    body: dict[str, Any] = {"preset": "official", "name": "attack26", "clocks": "off"}
    if single_deal:
        body["options"] = {"single_deal": True}
    room = _ok(_http(url, "POST", "/api/rooms", body, token, xff))["room"]["id"]
    _ok(_http(url, "POST", f"/api/rooms/{room}/leave", {}, token, xff))
    _ok(_http(url, "POST", f"/api/rooms/{room}/bots", {"bot": bot}, token, xff))
    _ok(_http(url, "POST", f"/api/rooms/{room}/start", {}, token, xff))
    return room


def _room_status(url: str, room: str) -> str | None:
    try:
        return _ok(_http(url, "GET", f"/api/rooms/{room}", timeout=10))["room"]["status"]
    except Exception:  # noqa: BLE001 - the server is gone or busy
        return None


def _stored(db_url: str, room: str) -> dict[str, Any]:
    """What the database holds of ``room``: its status, ``game_events`` rows (and whether their
    indices run 0..n-1), ``games`` rows, and the replay of the stored record (the finished game's,
    else the live rows)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    from guandan.records.reader import replay_lines
    from guandan.server.db import normalize_url

    eng = create_engine(normalize_url(db_url), poolclass=NullPool)
    try:
        with eng.connect() as c:
            status = c.execute(text("SELECT status FROM rooms WHERE id = :r"), {"r": room}).scalar()
            idx = c.execute(text("SELECT idx FROM game_events WHERE room_id = :r ORDER BY idx"), {"r": room}).scalars().all()
            lines = c.execute(text("SELECT line FROM game_events WHERE room_id = :r ORDER BY idx"),
                              {"r": room}).scalars().all()
            games = c.execute(text("SELECT record FROM games WHERE room_id = :r"), {"r": room}).scalars().all()
            room_record = c.execute(text("SELECT record FROM rooms WHERE id = :r"), {"r": room}).scalar()
    finally:
        eng.dispose()
    out: dict[str, Any] = {"room_status": status, "game_events_rows": len(idx),
                           "game_events_contiguous": list(idx) == list(range(len(idx))), "games_rows": len(games)}
    record = games[0] if games else (room_record or "\n".join(lines))
    try:
        res = replay_lines([ln for ln in record.splitlines() if ln.strip()])
        out["replay"] = {"ok": True, "complete": res.complete, "actions": res.n_actions, "lines": res.n_lines}
    except Exception as e:  # noqa: BLE001 - a record error is a finding
        out["replay"] = {"ok": False, "error": str(e)[:300]}
    return out


def _wait_finished(url: str, room: str, timeout_s: float, db_url: str | None = None,
                   stall_s: float = 20.0) -> tuple[str | None, float]:
    """Wait for ``room`` to be ``finished`` (as the server at ``url`` says); with ``db_url``, stop
    early (status ``"stalled"``) once its stored rows have not changed for ``stall_s`` seconds."""
    t0 = time.monotonic()
    status = None
    last, since = None, time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        status = _room_status(url, room)
        if status == "finished":
            break
        if db_url is not None:
            rows = _stored(db_url, room)["game_events_rows"]
            if rows != last:
                last, since = rows, time.monotonic()
            elif time.monotonic() - since > stall_s:
                return f"stalled ({status}, {rows} rows unchanged for {stall_s:g} s)", round(time.monotonic() - t0, 1)
        time.sleep(1.0)
    return status, round(time.monotonic() - t0, 1)


def _second_server(db: str) -> dict[str, Any]:
    """Start a second plain server on ``db``: its exit status and its one line (or that it served)."""
    s = Server(db)
    served = s.wait(60)
    if served:
        s.stop()
        return {"exit": None, "served": True, "line": ""}
    rc = s.exit_code(30)
    return {"exit": rc, "served": False, "refused_line": REFUSED_LINE in s.last_err(), "line": s.last_err()[:200]}


# -- item 1 ------------------------------------------------------------------------------------------


def _lock_holders(url: str) -> list[int]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    from guandan.server.db import normalize_url
    from guandan.server.dblock import PG_LOCK_KEY

    eng = create_engine(normalize_url(url), poolclass=NullPool)
    try:
        with eng.connect() as c:
            return list(c.execute(text(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = :hi AND objid = :lo "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"),
                {"hi": PG_LOCK_KEY >> 32, "lo": PG_LOCK_KEY & 0xFFFFFFFF}).scalars())
    finally:
        eng.dispose()


def _sql(url: str, statement: str, **params: Any) -> Any:
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    from guandan.server.db import normalize_url

    eng = create_engine(normalize_url(url), poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as c:
            res = c.execute(text(statement), params)
            return res.fetchall() if res.returns_rows else []
    finally:
        eng.dispose()


def _terminate_case(args: argparse.Namespace, timed: bool) -> dict[str, Any]:
    """Item 1 (a): ``pg_terminate_backend`` of server A's lock connection while A plays a
    one-deal game of bots, and a second server B started at once; ``timed``: the terminate is
    sent just after A's lock watch checked the lock (``pg_stat_activity.state_change`` of the
    lock connection under 0.1 s old), the worst moment: A then learns of the loss only at its
    next check (``dblock.CHECK_INTERVAL_S``)."""
    from cluster_helpers import fresh_database

    delay = ("--bot-delay", str(args.item1_bot_delay))
    with fresh_database() as db:
        a = Server(db, *delay)
        assert a.wait(), a.err[-5:]
        room = _bots_room(a.url, single_deal=True, bot="easy")
        time.sleep(3.0)
        case: dict[str, Any] = {"second_while_first_runs": _second_server(db)}
        holders = _lock_holders(db)
        case["lock_holders"] = len(holders)
        if timed and holders:
            end = time.monotonic() + 10
            while time.monotonic() < end:
                age = _sql(db, "SELECT extract(epoch from now() - state_change) FROM pg_stat_activity "
                           "WHERE pid = :p", p=holders[0])[0][0]
                if float(age) < 0.1:
                    break
                time.sleep(0.03)
        case["game_events_rows_at_terminate"] = _stored(db, room)["game_events_rows"]
        _sql(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY(:p)", p=holders)
        t0 = time.monotonic()
        b = Server(db, *delay)  # at once, as the attack did
        a_exit = b_served = None
        while time.monotonic() - t0 < 90 and (a_exit is None or (b_served is None and b.proc.poll() is None)):
            if a_exit is None and a.proc.poll() is not None:
                a_exit = round(time.monotonic() - t0, 2)
            if b_served is None and b.url:
                b_served = round(time.monotonic() - t0, 2)
            time.sleep(0.02)
        case["first_exit"] = {"code": a.proc.poll(), "after_s": a_exit, "line": a.last_err()[:200]}
        case["second_after_terminate"] = {"served_after_s": b_served, "exit": b.proc.poll(),
                                          "line": "" if b_served else b.last_err()[:200]}
        case["both_served_at_once"] = b_served is not None and a_exit is not None and b_served < a_exit
        if b_served is not None:
            status, took = _wait_finished(b.url, room, args.finish_timeout, db)
            case["game_on_second"] = {"status": status, "waited_s": took}
            time.sleep(1.0)
        b.stop()
        case["stored"] = _stored(db, room)
        case["second_log"] = [ln[:220] for ln in b.err if ln.strip() and not ln.startswith("INFO")][:4]
        case["tracebacks_logged"] = sum("Traceback" in ln for ln in a.err + b.err)
    return case


def item1(args: argparse.Namespace) -> dict[str, Any]:
    from cluster_helpers import fresh_database, require_services

    require_services()
    out: dict[str, Any] = {}
    delay = ("--bot-delay", str(args.item1_bot_delay))

    # (a) pg_terminate_backend of the lock's connection, a second server started at once: at a
    # random moment, and just after the first server's lock watch checked the lock
    for label, timed in (("pg_terminate_backend", False), ("pg_terminate_backend_just_after_a_check", True)):
        for k in range(args.item1_tries):
            out[label if args.item1_tries == 1 else f"{label}_{k + 1}"] = _terminate_case(args, timed)

    # (b) idle_session_timeout = 5 s on the database
    with fresh_database() as db:
        name = db.rsplit("/", 1)[1].split("?")[0]
        _sql(db, f"ALTER DATABASE \"{name}\" SET idle_session_timeout = '5s'")
        a = Server(db, *delay)
        assert a.wait(), a.err[-5:]
        room = _bots_room(a.url, single_deal=True, bot="easy")
        time.sleep(12.0)
        case = {"idle_session_timeout": _sql(db, "SHOW idle_session_timeout")[0][0],
                "lock_holders_after_12s": len(_lock_holders(db)),
                "second_after_12s": _second_server(db), "first_alive": a.proc.poll() is None}
        status, took = _wait_finished(a.url, room, args.finish_timeout)
        case["finished_on_first"] = {"status": status, "waited_s": took}
        case["first_alive_at_end"] = a.proc.poll() is None
        time.sleep(1.0)
        a.stop()
        case["stored"] = _stored(db, room)
        case["errors_logged"] = sum("Traceback" in ln for ln in a.err)
        out["idle_session_timeout"] = case

    # (c) SQLite: a symlinked path and a hard link to the same file
    with tempfile.TemporaryDirectory() as d:
        real = Path(d) / "real.db"
        a = Server(str(real), *delay)
        assert a.wait(), a.err[-5:]
        room = _bots_room(a.url, single_deal=True, bot="easy")
        (Path(d) / "link.db").symlink_to(real)
        os.link(real, Path(d) / "hard.db")
        case = {"second_on_symlink": _second_server(str(Path(d) / "link.db")),
                "second_on_hardlink": _second_server(str(Path(d) / "hard.db"))}
        status, took = _wait_finished(a.url, room, args.finish_timeout)
        case["finished_on_first"] = {"status": status, "waited_s": took}
        time.sleep(1.0)
        a.stop()
        case["stored"] = _stored(f"sqlite:///{real}", room)
        out["sqlite_symlink"] = case
    return out


# -- item 2 ------------------------------------------------------------------------------------------


def item2(args: argparse.Namespace) -> dict[str, Any]:
    from cluster_helpers import Client, Node, api, fresh_database, guest, lease_holder, require_services

    require_services()
    runs: list[dict[str, Any]] = []
    with fresh_database() as db:
        tag = secrets.token_hex(3)
        serial = 0

        def new_node() -> Node:
            nonlocal serial
            serial += 1
            return Node(db, f"a26{tag}-{serial}", lease_s=args.lease).start()

        nodes = [new_node(), new_node()]
        try:
            for _ in range(args.failovers):
                token, _ = guest(nodes[0].url)
                room = api(nodes[0].url, "/api/quick", token, {"difficulty": "easy"})["room"]["id"]
                owner = next(n for n in nodes if n.name == lease_holder(room))
                other = next(n for n in nodes if n is not owner)
                person = Client(other.url, room, token, "seat 0")
                person.wait(lambda f: f.get("type") == "state" and f["view"] is not None, timeout_s=60)
                person.close()  # the page is closed: after the away grace a bot covers seat 0 (托管 away)
                end = time.monotonic() + 30
                while time.monotonic() < end:
                    seats = httpx.get(f"{other.url}/api/rooms/{room}", timeout=30).json()["room"]["seats"]
                    if not seats[0]["connected"]:
                        break
                    time.sleep(0.1)
                time.sleep(args.lease + 3.0)  # the away grace (2 s) has passed; nobody watches the table
                killed = time.monotonic()
                owner.kill()
                watcher = Client(other.url, room, None, "spectator")
                first = watcher.wait(lambda f: f.get("type") == "state" and f["view"] is not None, timeout_s=60)
                watcher.wait(lambda f: f.get("type") == "state" and f["seq"] > first["seq"] + 6, timeout_s=90)
                states = [f for f in watcher.frames if f.get("type") == "state"]
                moved = next(f for f in states if f["seq"] > first["seq"])
                stall, at = 0.0, killed
                for f in states:  # the test's measure: the longest wait for a move from the kill on
                    if f["between"] is None or f is first:
                        stall = max(stall, f["_t"] - at)
                    at = f["_t"]
                runs.append({"room": room, "killed": owner.name, "new_owner": lease_holder(room),
                             "first_move_after_kill_s": round(moved["_t"] - killed, 2),
                             "longest_wait_s": round(stall, 2),
                             "auto_away_kept": all(f["auto"][0] is True and f["auto_reason"][0] == "away" for f in states)})
                watcher.close()
                nodes[nodes.index(owner)] = new_node()
        finally:
            for n in nodes:
                n.stop()
    return {"lease_s": args.lease, "target_s": args.lease + 1.0, "runs": runs,
            "worst_s": max(max(r["longest_wait_s"], r["first_move_after_kill_s"]) for r in runs)}


# -- item 3 ------------------------------------------------------------------------------------------


async def _open_sockets(base: str, room: str, addresses: list[str | None], token: str | None = None,
                        keep: list[Any] | None = None) -> Counter[str]:
    """Open one socket per address (``None``: no header), one after another; each is counted by its
    first frame: ``state`` (open; kept and drained) or the error's reason (closed)."""
    from websockets.asyncio.client import connect

    seen: Counter[str] = Counter()
    for addr in addresses:
        headers = {}
        if addr:
            headers["X-Forwarded-For"] = addr
        if token:
            headers["Cookie"] = f"gd_session={token}"
        try:
            ws = await connect("ws" + base[4:] + f"/ws/rooms/{room}", additional_headers=headers, max_size=None,
                               open_timeout=60)
            f = json.loads(await asyncio.wait_for(ws.recv(), 60))
            while f.get("type") not in ("state", "error"):  # a table notice sent to every socket
                f = json.loads(await asyncio.wait_for(ws.recv(), 60))
            if f.get("type") == "state":
                seen["open" if token is None else f"open_seat_{f.get('seat')}"] += 1
                if keep is not None:
                    keep.append(ws)
                    asyncio.get_running_loop().create_task(_drain(ws))
                else:
                    await ws.close()
            else:
                seen[str(f.get("reason") or f.get("type"))] += 1
                await ws.close()
        except Exception as e:  # noqa: BLE001 - refused at the handshake, or closed
            seen[type(e).__name__] += 1
    return seen


async def _drain(ws: Any) -> None:
    try:
        async for _ in ws:
            pass
    except Exception:  # noqa: BLE001, S110
        pass


def item3(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d:
        s = Server(f"sqlite:///{d}/spect.db", "--forwarded-allow-ips", "127.0.0.1")
        assert s.wait(), s.err[-5:]
        try:
            token = _guest(s.url, "198.51.100.1")
            room = _ok(_http(s.url, "POST", "/api/quick", {"difficulty": "easy"}, token, "198.51.100.1"))["room"]["id"]
            room2 = _bots_room(s.url, single_deal=False, bot="easy", xff="198.51.100.2")

            async def single() -> dict[str, Any]:
                keep: list[Any] = []
                flood = [f"203.0.113.{i % 42 + 1}" for i in range(200)]
                r: dict[str, Any] = {"spectators_200_from_42_addresses": dict(await _open_sockets(s.url, room, flood, keep=keep))}
                r["spectator_201_to_205"] = dict(await _open_sockets(s.url, room, [f"203.0.113.{100 + i}" for i in range(5)]))
                r["seated_from_new_address"] = dict(await _open_sockets(s.url, room, ["198.51.100.1"], token, keep))
                r["seated_from_a_flood_address"] = dict(await _open_sockets(s.url, room, ["203.0.113.1"], token, keep))
                # the per-address cap in one process: 55 from one address (to another room)
                r["one_address_55_to_one_process"] = dict(await _open_sockets(s.url, room2, ["192.0.2.55"] * 55, keep=keep))
                r["seated_from_that_full_address"] = dict(await _open_sockets(s.url, room, ["192.0.2.55"], token, keep))
                for ws in keep:
                    await ws.close()
                return r

            out["single_process"] = asyncio.run(single())
            out["single_process"]["server_alive"] = s.proc.poll() is None
        finally:
            s.stop()

    from cluster_helpers import Node, api, fresh_database, guest, require_services

    require_services()
    with fresh_database() as db:
        tag = secrets.token_hex(3)
        nodes = [Node(db, f"a26s{tag}-{i}", extra=("--forwarded-allow-ips", "127.0.0.1")).start() for i in range(2)]
        try:
            a, b = nodes
            token, _ = guest(a.url)
            room = api(a.url, "/api/quick", token, {"difficulty": "easy"})["room"]["id"]
            token2, _ = guest(b.url)
            room2 = api(b.url, "/api/quick", token2, {"difficulty": "easy"})["room"]["id"]

            async def cluster() -> dict[str, Any]:
                keep: list[Any] = []
                r: dict[str, Any] = {}
                r["to_first"] = dict(await _open_sockets(a.url, room, [None] * 55, keep=keep))
                r["to_second"] = dict(await _open_sockets(b.url, room, [None] * 55, keep=keep))
                r["open_total"] = sum(1 for _ in keep)
                r["seated_after_on_second"] = dict(await _open_sockets(b.url, room, [None], token, keep))
                # the spectator cap of a room (--max-ws-per-room 200) over both processes: 110 from
                # 42 addresses to each
                flood = [f"203.0.113.{i % 42 + 1}" for i in range(110)]
                r["room_cap_110_spectators_to_first"] = dict(await _open_sockets(a.url, room2, flood, keep=keep))
                r["room_cap_110_spectators_to_second"] = dict(await _open_sockets(b.url, room2, flood, keep=keep))
                r["room_cap_seated_on_second"] = dict(await _open_sockets(b.url, room2, ["198.51.100.3"], token2, keep))
                for ws in keep:
                    await ws.close()
                return r

            out["cluster_two_processes_55_each_one_address"] = asyncio.run(cluster())
        finally:
            for n in nodes:
                n.stop()
    return out


# -- items 4 and 5 -----------------------------------------------------------------------------------


async def _logins(url: str, n_good: int, flood_s: float) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=400, max_keepalive_connections=0)  # a new connection each
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as h:
        owners = [f"owner{i}" for i in range(n_good + 1)]
        for i, name in enumerate(owners):
            r = await h.post("/api/register", json={"name": name, "password": f"pass-of-{name}"},
                             headers={"x-forwarded-for": f"192.0.2.{100 + i}"})
            r.raise_for_status()
        h.cookies.clear()
        target = owners[-1]
        guesses: Counter[int] = Counter()
        for i in range(30):
            r = await h.post("/api/login", json={"name": target, "password": f"guess-{i}"},
                             headers={"x-forwarded-for": f"203.0.113.{200 + i % 3}"})
            guesses[r.status_code] += 1
        r = await h.post("/api/login", json={"name": target, "password": f"pass-of-{target}"},
                         headers={"x-forwarded-for": "198.51.100.200"})
        item4 = {"guesses": dict(guesses), "owner_status": r.status_code, "owner_code": r.json().get("code")}
        h.cookies.clear()
        flood: Counter[Any] = Counter()
        good: list[Any] = []
        waits: list[float] = []
        stop = asyncio.Event()

        async def attacker(a: int, j: int) -> None:
            k = 0
            while not stop.is_set():
                k += 1
                try:
                    r = await h.post("/api/login", json={"name": f"victim{a}x{j}x{k}", "password": "wrong-guess"},
                                     headers={"x-forwarded-for": f"203.0.113.{a}"})
                    flood[r.status_code] += 1
                except httpx.HTTPError as e:
                    flood[type(e).__name__] += 1

        tasks = [asyncio.create_task(attacker(a, j)) for a in range(1, 21) for j in range(6)]
        await asyncio.sleep(flood_s)
        for i in range(n_good):
            t0 = time.monotonic()
            try:
                r = await h.post("/api/login", json={"name": owners[i], "password": f"pass-of-{owners[i]}"},
                                 headers={"x-forwarded-for": f"198.51.100.{i + 1}"})
                good.append(r.status_code)
            except httpx.HTTPError as e:
                good.append(type(e).__name__)
            waits.append(round(time.monotonic() - t0, 2))
            await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*tasks)
    item5 = {"correct_logins": n_good, "correct_statuses": dict(Counter(map(str, good))), "correct_s": waits,
             "flood_statuses": {str(k): v for k, v in flood.items()}}
    return {"item4": item4, "item5": item5}


def item45(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        s = Server(f"sqlite:///{d}/login.db", "--forwarded-allow-ips", "127.0.0.1", "--registrations-per-hour", "0")
        assert s.wait(), s.err[-5:]
        try:
            return asyncio.run(_logins(s.url, args.logins, 3.0))
        finally:
            s.stop()


# -- item 6 ------------------------------------------------------------------------------------------


async def _big_messages(url: str, room: str, sockets: int, messages: int, size: int) -> dict[str, Any]:
    from websockets.asyncio.client import connect

    seen: Counter[str] = Counter()
    payload = "x" * size

    async def one(i: int) -> None:
        sent, stage = 0, "open"
        try:
            async with connect("ws" + url[4:] + f"/ws/rooms/{room}", max_size=None, open_timeout=60,
                               close_timeout=10, ping_interval=None) as ws:
                # read the server's frames meanwhile, so that its close frame is not stuck behind them
                asyncio.get_running_loop().create_task(_drain(ws))
                for _ in range(messages):
                    stage = f"send{sent + 1}"
                    await asyncio.wait_for(ws.send(payload), 120)
                    sent += 1
                stage = "wait_close"
                await asyncio.wait_for(ws.wait_closed(), 30)
                seen[f"closed {ws.close_code} by the server after {sent} sent"] += 1
        except Exception as e:  # noqa: BLE001 - the server closed it while it was being sent
            code = getattr(getattr(e, "rcvd", None), "code", None)
            seen[f"{type(e).__name__} {code} at {stage} ({sent} sent)"] += 1

    await asyncio.gather(*(one(i) for i in range(sockets)))
    return dict(seen)


def item6(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        s = Server(f"sqlite:///{d}/big.db", "--forwarded-allow-ips", "127.0.0.1")
        assert s.wait(), s.err[-5:]
        try:
            token = _guest(s.url, "198.51.100.1")
            room = _ok(_http(s.url, "POST", "/api/quick", {"difficulty": "easy"}, token, "198.51.100.1"))["room"]["id"]
            time.sleep(2.0)
            before = s.memory_kb()
            t0 = time.monotonic()
            closes = asyncio.run(_big_messages(s.url, room, 50, 2, 16 * MIB))
            took = time.monotonic() - t0
            time.sleep(2.0)
            after = s.memory_kb()
            health = _http(s.url, "GET", "/healthz").status_code
        finally:
            s.stop()
    return {"sockets": 50, "messages_each": 2, "message_mib": 16, "attack_s": round(took, 1),
            "rss_before_mb": round(before["VmRSS"] / 1024, 1), "rss_after_mb": round(after["VmRSS"] / 1024, 1),
            "hwm_after_mb": round(after["VmHWM"] / 1024, 1), "socket_outcomes": closes, "healthz_after": health}


# -- item 7 ------------------------------------------------------------------------------------------


def _gaps(frames: list[tuple[float, dict[str, Any]]], t0: float, t1: float) -> dict[str, Any]:
    """Seconds between two consecutive moves of a table (state frames in play) within [t0, t1]."""
    gaps = []
    prev = None
    for t, f in frames:
        if f.get("type") != "state" or f.get("between") is not None:
            prev = None
            continue
        if prev is not None and t0 <= prev and t <= t1:
            gaps.append(t - prev)
        prev = t
    if not gaps:
        return {"moves": 0}
    gaps.sort()
    return {"moves": len(gaps), "mean_s": round(sum(gaps) / len(gaps), 3), "p50_s": round(gaps[len(gaps) // 2], 3),
            "p90_s": round(gaps[int(0.9 * (len(gaps) - 1))], 3), "max_s": round(gaps[-1], 3)}


def item7(args: argparse.Namespace) -> dict[str, Any]:
    from websockets.sync.client import connect

    with tempfile.TemporaryDirectory() as d:
        s = Server(f"sqlite:///{d}/quick.db", "--forwarded-allow-ips", "127.0.0.1")
        assert s.wait(), s.err[-5:]
        frames: list[tuple[float, dict[str, Any]]] = []
        stack = contextlib.ExitStack()
        try:
            room = _bots_room(s.url, single_deal=False, bot="normal", xff="198.51.100.9")
            ws = stack.enter_context(connect("ws" + s.url[4:] + f"/ws/rooms/{room}", max_size=None, open_timeout=60,
                         additional_headers={"X-Forwarded-For": "198.51.100.10"}))

            def read() -> None:
                try:
                    while True:
                        frames.append((time.monotonic(), json.loads(ws.recv())))
                except Exception:  # noqa: BLE001, S110
                    pass

            threading.Thread(target=read, daemon=True).start()
            b0 = time.monotonic()
            time.sleep(args.baseline_seconds)
            b1 = time.monotonic()
            # one guest asking again and again
            attacker = "203.0.113.7"
            token = _guest(s.url, attacker)
            one_guest: Counter[str] = Counter()
            for _ in range(20):
                r = _http(s.url, "POST", "/api/quick", {"difficulty": args.difficulty}, token, attacker)
                one_guest[f"{r.status_code} {r.json().get('code', '') if r.status_code != 200 else 'created'}"] += 1
            # one address, a new guest for each quick game, for quick_seconds at quick_rate a second
            guests: Counter[str] = Counter()
            quick: Counter[str] = Counter()
            a0 = time.monotonic()
            n = 0
            while time.monotonic() - a0 < args.quick_seconds:
                n += 1
                g = _http(s.url, "POST", "/api/guest", {}, None, attacker)
                guests[f"{g.status_code} {g.json().get('code', '') if g.status_code != 200 else 'created'}"] += 1
                if g.status_code == 200:
                    token = g.cookies["gd_session"]
                r = _http(s.url, "POST", "/api/quick", {"difficulty": args.difficulty}, token, attacker)
                quick[f"{r.status_code} {r.json().get('code', '') if r.status_code != 200 else 'created'}"] += 1
                wait = a0 + n / args.quick_rate - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            a1 = time.monotonic()
            live = _ok(_http(s.url, "GET", "/api/rooms"))
        finally:
            stack.close()
            s.stop()
    rooms = live.get("rooms", [])
    return {"difficulty": args.difficulty, "one_guest_20_requests": dict(one_guest),
            "one_address": {"seconds": round(a1 - a0, 1), "iterations": n, "guest_statuses": dict(guests),
                            "quick_statuses": dict(quick)},
            "live_rooms_listed_at_end": len(rooms) if isinstance(rooms, list) else None,
            "other_table_before": _gaps(frames, b0, b1), "other_table_during": _gaps(frames, b1, a1)}


# -- main ----------------------------------------------------------------------------------------------

ITEMS = {"1": item1, "2": item2, "3": item3, "45": item45, "6": item6, "7": item7}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Items 4 and 5 run together (one server). See the module docstring.")
    ap.add_argument("--items", default="1,2,3,4,5,6,7", help="comma-separated items to run (default all)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this file")
    ap.add_argument("--item1-bot-delay", type=float, default=0.3, help="item 1: --bot-delay of the servers (0.3)")
    ap.add_argument("--item1-tries", type=int, default=2, help="item 1: tries of each pg_terminate_backend case (2)")
    ap.add_argument("--finish-timeout", type=float, default=180.0, help="item 1: seconds to wait for the game's end (180)")
    ap.add_argument("--lease", type=float, default=3.0, help="item 2: --lease of the cluster processes (3)")
    ap.add_argument("--failovers", type=int, default=2, help="item 2: owners killed (2)")
    ap.add_argument("--logins", type=int, default=11, help="item 5: correct logins during the flood (11)")
    ap.add_argument("--difficulty", default="hard", help="item 7: the attacker's quick games' difficulty (hard)")
    ap.add_argument("--baseline-seconds", type=float, default=25.0, help="item 7: the other table alone (25)")
    ap.add_argument("--quick-seconds", type=float, default=60.0, help="item 7: seconds of the attack (60)")
    ap.add_argument("--quick-rate", type=float, default=11.0,
                    help="item 7: attempts a second (11: the issue's 2,000 in 183 s)")
    args = ap.parse_args(argv)
    wanted = [x.strip() for x in args.items.split(",") if x.strip()]
    keys = []
    for w in wanted:
        k = "45" if w in ("4", "5") else w
        if k not in ITEMS:
            ap.error(f"unknown item {w!r} (1-7)")
        if k not in keys:
            keys.append(k)
    result: dict[str, Any] = {"loadavg": {}}
    for k in keys:
        before = os.getloadavg()
        t0 = time.monotonic()
        try:
            figures = ITEMS[k](args)
        except BaseException as e:  # noqa: BLE001 - pytest's skip outcome (services missing) too
            if type(e).__name__ in ("Skipped", "Failed"):
                print(f"error: item {k}: {e}", file=sys.stderr)
                return 2
            if isinstance(e, KeyboardInterrupt):
                raise
            import traceback

            figures = {"error": "".join(traceback.format_exception_only(type(e), e)).strip()[:500]}
            traceback.print_exc()
        after = os.getloadavg()
        if k == "45":
            result["item4"], result["item5"] = figures.get("item4", figures), figures.get("item5", figures)
        else:
            result[f"item{k}"] = figures
        result["loadavg"][f"item{k}"] = {"before": [round(x, 2) for x in before], "after": [round(x, 2) for x in after],
                                         "wall_s": round(time.monotonic() - t0, 1)}
        print(f"item {k} done in {time.monotonic() - t0:.0f} s: {json.dumps(result.get(f'item{k}', figures))[:400]}",
              file=sys.stderr, flush=True)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
