"""The daily challenge in the database: ``challenges``, ``challenge_plays`` and its board rooms.

What to store is decided by :mod:`guandan.server.challenge` (plain code); this module only reads
and writes, always off the event loop (the HTTP handlers run in worker threads).

Races (issue 22, "Bad input and fairness"):

* **one challenge per day** -- ``challenges.day`` is unique: two requests or processes creating
  the day's challenge at once both try to insert it; the second insert fails
  (``IntegrityError``), is rolled back, and that request reads and answers the first one's boards;
* **one play per board and account** -- ``(challenge_id, board, user_id)`` is unique in
  ``challenge_plays``, and the play row and its room are inserted in one transaction: of two
  starts at once (two tabs, two processes) one inserts, the other fails, rolls its room back and
  is answered with the first one's room. A play is never deleted, so leaving, reloading or
  logging in again never starts the board again.

Results are stored when the board's deal ends: :meth:`ChallengeStore.settle` reads the finished
room's record (a board record, :func:`guandan.duplicate.board_records.replay_board_lines`) and
stores :func:`guandan.server.challenge.player_result`. It runs before every read of a day's
plays, so a result is never missing from an answer, also after a restart. A board whose room
ended without the deal's end (a damaged record) scores the worst result the preset allows for
the side (:func:`worst_result`: ``-3`` with the official table, R35).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from guandan.core.deal import DealResult
from guandan.core.rules import RuleSet
from guandan.duplicate import DayScores
from guandan.duplicate.board_records import replay_board_lines

from . import models
from .challenge import PLAYER_SEAT, ChallengeConfig, Play, closes_at, deal_boards, player_result

log = logging.getLogger("guandan.server.challenge")

#: How much older than the newest result seen a result may be when it is committed (the time is
#: taken just before the commit); an older straggler makes :meth:`ChallengeStore.scores` rebuild.
_LAG = timedelta(seconds=5)

__all__ = ["ChallengeInfo", "ChallengeStore", "PlayStart", "own_seat_only", "secret_room", "worst_result"]


@dataclass(frozen=True)
class ChallengeInfo:
    """A stored day's challenge.

    Attributes:
        id: its row id; ``day``: the UTC date; ``preset``, ``bots``: as made;
        boards: the boards' JSON objects (``Board.to_json``), board ``i`` at index ``i - 1``.
    """

    id: int
    day: date
    preset: str
    bots: str
    boards: list[dict[str, Any]]

    @property
    def n_boards(self) -> int:
        """How many boards the day has."""
        return len(self.boards)

    @property
    def rules(self) -> RuleSet:
        """The boards' rule set."""
        return RuleSet.from_dict(self.boards[0]["options"])


@dataclass(frozen=True)
class PlayStart:
    """The answer to starting a board: its room, and whether this request started it
    (``False``: the account had started it before; the same room is answered)."""

    room: str
    created: bool
    finished: bool


def worst_result(rules: RuleSet) -> int:
    """The worst result a side can have on a board under ``rules``: the opponents finish first and
    second (a 1-2 against, R33, R35: ``-3`` with the official table)."""
    return player_result(rules, DealResult((1, 3), (5, 0, 5, 0)), PLAYER_SEAT)


class _Scores:
    """One challenge's score tables in memory (:meth:`ChallengeStore.scores`)."""

    def __init__(self, scores: DayScores) -> None:
        self.lock = threading.Lock()
        self.scores = scores
        self.names: dict[int, str] = {}
        self.seen: set[int] = set()
        self.newest: datetime | None = None

    def reset(self, n_boards: int) -> None:
        self.scores = DayScores(range(1, n_boards + 1))
        self.names = {}
        self.seen = set()
        self.newest = None


def _info(row: Any) -> ChallengeInfo:
    return ChallengeInfo(row.id, date.fromisoformat(row.day), row.preset, row.bots, json.loads(row.boards))


