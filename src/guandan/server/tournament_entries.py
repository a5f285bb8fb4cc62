"""Entering online tables' results into their tournament, several in one write (issue 21, "Speed and
scale").

A tournament's state is one JSON document (a 200-table round of 400 pairs: about 0.4 MB). Entering a
result reads it (kept parsed by :class:`~guandan.server.tournament_parsed.ParsedStates` when this
process wrote it last), enters the result through the engine
(:func:`guandan.tournament.online.enter_online_result`) and writes the whole state back over the
version read. The write costs the same for one result as for fifty: about 13 ms of JSON encoding for
400 pairs, holding the interpreter lock the tables' event loop needs. Near the end of a round most
tables finish within a minute; entered one by one, those writes took 4.3 s of the server's CPU in a
200-table round of 5 deals (2026-12-08, ``py-spy``), and the round's move-latency p99 over its last
15 seconds was 20 ms against 17 ms before them.

* :func:`enter_many` (a database worker thread) enters any number of results: per tournament, one read,
  every result through the engine, one write of the state, and each table's row moved from ``playing``
  to its new state in the same transaction. Each result gets the outcome it would have had alone
  (``entered``, ``already``, ``extra``, ``held``); a lost version race (the organiser or another process
  wrote meanwhile) rolls the whole group back and tries again from the row.
* :class:`ResultQueue` (the event loop) gathers the results that arrive within :data:`BATCH_WAIT_S`
  and hands them to :func:`enter_many` together; each caller awaits its own outcome.

Nothing here decides a match: the engine does. No I/O but the database session given.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update

from guandan.tournament.errors import TournamentError
from guandan.tournament.model import MatchResult, from_json, result_from_dict, result_to_dict
from guandan.tournament.online import decision_of, enter_online_result

from . import models
from .tournament_parsed import ParsedStates

log = logging.getLogger("guandan.server.tournaments")

#: Seconds the queue waits after a result arrives for others to enter with it. The game-over panel
#: says "being entered" meanwhile; half a second is not seen, and at a round's end (about ten results
#: a second at 200 tables) it puts five results in one write.
BATCH_WAIT_S = 0.5
#: Results entered in one call at most (one transaction; the rest wait for the next).
BATCH_MAX = 64
#: Tries of one tournament's group when its version keeps changing under it.
ATTEMPTS = 20

#: ``(outcome, decision)``: outcome ``entered``, ``already``, ``extra`` or ``held``; decision the
#: match's :func:`~guandan.tournament.online.decision_of` for ``entered`` and for ``already`` when the
#: same result was final already, else ``None``.
Outcome = tuple[str, dict[str, Any] | None]


@dataclass(frozen=True)
class Entry:
    """One online table's result to enter.

    Attributes:
        room_id: the table's room (its ``tournament_tables`` row names the tournament, round and table).
        result: the match's result (:func:`guandan.tournament.online.result_of_game` or
            :func:`~guandan.tournament.online.forfeit_result`).
        game_id: the stored game's id, or ``None`` (a forfeit).
        head: the side (``a``/``b``) whose player took 头游 in the game's last deal: the winner of a
            drawn knock-out's extra deal (R58) when the row holds a ``pending`` result.
        state: the row's state once entered: ``entered`` or ``forfeit``.
    """

    room_id: str
    result: MatchResult
    game_id: int | None
    head: str | None = None
    state: str = "entered"


def enter_many(session_factory: Callable[[], Any], parsed: ParsedStates,
               entries: Sequence[Entry]) -> list[Outcome | Exception]:
    """Enter ``entries``, each exactly once, one write per tournament (module docstring).

    Args:
        session_factory: makes database sessions. parsed: this process's parsed states.
        entries: the results; a room named twice is entered once (the later ones: ``already``).
    Returns:
        One :data:`Outcome` per entry, in order: ``entered``; ``already`` (the row is not ``playing``
        any more, or the organiser typed this same result: then with the decision); ``extra`` (a drawn
        knock-out match, R58: the result is kept in ``pending`` for the extra deal, or was kept already
        and this is the drawn game again: the extra deal is still to be played); ``held`` (the engine
        refused it: the row keeps the reason for the organiser). When the row has a ``pending`` result
        and the game is another one, the game was the extra deal and ``head`` wins it. In place of an
        outcome, the exception that stopped the entry's tournament: a ``RuntimeError`` when its
        version changed under :data:`ATTEMPTS` tries in a row, a database error; nothing of that
        tournament's group was written, and the other tournaments' groups are not affected.
    Raises:
        SQLAlchemy errors of the first read (which tournament each room belongs to).
    """
    TT = models.TournamentTableRow
    out: list[Outcome | Exception] = [("already", None)] * len(entries)
    first: dict[str, int] = {}
    for k, e in enumerate(entries):
        first.setdefault(e.room_id, k)
    if not first:
        return out
    with session_factory() as db:
        tid_of = dict(db.execute(select(TT.room_id, TT.tournament_id).where(TT.room_id.in_(list(first)))).all())
    groups: dict[int, list[int]] = {}
    for room_id, k in first.items():
        if room_id in tid_of:
            groups.setdefault(tid_of[room_id], []).append(k)
    for tid, ks in groups.items():
        try:
            got: list[Outcome | Exception] = list(_enter_group(session_factory, parsed, tid, [entries[k] for k in ks]))
        except Exception as err:  # noqa: BLE001 - this group's callers get it; the other groups stand
            log.exception("tournament %s: %d result(s) not entered", tid, len(ks))
            got = [err] * len(ks)
        for k, outcome in zip(ks, got):
            out[k] = outcome
    return out


def _enter_group(session_factory: Callable[[], Any], parsed: ParsedStates, tid: int,
                 entries: list[Entry]) -> list[Outcome]:
    """The entries of tournament ``tid`` (distinct rooms), tried until a try's write holds."""
    with parsed.entering(tid):  # one entry of this tournament at a time in this process
        for _attempt in range(ATTEMPTS):
            with session_factory() as db:
                got = _try_group(db, parsed, tid, entries)
            if got is not None:
                return got
    raise RuntimeError(f"tournament {tid}: the tournament kept changing; {len(entries)} result(s) not entered")


