"""``guandan.server.tournament_entries``: online results entered several in one write of the
tournament (issue 21, "Speed and scale"), each with the outcome it would have had alone, on a real
database (a fresh SQLite file, and a fresh PostgreSQL database when one runs)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import select, update

pytest.importorskip("sqlalchemy")

from test_tournament_web_store import factory  # noqa: F401 (fixture: a fresh SQLite / PostgreSQL database)

from guandan.server import tournament_store as store
from guandan.server.models import TournamentAuditRow, TournamentRow, TournamentTableRow, User
from guandan.server.tournament_entries import Entry, ResultQueue, enter_many
from guandan.server.tournament_parsed import ParsedStates
from guandan.tournament import Player, Tournament, add_entry, from_json, pair_next_round
from guandan.tournament.director import enter_result, find_match
from guandan.tournament.online import result_of_game


def _round_of_four_tables(sessions: Any) -> tuple[int, int]:
    """A tournament of 8 pairs with round 1 paired (4 tables, rooms r1..r4 playing): (id, version)."""
    with sessions() as db:
        alice = User(name="alice", password_hash=None, is_guest=False)
        db.add(alice)
        db.commit()
        t = Tournament(name="entries", rounds=3)
        for i in range(8):
            add_entry(t, f"p{i}", [Player(f"a{i}"), Player(f"b{i}")], by="alice")
        pair_next_round(t, by="alice")
        row = store.create(db, t, alice)
        for m in t.played[0].matches:
            db.add(TournamentTableRow(tournament_id=row.id, round=1, table_no=m.table, room_id=f"r{m.table}",
                                      started_at=0.0, deadline=None, state="playing"))
        db.commit()
        return row.id, row.version


def _state(sessions: Any, tid: int) -> tuple[int, Tournament]:
    with sessions() as db:
        row = db.scalars(select(TournamentRow).where(TournamentRow.id == tid)).one()
        return row.version, from_json(row.state)


def _rows(sessions: Any) -> dict[str, tuple[str, int | None, str | None]]:
    with sessions() as db:
        return {r.room_id: (r.state, r.game_id, r.note) for r in db.scalars(select(TournamentTableRow))}


A_WINS = result_of_game((14, 9), 0, False)  # side a passed A (R37)
B_AHEAD = result_of_game((7, 11), None, True)  # time called, side b ahead (R58)
LEVEL = result_of_game((8, 8), None, True)  # time called, equal levels: a draw in Swiss (R58)


def test_results_of_several_tables_are_entered_in_one_write(factory: Any) -> None:  # noqa: F811
    tid, v0 = _round_of_four_tables(factory)
    parsed = ParsedStates()
    out = enter_many(factory, parsed, [Entry("r1", A_WINS, 11), Entry("r2", B_AHEAD, 12), Entry("r3", LEVEL, 13),
                                       Entry("r1", A_WINS, 11), Entry("nowhere", A_WINS, 14)])
    assert [o for o, _ in out] == ["entered", "entered", "entered", "already", "already"]
    # the decisions the game-over panels show: R58 field points win 3 / draw 2 / loss 1
    assert out[0][1]["winner"] == "a" and out[0][1]["field_points"] == [3, 1] and out[0][1]["passed"] == "a"
    assert out[1][1]["winner"] == "b" and out[1][1]["field_points"] == [1, 3] and out[1][1]["time_called"]
    assert out[2][1]["winner"] is None and out[2][1]["field_points"] == [2, 2]
    assert out[3][1] is None and out[4][1] is None  # a repeated event, a room of no tournament
    version, t = _state(factory, tid)
    assert version == v0 + 1  # one write for three results
    results = {m.table: m.result for m in t.played[0].matches}
    assert results == {1: A_WINS, 2: B_AHEAD, 3: LEVEL, 4: None}
    assert [e.action for e in t.log[-3:]] == ["online"] * 3
    assert [e.after["game_id"] for e in t.log[-3:]] == [11, 12, 13]
    assert _rows(factory) == {"r1": ("entered", 11, None), "r2": ("entered", 12, None),
                              "r3": ("entered", 13, None), "r4": ("playing", None, None)}
    with factory() as db:
        audit = db.scalars(select(TournamentAuditRow).where(TournamentAuditRow.operation == "result")
                           .order_by(TournamentAuditRow.id)).all()
    assert [(a.version, a.after["table"], a.after["reason"], a.user_id) for a in audit] == \
        [(v0 + 1, 1, "online", None), (v0 + 1, 2, "online", None), (v0 + 1, 3, "online", None)]
    # the state written is kept parsed for the next entry, at the version written
    kept = parsed.take(tid, v0 + 1)
    assert kept is not None and {m.table: m.result for m in kept.played[0].matches} == results
    # entered again (a restart finding the games): nothing more is written
    again = enter_many(factory, ParsedStates(), [Entry("r2", B_AHEAD, 12), Entry("r1", A_WINS, 11)])
    assert again == [("already", None), ("already", None)] and _state(factory, tid)[0] == v0 + 1


def test_each_result_of_a_batch_keeps_its_own_outcome(factory: Any) -> None:  # noqa: F811
    """The organiser typed a result for table 2 (the same as the game's) and another one for table 3:
    table 2 is ``already`` with its decision, table 3 ``held`` with the engine's reason, table 1 entered."""
    tid, _ = _round_of_four_tables(factory)
    with factory() as db:
        row = db.scalars(select(TournamentRow).where(TournamentRow.id == tid)).one()
        t = from_json(row.state)
        enter_result(t, 1, 2, B_AHEAD, by="alice")
        enter_result(t, 1, 3, A_WINS, by="alice")
        typed = row.version + 1
        db.execute(update(TournamentRow).where(TournamentRow.id == tid)
                   .values(state=store.state_text(t), version=typed))
        db.commit()
    out = enter_many(factory, ParsedStates(), [Entry("r1", LEVEL, 21), Entry("r2", B_AHEAD, 22),
                                              Entry("r3", B_AHEAD, 23)])
    assert [o for o, _ in out] == ["entered", "already", "held"]
    assert out[1][1]["winner"] == "b" and out[2][1] is None
    rows = _rows(factory)
    assert rows["r1"] == ("entered", 21, None) and rows["r2"] == ("entered", 22, None)
    assert rows["r3"][0] == "held" and rows["r3"][1] == 23 and "result_already_entered" in rows["r3"][2]
    version, t = _state(factory, tid)
    assert version == typed + 1
    assert find_match(t, 1, 1)[1].result == LEVEL and find_match(t, 1, 3)[1].result == A_WINS  # the organiser's


class _Racing(ParsedStates):
    """Parsed states whose first ``take`` lets an organiser write the tournament meanwhile."""

    def __init__(self, sessions: Any, tid: int) -> None:
        super().__init__()
        self.sessions, self.tid, self.takes = sessions, tid, 0

    def take(self, tournament_id: int, version: int) -> Any:
        self.takes += 1
        if self.takes == 1:
            with self.sessions() as db:
                db.execute(update(TournamentRow).where(TournamentRow.id == self.tid)
                           .values(version=TournamentRow.version + 1))
                db.commit()
        return super().take(tournament_id, version)


def test_a_write_that_loses_the_version_race_is_rolled_back_and_tried_again(factory: Any) -> None:  # noqa: F811
    tid, v0 = _round_of_four_tables(factory)
    racing = _Racing(factory, tid)
    out = enter_many(factory, racing, [Entry("r1", A_WINS, 31), Entry("r4", LEVEL, 34)])
    assert [o for o, _ in out] == ["entered", "entered"] and racing.takes == 2
    version, t = _state(factory, tid)
    assert version == v0 + 2  # the organiser's write, then the results' one
    assert [e.table for e in t.log if e.action == "online"] == [1, 4]  # each once
    with factory() as db:
        audit = db.scalars(select(TournamentAuditRow).where(TournamentAuditRow.operation == "result")).all()
    assert sorted(a.after["table"] for a in audit) == [1, 4]


def test_the_queue_enters_what_arrives_together_in_one_call() -> None:
    calls: list[list[str]] = []

    def enter(entries: Any) -> list[Any]:
        calls.append([e.room_id for e in entries])
        if "bad" in calls[-1]:
            raise RuntimeError("the database is gone")
        return [("entered", {"room": e.room_id}) for e in entries]

    async def run_db(fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def main() -> None:
        q = ResultQueue(run_db, enter, wait_s=0.05, batch_max=3)
        got = await asyncio.gather(*(q.enter(Entry(f"r{i}", A_WINS, i)) for i in range(5)))
        assert got == [("entered", {"room": f"r{i}"}) for i in range(5)]
        assert calls == [["r0", "r1", "r2"], ["r3", "r4"]] and (q.calls, q.entered) == (2, 5)
        with pytest.raises(RuntimeError, match="the database is gone"):  # each caller of the batch gets it
            await asyncio.gather(q.enter(Entry("bad", A_WINS, 9)))
        later = asyncio.ensure_future(q.enter(Entry("r9", A_WINS, 9)))
        await asyncio.sleep(0)
        q.close()  # shutdown: what waits is not entered (the restart enters it)
        with pytest.raises(asyncio.CancelledError):
            await later
        assert calls[-1] == ["bad"]

    asyncio.run(main())
    with pytest.raises(ValueError):
        ResultQueue(run_db, enter, wait_s=-1)


def test_each_caller_gets_its_own_outcome_or_error_and_close_stops_a_batch_being_entered() -> None:
    import threading

    release = threading.Event()

    def enter(entries: Any) -> list[Any]:
        if entries[0].room_id == "slow":
            release.wait(5)
        return [RuntimeError(f"{e.room_id} failed") if e.room_id.startswith("x") else ("entered", None)
                for e in entries]

    async def run_db(fn: Any, *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def main() -> None:
        q = ResultQueue(run_db, enter, wait_s=0.01)
        got = await asyncio.gather(q.enter(Entry("r1", A_WINS, 1)), q.enter(Entry("x2", A_WINS, 2)),
                                   return_exceptions=True)
        assert got[0] == ("entered", None) and isinstance(got[1], RuntimeError) and str(got[1]) == "x2 failed"
        slow = asyncio.ensure_future(q.enter(Entry("slow", A_WINS, 3)))
        await asyncio.sleep(0.2)  # the batch is in the database thread
        q.close()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await slow

    asyncio.run(main())


def test_a_tournament_whose_write_fails_does_not_take_the_others_with_it(factory: Any) -> None:  # noqa: F811
    t1, v1 = _round_of_four_tables(factory)
    with factory() as db:  # a second tournament, its tables in rooms s1..s4
        t = from_json(db.scalars(select(TournamentRow.state).where(TournamentRow.id == t1)).one())
        alice = db.scalars(select(User).where(User.name == "alice")).one()
        t2 = store.create(db, t, alice).id
        for m in t.played[0].matches:
            db.add(TournamentTableRow(tournament_id=t2, round=1, table_no=m.table, room_id=f"s{m.table}",
                                      started_at=0.0, deadline=None, state="playing"))
        db.commit()

    class Broken(ParsedStates):
        def take(self, tournament_id: int, version: int) -> Any:
            if tournament_id == t2:
                raise OSError("disk full")
            return super().take(tournament_id, version)

    out = enter_many(factory, Broken(), [Entry("s1", A_WINS, 1), Entry("r1", A_WINS, 2), Entry("s2", LEVEL, 3)])
    assert isinstance(out[0], OSError) and out[2] is out[0]
    assert out[1][0] == "entered" and out[1][1]["winner"] == "a"
    assert _state(factory, t1)[0] == v1 + 1 and _rows(factory)["r1"] == ("entered", 2, None)
    assert _rows(factory)["s1"] == ("playing", None, None)  # nothing of tournament 2 was written


def test_the_drawn_game_entered_again_is_still_waiting_for_its_extra_deal(factory: Any) -> None:  # noqa: F811
    """R58: a drawn knock-out keeps its result in ``pending`` until the extra deal is played. A restart
    that finds the drawn game again (before the extra deal's room was opened) must not enter the draw
    with that game's 头游: it is ``extra`` again and nothing changes."""
    from guandan.tournament.model import result_to_dict
    import json

    tid, v0 = _round_of_four_tables(factory)
    with factory() as db:
        db.execute(update(TournamentTableRow).where(TournamentTableRow.room_id == "r1")
                   .values(pending=json.dumps(result_to_dict(LEVEL)), game_id=55, note="extra_deal"))
        db.commit()
    assert enter_many(factory, ParsedStates(), [Entry("r1", LEVEL, 55, head="a")]) == [("extra", None)]
    assert _state(factory, tid)[0] == v0 and _rows(factory)["r1"] == ("playing", 55, "extra_deal")
