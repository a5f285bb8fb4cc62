"""Team matches (复式) in the database: ``team_matches``, ``team_match_plays`` and their board rooms.

What to store is decided by :mod:`guandan.server.teammatch` (plain code); this module reads and
writes, always off the event loop.

* :meth:`TeamMatchStore.create` deals the boards (secure random source) and stores the match.
* :meth:`TeamMatchStore.start_board` starts the next board at a table: a ``playing`` board room with no
  owner (nobody may abandon it through the rooms API), the board's JSON and the table's seats
  (:func:`~guandan.server.teammatch.seating`), and its play row in
  one transaction. ``(match_id, board, table_no)`` is unique: of two starts at once one inserts, the
  other fails and rolls its room back, so a board is never played twice at a table.
* The rooms are secret (``rooms.secret_until`` far ahead) to everyone, their own players included
  (:func:`is_hidden_team_room`, used by :func:`guandan.server.challenge_store.secret_room`), until the
  board has been played at both tables: :meth:`TeamMatchStore.settle` then sets ``secret_until`` to
  now on both rooms (their replays and reviews open).
* :meth:`TeamMatchStore.settle` stores the result of every finished board room (team A's signed
  result, :func:`~guandan.server.teammatch.result_for_a`; a deal that did not reach its end, left by its
  people or with a damaged record, counts :func:`~guandan.server.teammatch.abandoned_result`) and marks
  the match
  ``finished`` once every board is in at both tables.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from guandan.core.rules import RuleSet
from guandan.duplicate import deal_board_set
from guandan.duplicate.board_records import replay_board_lines

from . import models
from .models import utcnow
from .teammatch import (BoardPlay, MatchSetup, abandoned_result, board_open, finished, is_bot, next_board,
                        result_for_a, seating)
from .table.bots import bot_agent

log = logging.getLogger("guandan.server.teammatch")

#: how long a team match's board room stays secret at most (until both tables have played it, it is
#: opened by :meth:`TeamMatchStore.settle`; a match abandoned half-way stays hidden this long)
SECRET_FOR = timedelta(days=3650)

__all__ = ["MatchInfo", "NotAnAccount", "TeamMatchStore", "is_hidden_team_room"]


class NotAnAccount(ValueError):
    """A player named in a match setup has no (registered) account: ``name``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} has no account")
        self.name = name


@dataclass(frozen=True)
class MatchInfo:
    """A stored team match: ``id``, ``name``, ``preset``, ``n_boards``, ``seats`` (``{"a": [[p, p], [p, p]],
    "b": ...}``), ``ranked``, ``status`` (``playing``/``finished``), ``organiser`` (account id or None),
    ``tournament`` (``(tournament_id, round, table)`` or None), ``boards`` (the boards' JSON; never sent
    to a client before :func:`~guandan.server.teammatch.board_open`)."""

    id: int
    name: str
    preset: str
    n_boards: int
    seats: dict[str, Any]
    ranked: bool
    status: str
    organiser: int | None
    tournament: tuple[int, int, int] | None
    boards: list[dict[str, Any]]

    @property
    def rules(self) -> RuleSet:
        """The boards' rule set."""
        return RuleSet.from_dict(self.boards[0]["options"])


def _info(row: Any) -> MatchInfo:
    tour = None if row.tournament_id is None else (row.tournament_id, row.round, row.table_no)
    return MatchInfo(row.id, row.name, row.preset, row.n_boards, json.loads(row.seats), bool(row.ranked), row.status,
                     row.organiser_id, tour, json.loads(row.boards))


def is_hidden_team_room(db: Any, room_id: str) -> bool:
    """Whether ``room_id`` is a team match's board room (its board not yet played at both tables is
    hidden from everyone, its own players included, while ``rooms.secret_until`` is ahead)."""
    return db.scalar(select(models.TeamMatchPlayRow.id).where(models.TeamMatchPlayRow.room_id == room_id)
                     .limit(1)) is not None


