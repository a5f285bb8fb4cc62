"""Duplicate matches of our bots against protocol bots (``guandan compat arena``; issue 8 item 4).

Format
------
Two runs through the compat host (:class:`~guandan.compat.host.CompatHost`), both with the same
seed, so both get the same cards deal by deal (the host seeds game ``g`` of a run from the seed
and ``g``): run 1 seats our bot on seats 0 and 2 and the protocol bot on 1 and 3, run 2 swaps
them. Each team therefore holds each side's cards once, as long as the two runs' games follow the
same course; deals after the courses part are still fair deals, just no longer paired. Games are
whole games (2 until a team passes A) under the rule set given (default ``aicomp``, so figures
compare with published ones).

Our bot plays in-process as a protocol client (:func:`guandan.compat.client.join`: it sees only
what a protocol client sees); the protocol bot is started once per seat from a user-given command
line with ``{url}`` filled in (also ``{name}``, ``{seat}``, ``{workdir}``: a private working
directory per seat, created; the command runs in the current directory), each in its own process
group, and stopped when the run ends, fails or is interrupted.

Statistics
----------
A deal is won by the team of 头游 (first out, R35); a game by the team that passes the target
(R37); a game still running after ``max_deals`` deals counts half for each team. Rates carry 95 %
Wilson score intervals (:func:`guandan.evaluation.arena.wilson`, deals and games taken as independent
trials). "Levels per deal" is the mean number of levels each side gains per deal (R35, the
preset's ``upgrade``). Decision times are our bot's (wall clock of ``Agent.act``, seconds).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from guandan.agents.base import Agent

from guandan.agents.registry import make_agent
from guandan.core.rules import RuleSet
from guandan.core.views import SeatView
from guandan.evaluation.arena import wilson

from .client import join
from .host import CompatHost, RunSummary, serve

#: ``progress(games_done, games_total, deals_done)``
ArenaProgress = Callable[[int, int, int], None]


class ArenaError(RuntimeError):
    """A run could not be played (an opponent process did not start or connect, the port)."""


class TimedAgent:
    """Wraps an agent and records the wall time of each decision, seconds."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.times: list[float] = []

    def act(self, view: SeatView) -> Any:
        t0 = time.perf_counter()
        try:
            return self.agent.act(view)
        finally:
            self.times.append(time.perf_counter() - t0)


@dataclass
class RunOutcome:
    """One run of the duplicate pair: where our bot sat, and the host's summary."""

    our_seats: tuple[int, int]
    summary: RunSummary
    opponent_logs: list[str] = field(default_factory=list)
    opponent_status: list[int | None] = field(default_factory=list)


@dataclass
class ProtocolArenaResult:
    """Outcome of :func:`protocol_duplicate_match`, from our bot's side.

    Attributes:
        ours: our bot's name; ``opponent``: the opponent command line; ``preset``; ``seed``;
        ``games_per_run``.
        deals, deal_wins: deals played (both runs) and deals our team won (头游, R35);
        deal_win_rate and deal_ci (95 % Wilson, fractions in ``[0, 1]``).
        games, game_wins: games played and won (a draw counts 0.5); game_win_rate, game_ci; draws.
        levels_per_deal_ours, levels_per_deal_theirs: mean levels gained per deal (R35).
        decision_ms_mean, decision_ms_p99, decision_ms_max, decisions: our bot's decision times,
        milliseconds.
        fallback_ours, fallback_theirs: decisions the host's fallback bot made for our seats and
        for the opponent's (the latter should be 0: otherwise part of the opponent's results
        belong to the fallback bot); fallback_reasons: per run, per seat.
        mostly_fallback: ``"run:seat"`` labels of seats played mostly by the fallback bot.
        paired_deals, paired_same_hands: deals present in both runs (same game and deal number)
            and how many of them had the same hands per seat in both runs.
        seconds: wall time of both runs; runs: per-run detail; out_dir: records and opponent logs.
    """

    ours: str
    opponent: str
    preset: str
    seed: int
    games_per_run: int
    deals: int = 0
    deal_wins: int = 0
    deal_win_rate: float = 0.0
    deal_ci: tuple[float, float] = (0.0, 1.0)
    games: int = 0
    game_wins: float = 0.0
    game_win_rate: float = 0.0
    game_ci: tuple[float, float] = (0.0, 1.0)
    draws: int = 0
    levels_per_deal_ours: float = 0.0
    levels_per_deal_theirs: float = 0.0
    decisions: int = 0
    decision_ms_mean: float = 0.0
    decision_ms_p99: float = 0.0
    decision_ms_max: float = 0.0
    fallback_ours: int = 0
    fallback_theirs: int = 0
    fallback_reasons: dict[str, list[dict[str, int]]] = field(default_factory=dict)
    mostly_fallback: list[str] = field(default_factory=list)
    paired_deals: int = 0
    paired_same_hands: int = 0
    seconds: float = 0.0
    runs: list[dict[str, Any]] = field(default_factory=list)
    out_dir: str = ""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        out = asdict(self)
        out["deal_ci"] = list(self.deal_ci)
        out["game_ci"] = list(self.game_ci)
        return out


