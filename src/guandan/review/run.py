"""Review of a deal (复盘): every decision of one seat, computed in worker processes.

:func:`review_lines` replays the record (:func:`~guandan.review.positions.deal_decisions`), then
evaluates each play-phase decision with more than one legal action in a
:class:`concurrent.futures.ProcessPoolExecutor` (never on a caller's event loop: a server
queues the call in a thread or process of its own), reporting ``progress(done, total)`` as
decisions finish. Each decision gets both views (:mod:`guandan.review.evaluate`): the first on
worlds sampled from the seat's view alone, the second on the real hands.

Marks (first view, the move played against the best alternative, the best other candidate by
win rate plus :data:`~guandan.review.evaluate.LEVEL_WEIGHT` per level):

* ``cost.win``: how much more often the best alternative wins the deal (0 when the move played
  is the best); ``cost.levels``: the same for the expected result;
* ``severity``: ``"blunder"`` (cost ≥ 0.25), ``"mistake"`` (≥ 0.10) or ``"inaccuracy"`` (≥ 0.04),
  only when the gain holds with at least :data:`MARK_Z` standard errors of the paired difference;
* ``costliest``: 1, 2, 3 for the three marked decisions that cost the most.

The review is a pure function of the record's lines, the seat, the deal, the budget and the seed
when the budget has no time cap; :func:`review_key` names it for a cache
(:class:`ReviewCache`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guandan.core.cards import cards_text
from guandan.core.match import action_to_json
from guandan.core.plays import PASS_TYPE, PlayT

from .evaluate import LEVEL_WEIGHT, Budget, Estimate, assess_real, assess_view, review_candidates
from .positions import DealDecisions, Decision, deal_decisions

__all__ = ["MARK_Z", "REVIEW_VERSION", "ReviewCache", "ReviewCacheError", "action_text", "review_key",
           "review_lines"]

#: Version of the review's JSON and of its method (part of the cache key). 2: ``deal.start_hands``.
REVIEW_VERSION = 2
#: Standard errors the gain of the best alternative needs for a mark.
MARK_Z = 2.0
_SEVERITY = ((0.25, "blunder"), (0.10, "mistake"), (0.04, "inaccuracy"))

Progress = Callable[[int, int], None]


def action_text(act: PlayT) -> str:
    """An action in text notation: ``pass``, or its cards (``7H 7S``)."""
    return "pass" if act[0] == PASS_TYPE else cards_text(act[2])


def _score(e: Estimate) -> float:
    return e.win + LEVEL_WEIGHT * (e.levels or 0.0)


def _evaluate(decision: Decision, budget: Budget, seed: int) -> dict[str, Any]:
    """Both views of one decision (run in a worker process)."""
    view = decision.view
    cands = review_candidates(view, decision.played, budget.candidates)
    key = f"{seed}:{decision.game}:{decision.deal}:{decision.turn}"
    va = assess_view(view, cands, budget, key)  # the view only: no hidden card reaches it
    real = assess_real(decision.real, decision.seat, cands, budget)
    return {"candidates": cands, "view": va.estimates, "worlds": va.worlds, "z": va.z, "real": real}


def _entry(d: Decision, got: dict[str, Any] | None, note: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": d.index, "turn": d.turn, "game": d.game, "deal": d.deal, "seat": d.seat, "phase": d.phase,
        "legal_actions": len(d.view.legal_actions), "hand": len(d.view.hand),
        "played": action_to_json(d.played), "played_text": action_text(d.played),
        "evaluated": got is not None, "note": note,
        "best_alternative": None, "best_alternative_text": None,
        "view": None, "real": None, "cost": None, "severity": None, "costliest": None,
    }
    if got is None:
        return out
    cands: list[PlayT] = got["candidates"]
    view: tuple[Estimate, ...] = got["view"]
    real: tuple[Estimate, ...] = got["real"]
    alts = range(1, len(cands))
    best = max(alts, key=lambda j: (_score(view[j]), -j)) if len(cands) > 1 else None
    real_best = max(range(len(cands)), key=lambda j: (real[j].win, real[j].levels or 0.0, -j))
    out["view"] = {
        "played": view[0].to_json(),
        "best_alternative": None if best is None else view[best].to_json(),
        "worlds": got["worlds"],
        "z": None if best is None else _finite(got["z"][best]),
        "candidates": [{"action": action_to_json(c), "text": action_text(c), **e.to_json()}
                       for c, e in zip(cands, view)],
    }
    out["real"] = {
        "played": real[0].to_json(),
        "best_alternative": None if best is None else real[best].to_json(),
        "best": {"action": action_to_json(cands[real_best]), "text": action_text(cands[real_best]),
                 **real[real_best].to_json()},
    }
    if best is None:
        out["note"] = "no other candidate"
        return out
    out["best_alternative"] = action_to_json(cands[best])
    out["best_alternative_text"] = action_text(cands[best])
    cost_win = max(0.0, view[best].win - view[0].win)
    cost_lev = max(0.0, (view[best].levels or 0.0) - (view[0].levels or 0.0))
    out["cost"] = {"win": round(cost_win, 4), "levels": round(cost_lev, 4)}
    if got["z"][best] >= MARK_Z:
        out["severity"] = next((name for bound, name in _SEVERITY if cost_win >= bound), None)
    return out


def _finite(z: float) -> float | None:
    return round(z, 3) if z == z and abs(z) != float("inf") else (None if z != z else (999.0 if z > 0 else -999.0))


def _pool(workers: int) -> ProcessPoolExecutor:
    methods = multiprocessing.get_all_start_methods()
    # fork only from a single-threaded process (forking a threaded server can deadlock)
    method = "fork" if "fork" in methods and threading.active_count() == 1 else (
        "forkserver" if "forkserver" in methods else "spawn")
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))


def review_lines(
    lines: Sequence[str],
    seat: int = 0,
    deal: int = 1,
    budget: Budget | None = None,
    seed: int = 0,
    workers: int = 2,
    progress: Progress | None = None,
    cache: ReviewCache | None = None,
    only: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Review ``seat``'s decisions in the ``deal``-th deal of a record.

    Args:
        lines: the record's lines (header first).
        seat: the reviewed seat (0-3).
        deal: 1-based deal number in the record.
        budget: per-decision budget (default :class:`Budget()`).
        seed: the worlds' seed.
        workers: worker processes (0: evaluate in this process, for tests and debugging).
        progress: called ``(done, total)`` after each evaluated decision (and ``(0, total)`` first).
        cache: a cache to read and fill (only reviews without a time cap are stored).
        only: evaluate only the decisions with these indices (e.g. one decision a player opens);
            the others are listed, not evaluated. ``None``: every decision.
    Returns:
        The review as a JSON-ready dict: ``version``, ``seat``, ``player``, ``deal`` (number,
        game, deal, deals in the record, level, result, ``start_hands``: the four hands when play
        began, after any tribute and return, R43-R47), ``board`` (a board play's board, its hands
        as dealt), ``budget``, ``seed``, ``decisions`` (one
        entry per decision of the seat, module docstring), ``marked`` (indices of the marked
        decisions, costliest first).
    Raises:
        ValueError: a bad seat, deal number or worker count.
        RecordError: the record does not replay.
        ReviewCacheError: ``cache`` cannot store the review (:meth:`ReviewCache.put`).
    """
    budget = budget or Budget()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"workers must be an int >= 0, not {workers!r}")
    key = review_key(lines, seat, deal, budget, seed, only)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit
    dd = deal_decisions(lines, seat, deal)
    wanted = None if only is None else set(only)
    todo = [d for d in dd.decisions if d.phase == "play" and len(d.view.legal_actions) > 1
            and (wanted is None or d.index in wanted)]
    total = len(todo)
    if progress is not None:
        progress(0, total)
    results: dict[int, dict[str, Any]] = {}
    if workers == 0 or total == 0:
        for i, d in enumerate(todo, 1):
            results[d.index] = _evaluate(d, budget, seed)
            if progress is not None:
                progress(i, total)
    else:
        with _pool(min(workers, total)) as pool:
            futs: dict[Future[dict[str, Any]], int] = {pool.submit(_evaluate, d, budget, seed): d.index for d in todo}
            for i, fut in enumerate(as_completed(futs), 1):
                results[futs[fut]] = fut.result()
                if progress is not None:
                    progress(i, total)
    entries = []
    for d in dd.decisions:
        note = None
        if d.phase != "play":
            note = f"{d.phase}: not evaluated (R45/R47 choices)"
        elif len(d.view.legal_actions) == 1:
            note = "the only legal action"
        elif wanted is not None and d.index not in wanted:
            note = "not requested"
        entries.append(_entry(d, results.get(d.index), note))
    marked = sorted((e for e in entries if e["severity"]), key=lambda e: (-e["cost"]["win"], e["index"]))
    for rank, e in enumerate(marked[:3], 1):
        e["costliest"] = rank
    out = _report(dd, budget, seed, entries, [e["index"] for e in marked])
    if cache is not None and budget.seconds is None:
        cache.put(key, out)
    return out