def _try_group(db: Any, parsed: ParsedStates, tid: int, entries: list[Entry]) -> list[Outcome] | None:
    """One try at entering ``entries`` (distinct rooms of tournament ``tid``); None when the version
    read was overwritten meanwhile (everything rolled back: try again)."""
    from .tournament_store import _summary_values, now_iso, state_text

    TR, TT = models.TournamentRow, models.TournamentTableRow
    rows = {tt.room_id: tt for tt in db.scalars(select(TT).where(TT.room_id.in_([e.room_id for e in entries])))}
    version = db.scalars(select(TR.version).where(TR.id == tid)).one()
    t = parsed.take(tid, version)
    if t is None:
        t = from_json(db.scalars(select(TR.state).where(TR.id == tid)).one())
    outcomes: list[str] = []
    entered: list[tuple[Entry, Any]] = []
    clean = True  # no engine refusal: the state is what the entered results made it
    for e in entries:
        tt = rows.get(e.room_id)
        if tt is None or tt.state != "playing":
            outcomes.append("gone")
            continue
        result = e.result
        if tt.pending is not None and e.state == "entered":
            if e.game_id is not None and e.game_id == tt.game_id:
                # the drawn game itself again (a restart before its extra deal's room was opened):
                # the extra deal is still to be played (R58), its 头游 is not this game's
                outcomes.append("extra")
                continue
            result = result_from_dict(json.loads(tt.pending))
            result.extra_deal = e.head
        try:
            if enter_online_result(t, tt.round, tt.table_no, result, at=now_iso(), game_id=e.game_id):
                entered.append((e, tt))
                outcomes.append("entered")
            else:
                tt.state, tt.game_id = e.state, e.game_id  # the organiser typed this same result already
                outcomes.append("already")
        except TournamentError as err:
            clean = False
            if err.params.get("reason") == "extra_deal_needed" and tt.pending is None:
                tt.pending, tt.game_id, tt.note = json.dumps(result_to_dict(result)), e.game_id, "extra_deal"
                outcomes.append("extra")
            else:
                tt.state, tt.game_id, tt.note = "held", e.game_id, f"{err.code}: {err}"[:200]
                log.warning("room %s: the result waits for the organiser: %s", e.room_id, err)
                outcomes.append("held")
    written = version
    if entered:
        stamp = datetime.now(UTC)
        done = db.execute(update(TR).where(TR.id == tid, TR.version == version).values(
            state=state_text(t), version=version + 1, updated_at=stamp, **_summary_values(t))
            .execution_options(synchronize_session=False))
        if done.rowcount != 1:  # an organiser (or another process) wrote meanwhile: read again
            db.rollback()
            return None
        written = version + 1
        entries_logged = t.log[len(t.log) - len(entered):]
        for (e, tt), entry in zip(entered, entries_logged):
            mine = db.execute(update(TT).where(TT.id == tt.id, TT.state == "playing")
                              .values(state=e.state, game_id=e.game_id).execution_options(synchronize_session=False))
            if mine.rowcount != 1:  # another process moved the row meanwhile: read again (it is then gone)
                db.rollback()
                return None
            db.add(models.TournamentAuditRow(tournament_id=tid, user_id=None, operation="result",
                                             version=written, before=None, at=stamp,
                                             after={"round": entry.round, "table": entry.table,
                                                    "value": entry.after, "reason": "online"}))
    db.commit()
    if clean:
        parsed.keep(tid, written, t)
    out: list[Outcome] = []
    for e, outcome in zip(entries, outcomes):
        if outcome in ("entered", "already"):
            tt = rows[e.room_id]
            out.append((outcome, decision_of(t, tt.round, tt.table_no)))
        else:
            out.append(("already" if outcome == "gone" else outcome, None))
    return out