def percentile(values: list[float], q: float) -> float:
    """The ``q``-quantile (``0 <= q <= 1``) of ``values`` by the nearest-rank method; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 1)) - 1))
    return ordered[k]


def fill_command(template: str, url: str, name: str, seat: int, workdir: str) -> list[str]:
    """Split ``template`` like a shell and fill ``{url}``, ``{name}``, ``{seat}``, ``{workdir}``.

    Raises:
        ValueError: the template has no ``{url}``, is empty, or has an unknown ``{field}``.
    """
    if "{url}" not in template:
        raise ValueError("the opponent command must contain {url} (the address its client connects to)")
    words = shlex.split(template)
    if not words:
        raise ValueError("the opponent command is empty")
    try:
        return [w.format(url=url, name=name, seat=seat, workdir=workdir) for w in words]
    except (KeyError, IndexError, ValueError) as e:
        raise ValueError(
            f"bad placeholder in the opponent command ({e}); use {{url}}, {{name}}, {{seat}}, {{workdir}}"
        ) from None


def stop_process(proc: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """Stop a process this module started (and its process group): wait ``grace`` seconds, then
    SIGTERM, then SIGKILL."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            try:
                os.killpg(proc.pid, sig)  # its own group: started with start_new_session
            except (ProcessLookupError, PermissionError):
                return
        try:
            proc.wait(grace if sig is None else 5)
            return
        except subprocess.TimeoutExpired:
            pass


