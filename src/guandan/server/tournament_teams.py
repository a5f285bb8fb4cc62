"""Online team rounds of tournaments (issue 21 item 2, "Team matches"; issue 22 item 3): one duplicate team
match (复式, :mod:`guandan.server.teammatch`) per pairing of a team tournament whose venue is ``online``.

The pair path (:mod:`guandan.server.tournament_rounds`) is untouched; this module is the team path:

* :meth:`TeamRounds.open_round` (after the round is paired): for each table of the round (not a bye, no
  result yet, no match yet) a team match through :class:`~guandan.server.api_teammatch.TeamMatchService`:
  entry ``a`` is team A (its players 1-2 the pair of table 1, 3-4 the pair of table 2), entry ``b`` team B,
  a bot entry's four seats bots of its level; :data:`BOARDS` boards under the tournament's preset and
  rule overrides (the boards' options; the match is scored with their upgrade, R35). Idempotent: a
  table that has a match keeps it.
* When a match is finished (every board at both tables) its ``team_deals`` (``[t1, t2]`` per board,
  :func:`~guandan.server.teammatch.board_results`) are entered through the engine
  (:func:`guandan.tournament.online.enter_online_result`, over the version read; a repeated event enters
  nothing twice), and the standings follow (26-point scale, field points R58) with nobody typing.
* :meth:`TeamRounds.start` (application startup): open the tables of a round paired just before a stop and
  enter the result of every match that finished while the server was down.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update

from guandan.tournament.errors import TournamentError
from guandan.tournament.model import MatchResult, Tournament, from_json
from guandan.tournament.online import enter_online_result

from . import models
from .teammatch import MatchSetup, board_results

log = logging.getLogger("guandan.server.tournaments")

#: boards of each team match of an online team round
BOARDS = 8

__all__ = ["BOARDS", "TeamRounds", "check_team_accounts", "setup_of", "team_matches_json"]


def team_matches_json(db: Any, tournament_id: int) -> list[dict[str, Any]]:
    """The team matches of an online team tournament for its page: ``{round, table, id, url, status}``
    each, by round and table (the matches' pages show only what both tables have played)."""
    t = models.TeamMatchRow
    rows = db.scalars(select(t).where(t.tournament_id == tournament_id).order_by(t.round, t.table_no))
    return [{"round": r.round, "table": r.table_no, "id": r.id, "url": f"/teammatch/{r.id}", "status": r.status}
            for r in rows]


def _player(e: Any, i: int) -> str:
    if e.bot:
        return f"bot:{e.bot}"
    p = e.players[i]
    return str(p.account or p.name)


def setup_of(t: Tournament, round_no: int, m: Any, boards: int = BOARDS) -> MatchSetup:
    """The team match of table ``m`` (a :class:`~guandan.tournament.model.Match` with both entries) of
    round ``round_no``: entry ``a`` is team A, ``b`` team B (module docstring)."""
    a, b = t.entry(m.a), t.entry(m.b)
    team = [((_player(e, 0), _player(e, 1)), (_player(e, 2), _player(e, 3))) for e in (a, b)]
    name = f"{t.name} · R{round_no} T{m.table}"[:80]
    return MatchSetup(name, team[0], team[1], boards, t.preset, tuple(sorted(t.overrides.items())))


def check_team_accounts(db: Any, t: Tournament) -> None:
    """Raise :class:`~guandan.server.tournament_rounds.OnlineError` (``not_an_account``) unless every
    active team entry's four players are registered accounts (or the entry is a bot team)."""
    from .tournament_rounds import check_players_are_accounts

    check_players_are_accounts(db, t)


class TeamRounds:
    """The online team rounds of every tournament of this server.

    Args:
        session_factory: ``sessionmaker`` of the server's database.
        service: the :class:`~guandan.server.api_teammatch.TeamMatchService` (this object listens to it).
        boards: boards per match.
    """

    def __init__(self, session_factory: Callable[[], Any], service: Any, boards: int = BOARDS) -> None:
        self.session_factory = session_factory
        self.service = service
        self.boards = boards
        service.listeners.append(self.match_finished)

    def _to_open(self, tournament_id: int, round_no: int) -> tuple[int | None, list[MatchSetup], list[int]]:
        with self.session_factory() as db:
            row = db.get(models.TournamentRow, tournament_id)
            assert row is not None
            t = from_json(row.state)
            have = set(db.scalars(select(models.TeamMatchRow.table_no).where(
                models.TeamMatchRow.tournament_id == tournament_id, models.TeamMatchRow.round == round_no)))
            rnd = t.played[round_no - 1]
            todo = [m for m in rnd.matches if m.b is not None and m.result is None and m.table not in have]
            return row.organiser_id, [setup_of(t, round_no, m, self.boards) for m in todo], [m.table for m in todo]

    async def open_round(self, tournament_id: int, round_no: int) -> list[int]:
        """Create and start the team matches of round ``round_no`` (on the event loop). Returns their ids."""
        organiser, setups, tables = await self.service.manager.run_db(self._to_open, tournament_id, round_no)
        made = []
        for setup, table in zip(setups, tables, strict=True):
            made.append(await self.service.create(setup, organiser, (tournament_id, round_no, table)))
        return made

    async def match_finished(self, match_id: int) -> None:
        """A team match is over: enter its result if it plays a tournament's table."""
        got = await self.service.manager.run_db(self._enter, match_id)
        if got is not None:
            log.info("team match %s: %s", match_id, got)

    def _enter(self, match_id: int) -> str | None:
        from .tournament_store import _summary_values, now_iso, state_text

        m = self.service.store.get(match_id)
        if m is None or m.tournament is None or m.status != "finished":
            return None
        tid, round_no, table = m.tournament
        deals = board_results(self.service.store.plays(match_id), m.n_boards)
        result = MatchResult(team_deals=deals)
        for _attempt in range(20):
            with self.session_factory() as db:
                row = db.get(models.TournamentRow, tid)
                if row is None:
                    return None
                t = from_json(row.state)
                try:
                    if not enter_online_result(t, round_no, table, result, at=now_iso(), game_id=None):
                        return "already"
                except TournamentError as e:
                    log.warning("team match %s: its result waits for the organiser: %s", match_id, e)
                    return "held"
                done = db.execute(update(models.TournamentRow).where(
                    models.TournamentRow.id == tid, models.TournamentRow.version == row.version).values(
                    state=state_text(t), version=row.version + 1, updated_at=datetime.now(UTC), **_summary_values(t))
                    .execution_options(synchronize_session=False))
                if done.rowcount != 1:  # type: ignore[attr-defined]
                    db.rollback()  # an organiser wrote meanwhile: read again
                    continue
                db.commit()
                return "entered"
        return "held"

    def _pending(self) -> tuple[list[tuple[int, int]], list[int]]:
        rounds, finished = [], []
        with self.session_factory() as db:
            for row in db.scalars(select(models.TournamentRow).where(models.TournamentRow.status == "running")):
                t = from_json(row.state)
                if t.venue == "online" and t.team and t.played and not t.played[-1].complete:
                    rounds.append((row.id, t.played[-1].number))
            finished = list(db.scalars(select(models.TeamMatchRow.id)
                                       .join(models.TournamentRow, models.TournamentRow.id == models.TeamMatchRow.tournament_id)
                                       .where(models.TournamentRow.status == "running",
                                              models.TeamMatchRow.status == "finished")))
        return rounds, finished

    async def start(self) -> None:
        """Application startup (after the service's own start): module docstring."""
        rounds, finished = await self.service.manager.run_db(self._pending)
        for tid, number in rounds:
            try:
                await self.open_round(tid, number)
            except Exception:  # noqa: BLE001 - the other tournaments go on
                log.exception("tournament %s round %s: cannot open its team matches", tid, number)
        for mid in finished:
            await self.match_finished(mid)