class ChallengeStore:
    """Reads and writes of the daily challenge.

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session`` (``sessionmaker``).
    """

    def __init__(self, session_factory: Callable[[], Any]) -> None:
        self.session_factory = session_factory
        self._cache: dict[int, _Scores] = {}
        self._lock = threading.Lock()

    # -- challenges ---------------------------------------------------------------------------
    def find(self, day: date) -> ChallengeInfo | None:
        """The challenge of ``day``, or ``None`` when none was published."""
        with self.session_factory() as db:
            row = db.scalars(select(models.ChallengeRow).where(models.ChallengeRow.day == day.isoformat())).first()
            return None if row is None else _info(row)

    def get_or_create(self, day: date, config: ChallengeConfig) -> ChallengeInfo:
        """The challenge of ``day``, dealt and stored now if there is none (race-safe: module
        docstring). Dealing happens outside the transaction; a set dealt by the request that
        loses the race is dropped unseen."""
        found = self.find(day)
        if found is not None:
            return found
        boards = [b.to_json() for b in deal_boards(config)]
        with self.session_factory() as db:
            db.add(models.ChallengeRow(day=day.isoformat(), preset=config.preset, bots=config.bots,
                                       n_boards=len(boards), boards=json.dumps(boards, separators=(",", ":"))))
            try:
                db.commit()
            except IntegrityError:
                db.rollback()
        found = self.find(day)
        assert found is not None
        return found

    def in_days(self, days: Sequence[date]) -> list[ChallengeInfo]:
        """The challenges published on any of ``days``, oldest first."""
        keys = [d.isoformat() for d in days]
        with self.session_factory() as db:
            rows = db.scalars(select(models.ChallengeRow).where(models.ChallengeRow.day.in_(keys))
                              .order_by(models.ChallengeRow.day)).all()
            return [_info(r) for r in rows]

    # -- plays --------------------------------------------------------------------------------
    def start_play(self, challenge: ChallengeInfo, board: int, user_id: int, ranked: bool, bot: str) -> PlayStart:
        """Start board ``board`` for ``user_id``: a new ``waiting`` room holding the board (the
        player at :data:`PLAYER_SEAT`, ``bot`` in the three other seats, secret until the day
        closes) and the play row, in one transaction; or, when the account started that board
        before, its room (module docstring). The caller starts the room's game.

        Raises:
            ValueError: no such board in the challenge.
        """
        if not 1 <= board <= challenge.n_boards:
            raise ValueError(f"the challenge has boards 1-{challenge.n_boards}, not {board}")
        existing = self._play_of(challenge.id, board, user_id)
        if existing is not None:
            return existing
        spec = challenge.boards[board - 1]
        with self.session_factory() as db:
            room_id = secrets.token_urlsafe(6)
            while db.get(models.Room, room_id) is not None:
                room_id = secrets.token_urlsafe(6)
            db.add(models.Room(
                id=room_id, name=f"{challenge.day.isoformat()} #{board}", preset=challenge.preset,
                options=dict(spec["options"]), owner_id=user_id, status="waiting", seed=None, record="",
                default_clocks=False, board=json.dumps(spec, separators=(",", ":")),
                secret_until=closes_at(challenge.day)))
            db.flush()
            for s in range(4):
                db.add(models.RoomSeat(room_id=room_id, seat=s, user_id=user_id if s == PLAYER_SEAT else None,
                                       bot=None if s == PLAYER_SEAT else bot))
            db.add(models.ChallengePlayRow(challenge_id=challenge.id, board=board, user_id=user_id,
                                           seat=PLAYER_SEAT, ranked=ranked, room_id=room_id))
            try:
                db.commit()
            except IntegrityError:
                db.rollback()
                existing = self._play_of(challenge.id, board, user_id)
                if existing is None:
                    raise
                return existing
        return PlayStart(room_id, True, False)

    def _play_of(self, challenge_id: int, board: int, user_id: int) -> PlayStart | None:
        with self.session_factory() as db:
            row = db.execute(
                select(models.ChallengePlayRow.room_id, models.ChallengePlayRow.result, models.Room.status)
                .outerjoin(models.Room, models.Room.id == models.ChallengePlayRow.room_id)
                .where(models.ChallengePlayRow.challenge_id == challenge_id, models.ChallengePlayRow.board == board,
                       models.ChallengePlayRow.user_id == user_id)).first()
        if row is None:
            return None
        room_id, result, status = row
        return PlayStart(room_id or "", False, result is not None or status in ("finished", "damaged"))

    def mark_playing(self, room_id: str) -> bool:
        """Set a new board room ``playing`` (before its game starts). Returns whether it was waiting."""
        with self.session_factory() as db:
            n = db.execute(update(models.Room).where(models.Room.id == room_id, models.Room.status == "waiting")
                           .values(status="playing").execution_options(synchronize_session=False)).rowcount
            db.commit()
            return bool(n)

    def settle(self, challenge: ChallengeInfo) -> int:
        """Store the result of every play of ``challenge`` whose room has finished (module
        docstring). Returns how many were stored."""
        with self.session_factory() as db:
            rows = db.execute(
                select(models.ChallengePlayRow.id, models.ChallengePlayRow.seat, models.Room.id, models.Room.status)
                .join(models.Room, models.Room.id == models.ChallengePlayRow.room_id)
                .where(models.ChallengePlayRow.challenge_id == challenge.id,
                       models.ChallengePlayRow.result.is_(None),
                       models.Room.status.in_(("finished", "damaged")))).all()
        n = 0
        for play_id, seat, room_id, status in rows:
            with self.session_factory() as db:
                room = db.get(models.Room, room_id)
                text = room.record if room is not None and status == "finished" else ""
                game_id = db.scalars(select(models.GameRow.id).where(models.GameRow.room_id == room_id)
                                     .order_by(models.GameRow.id.desc())).first()
                result = self._result_of(room_id, text, seat, challenge.rules)
                done = db.execute(
                    update(models.ChallengePlayRow)
                    .where(models.ChallengePlayRow.id == play_id, models.ChallengePlayRow.result.is_(None))
                    .values(result=result, game_id=game_id, finished_at=models.utcnow())
                    .execution_options(synchronize_session=False)).rowcount
                db.commit()
                n += int(bool(done))
        return n

    @staticmethod
    def _result_of(room_id: str, text: str, seat: int, rules: RuleSet) -> int:
        lines = [ln for ln in (text or "").split("\n") if ln.strip()]
        try:
            replay = replay_board_lines(lines, one_deal=True)
            res = replay.game.deal.result
            if replay.complete and res is not None:
                return player_result(rules, res, seat)
        except Exception as e:  # noqa: BLE001 - a damaged record scores the worst result
            log.error("challenge room %s: the record does not replay (%s); the worst result is stored",
                      room_id, str(e).splitlines()[0] if str(e) else type(e).__name__)
        return worst_result(rules)

    def plays(self, challenge: ChallengeInfo, *, user_id: int | None = None, board: int | None = None,
              finished: bool = False, limit: int | None = None) -> list[Play]:
        """Plays of ``challenge`` (results settled first: :meth:`settle`), board then start order;
        only ``user_id``'s, only ``board``'s, only finished ones (best result first), at most ``limit``."""
        self.settle(challenge)
        t = models.ChallengePlayRow
        q = (select(t, models.User.name).join(models.User, models.User.id == t.user_id)
             .where(t.challenge_id == challenge.id))
        if user_id is not None:
            q = q.where(t.user_id == user_id)
        if board is not None:
            q = q.where(t.board == board)
        if finished:
            q = q.where(t.result.is_not(None)).order_by(t.result.desc(), t.id)
        else:
            q = q.order_by(t.board, t.id)
        if limit is not None:
            q = q.limit(limit)
        with self.session_factory() as db:
            rows = db.execute(q).all()
            return [Play(p.board, p.user_id, name, bool(p.ranked), p.result, p.room_id, p.game_id) for p, name in rows]

    @contextmanager
    def scores(self, challenge: ChallengeInfo) -> Iterator[tuple[DayScores, dict[int, str]]]:
        """The day's score tables (:func:`guandan.server.challenge.day_scores` of the ranked,
        finished plays) and the players' names, held for the ``with`` block (a lock: the tables
        do not change meanwhile).

        Kept in memory per challenge and brought up to date incrementally: a result never changes
        once stored, so only the rows finished since the last call are read and added (the rows
        whose ``finished_at`` is at most :data:`_LAG` before the newest one seen, skipping those
        already counted); when the number of finished rows still differs from the tables' (a row
        committed later than that with an older time), the tables are rebuilt from every row. Each process of a
        cluster keeps its own and reads the same rows.
        """
        self.settle(challenge)
        t = models.ChallengePlayRow
        with self._lock:
            cached = self._cache.get(challenge.id)
            if cached is None:
                cached = self._cache[challenge.id] = _Scores(DayScores(range(1, challenge.n_boards + 1)))
        with cached.lock:
            where = (t.challenge_id == challenge.id, t.result.is_not(None), t.ranked.is_(True))
            with self.session_factory() as db:
                total = db.scalar(select(func.count()).select_from(t).where(*where)) or 0
                for full in (False, True):
                    if total == len(cached.seen):
                        break
                    if full:
                        cached.reset(challenge.n_boards)
                    q = (select(t.id, t.board, t.user_id, t.result, t.finished_at, models.User.name)
                         .join(models.User, models.User.id == t.user_id).where(*where))
                    if not full and cached.newest is not None:
                        q = q.where(t.finished_at >= cached.newest - _LAG)
                    for pid, board, uid, result, at, name in db.execute(q).all():
                        if pid in cached.seen:
                            continue
                        cached.scores.add(board, uid, result)
                        cached.seen.add(pid)
                        cached.names[uid] = name
                        if at is not None and (cached.newest is None or at > cached.newest):
                            cached.newest = at
            yield cached.scores, cached.names

    def user_days(self, user_id: int, limit: int = 30) -> list[ChallengeInfo]:
        """The challenges ``user_id`` played a board of, newest first (at most ``limit``)."""
        with self.session_factory() as db:
            rows = db.scalars(
                select(models.ChallengeRow)
                .where(models.ChallengeRow.id.in_(select(models.ChallengePlayRow.challenge_id)
                                                  .where(models.ChallengePlayRow.user_id == user_id)))
                .order_by(models.ChallengeRow.day.desc()).limit(limit)).all()
            return [_info(r) for r in rows]