async def play_run(
    ours: str,
    opponent_cmd: str,
    our_seats: tuple[int, int],
    games: int,
    seed: int,
    rules: RuleSet,
    preset: str | None,
    out_dir: str,
    timeout: float = 10.0,
    max_deals: int = 500,
    connect_timeout: float = 60.0,
    timed: TimedAgent | None = None,
    on_progress: Callable[[RunSummary], None] | None = None,
) -> RunOutcome:
    """One run: host on a free loopback port, our bot (in-process) and the opponent (two
    processes) connected in seat order, ``games`` games played.

    Raises:
        ArenaError: an opponent process exits or fails to connect within ``connect_timeout`` s.
        ValueError: a bad opponent command template.
    """
    host = CompatHost(rules, games=games, timeout=timeout, seed=seed, max_deals=max_deals, preset=preset,
                      record_dir=os.path.join(out_dir, "records"))
    ready = asyncio.Event()
    box: dict[str, int] = {}

    def on_ready(p: int) -> None:
        box["port"] = p
        ready.set()

    server = asyncio.create_task(serve(host, "127.0.0.1", 0, on_ready))
    procs: list[subprocess.Popen[bytes]] = []
    logs: list[str] = []
    clients: list[asyncio.Task[Any]] = []
    agent = timed or TimedAgent(make_agent(ours, seed))
    try:
        done, _ = await asyncio.wait({server, asyncio.ensure_future(ready.wait())}, timeout=30,
                                     return_when=asyncio.FIRST_COMPLETED)
        if server in done:
            server.result()  # raises the OSError
        if not ready.is_set():
            raise ArenaError("the compat host did not start within 30 s")
        for seat in range(4):
            url = f"ws://127.0.0.1:{box['port']}/game/"
            if seat in our_seats:
                name = f"{ours}-s{seat}"
                clients.append(asyncio.create_task(join(url + name, agent, threaded=True)))
            else:
                name = f"opponent-s{seat}"
                work = os.path.join(out_dir, f"seat{seat}")
                os.makedirs(work, exist_ok=True)
                cmd = fill_command(opponent_cmd, url + name, name, seat, work)
                log_path = os.path.join(out_dir, f"seat{seat}.log")
                logs.append(log_path)
                with open(log_path, "wb") as log_file:
                    try:
                        procs.append(subprocess.Popen(
                            cmd, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True,
                        ))
                    except OSError as e:
                        raise ArenaError(f"cannot start the opponent ({cmd[0]}): {e.strerror or e}") from None
            deadline = time.monotonic() + connect_timeout
            while len(host.links) <= seat:  # connection order decides the seats
                if procs and seat not in our_seats and procs[-1].poll() is not None:
                    tail = open(logs[-1], encoding="utf-8", errors="replace").read()[-600:]
                    raise ArenaError(f"the opponent exited with status {procs[-1].returncode} before connecting:\n{tail}")
                if server.done():
                    server.result()
                if time.monotonic() > deadline:
                    raise ArenaError(f"seat {seat} did not connect within {connect_timeout:g} s")
                await asyncio.sleep(0.05)
        while not server.done():
            if on_progress is not None:
                on_progress(host.summary)
            await asyncio.sleep(0.25)
        summary = server.result()
        if on_progress is not None:
            on_progress(summary)
        await asyncio.wait_for(asyncio.gather(*clients, return_exceptions=True), 30)
        for p in procs:  # the opponents leave after gameResult by themselves
            try:
                await asyncio.wait_for(asyncio.to_thread(p.wait), 15)
            except asyncio.TimeoutError:
                pass
        return RunOutcome(our_seats, summary, logs, [p.poll() for p in procs])
    finally:
        for p in procs:
            await asyncio.to_thread(stop_process, p, 0.0)
        for task in (*clients, server):
            if not task.done():
                task.cancel()
        await asyncio.gather(*clients, server, return_exceptions=True)


def tally(ours: str, opponent: str, preset: str, seed: int, games: int, runs: list[RunOutcome],
          times: list[float], seconds: float) -> ProtocolArenaResult:
    """Combine the two runs into a :class:`ProtocolArenaResult` (from our bot's side)."""
    r = ProtocolArenaResult(ours, opponent, preset, seed, games, seconds=seconds)
    levels_ours = levels_theirs = 0
    hands: list[dict[tuple[int, int], Any]] = []
    for i, run in enumerate(runs):
        s = run.summary
        team = run.our_seats[0] % 2
        for d in s.deal_results:
            r.deals += 1
            won = d["winner_team"] == team
            r.deal_wins += won
            if won:
                levels_ours += d["upgrade"]
            else:
                levels_theirs += d["upgrade"]
        for w in s.game_winners:
            r.games += 1
            if w is None:
                r.draws += 1
                r.game_wins += 0.5
            elif w == team:
                r.game_wins += 1
        r.fallback_ours += sum(s.fallback_decisions[x] for x in run.our_seats)
        r.fallback_theirs += sum(s.fallback_decisions[x] for x in range(4) if x not in run.our_seats)
        label = f"ours-seats{run.our_seats[0]}{run.our_seats[1]}"
        r.fallback_reasons[label] = s.fallback_reasons
        r.mostly_fallback += [f"{label}:seat{x}" for x in s.mostly_fallback()]
        hands.append(s.deal_hands)
        r.runs.append({
            "our_seats": list(run.our_seats), "games": s.games, "deals": s.deals, "seconds": round(s.seconds, 1),
            "fallback_decisions": s.fallback_decisions, "decisions": s.decisions,
            "opponent_exit_status": run.opponent_status, "opponent_logs": run.opponent_logs, "records": s.records,
        })
    if len(hands) == 2:
        paired = set(hands[0]) & set(hands[1])
        r.paired_deals = len(paired)
        r.paired_same_hands = sum(hands[0][k] == hands[1][k] for k in paired)
    if r.deals:
        r.deal_win_rate = r.deal_wins / r.deals
        r.deal_ci = wilson(r.deal_wins, r.deals)
        r.levels_per_deal_ours = levels_ours / r.deals
        r.levels_per_deal_theirs = levels_theirs / r.deals
    if r.games:
        r.game_win_rate = r.game_wins / r.games
        r.game_ci = wilson(r.game_wins, r.games)
    r.decisions = len(times)
    if times:
        r.decision_ms_mean = 1000 * sum(times) / len(times)
        r.decision_ms_p99 = 1000 * percentile(times, 0.99)
        r.decision_ms_max = 1000 * max(times)
    return r


