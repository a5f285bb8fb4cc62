"""Benchmark: do the presence updates of 1,000 online players raise the table latency p99 of ``guandan loadtest``?
(issue 25, "Speed and scale").

What an online player's page costs the server for presence (docs/friends.md): the friends panel polls
``GET /api/friends`` every :data:`POLL_S` seconds (``friends.js`` ``POLL_MS``) while the tab is visible,
and an authenticated request marks the account seen at most every 30 s (``friends.TOUCH_EVERY_S``:
an ``UPDATE`` of ``users.last_seen_at``). This script puts that load beside a table load test:

1. A new SQLite database gets ``--players`` registered accounts (one password hash shared by all: the
   bench measures presence, not registration), a login session each, and ``--friends`` friends each
   (a ring: account i is a friend of i±1 … i±friends/2), through the server's own store functions.
2. ``guandan serve`` runs on that database (``guandan.server.loadtest.spawn_server``: one process,
   loopback, the load test's flags).
3. ``guandan loadtest -n TABLES --url URL --seed 0 --json`` runs alone (``baseline``), then while a
   separate process plays the ``--players`` pages (``presence``): each account polls ``GET /api/friends``
   with its session every ``--poll-s`` seconds, the first poll at a random point of the first period, so
   the requests come spread out as from real pages. The two alternate ``--repeats`` times, on one server.

Reported per run: the load test's ``actions_per_s``, ``p50_ms``, ``p99_ms``, ``max_ms``; for presence
runs, the polls answered (by status) and their median / p99 time. The machine's load average is
printed before and after. The poller runs on the same machine, so its own CPU is in the presence
figures (a pessimistic measurement on a small machine).

``--path /healthz`` makes the pages poll the health check instead (a control: it costs the server
almost nothing, so the gap between such a run and its baseline is the poller's own CPU and the HTTP
traffic on this machine, which no change to presence can remove).

``--control`` adds that control to every repeat (baseline, presence, control, in an order rotated
from one repeat to the next), and the summary gives, per repeat, the presence runs' p99 minus the
control runs': what presence itself adds, the poller's share taken out.

``--interleave W`` measures the two in one run instead, so that a drift of the machine between runs
(on the 2-core machine here the baseline moved between 788 and 1,229 actions/s within an hour) cannot
fall on one kind more than on the other: one poller runs throughout, and its pages poll
``/api/friends`` in even windows of ``W`` seconds and ``/healthz`` in odd ones (windows counted from
one moment on the machine's monotonic clock, which the load test's ``--samples`` file shares). Each
load test's samples are split by the window they arrived in, leaving out the first ``--margin``
seconds of a window (default :data:`MARGIN_S`: polls of the other kind still in flight; 6 s also
leaves out the presence refreshes that polls of the previous window noted, which the server writes
every 5 s). Each load test's first ``--skip-start`` seconds (default :data:`START_S`: its start
burst) are compared apart, by the kind of window they fell in, and the bench waits before each load
test after the first so that the starts alternate between the kinds from the first one's on
(:func:`start_wait`). Reported per load test: each kind's
p99 over its windows, and, per pair of windows (presence, then control), the presence window's p99
minus the control window's, with how many pairs are above zero.

``--path /api/friends/stream`` measures what the lobby does since 2026-12-07: each page opens the friends
stream (server-sent events, ``server/friends_push.py``) at a random point of the first ``--poll-s``
seconds and listens until the run ends; the server reads the panels of the open streams in batches
and sends only changes. Runs alternate baseline and presence (``--repeats``; not with
``--interleave``). Every sequential run also reports ``steady_p99_ms``, the p99 without its first
``--skip-start`` seconds (the start burst), and the summary its rise (``steady_presence_rise_ms``).

Usage: ``PYTHONPATH=src python scripts/bench_presence.py [--players 1000] [--friends 6] [--tables 200]
[--deals 1] [--poll-s 20] [--repeats 2] [--control | --interleave W [--margin 2] [--skip-start 5]]
[--path /api/friends]
[--json FILE]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: the friends panel's polling period (seconds): ``POLL_MS`` of ``static/js/friends.js``
POLL_S = 20.0

#: with ``--interleave``: default seconds at the start of each window whose samples are left out (a
#: poll of the previous window's kind may still be answered then; their p99 is well under 1 s)
MARGIN_S = 2.0

#: with ``--interleave``: a pair of windows is compared only when both hold this many samples (the
#: last window of a load test may hold a few dozen, whose p99 is their slowest one)
MIN_PAIR_SAMPLES = 1000

#: with ``--interleave``: default seconds at the start of each load test whose samples are compared
#: apart (``--skip-start``). Every load test starts with a burst (every table's first action at
#: once: p99 43-55 ms over its first 5 s, 7-15 ms after), which would otherwise count for whichever
#: kind of window it falls in. On 2026-12-07 the runs' length locked onto the windows' period and
#: the bursts of 6 load tests out of 6 fell in presence windows.
START_S = 5.0


def seed_database(db_url: str, players: int, friends: int) -> list[str]:
    """Migrate ``db_url`` and create the accounts, their sessions and friendships (step 1).
    Returns the session tokens (cookie values), one per account."""
    from sqlalchemy.orm import sessionmaker

    from guandan.server import friends_store
    from guandan.server.auth import create_session, hash_password, name_key
    from guandan.server.db import make_engine, migrate
    from guandan.server.models import User

    migrate(db_url)
    engine = make_engine(db_url)
    factory = sessionmaker(engine, expire_on_commit=False)
    shared_hash = hash_password("presence-bench-Password-1")
    tokens: list[str] = []
    users: list[Any] = []
    with factory() as db:
        for i in range(players):
            name = f"pres{i:05d}"
            u = User(name=name, name_key=name_key(name), password_hash=shared_hash, is_guest=False)
            db.add(u)
            users.append(u)
        db.flush()
        for u in users:
            tokens.append(create_session(db, u).cookie_token)  # type: ignore[attr-defined]
        db.commit()
        half = max(1, friends // 2)
        for i, u in enumerate(users):
            for k in range(1, half + 1):
                other = users[(i + k) % players]
                if other.id == u.id:
                    continue
                friends_store.send_request(db, u, other.name)
                friends_store.answer_request(db, other, u.name, True)
        db.commit()
    engine.dispose()
    return tokens


def settle_s(path: str, poll_s: float) -> float:
    """Seconds a presence run's pages are online before its load test starts (``--settle``'s default).

    Polling pages (``/api/friends``, ``/healthz``) are at their steady rate once each has polled once:
    ``poll_s``. Streams (:data:`STREAM_PATH`) come online at random in the first ``poll_s``; each marks
    its account seen at its first sweep, and the friends' panels show it at their next check, up to
    ``poll_s`` later (``friends_push.PERIOD_S``), so only after ``2 * poll_s`` plus a few sweeps is
    nothing left of 1,000 accounts coming online at once (until 2026-12-08 the bench waited ``poll_s``
    and that burst fell in the load test).
    """
    return 2 * poll_s + 5.0 if path == STREAM_PATH else poll_s


def run_loadtest(url: str, tables: int, deals: int = 1, samples: str | None = None) -> dict[str, Any]:
    """One ``guandan loadtest`` of ``tables`` tables and ``deals`` deals against ``url``; its JSON report
    (with ``samples``: its latency samples also written to that CSV file, ``--samples``)."""
    extra = [] if samples is None else ["--samples", samples]
    out = subprocess.run([sys.executable, "-c", "from guandan.cli import main; main()", "loadtest", "-n", str(tables),
                          "--deals", str(deals), "--url", url, "--seed", "0", "--json", *extra],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def read_samples(path: str) -> list[tuple[float, float]]:
    """The ``(arrived, latency_ms)`` pairs of a ``guandan loadtest --samples`` file."""
    lines = Path(path).read_text().splitlines()[1:]
    return [(float(a), float(b)) for a, b in (ln.split(",") for ln in lines)]


#: What the pages poll in each kind of run (``baseline``: no pages).
ARM_PATHS = {"presence": "/api/friends", "control": "/healthz"}


def arm_order(arms: list[str], repeat: int) -> list[str]:
    """The runs of repeat ``repeat`` (0-based): ``arms`` rotated by ``repeat``, so that no kind of run
    always follows the same other kind (a slow drift of the machine then falls on every kind alike)."""
    k = repeat % len(arms)
    return arms[k:] + arms[:k]


def summarise(runs: list[dict[str, Any]], key: str = "p99_ms", prefix: str = "") -> dict[str, Any]:
    """The rise of each polling kind's p99 over the baseline of the same repeat (ms), and, with a
    control, the presence runs' p99 minus the control runs' of the same repeat: per repeat, mean,
    and how many repeats are above zero. ``key``: the runs' figure compared (``p99_ms``: the whole
    load test; ``steady_p99_ms``: without its first ``--skip-start`` seconds); ``prefix`` goes
    before each name of the result."""
    by: dict[int, dict[str, float]] = {}
    for r in runs:
        if r.get(key) is not None:
            by.setdefault(r["repeat"], {})[r["run"]] = r[key]
    out: dict[str, Any] = {}
    for name, (a, b) in {f"{prefix}presence_rise_ms": ("presence", "baseline"),
                         f"{prefix}control_rise_ms": ("control", "baseline"),
                         f"{prefix}presence_minus_control_ms": ("presence", "control")}.items():
        diffs = [round(v[a] - v[b], 2) for _, v in sorted(by.items()) if a in v and b in v]
        if diffs:
            out[name] = {"each": diffs, "mean": round(sum(diffs) / len(diffs), 2),
                         "above_zero": sum(d > 0 for d in diffs), "of": len(diffs)}
    return out


def steady_p99(samples: list[tuple[float, float]], skip_s: float) -> float | None:
    """The p99 (ms) of a load test's latency samples ``(arrived, ms)`` without those of its first
    ``skip_s`` seconds (its start burst: :data:`START_S`); ``None`` when none is left."""
    from guandan.server.loadtest import percentile

    if not samples:
        return None
    first = min(at for at, _ in samples)
    p = percentile([ms for at, ms in samples if at - first >= skip_s], 0.99)
    return None if p is None else round(p, 2)


def alternating(spec: str) -> tuple[float, float] | None:
    """``"alternate:T0:W"`` (the poller's path with ``--interleave``) as ``(T0, W)``, else ``None``."""
    if not spec.startswith("alternate:"):
        return None
    _, t0, w = spec.split(":")
    return float(t0), float(w)


def window_of(at: float, t0: float, window_s: float) -> int:
    """The window (0, 1, ...) that the monotonic time ``at`` falls in; even windows poll presence."""
    return int((at - t0) // window_s)


def interleaved_p99(samples: list[tuple[float, float]], t0: float, window_s: float,
                    margin_s: float = MARGIN_S, min_pair: int = MIN_PAIR_SAMPLES,
                    start_s: float = 0.0) -> dict[str, Any]:
    """Split ``(arrived, latency_ms)`` samples by window (``--interleave``) and compare the kinds.

    Returns:
        ``{"presence_p99_ms", "control_p99_ms"}`` over all their windows' samples (the first
        ``margin_s`` of each window left out), and ``"pairs"``: per pair of windows (``2j``: presence,
        ``2j + 1``: control) with ``min_pair`` samples or more in both, the presence window's p99 minus the control's
        (``each``, ``mean``, ``above_zero``, ``of``); ``"samples"``: how many were counted per kind.
        With ``start_s`` > 0 the samples of the load test's first ``start_s`` seconds (from its
        first sample on) are not in the windows but in ``"start"``: ``{"kind"`` (the kind of window
        the first sample fell in), ``"p99_ms"``, ``"samples"}``.
    """
    from guandan.server.loadtest import percentile

    by_window: dict[int, list[float]] = {}
    first = min((at for at, _ in samples), default=0.0)
    burst = [ms for at, ms in samples if at - first < start_s]
    for at, ms in samples:
        if at - first < start_s:
            continue
        k = window_of(at, t0, window_s)
        if k >= 0 and at - (t0 + k * window_s) >= margin_s:
            by_window.setdefault(k, []).append(ms)
    kinds = {"presence": [ms for k, v in by_window.items() if k % 2 == 0 for ms in v],
             "control": [ms for k, v in by_window.items() if k % 2 == 1 for ms in v]}
    diffs = []
    for k in sorted(by_window):
        if k % 2 == 0 and min(len(by_window[k]), len(by_window.get(k + 1, ()))) >= min_pair:
            a, b = percentile(by_window[k], 0.99), percentile(by_window[k + 1], 0.99)
            assert a is not None and b is not None
            diffs.append(round(a - b, 2))
    out: dict[str, Any] = {f"{kind}_p99_ms": (round(v, 2) if (v := percentile(ms, 0.99)) is not None else None)
                           for kind, ms in kinds.items()}
    out["samples"] = {kind: len(ms) for kind, ms in kinds.items()}
    out["pairs"] = {"each": diffs, "mean": round(sum(diffs) / len(diffs), 2) if diffs else None,
                    "above_zero": sum(d > 0 for d in diffs), "of": len(diffs)}
    if start_s > 0 and samples:
        p = percentile(burst, 0.99)
        out["start"] = {"kind": "presence" if window_of(first, t0, window_s) % 2 == 0 else "control",
                        "p99_ms": None if p is None else round(p, 2), "samples": len(burst)}
    return out


#: ``--path`` of the lobbies that listen to the friends stream instead of polling
STREAM_PATH = "/api/friends/stream"


async def _listen(url: str, tokens: list[str], poll_s: float, stop: Path, seed: int) -> dict[str, Any]:
    """``--path /api/friends/stream``: each page opens the friends stream at a random point of the first
    ``poll_s`` seconds (as pages open over time) and reads it until ``stop`` exists. Returns the streams
    opened (by status), the panels and keepalives received, and the time to the first panel (ms)."""
    import httpx

    from guandan.server.loadtest import percentile

    rng = random.Random(seed)
    statuses: dict[str, int] = {}
    counts = {"panels": 0, "keepalives": 0, "ended": 0}
    first: list[float] = []
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30, read=None), limits=limits) as http:

        async def page(token: str) -> None:
            await asyncio.sleep(rng.uniform(0, poll_s))
            t = time.monotonic()
            try:
                async with http.stream("GET", STREAM_PATH, headers={"cookie": f"gd_session={token}"}) as r:
                    statuses[str(r.status_code)] = statuses.get(str(r.status_code), 0) + 1
                    got = False
                    async for line in r.aiter_lines():
                        if line.startswith("data: "):
                            if not got:
                                first.append((time.monotonic() - t) * 1000.0)
                                got = True
                            counts["panels"] += 1
                        elif line.startswith(":"):
                            counts["keepalives"] += 1
                    counts["ended"] += 1
            except httpx.HTTPError as e:
                statuses[type(e).__name__] = statuses.get(type(e).__name__, 0) + 1

        tasks = [asyncio.ensure_future(page(tok)) for tok in tokens]
        while not stop.exists():
            await asyncio.sleep(0.5)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"streams": statuses, **counts, "first_panel_p50_ms": round(percentile(first, 0.5) or 0, 2),
            "first_panel_p99_ms": round(percentile(first, 0.99) or 0, 2)}


