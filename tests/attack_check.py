"""Replays a few attacks of issue 11 against a running ``guandan serve`` and prints what it answered:
spellings of one name and rotating ``X-Forwarded-For`` (12 wrong logins each: 429 after 10?),
30 concurrent guesses (how many reached the password check), lone surrogates (400 or 500?),
JSON as text/plain, the CSP header, a cross-site websocket, tracebacks in the server log.

    python tests/attack_check.py                                  # this checkout
    python tests/attack_check.py /other/venv/bin/guandan          # another version
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from typing import Any

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flood_check import _start  # noqa: E402

def run(guandan: list[str]) -> dict[str, Any]:
    """Start the server, replay the attacks, stop it; the answers by attack."""
    tmp = tempfile.mkdtemp()
    proc, url, lines = _start(guandan, f"sqlite:///{tmp}/x.db", 0.0)
    out = {}
    try:
        h = httpx.Client(base_url=url, timeout=60, limits=httpx.Limits(max_keepalive_connections=0))
        h.post("/api/register", json={"name": "Erin", "password": "right-password"}); h.cookies.clear()
        # spellings
        sp = ["erin","ERIN","Erin"," erin ","ＥＲＩＮ"]
        st = [h.post("/api/login", json={"name": sp[i%5], "password":"wrong"}).status_code for i in range(12)]
        out["spellings_12_tries"] = st
        # XFF rotation
        h.post("/api/register", json={"name": "hank", "password": "right-password"}); h.cookies.clear()
        st = [h.post("/api/login", json={"name": "hank", "password":"wrong"}, headers={"x-forwarded-for": f"203.0.113.{i}"}).status_code for i in range(12)]
        out["xff_rotation_12_tries"] = st
        # concurrency
        h.post("/api/register", json={"name": "gina", "password": "right-password"}); h.cookies.clear()
        async def conc():
            async with httpx.AsyncClient(base_url=url, timeout=60) as a:
                rs = await asyncio.gather(*(a.post("/api/login", json={"name":"gina","password":f"g{i}"}) for i in range(30)))
                return [r.status_code for r in rs]
        st = asyncio.run(conc()); out["concurrent_30_guesses_401s"] = st.count(401)
        # hostile text
        def raw(p, b):
            try:
                return h.post(p, content=b, headers={"content-type":"application/json"}).status_code
            except Exception as e:
                return type(e).__name__
        out["register_surrogate_password"] = raw("/api/register", b'{"name": "ann", "password": "pw\\ud800xyzzy"}')
        out["login_surrogate_name"] = raw("/api/login", b'{"name": "a\\ud800nn", "password": "secret-pw"}')
        try:
            h.post("/api/register", json={"name": "owner1", "password": "secret-pw"})
        except Exception:
            h = httpx.Client(base_url=url, timeout=60, limits=httpx.Limits(max_keepalive_connections=0))
            h.post("/api/register", json={"name": "owner1", "password": "secret-pw"})
        out["room_surrogate_name"] = raw("/api/rooms", b'{"name": "t\\ud800", "preset": "official"}')
        h.cookies.clear()
        out["text_plain_json"] = h.post("/api/guest", content=b"{}", headers={"content-type": "text/plain"}).status_code
        out["csp_header"] = "content-security-policy" in h.get("/").headers
        from websockets.sync.client import connect
        try:
            with connect(url.replace("http", "ws") + "/ws/rooms/x", origin="https://evil.example"):
                out["cross_origin_ws"] = "accepted"
        except Exception as e:
            out["cross_origin_ws"] = type(e).__name__
    finally:
        proc.terminate(); proc.wait()
    out["tracebacks_logged"] = sum("Traceback" in l for l in lines)

    return out


def main() -> None:
    guandan = sys.argv[1:] or [sys.executable, "-c", "from guandan.cli import main; main()"]
    print(json.dumps(run(guandan)))


if __name__ == "__main__":
    main()