class ResultQueue:
    """Results waiting to be entered together (module docstring); used on the event loop.

    Args:
        run_db: runs a blocking call in a database worker thread and returns its result
            (``TableManager.run_db``).
        enter: :func:`enter_many` with its session factory and parsed states bound.
        wait_s: :data:`BATCH_WAIT_S`. batch_max: :data:`BATCH_MAX`.
    """

    def __init__(self, run_db: Callable[..., Awaitable[Any]],
                 enter: Callable[[Sequence[Entry]], list[Outcome | Exception]],
                 wait_s: float = BATCH_WAIT_S, batch_max: int = BATCH_MAX) -> None:
        if wait_s < 0 or batch_max < 1:
            raise ValueError("wait_s >= 0 and batch_max >= 1")
        self.run_db, self.enter_fn = run_db, enter
        self.wait_s, self.batch_max = wait_s, batch_max
        self._waiting: list[tuple[Entry, asyncio.Future[Outcome]]] = []
        self._entering: list[tuple[Entry, asyncio.Future[Outcome]]] = []
        self._task: asyncio.Task[None] | None = None
        #: calls of ``enter`` made and results they carried (for the benchmark and tests)
        self.calls = 0
        self.entered = 0

    async def enter(self, entry: Entry) -> Outcome:
        """Enter ``entry`` with the others that arrive within ``wait_s``; its :data:`Outcome`.

        Raises:
            What stopped the entry (:func:`enter_many`: the exception of its tournament's group, or
            of the whole call); ``asyncio.CancelledError`` when the queue was closed first.
        """
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Outcome] = loop.create_future()
        self._waiting.append((entry, fut))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        while self._waiting:
            await asyncio.sleep(self.wait_s)
            batch, self._waiting = self._waiting[:self.batch_max], self._waiting[self.batch_max:]
            self._entering = batch
            self.calls += 1
            self.entered += len(batch)
            try:
                outs: list[Any] = await self.run_db(self.enter_fn, [e for e, _ in batch])
            except Exception as err:  # noqa: BLE001 - each caller gets it (game_stored logs it)
                outs = [err] * len(batch)
            finally:
                self._entering = []
            for (_, fut), outcome in zip(batch, outs):
                if fut.done():
                    continue
                if isinstance(outcome, Exception):
                    fut.set_exception(outcome)
                else:
                    fut.set_result(outcome)

    def close(self) -> None:
        """Stop at shutdown: the callers still waiting, and those of a batch being entered, get
        ``asyncio.CancelledError``. What was not written is entered by the restart from the stored
        games (their rows are still ``playing``); what the database thread still writes is final, and
        a drawn game entered again there is ``extra`` again (:func:`enter_many`)."""
        if self._task is not None:
            self._task.cancel()
        for _, fut in [*self._entering, *self._waiting]:
            fut.cancel()
        self._waiting, self._entering = [], []


__all__ = ["ATTEMPTS", "BATCH_MAX", "BATCH_WAIT_S", "Entry", "Outcome", "ResultQueue", "enter_many"]