async def _poll(url: str, tokens: list[str], poll_s: float, stop: Path, seed: int,
                path: str = "/api/friends") -> dict[str, Any]:
    import httpx

    if path == STREAM_PATH:
        return await _listen(url, tokens, poll_s, stop, seed)

    rng = random.Random(seed)
    statuses: dict[str, int] = {}
    times: list[float] = []
    alternate = alternating(path)
    by_path: dict[str, list[float]] = {}
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as http:

        async def page(token: str) -> None:
            await asyncio.sleep(rng.uniform(0, poll_s))
            while not stop.exists():
                t = time.monotonic()
                where = path if alternate is None else \
                    ARM_PATHS["presence" if window_of(t, *alternate) % 2 == 0 else "control"]
                try:
                    r = await http.get(where, headers={"cookie": f"gd_session={token}"})
                    key = str(r.status_code)
                except httpx.HTTPError as e:
                    key = type(e).__name__
                times.append((time.monotonic() - t) * 1000.0)
                by_path.setdefault(where, []).append(times[-1])
                statuses[key] = statuses.get(key, 0) + 1
                await asyncio.sleep(max(0.0, poll_s - (time.monotonic() - t)))

        await asyncio.gather(*(page(tok) for tok in tokens))
    times.sort()
    pick = (lambda q: round(times[min(len(times) - 1, int(q * len(times)))], 2)) if times else (lambda q: None)
    out: dict[str, Any] = {"polls": len(times), "statuses": statuses, "p50_ms": pick(0.5), "p99_ms": pick(0.99)}
    if alternate is not None:
        from guandan.server.loadtest import percentile

        out["by_path"] = {where: {"polls": len(v), "p50_ms": round(percentile(v, 0.5) or 0, 2),
                                  "p99_ms": round(percentile(v, 0.99) or 0, 2)} for where, v in by_path.items()}
    return out


