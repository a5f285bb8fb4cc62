"""``guandan loadtest`` against a local cluster (issue 10): N ``guandan serve --redis`` processes
(bot delay 0) on a fresh PostgreSQL database, the tables spread over all of them.

PostgreSQL at ``GUANDAN_TEST_POSTGRES_URL``, Redis at ``GUANDAN_TEST_REDIS_URL``, ports from
``GUANDAN_TEST_PORT_BASE`` (the helpers of ``tests/cluster_helpers.py``).

Usage::

    .venv/bin/python scripts/cluster_loadtest.py --processes 3 --tables 200 [--spectators 1] [--json]

Prints the load test's report and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=3, help="guandan serve processes (default 3)")
    ap.add_argument("--tables", type=int, default=200, help="concurrent tables (default 200)")
    ap.add_argument("--deals", type=int, default=1, help="deals per table (default 1)")
    ap.add_argument("--spectators", type=int, default=0, help="spectator sockets per table (default 0)")
    ap.add_argument("--timeout", type=float, default=300.0, help="deadline of the run, seconds (default 300)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    if not 1 <= args.processes <= 16:
        ap.error("--processes must be 1-16")

    from cluster_helpers import Node, fresh_database, require_services

    from guandan.server.loadtest import run_loadtest

    try:
        require_services()
    except BaseException as e:  # pytest's skip/fail outcome: PostgreSQL or Redis missing
        print(f"error: {e}", file=sys.stderr)
        return 2
    with fresh_database() as db:
        tag = os.urandom(3).hex()
        nodes = []
        try:
            for i in range(args.processes):
                nodes.append(Node(db, f"lt{tag}-{i}", lease_s=3.0, bot_delay_s=0.0,
                                  extra=("--log-level", "warning", "--max-ws-per-address", "0")).start())
            report = run_loadtest(args.tables, [n.url for n in nodes], deals=args.deals, timeout_s=args.timeout,
                                  spectators=args.spectators)
        finally:
            for n in nodes:
                n.stop()
    load = os.getloadavg()
    out = report.to_json()
    logged = [line for n in nodes for line in n.lines if "level=error" in line]
    out["server_errors"] = len(logged)
    kinds: dict[str, str] = {}
    for line in logged:  # one example of each kind: the message, and the end of its traceback
        msg = line.split("msg=", 1)[-1][:80]
        kinds.setdefault(msg.split(":")[0], line[:300] + " ... " + line[-400:])
    out["server_error_lines"] = list(kinds.values())[:6]
    out["processes"] = args.processes
    out["loadavg"] = [round(x, 2) for x in load]
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
