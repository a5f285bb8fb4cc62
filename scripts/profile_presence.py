"""Profile the server while 1,000 lobbies hold the friends stream beside a table load test (issue 25,
"Speed and scale"; docs/friends.md "Pushed instead of polled").

Steps: a fresh SQLite database with ``--players`` accounts and their friends
(``bench_presence.seed_database``); ``guandan serve`` on it; the pages of ``bench_presence.py
--path /api/friends/stream`` open their streams over 20 s; ``guandan loadtest -n TABLES --deals
DEALS``; ``--after`` seconds into it, ``py-spy record`` samples the server for ``--seconds``
seconds and writes collapsed stacks (``-f raw``) to ``OUT``. Then prints the load test's report,
the pages' figures, and the share of the samples spent on presence (stacks through
``friends_push``, ``process_calls``, ``presence.py`` or a streaming response).

Needs ``py-spy`` (``python3 -m venv /tmp/spy && /tmp/spy/bin/pip install py-spy``; ``--py-spy``
names the program). Usage: ``PYTHONPATH=src python scripts/profile_presence.py OUT [--players 1000]
[--tables 200] [--deals 5] [--after 20] [--seconds 50] [--py-spy /tmp/spy/bin/py-spy]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_presence  # noqa: E402

#: what marks a sampled stack as presence work
PRESENCE_FRAMES = ("friends_push", "process_calls", "presence.py", "StreamingResponse")


def presence_share(raw: str) -> tuple[int, int]:
    """``(samples, presence samples)`` of py-spy's collapsed stacks (``stack count`` per line)."""
    total = mine = 0
    for line in raw.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        if any(f in stack for f in PRESENCE_FRAMES):
            mine += int(count)
    return total, mine


def main() -> None:
    from guandan.server.loadtest import spawn_server

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="file for py-spy's collapsed stacks")
    ap.add_argument("--players", type=int, default=1000)
    ap.add_argument("--friends", type=int, default=6)
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--deals", type=int, default=5)
    ap.add_argument("--after", type=float, default=20.0, help="seconds into the load test before sampling")
    ap.add_argument("--seconds", type=int, default=50, help="seconds sampled")
    ap.add_argument("--py-spy", default="py-spy", help="the py-spy program")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="guandan-profile-")
    db = f"sqlite:///{tmp}/presence.db"
    tokens_file = os.path.join(tmp, "tokens.json")
    Path(tokens_file).write_text(json.dumps(bench_presence.seed_database(db, args.players, args.friends)))
    with spawn_server(0.0, 90.0, db_url=db) as url:
        found = subprocess.run(["pgrep", "-f", "--", f"serve .*{tmp}"], capture_output=True, text=True).stdout.split()
        if not found:
            raise SystemExit("the server's process was not found")
        stop, out = os.path.join(tmp, "stop"), os.path.join(tmp, "pages.json")
        pages = subprocess.Popen([sys.executable, bench_presence.__file__, "--poller", url, tokens_file,
                                  str(bench_presence.POLL_S), stop, out, bench_presence.STREAM_PATH])
        time.sleep(bench_presence.POLL_S + 2)  # every page has opened its stream
        load = subprocess.Popen([sys.executable, "-c", "from guandan.cli import main; main()", "loadtest", "--url", url,
                                 "-n", str(args.tables), "--deals", str(args.deals), "--seed", "0", "--json",
                                 "--no-replay-check"], stdout=subprocess.PIPE, text=True)
        time.sleep(args.after)
        subprocess.run([args.py_spy, "record", "-p", found[0], "-r", "100", "-d", str(args.seconds), "-f", "raw",
                        "-o", args.out, "--nonblocking"], capture_output=True, check=True)
        report = load.communicate()[0]
        Path(stop).touch()
        pages.wait(timeout=bench_presence.POLL_S + 60)
    total, mine = presence_share(Path(args.out).read_text(errors="replace"))
    print(report.strip().splitlines()[-1] if report.strip() else "no load test report")
    print(Path(out).read_text())
    print(json.dumps({"samples": total, "presence_samples": mine,
                      "presence_share": round(mine / total, 4) if total else None}))


if __name__ == "__main__":
    main()