def _report(dd: DealDecisions, budget: Budget, seed: int, entries: list[dict[str, Any]],
            marked: list[int]) -> dict[str, Any]:
    from guandan.core.cards import rank_char

    end = dd.end
    return {
        "version": REVIEW_VERSION,
        "seat": dd.seat,
        "player": dd.players[dd.seat],
        "deal": {
            "number": dd.number, "game": dd.game, "deal": dd.deal, "deals": dd.deals,
            "level": rank_char(dd.level),
            "finish_order": None if end is None else end["finish_order"],
            "result": None if end is None else end["result"],
            "winner_team": None if end is None else end["winner_team"],
            "start_hands": dd.start_hands,
        },
        "board": dd.board,
        "budget": budget.to_json(),
        "seed": seed,
        "decisions": entries,
        "marked": marked,
    }


def review_key(lines: Sequence[str], seat: int, deal: int, budget: Budget, seed: int,
               only: Sequence[int] | None = None) -> str:
    """The cache key of a review: SHA-256 of the review version, the record's lines, the seat,
    the deal, the budget, the seed and the decisions asked for (hex)."""
    h = hashlib.sha256()
    h.update(json.dumps({"v": REVIEW_VERSION, "seat": seat, "deal": deal, "budget": budget.to_json(),
                         "seed": seed, "only": None if only is None else sorted(set(only))},
                        sort_keys=True).encode())
    for line in lines:
        h.update(line.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


class ReviewCacheError(OSError):
    """The review cache's directory cannot be used, or a review cannot be stored in it
    (:meth:`ReviewCache.prepare`, :meth:`ReviewCache.put`). ``strerror`` is one line saying why;
    ``errno`` is the operating system's."""


@dataclass
class ReviewCache:
    """Reviews stored as JSON files ``<key>.json`` in ``directory`` (created when needed;
    :meth:`prepare` checks it before a review is computed)."""

    directory: str | os.PathLike[str]

    def prepare(self) -> None:
        """Make sure reviews can be stored: ``directory`` is a directory, created here when its
        parent exists (a missing parent is more likely a typo than a wish), and a file can be
        written in it.

        Raises:
            ReviewCacheError: (an ``OSError``) ``directory`` is not a directory, the directory
                above it does not exist, or it cannot be created or written.
        """
        path = Path(self.directory)
        if path.exists() and not path.is_dir():
            raise ReviewCacheError(errno.ENOTDIR, "not a directory")
        if not path.exists():
            parent = path.absolute().parent
            if not parent.is_dir():
                what = "not a directory" if parent.exists() else "does not exist"
                raise ReviewCacheError(errno.ENOENT, f"the directory above it, {parent}, {what}")
            try:
                path.mkdir()
            except FileExistsError:
                pass  # made by a concurrent reviewer meanwhile
            except OSError as e:
                raise ReviewCacheError(e.errno, f"cannot create the directory: {e.strerror or e}") from None
        probe = path / f".probe.{os.getpid()}.tmp"
        try:
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as e:
            raise ReviewCacheError(e.errno, f"cannot write in the directory: {e.strerror or e}") from None

    def _path(self, key: str) -> Path:
        if not key or any(c not in "0123456789abcdef" for c in key):
            raise ValueError("a cache key is a hex digest")
        return Path(self.directory) / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored review, or ``None`` (also for an unreadable file)."""
        try:
            data = json.loads(self._path(key).read_text("utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, review: dict[str, Any]) -> None:
        """Store a review (written to a temporary file, then renamed: readers never see half).

        Raises:
            ReviewCacheError: (an ``OSError``) the review cannot be stored (``strerror`` names
                the file and the reason).
        """
        path = self._path(key)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(review, ensure_ascii=False), "utf-8")
            os.replace(tmp, path)
        except OSError as e:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass  # nothing was written, or it cannot be removed either
            raise ReviewCacheError(e.errno, f"cannot store the review as {path.name}: {e.strerror or e}") from None