def protocol_duplicate_match(
    ours: str,
    opponent_cmd: str,
    games: int,
    seed: int,
    rules: RuleSet | None = None,
    preset: str | None = "aicomp",
    out_dir: str | None = None,
    timeout: float = 10.0,
    max_deals: int = 500,
    progress: ArenaProgress | None = None,
) -> ProtocolArenaResult:
    """Play ``ours`` against the protocol bot of ``opponent_cmd`` in duplicate (two runs of
    ``games`` games with the same seed, our bot on seats 0/2, then 1/3).

    Args:
        ours: one of :data:`guandan.agents.AGENT_NAMES`.
        opponent_cmd: command line of ONE opponent seat, with ``{url}`` (and optionally
            ``{name}``, ``{seat}``, ``{workdir}``); run twice per run.
        games: whole games per run (>= 1).
        seed: the runs' seed (the same cards in both runs).
        rules: rule set (default preset ``aicomp``); preset: its name for the records.
        out_dir: where records and the opponent's logs go (default: a new temp directory).
        timeout: seconds per decision before the host's fallback bot plays it.
        max_deals: deals after which a game counts as a draw.
        progress: called with (games done, games total, deals done) as the runs go on.
    Returns:
        A :class:`ProtocolArenaResult`.
    Raises:
        ValueError: unknown bot name, bad command template or ``games < 1``.
        ArenaError: an opponent process could not be started or did not connect.
        KeyboardInterrupt: interrupted; every process started has been stopped.
    """
    if games < 1:
        raise ValueError("games must be at least 1")
    make_agent(ours, 0)  # ValueError for an unknown name, before anything starts
    fill_command(opponent_cmd, "ws://x", "n", 0, "w")
    rules = rules or RuleSet.preset("aicomp")
    out = out_dir or tempfile.mkdtemp(prefix=f"compat-arena-{ours}-")
    os.makedirs(out, exist_ok=True)
    timed = TimedAgent(make_agent(ours, seed))
    runs: list[RunOutcome] = []
    t0 = time.perf_counter()
    for our_seats in ((0, 2), (1, 3)):
        before_games = sum(run.summary.games for run in runs)
        before_deals = sum(len(run.summary.deal_results) for run in runs)

        def on_progress(s: RunSummary, g0: int = before_games, d0: int = before_deals) -> None:
            if progress is not None:
                progress(g0 + s.games, 2 * games, d0 + len(s.deal_results))

        run_dir = os.path.join(out, f"ours-seats{our_seats[0]}{our_seats[1]}")
        os.makedirs(run_dir, exist_ok=True)
        runs.append(asyncio.run(play_run(
            ours, opponent_cmd, our_seats, games, seed, rules, preset, run_dir, timeout, max_deals,
            timed=timed, on_progress=on_progress,
        )))
    result = tally(ours, opponent_cmd, preset or "custom", seed, games, runs, timed.times, time.perf_counter() - t0)
    result.out_dir = out
    return result
