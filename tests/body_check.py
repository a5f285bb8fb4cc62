"""Memory of ``guandan serve`` under large uploads (issue 11: four 200 MB bodies took it to 1.19 GB).

Starts the server (a separate process), reads its resident memory (``/proc/PID/status`` VmRSS),
sends ``--uploads`` bodies of ``--mb`` MB at once to ``/api/rooms`` and ``/api/register`` (half
with a Content-Length, half chunked), then reads the memory again and reports both, the peak
(VmHWM) and the answers::

    python tests/body_check.py                                      # this checkout
    python tests/body_check.py --guandan /other/venv/bin/guandan    # another version

Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
from typing import Any

from flood_check import _start


def _rss_mb(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
    return out


def _upload(port: int, path: str, size: int, chunked: bool, answers: list[str]) -> None:
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {size}\r\n\r\n"
    block = b" " * (1 << 20)
    try:
        s.sendall(head.encode())
        sent = 0
        while sent < size:
            s.sendall((f"{len(block):x}\r\n".encode() + block + b"\r\n") if chunked else block)
            sent += len(block)
        if chunked:
            s.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the server answered and closed: it stopped reading
    try:
        answers.append(s.recv(200).split(b"\r\n", 1)[0].decode())
    except OSError as e:
        answers.append(f"no answer ({type(e).__name__})")
    s.close()


def run(guandan: list[str] | None = None, mb: int = 200, uploads: int = 4) -> dict[str, Any]:
    """Run the check once and return ``{rss_before, rss_after, answers, seconds}`` (MB)."""
    guandan = guandan or [sys.executable, "-c", "from guandan.cli import main; main()"]
    tmp = tempfile.mkdtemp(prefix="body-")
    proc, url, _ = _start(guandan, f"sqlite:///{os.path.join(tmp, 'b.db')}", 0.0)
    port = int(url.rsplit(":", 1)[1])
    try:
        time.sleep(1.0)
        before = _rss_mb(proc.pid)
        answers: list[str] = []
        threads = [threading.Thread(target=_upload, args=(port, ("/api/rooms", "/api/register")[i % 2],
                                                          mb << 20, i >= uploads // 2, answers))
                   for i in range(uploads)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after = _rss_mb(proc.pid)
        return {"rss_before_mb": before.get("VmRSS"), "rss_after_mb": after.get("VmRSS"),
                "peak_rss_mb": after.get("VmHWM"), "answers": answers,
                "seconds": round(time.monotonic() - t0, 2)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--guandan", help="the guandan command to test (default: this Python's package)")
    p.add_argument("--mb", type=int, default=200)
    p.add_argument("--uploads", type=int, default=4)
    a = p.parse_args()
    print(json.dumps(run([a.guandan] if a.guandan else None, a.mb, a.uploads), indent=1))


if __name__ == "__main__":
    main()