def poller_main(url: str, tokens_file: str, poll_s: float, stop: str, out: str, path: str = "/api/friends") -> None:
    """The presence client process: poll ``path`` until ``stop`` exists, then write the figures to ``out``."""
    tokens = json.loads(Path(tokens_file).read_text())
    figures = asyncio.run(_poll(url, tokens, poll_s, Path(stop), seed=1, path=path))
    Path(out).write_text(json.dumps(figures))


def start_wait(now: float, t0: float, window_s: float, setup_s: float, kind: int) -> float:
    """Seconds to wait before launching a load test so that its first sample, ``setup_s`` after the
    launch (the previous load test's setup time), comes in the middle of a window of ``kind`` (0:
    presence, 1: control). The bench alternates the kind from one load test to the next, so that
    the start bursts fall on both kinds alike (:data:`START_S`). Less than ``2 * window_s``."""
    target = (kind * window_s + window_s / 2 - setup_s) % (2 * window_s)  # launch phase wanted
    return (target - (now - t0)) % (2 * window_s)


def interleave(url: str, tokens_file: str, tmp: str, args: Any) -> list[dict[str, Any]]:
    """``--interleave``: one alternating poller, ``args.repeats`` load tests with their samples; a
    row per load test (its report's figures and :func:`interleaved_p99`)."""
    stop, out = os.path.join(tmp, "stop-interleave"), os.path.join(tmp, "poll-interleave.json")
    t0 = time.monotonic()
    poller = subprocess.Popen([sys.executable, __file__, "--poller", url, tokens_file, str(args.poll_s), stop, out,
                               f"alternate:{t0!r}:{args.interleave!r}"])
    runs: list[dict[str, Any]] = []
    setup_s: float | None = None
    kind0 = 0  # the kind of window the first load test (not aligned: its setup time is not known) began in
    try:
        time.sleep(args.poll_s)  # every page has polled once
        for k in range(args.repeats):
            if setup_s is not None:
                time.sleep(start_wait(time.monotonic(), t0, args.interleave, setup_s, (kind0 + k) % 2))
            samples = os.path.join(tmp, f"samples{k}.csv")
            launched = time.monotonic()
            report = run_loadtest(url, args.tables, args.deals, samples)
            got = read_samples(samples)
            if got:
                setup_s = min(at for at, _ in got) - launched
                if k == 0:
                    kind0 = window_of(min(at for at, _ in got), t0, args.interleave) % 2
            row: dict[str, Any] = {"repeat": k, "run": "interleaved", **{
                key: report[key] for key in ("actions_per_s", "p50_ms", "p99_ms", "max_ms", "n_errors")},
                **interleaved_p99(got, t0, args.interleave, args.margin, start_s=args.skip_start)}
            runs.append(row)
            print(json.dumps(row), flush=True)
    finally:
        Path(stop).touch()
        poller.wait(timeout=args.poll_s + 60)
    polls = json.loads(Path(out).read_text())
    print(json.dumps({"polls": polls}), flush=True)
    if runs:
        runs[-1]["polls"] = polls
    return runs


