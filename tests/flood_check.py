"""Login flood against a live table (issue 11): does the table keep playing while logins pour in?

Starts ``guandan serve`` (a separate process, as in production) on a free loopback port, registers
an owner, starts a room with three heuristic bots (the owner's seat is played by the bot once the
owner is away), watches it as a spectator, and after ``--warmup`` seconds sends ``--logins``
concurrent wrong-password logins (each for a different name, so the per-address and per-account
limits do not refuse them before the password check). Reports:

* ``max_gap_s``: the longest pause between two frames the spectator received during the flood;
* ``statuses``: HTTP status of every login (401 wrong password, 503 ``server_busy`` when the
  hashing queue is full, 500 would be a failure);
* ``lost_saves``: record writes the server logged as failed, and whether the stored record holds
  every action the spectator saw (``record_behind``).

Run it (the figures of the issue's closing note)::

    python tests/flood_check.py                      # this checkout's guandan
    python tests/flood_check.py --guandan /other/venv/bin/guandan   # another version (before/after)
    python tests/flood_check.py --db postgresql+psycopg://postgres@127.0.0.1:5432/flood
    python tests/flood_check.py --logins 0           # baseline: 10 s of the table with no flood

Used by ``tests/test_server_flood.py`` (marked slow).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any


def _start(guandan: list[str], db: str, bot_delay: float) -> tuple[subprocess.Popen[str], str, list[str]]:
    cmd = [*guandan, "serve", "--port", "0", "--db", db, "--bot-delay", str(bot_delay), "--log-level", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    url = None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        m = re.search(r"open (http://\S+?)/?\s", line)
        if m:
            url = m.group(1).rstrip("/")
            break
    if url is None:
        proc.kill()
        raise RuntimeError("the server did not start: " + " | ".join(lines[-3:]))

    def drain() -> None:
        for ln in proc.stdout:  # type: ignore[union-attr]
            lines.append(ln.rstrip())

    threading.Thread(target=drain, daemon=True).start()
    return proc, url, lines


async def _measure(url: str, logins: int, warmup_s: float) -> dict[str, Any]:
    import httpx
    from websockets.asyncio.client import connect

    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        r = await http.post("/api/register", json={"name": "flood-owner", "password": "owner-password"})
        r.raise_for_status()
        token = r.cookies["gd_session"]
        h = {"cookie": f"gd_session={token}"}
        rid = (await http.post("/api/rooms", json={"preset": "official"}, headers=h)).json()["room"]["id"]
        (await http.post(f"/api/rooms/{rid}/bots", json={"bot": "heuristic"}, headers=h)).raise_for_status()
        (await http.post(f"/api/rooms/{rid}/start", json={}, headers=h)).raise_for_status()
    times: list[float] = []
    last_seq = 0
    stop = asyncio.Event()

    dropped: list[str] = []

    async def watch() -> None:
        nonlocal last_seq
        from websockets.exceptions import ConnectionClosed

        async with connect("ws" + url[4:] + f"/ws/rooms/{rid}", max_size=None) as ws:
            while not stop.is_set():
                try:
                    raw = await asyncio.wait_for(ws.recv(), 0.2)
                except TimeoutError:
                    continue
                except ConnectionClosed as e:  # e.g. the server's loop stalled past the ping timeout
                    dropped.append(str(e))
                    return
                f = json.loads(raw)
                times.append(time.monotonic())
                if f.get("type") == "state":
                    last_seq = max(last_seq, int(f.get("seq") or 0))

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(warmup_s)
    limits = httpx.Limits(max_connections=logins + 10, max_keepalive_connections=0)
    t0 = time.monotonic()
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:
        async def one(i: int) -> int:
            try:
                r = await http.post("/api/login", json={"name": f"flood-{i}", "password": f"wrong-{i}"})
                return r.status_code
            except httpx.HTTPError:
                return 0

        if logins:
            statuses = await asyncio.gather(*(one(i) for i in range(logins)))
        else:  # the baseline: the same window with no logins
            await asyncio.sleep(10.0)
            statuses = []
    t1 = time.monotonic()
    await asyncio.sleep(1.0)
    stop.set()
    await watcher
    during = [t for t in times if t0 - 1.0 <= t <= t1 + 1.0]
    # the window's ends count too: a table that stops sending shows as one long gap
    edges = [t0 - 1.0, *during, t1 + 1.0]
    gaps = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    counts: dict[str, int] = {}
    for s in statuses:
        counts[str(s)] = counts.get(str(s), 0) + 1
    return {"room": rid, "flood_s": round(t1 - t0, 2), "frames_during": len(during),
            "max_gap_s": round(max(gaps), 3), "statuses": counts, "last_seq": last_seq,
            "spectator_dropped": dropped[0] if dropped else None}


def _stored_events(db: str, room: str) -> int | None:
    """Events stored for the room (record lines - 1), or None when they cannot be read: a live
    game's lines are rows of ``game_events`` (issue 10, migration 0004), a finished one's record is
    in ``rooms.record``."""
    rows_sql = "SELECT COUNT(*) FROM game_events WHERE room_id = :r"
    record_sql = "SELECT record FROM rooms WHERE id = :r"
    try:
        if db.startswith("sqlite:///"):
            con = sqlite3.connect(db[len("sqlite:///"):])
            count = con.execute(rows_sql.replace(":r", "?"), (room,)).fetchone()[0]
            row = con.execute(record_sql.replace(":r", "?"), (room,)).fetchone()
            con.close()
        else:
            from sqlalchemy import create_engine, text

            eng = create_engine(db.replace("postgresql://", "postgresql+psycopg://", 1))
            with eng.connect() as c:
                count = c.execute(text(rows_sql), {"r": room}).scalar_one()
                row = c.execute(text(record_sql), {"r": room}).fetchone()
            eng.dispose()
    except Exception:  # noqa: BLE001
        return None
    if count:
        return max(0, count - 1)
    if row is None or not row[0]:
        return None
    return max(0, len([ln for ln in row[0].split("\n") if ln.strip()]) - 1)


def run(guandan: list[str] | None = None, db: str | None = None, logins: int = 100, warmup_s: float = 2.0,
        bot_delay: float = 0.1) -> dict[str, Any]:
    """Run the check once (see the module docstring) and return the figures."""
    guandan = guandan or [sys.executable, "-c", "from guandan.cli import main; main()"]
    tmp = tempfile.mkdtemp(prefix="flood-")
    db = db or f"sqlite:///{os.path.join(tmp, 'flood.db')}"
    proc, url, lines = _start(guandan, db, bot_delay)
    try:
        out = asyncio.run(_measure(url, logins, warmup_s))
        # the spectator saw out["last_seq"] events; give pending writes a moment, then compare
        time.sleep(1.0)
        out["stored_events_live"] = _stored_events(db, out["room"])
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    out["stored_events_after_exit"] = _stored_events(db, out["room"])
    out["lost_saves"] = sum(1 for ln in lines if "saving the record failed" in ln
                            or "writing the record failed for good" in ln)
    out["server_errors_logged"] = sum(1 for ln in lines if "Traceback" in ln)
    stored = out["stored_events_after_exit"]
    out["record_behind"] = None if stored is None else max(0, out["last_seq"] - stored)
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--guandan", help="the guandan command to test (default: this Python's package)")
    p.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    p.add_argument("--logins", type=int, default=100)
    p.add_argument("--warmup", type=float, default=2.0)
    a = p.parse_args()
    print(json.dumps(run([a.guandan] if a.guandan else None, a.db, a.logins, a.warmup), indent=1))


if __name__ == "__main__":
    main()