class TeamMatchStore:
    """Reads and writes of team matches.

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session``.
    """

    def __init__(self, session_factory: Callable[[], Any]) -> None:
        self.session_factory = session_factory

    def create(self, setup: MatchSetup, organiser_id: int | None,
               tournament: tuple[int, int, int] | None = None, seed: int | None = None) -> int:
        """Deal ``setup.boards`` boards and store the match (status ``playing``). Returns its id.

        Args:
            seed: None (the server): the secure random source; an int only in tests.
        Raises:
            NotAnAccount: a person named is not a registered account.
        """
        from .auth import find_user

        rules = setup.rules  # the preset and a tournament's overrides: the boards' options carry them
        boards = [b.to_json() for b in deal_board_set(setup.boards, rules, seed=seed, preset=setup.preset)]
        with self.session_factory() as db:
            seats = setup.seats_json()
            for team in seats.values():
                for pair in team:
                    for i, p in enumerate(pair):
                        if is_bot(p):
                            continue
                        u = find_user(db, p)
                        if u is None or u.is_guest:
                            raise NotAnAccount(p)
                        pair[i] = u.name
            row = models.TeamMatchRow(name=setup.name, organiser_id=organiser_id, preset=setup.preset,
                                      n_boards=setup.boards, boards=json.dumps(boards, separators=(",", ":")),
                                      seats=json.dumps(seats), ranked=setup.ranked, status="playing",
                                      tournament_id=None if tournament is None else tournament[0],
                                      round=None if tournament is None else tournament[1],
                                      table_no=None if tournament is None else tournament[2])
            db.add(row)
            db.commit()
            return int(row.id)

    def get(self, match_id: int) -> MatchInfo | None:
        """The match, or None."""
        with self.session_factory() as db:
            row = db.get(models.TeamMatchRow, match_id)
            return None if row is None else _info(row)

    def plays(self, match_id: int) -> list[BoardPlay]:
        """Every board started at either table, board then table order."""
        t = models.TeamMatchPlayRow
        with self.session_factory() as db:
            rows = db.scalars(select(t).where(t.match_id == match_id).order_by(t.board, t.table_no)).all()
            return [BoardPlay(r.board, r.table_no, r.result, r.room_id, r.game_id) for r in rows]

    def recent(self, limit: int = 50) -> list[MatchInfo]:
        """The newest matches, newest first (anyone may look at a match's page; the boards stay hidden)."""
        with self.session_factory() as db:
            rows = db.scalars(select(models.TeamMatchRow).order_by(models.TeamMatchRow.id.desc()).limit(limit)).all()
            return [_info(r) for r in rows]

    def running(self) -> list[int]:
        """The ids of the matches still ``playing``."""
        with self.session_factory() as db:
            return list(db.scalars(select(models.TeamMatchRow.id).where(models.TeamMatchRow.status == "playing")))

    def running_count(self, organiser_id: int) -> int:
        """How many matches ``organiser_id`` created that are still ``playing`` (tournament matches aside)."""
        t = models.TeamMatchRow
        with self.session_factory() as db:
            return int(db.scalar(select(func.count()).select_from(t).where(
                t.organiser_id == organiser_id, t.status == "playing", t.tournament_id.is_(None))) or 0)

    def match_of_room(self, room_id: str) -> int | None:
        """The match whose board room ``room_id`` is, or None."""
        with self.session_factory() as db:
            return db.scalar(select(models.TeamMatchPlayRow.match_id).where(models.TeamMatchPlayRow.room_id == room_id))

    def start_board(self, match_id: int, table: int) -> str | None:
        """Start the next board at ``table`` (:func:`~guandan.server.teammatch.next_board`): a new
        ``playing`` board room and its play row in one transaction. Returns the room's id, or None when
        the table has a board in progress, has played every board, or another request started it first
        (the unique key refuses a second start of a board at a table)."""
        from .auth import find_user

        m = self.get(match_id)
        if m is None or m.status != "playing":
            return None
        k = next_board(self.plays(match_id), table, m.n_boards)
        if k is None:
            return None
        spec = m.boards[k - 1]
        with self.session_factory() as db:
            room_id = secrets.token_urlsafe(6)
            while db.get(models.Room, room_id) is not None:
                room_id = secrets.token_urlsafe(6)
            db.add(models.Room(id=room_id, name=f"{m.name} · T{table} #{k}"[:models.ROOM_NAME_MAX], preset=m.preset,
                               options=dict(spec["options"]), owner_id=None, status="playing", seed=None,
                               record="", default_clocks=False, board=json.dumps(spec, separators=(",", ":")),
                               secret_until=utcnow() + SECRET_FOR))
            db.flush()
            for s, p in enumerate(seating(m.seats, table)):
                user = None if is_bot(p) else find_user(db, p)
                db.add(models.RoomSeat(room_id=room_id, seat=s, user_id=None if user is None else user.id,
                                       bot=bot_agent(p.split(":", 1)[1]) if is_bot(p) else None))
            db.add(models.TeamMatchPlayRow(match_id=match_id, board=k, table_no=table, room_id=room_id))
            try:
                db.commit()
            except IntegrityError:
                db.rollback()
                return None
        return room_id

    def current_rooms(self, match_id: int) -> dict[int, str]:
        """``{table: room}`` of the boards in progress."""
        return {p.table: p.room for p in self.plays(match_id) if p.result is None and p.room}

    def settle(self, match_id: int) -> bool:
        """Store the results of the match's finished board rooms, open the boards played at both tables
        (their rooms' ``secret_until`` set to now) and mark the match ``finished`` when every board is in.
        Returns whether the match is finished."""
        m = self.get(match_id)
        if m is None:
            return False
        t = models.TeamMatchPlayRow
        with self.session_factory() as db:
            rows = db.execute(select(t.id, t.table_no, t.room_id, models.Room.status, models.Room.record)
                              .join(models.Room, models.Room.id == t.room_id)
                              .where(t.match_id == match_id, t.result.is_(None),
                                     models.Room.status.in_(("finished", "damaged")))).all()
            for play_id, table, room_id, status, record in rows:
                result = self._result_of(room_id, record if status == "finished" else "", table, m.rules,
                                         abandoned_result(m.rules, seating(m.seats, table), table))
                game_id = db.scalars(select(models.GameRow.id).where(models.GameRow.room_id == room_id)
                                     .order_by(models.GameRow.id.desc())).first()
                db.execute(update(t).where(t.id == play_id, t.result.is_(None))
                           .values(result=result, game_id=game_id, finished_at=utcnow())
                           .execution_options(synchronize_session=False))
            db.commit()
        plays = self.plays(match_id)
        now = utcnow()
        opened = [p.room for p in plays if p.room and board_open(p.board, plays)]
        done = finished(plays, m.n_boards)
        with self.session_factory() as db:
            if opened:
                db.execute(update(models.Room).where(models.Room.id.in_(opened), models.Room.secret_until > now)
                           .values(secret_until=now).execution_options(synchronize_session=False))
            if done and m.status == "playing":
                db.execute(update(models.TeamMatchRow).where(models.TeamMatchRow.id == match_id,
                                                             models.TeamMatchRow.status == "playing")
                           .values(status="finished", finished_at=now).execution_options(synchronize_session=False))
            db.commit()
        return done

    @staticmethod
    def _result_of(room_id: str, text: str, table: int, rules: RuleSet, unfinished: int) -> int:
        lines = [ln for ln in (text or "").split("\n") if ln.strip()]
        try:
            replay = replay_board_lines(lines, one_deal=True)
            res = replay.game.deal.result
            if replay.complete and res is not None:
                return result_for_a(rules, res, table)
        except Exception as e:  # noqa: BLE001 - a damaged record counts as an unfinished deal
            log.error("team match room %s: the record does not replay (%s); %s is stored", room_id,
                      str(e).splitlines()[0] if str(e) else type(e).__name__, unfinished)
        return unfinished