def secret_room(db: Any, room_id: str | None, viewer_id: int | None, now: datetime) -> bool:
    """Whether the game of room ``room_id`` is secret to ``viewer_id`` at ``now``: the room is
    secret until a time still to come (a challenge board before the day closes) and the viewer
    holds none of its seats, or is a guest, or the room is a team match's board room (hidden from
    everyone until both tables have played the board: :mod:`guandan.server.teammatch_store`). Used by
    every endpoint that shows a stored game."""
    if room_id is None:
        return False
    row = db.execute(select(models.Room.secret_until).where(models.Room.id == room_id)).first()
    if row is None or row[0] is None or now >= row[0]:
        return False
    if viewer_id is None:
        return True
    seated = db.execute(select(models.RoomSeat.seat).where(models.RoomSeat.room_id == room_id,
                                                           models.RoomSeat.user_id == viewer_id)).first()
    if seated is None:
        return True
    from .teammatch_store import is_hidden_team_room

    if is_hidden_team_room(db, room_id):  # a team match's board: hidden from its own players too until
        return True                       # both tables have played it (issue 22 item 3)
    # a guest's own board stays secret to the guest too until the close: a free guest account
    # could otherwise read a board's four hands in its replay, then play it ranked
    return bool(db.scalar(select(models.User.is_guest).where(models.User.id == viewer_id)))


def own_seat_only(db: Any, room_id: str | None, viewer_id: int | None, now: datetime) -> int | None:
    """The seat from which ``viewer_id`` may review the game of room ``room_id`` when only that
    seat's view is allowed: the room is still secret at ``now`` (a challenge board before the day
    closes: its player reviews it from their own seat). ``None``: any seat (a public game).
    A viewer who holds no seat never gets here (:func:`secret_room` hides the game)."""
    if room_id is None:
        return None
    row = db.execute(select(models.Room.secret_until).where(models.Room.id == room_id)).first()
    if row is None or row[0] is None or now >= row[0]:
        return None
    seat = db.execute(select(models.RoomSeat.seat).where(models.RoomSeat.room_id == room_id,
                                                         models.RoomSeat.user_id == viewer_id)).first()
    return seat[0] if seat is not None else 0