def summarise_interleaved(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Over the load tests of ``--interleave``: each one's presence p99 minus control p99 (pooled
    windows), and all window pairs together."""
    pooled = [round(r["presence_p99_ms"] - r["control_p99_ms"], 2) for r in runs
              if r.get("presence_p99_ms") is not None and r.get("control_p99_ms") is not None]
    pairs = [d for r in runs for d in r["pairs"]["each"]]
    starts: dict[str, list[float]] = {"presence": [], "control": []}
    for r in runs:
        if r.get("start") and r["start"]["p99_ms"] is not None:
            starts[r["start"]["kind"]].append(r["start"]["p99_ms"])
    return {"start_p99_ms": starts, "presence_minus_control_ms": {"each": pooled, "mean": round(sum(pooled) / len(pooled), 2) if pooled else None,
                                          "above_zero": sum(d > 0 for d in pooled), "of": len(pooled)},
            "window_pairs": {"mean": round(sum(pairs) / len(pairs), 2) if pairs else None,
                             "above_zero": sum(d > 0 for d in pairs), "of": len(pairs)}}


def main() -> None:
    from guandan.server.loadtest import spawn_server

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1000, help="online players (accounts polling presence)")
    ap.add_argument("--friends", type=int, default=6, help="friends per account (even)")
    ap.add_argument("--tables", type=int, default=200, help="tables of each load test")
    ap.add_argument("--poll-s", type=float, default=POLL_S, help="seconds between two polls of one page (20)")
    ap.add_argument("--repeats", type=int, default=2, help="repeats of the runs (baseline, presence[, control])")
    ap.add_argument("--deals", type=int, default=1, help="deals per table of each load test (1)")
    ap.add_argument("--control", action="store_true",
                    help="in every repeat also a control run: the same pages polling /healthz, which costs the "
                         "server almost nothing (the poller's own CPU and HTTP traffic); the summary then gives "
                         "presence minus control")
    ap.add_argument("--interleave", type=float, default=None, metavar="W",
                    help="one poller throughout, presence in even windows of W seconds and /healthz in odd ones; "
                         "each of --repeats load tests compared window by window (module docstring)")
    ap.add_argument("--margin", type=float, default=MARGIN_S,
                    help=f"with --interleave: seconds left out at the start of each window ({MARGIN_S:g})")
    ap.add_argument("--skip-start", type=float, default=START_S,
                    help=f"seconds at each load test's start left out of its steady p99 (steady_p99_ms); with "
                         f"--interleave compared apart, by the kind of window they fell in ({START_S:g}; 0: counted)")
    ap.add_argument("--friends-processes", type=int, default=None,
                    help="the server's --friends-processes (default: guandan serve's, 2; 0: the panel in "
                         "threads of the server process, as before 2026-12-07)")
    ap.add_argument("--settle", type=float, default=None, metavar="S",
                    help="seconds the pages are online before each presence run's load test (default: --poll-s for "
                         f"polls; 2 x --poll-s + 5 for {STREAM_PATH}, see settle_s)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--path", default="/api/friends",
                    help="what the pages poll (a control: /healthz costs the server almost nothing, so "
                         f"its runs measure the poller and the HTTP traffic alone); {STREAM_PATH}: each page "
                         "opens the friends stream once and listens, as the lobby does since 2026-12-07")
    ap.add_argument("--poller", nargs=6, metavar=("URL", "TOKENS", "POLL_S", "STOP", "OUT", "PATH"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.poller:
        url, tokens_file, poll_s, stop, out, path = args.poller
        poller_main(url, tokens_file, float(poll_s), stop, out, path)
        return
    if not args.path.startswith("/"):
        raise SystemExit("--path starts with /")
    if args.players < 2 or args.tables < 1 or args.repeats < 1 or args.poll_s <= 0 or args.deals < 1:
        raise SystemExit("--players >= 2, --tables >= 1, --repeats >= 1, --deals >= 1 and --poll-s > 0")
    if args.interleave is not None and (args.control or args.margin < 0 or args.interleave <= 2 * args.margin
                                        or args.skip_start < 0 or args.path == STREAM_PATH):
        raise SystemExit("--interleave W takes W > 2 x --margin (>= 0) and --skip-start >= 0, without --control "
                         f"and without --path {STREAM_PATH}")
    if args.skip_start < 0:
        raise SystemExit("--skip-start >= 0")
    arms = ["baseline", "presence"] + (["control"] if args.control else [])
    settle = settle_s(args.path, args.poll_s) if args.settle is None else args.settle
    if settle < 0:
        raise SystemExit("--settle >= 0")
    paths = {**ARM_PATHS, "presence": args.path}
    tmp = tempfile.TemporaryDirectory(prefix="guandan-presence-")
    db_url = f"sqlite:///{os.path.join(tmp.name, 'presence.db')}"
    print(f"load average before: {os.getloadavg()}", flush=True)
    t0 = time.monotonic()
    tokens = seed_database(db_url, args.players, args.friends)
    tokens_file = os.path.join(tmp.name, "tokens.json")
    Path(tokens_file).write_text(json.dumps(tokens))
    print(f"{args.players} accounts, {args.friends} friends each: {time.monotonic() - t0:.1f} s", flush=True)
    runs: list[dict[str, Any]] = []
    extra = [] if args.friends_processes is None else ["--friends-processes", str(args.friends_processes)]
    with spawn_server(0.0, 90.0, extra_args=extra, db_url=db_url) as url:  # the load test's own server, on this database
        if args.interleave is not None:
            runs = interleave(url, tokens_file, tmp.name, args)
        for k in range(args.repeats if args.interleave is None else 0):
            for kind in arm_order(arms, k):
                poller = None
                stop = os.path.join(tmp.name, f"stop{k}{kind}")
                out = os.path.join(tmp.name, f"poll{k}{kind}.json")
                if kind != "baseline":
                    poller = subprocess.Popen([sys.executable, __file__, "--poller", url, tokens_file, str(args.poll_s),
                                               stop, out, paths[kind]])
                    time.sleep(settle)  # every page is online and its friends' panels say so: the steady load
                samples = os.path.join(tmp.name, f"samples{k}{kind}.csv")
                report = run_loadtest(url, args.tables, args.deals, samples)
                row: dict[str, Any] = {"repeat": k, "run": kind, "path": paths.get(kind), **{
                    key: report[key] for key in ("actions_per_s", "p50_ms", "p99_ms", "max_ms", "n_errors")},
                    "steady_p99_ms": steady_p99(read_samples(samples), args.skip_start)}
                if poller is not None:
                    Path(stop).touch()
                    poller.wait(timeout=args.poll_s + 60)
                    row["presence"] = json.loads(Path(out).read_text())
                runs.append(row)
                print(json.dumps(row), flush=True)
    print(f"load average after: {os.getloadavg()}", flush=True)
    summary = ({**summarise(runs), **summarise(runs, "steady_p99_ms", "steady_")} if args.interleave is None
               else summarise_interleaved(runs))
    print(json.dumps({"summary": summary}), flush=True)
    result = {"players": args.players, "friends": args.friends, "tables": args.tables, "deals": args.deals,
              "friends_processes": args.friends_processes, "interleave_s": args.interleave,
              "margin_s": args.margin if args.interleave is not None else None,
              "skip_start_s": args.skip_start if args.interleave is not None else None,
              "poll_s": args.poll_s, "path": args.path, "runs": runs, "summary": summary}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    tmp.cleanup()


if __name__ == "__main__":
    main()
