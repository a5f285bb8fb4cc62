"""Compare two bots on the deals that both ``match.py`` runs played from the same position.

Two runs of ``../shared/opponents/match.py`` with the same opponent, seed and game count deal
the same cards; the games drift apart once the two bots' results differ (levels, tribute, first
leader). A deal is *the same* in both runs when its seating (``ours-seats02`` or
``ours-seats13``), dealt hands, level, first leader and every tribute, return and anti-tribute
event before play (R42-R48) are identical, so both bots started its play phase from one
position. On those deals only the bots' own play differs, and the deals whose winner differs
measure the difference between the bots with far less noise than two overall win rates
(whose other deals were dealt from different game states).

Usage::

    .venv/bin/python scripts/paired_deals.py DIR_A DIR_B [--list]

``DIR_A``/``DIR_B`` are ``match.py --out`` folders (``DIR/ours-seats02/rec/game-*.jsonl`` and
``ours-seats13``). Prints one JSON line: the number of same deals, the deals won by our bot in
each run, ``a_only``/``b_only`` (won in one run and lost in the other) and a two-sided sign-test
p value over those; ``--list`` also prints each differing deal (run, record file, game, deal).
Exit status 2 when a folder holds no records.
"""

from __future__ import annotations

import glob
import json
import math
import os
import sys
from typing import Any

_PRE_PLAY = ("tribute_paid", "returns_revealed", "anti_tribute")


def deal_results(out: str) -> dict[tuple[Any, ...], tuple[bool, str, int, int]]:
    """``{deal key: (our team won, record path, game, deal)}`` for every finished deal of a run.

    Raises:
        SystemExit: (status 2) no record under ``out``.
    """
    res: dict[tuple[Any, ...], tuple[bool, str, int, int]] = {}
    found = False
    for run in ("ours-seats02", "ours-seats13"):
        team = 0 if run.endswith("02") else 1
        for path in sorted(glob.glob(os.path.join(out, run, "rec", "game-*.jsonl"))):
            found = True
            cur: dict[str, Any] | None = None
            pre: list[str] = []
            with open(path, encoding="utf-8") as f:
                for line in f:
                    ev = json.loads(line)
                    kind = ev.get("type")
                    if kind == "deal":
                        cur, pre = ev, []
                    elif cur is not None and kind in _PRE_PLAY:
                        pre.append(json.dumps(ev, sort_keys=True))
                    elif cur is not None and kind == "deal_end":
                        key = (run, json.dumps(cur["hands"]), cur["level"], json.dumps(cur.get("levels")),
                               cur.get("first_leader"), tuple(pre))
                        res[key] = (ev["winner_team"] == team, path, cur["game"], cur["deal"])
                        cur = None
    if not found:
        print(f"no records under {out}/ours-seats02/rec or {out}/ours-seats13/rec", file=sys.stderr)
        raise SystemExit(2)
    return res


def sign_test(a: int, b: int) -> float:
    """Two-sided exact sign test p value for ``a`` successes against ``b`` (1.0 when both 0)."""
    n = a + b
    if n == 0:
        return 1.0
    k = min(a, b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare(dir_a: str, dir_b: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The summary of :func:`main` and the differing deals ``(a result, b result)``."""
    a, b = deal_results(dir_a), deal_results(dir_b)
    same = [k for k in a if k in b]
    a_only = [k for k in same if a[k][0] and not b[k][0]]
    b_only = [k for k in same if b[k][0] and not a[k][0]]
    summary = {
        "a": dir_a, "b": dir_b, "same_deals": len(same),
        "a_wins": sum(a[k][0] for k in same), "b_wins": sum(b[k][0] for k in same),
        "a_only": len(a_only), "b_only": len(b_only),
        "sign_test_p": round(sign_test(len(a_only), len(b_only)), 4),
    }
    return summary, [(a[k], b[k]) for k in a_only + b_only]


def main(argv: list[str]) -> int:
    args = [x for x in argv if x != "--list"]
    if len(args) != 2 or any(x.startswith("-") for x in args):
        print("usage: paired_deals.py DIR_A DIR_B [--list]\n"
              "Compare our bot's results on the deals two match.py --out folders played from the same position.",
              file=sys.stderr)
        return 2
    summary, diff = compare(args[0], args[1])
    print(json.dumps(summary))
    if "--list" in argv:
        for ra, rb in diff:
            print(json.dumps({"a_won": ra[0], "record_a": ra[1], "record_b": rb[1], "game": ra[2], "deal": ra[3]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
