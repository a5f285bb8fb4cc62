"""An online tournament round on a cluster (issue 21 item 4, :mod:`guandan.server.tournament_cluster`).

Starts ``--nodes`` ``guandan serve --redis`` processes on a fresh PostgreSQL database (the helpers of
``tests/cluster_helpers.py``: PostgreSQL at ``GUANDAN_TEST_POSTGRES_URL``, Redis at
``GUANDAN_TEST_REDIS_URL``, ports from ``GUANDAN_TEST_PORT_BASE``), enters ``2 * --tables`` bot pairs
in a one-round online Swiss, pairs the round on the first process and waits until every table's
result is in the tournament. ``--kill-after S`` kills (``kill -9``) the process owning the most
playing tables S seconds into the round and starts a fresh one in its place.

Usage::

    .venv/bin/python scripts/bench_online_cluster.py --tables 50 [--nodes 2] [--bot-delay 0]
        [--time-limit 0] [--kill-after 0] [--timeout 600] [--json out.json]

Prints the time from pairing to the last result, the takes of the tables by each process (a takeover after a kill counts again), the results entered
(audit log entries: one per table when each is entered once) and every table still not entered at
the timeout (its row, its room's status, its lease holder and its stored record's length), with
the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _owners(nodes: list[Any], rooms: list[str]) -> dict[str, int]:
    """Takes of the round's tables by each process (its log's ``room R: owned by NODE`` lines; a takeover counts again)."""
    out: dict[str, int] = {}
    for n in nodes:
        out[n.name] = sum(1 for r in rooms for line in n.lines if f"room {r}: owned by {n.name}" in line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=50, help="tables of the round (default 50: 100 bot pairs)")
    ap.add_argument("--nodes", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--bot-delay", type=float, default=0.0, help="--bot-delay of the processes, s (default 0)")
    ap.add_argument("--time-limit", type=int, default=0, help="match clock, minutes (default 0: untimed)")
    ap.add_argument("--kill-after", type=float, default=0.0, help="kill -9 the busiest process after S s (0: no)")
    ap.add_argument("--timeout", type=float, default=600.0, help="give up after S s (default 600)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    if not 1 <= args.tables <= 500 or not 1 <= args.nodes <= 8:
        ap.error("--tables 1-500, --nodes 1-8")

    import httpx

    from cluster_helpers import Node, fresh_database, lease_holder, record_of, require_services

    try:
        require_services()
    except BaseException as e:  # pytest's skip/fail outcome: PostgreSQL or Redis missing
        print(f"error: {e}", file=sys.stderr)
        return 2
    with fresh_database() as db:
        tag = os.urandom(3).hex()
        nodes = [Node(db, f"oc{tag}-{i}", bot_delay_s=args.bot_delay).start() for i in range(args.nodes)]
        try:
            c = httpx.Client(base_url=nodes[0].url, timeout=120)
            assert c.post("/api/register", json={"name": "bench_orga", "password": "bench-pass-1"}).status_code == 200
            r = c.post("/api/tournaments", json={"venue": "online", "name": "Bench", "rounds": 1,
                                                 "time_limit": args.time_limit})
            tid, v = r.json()["tournament"]["id"], r.json()["tournament"]["version"]
            entries = [{"name": f"B{i}", "players": [f"b{i}x", f"b{i}y"], "bot": "normal", "seed": i}
                       for i in range(1, 2 * args.tables + 1)]
            r = c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries})
            assert r.status_code == 200, r.text
            v = c.get(f"/api/tournaments/{tid}").json()["version"]
            t0 = time.monotonic()
            r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": v})
            assert r.status_code == 200, r.text
            paired_s = time.monotonic() - t0
            killed = None
            done_s = None
            d: dict[str, Any] = {}
            while time.monotonic() - t0 < args.timeout:
                if args.kill_after and killed is None and time.monotonic() - t0 >= args.kill_after:
                    rooms = [x["room"] for x in c.get(f"/api/tournaments/{tid}").json()["online_tables"]
                             if x["state"] == "playing"]
                    held = [lease_holder(room) for room in rooms]
                    victim = max((n for n in nodes if n.alive), key=lambda n: held.count(n.name))
                    victim.kill()
                    if victim is nodes[0]:  # the organiser's requests go to a live process
                        c.base_url = httpx.URL(nodes[1].url)
                    killed = {"node": victim.name, "at_s": round(time.monotonic() - t0, 1),
                              "tables_held": held.count(victim.name)}
                    nodes.append(Node(db, f"oc{tag}-{len(nodes)}", bot_delay_s=args.bot_delay).start())
                d = c.get(f"/api/tournaments/{tid}").json()
                if d["rounds_list"][0]["complete"]:
                    done_s = time.monotonic() - t0
                    break
                time.sleep(0.5)
            d = c.get(f"/api/tournaments/{tid}").json()
            tables = d["online_tables"]
            log = c.get(f"/api/tournaments/{tid}/log").json()["log"]
            stuck = []
            for x in tables:
                if x["state"] == "playing":
                    rec = record_of(db, x["room"])
                    stuck.append({"table": x["table"], "room": x["room"], "lease": lease_holder(x["room"]),
                                  "record_lines": rec.count("\n"), "game_over": '"game_over"' in rec})
            out = {"tables": args.tables, "nodes": args.nodes, "bot_delay_s": args.bot_delay,
                   "time_limit_min": args.time_limit, "pair_and_open_s": round(paired_s, 2),
                   "finish_s": None if done_s is None else round(done_s, 1),
                   "entered": sum(1 for x in tables if x["state"] == "entered"),
                   "results_logged": sum(1 for e in log if e["operation"] == "result"),
                   "takes": _owners(nodes, [x["room"] for x in tables]), "killed": killed, "stuck": stuck,
                   "loadavg": [round(x, 2) for x in os.getloadavg()]}
            print(json.dumps(out, indent=1))
            if args.json is not None:
                args.json.write_text(json.dumps(out, indent=1) + "\n")
            return 0 if done_s is not None and out["results_logged"] == args.tables else 1
        finally:
            for n in nodes:
                n.stop()


if __name__ == "__main__":
    raise SystemExit(main())
