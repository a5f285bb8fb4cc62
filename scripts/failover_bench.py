"""Failover time of a pyguandan cluster (issue 10): owner killed -> first frame from the new owner.

Starts three ``guandan serve --redis`` processes on a fresh PostgreSQL database (the helpers of
``tests/cluster_helpers.py``; PostgreSQL at ``GUANDAN_TEST_POSTGRES_URL``, Redis at
``GUANDAN_TEST_REDIS_URL``, ports from ``GUANDAN_TEST_PORT_BASE``), seats four people at one table
(no bots, so nothing but the takeover sends a frame while the table waits), and then, ``--kills``
times: moves every socket off the owner's process, ``kill -9``s the owner, and times the first
frame any socket gets (the new owner's state, sent when it takes the table over); then starts a
fresh process in place of the dead one and plays a few actions so that the game moves on.

Usage::

    .venv/bin/python scripts/failover_bench.py --kills 20 [--lease 3] [--actions 4] [--json out.json]

Prints one line per kill and the median and worst time, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=20, help="owners to kill (default 20)")
    ap.add_argument("--lease", type=float, default=3.0, help="--lease of the processes, seconds (default 3)")
    ap.add_argument("--actions", type=int, default=4, help="actions played between two kills (default 4)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    if not 1 <= args.kills <= 1000 or not 0.3 <= args.lease <= 120 or not 0 <= args.actions <= 50:
        ap.error("--kills 1-1000, --lease 0.3-120, --actions 0-50")

    from cluster_helpers import Client, Node, api, fresh_database, guest, lease_holder, require_services

    try:
        require_services()
    except BaseException as e:  # pytest's skip/fail outcome: PostgreSQL or Redis missing
        print(f"error: {e}", file=sys.stderr)
        return 2
    times: list[float] = []
    with fresh_database() as db:
        tag = os.urandom(3).hex()
        serial = 0

        def new_node() -> Node:
            nonlocal serial
            serial += 1
            return Node(db, f"fo{tag}-{serial}", lease_s=args.lease).start()

        nodes = [new_node() for _ in range(3)]
        clients: dict[int, Client] = {}
        try:
            a, b, c = nodes
            tokens = {s: guest(a.url)[0] for s in range(4)}
            room = api(a.url, "/api/rooms", tokens[0], {"preset": "official", "name": "failover"})["room"]["id"]
            for s in range(4):
                api(a.url, f"/api/rooms/{room}/seat", tokens[s], {"seat": s})
            api(c.url, f"/api/rooms/{room}/start", tokens[0])
            where: dict[int, Node] = {}

            def place(avoid: str) -> None:
                others = [n for n in nodes if n.name != avoid and n.alive]
                for s in range(4):
                    if s in clients and where[s].name != avoid and where[s].alive:
                        continue
                    if s in clients:
                        clients[s].close()
                    where[s] = others[s % len(others)]
                    clients[s] = Client(where[s].url, room, tokens[s], f"seat {s}")
                    clients[s].wait(lambda f: f.get("type") == "state", 30)

            def play(n: int) -> None:
                for _ in range(n):
                    st = max((cl.last_state() for cl in clients.values()), key=lambda f: f["seq"])
                    if st["between"] is not None:
                        for cl in clients.values():
                            cl.send({"type": "ready"})
                        time.sleep(0.3)
                        continue
                    seat = st["view"]["to_act"]
                    stv = clients[seat].last_state()
                    if stv["seq"] != st["seq"] or not stv["view"]["legal_actions"]:
                        time.sleep(0.1)
                        continue
                    clients[seat].send({"type": "act", "action": stv["view"]["legal_actions"][0]})
                    clients[seat].wait(lambda f, q=st["seq"]: f.get("type") == "state" and f["seq"] > q
                                       or f.get("type") == "error", 30)

            for k in range(args.kills):
                owner = lease_holder(room)
                victim = next(n for n in nodes if n.name == owner)
                place(avoid=owner)
                time.sleep(0.3)
                seen = {s: len(cl.frames) for s, cl in clients.items()}
                t0 = time.monotonic()
                victim.kill()
                first = None
                while first is None and time.monotonic() - t0 < 60:
                    for s, cl in clients.items():
                        new = cl.frames[seen[s]:]
                        if new:
                            first = new[0]["_t"] if first is None else min(first, new[0]["_t"])
                    time.sleep(0.002)
                if first is None:
                    print(f"kill {k + 1}: no frame within 60 s", file=sys.stderr)
                    return 1
                dt = first - t0
                times.append(dt)
                print(f"kill {k + 1:2d}: owner {owner} killed; first frame from {lease_holder(room)} after "
                      f"{dt * 1000:.0f} ms", flush=True)
                nodes[nodes.index(victim)] = new_node()
                play(args.actions)
        finally:
            for cl in clients.values():
                cl.close()
            for n in nodes:
                n.stop()
    load = os.getloadavg()
    out = {"kills": len(times), "lease_s": args.lease, "median_ms": round(statistics.median(times) * 1000),
           "worst_ms": round(max(times) * 1000), "best_ms": round(min(times) * 1000),
           "loadavg": [round(x, 2) for x in load], "times_ms": [round(t * 1000) for t in times]}
    print(f"failover over {out['kills']} kills (lease {args.lease:g} s): median {out['median_ms']} ms, "
          f"worst {out['worst_ms']} ms, best {out['best_ms']} ms; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
