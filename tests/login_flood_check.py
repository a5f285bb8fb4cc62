"""Before/after figures of issue 26 items 4 and 5 against a real ``guandan serve`` (real argon2).

* item 4: 30 wrong passwords for one account from 3 addresses, then the owner's correct password
  from a new address: its HTTP status;
* item 5: a flood of wrong logins from 20 addresses (6 at once each, each for a new name) and,
  during it, 11 correct logins from 11 other addresses: how many got 200, 503, 429.

The server believes ``X-Forwarded-For`` from loopback (``--forwarded-allow-ips 127.0.0.1``), so
one machine can play every address. Run::

    PYTHONPATH=src python tests/login_flood_check.py            # this checkout
    PYTHONPATH=/other/src python tests/login_flood_check.py     # another version (before/after)
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from typing import Any


def _start(db: str) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--port", "0", "--db", db,
           "--log-level", "warning", "--forwarded-allow-ips", "127.0.0.1", "--registrations-per-hour", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"open (http://\S+?)/?\s", line)
    if not m:
        proc.kill()
        raise RuntimeError(f"the server did not start: {line}")
    return proc, m.group(1).rstrip("/")


async def _measure(url: str) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(max_connections=400, max_keepalive_connections=400)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as h:
        owners = [f"owner{i}" for i in range(12)]
        for i, name in enumerate(owners):
            r = await h.post("/api/register", json={"name": name, "password": f"pass-of-{name}"},
                             headers={"x-forwarded-for": f"192.0.2.{100 + i}"})
            r.raise_for_status()
        h.cookies.clear()
        # item 4
        for i in range(30):
            await h.post("/api/login", json={"name": owners[11], "password": f"guess-{i}"},
                         headers={"x-forwarded-for": f"203.0.113.{200 + i % 3}"})
        r = await h.post("/api/login", json={"name": owners[11], "password": f"pass-of-{owners[11]}"},
                         headers={"x-forwarded-for": "198.51.100.200"})
        lockout = r.status_code
        # item 5
        flood: Counter[int] = Counter()
        good: list[int] = []
        waits: list[float] = []
        stop = asyncio.Event()

        async def attacker(a: int, j: int) -> None:
            k = 0
            while not stop.is_set():
                k += 1
                r = await h.post("/api/login", json={"name": f"victim{a}x{j}x{k}", "password": "wrong-guess"},
                                 headers={"x-forwarded-for": f"203.0.113.{a}"})
                flood[r.status_code] += 1

        tasks = [asyncio.create_task(attacker(a, j)) for a in range(1, 21) for j in range(6)]
        await asyncio.sleep(3.0)
        for i in range(11):
            t0 = time.monotonic()
            r = await h.post("/api/login", json={"name": owners[i], "password": f"pass-of-{owners[i]}"},
                             headers={"x-forwarded-for": f"198.51.100.{i + 1}"})
            waits.append(round(time.monotonic() - t0, 2))
            good.append(r.status_code)
            await asyncio.sleep(0.5)
        stop.set()
        await asyncio.gather(*tasks)
    return {"item4_owner_status": lockout, "item5_correct": dict(Counter(good)), "item5_correct_s": waits,
            "item5_flood": dict(flood)}


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        proc, url = _start(f"sqlite:///{d}/flood.db")
        try:
            out = asyncio.run(_measure(url))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
