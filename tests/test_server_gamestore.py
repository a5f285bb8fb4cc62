"""Append-only game storage (issue 10): ``game_events`` rows, restore from them, migration 0004.

Every test runs on a real SQLite file and on a real PostgreSQL database (fixtures of
``test_server_storage.py``: ``GUANDAN_TEST_POSTGRES_URL``). Games are played through the live
table (:class:`guandan.server.table.flow.Table`: ``act`` and ``ready`` as the websocket calls them) by
four seated people whose moves come from the heuristic bot, on seeded deals, so the tests reach
known phases: a deal in progress, tribute (docs/rules.md R39-R41) and return (R42).

What is checked:

* an action writes only its own new record lines (one small insert), never the record so far:
  the bytes written per action do not grow with the game, while the record reaches tens of KB;
* the record assembled from the rows is the engine's record of the game (``replay_lines``
  re-applies every action through ``Game.check`` and finds the same events);
* a second :class:`TableManager` on the same database (a server restart) rebuilds exactly the
  same table mid-deal, during tribute and during return: events, hands, trick, turn, levels, views;
* migration 0004 moves the record of a live room of a revision-0003 database into rows, and the
  server then restores the same game;
* a record line stored twice at one index is refused by the database (the primary key).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event, inspect, text
from sqlalchemy.exc import IntegrityError
from test_server_storage import (
    db_url,  # noqa: F401 (fixture)
    fresh_pg_database,
    pg_session_url,  # noqa: F401 (fixture)
)

from guandan.agents.registry import make_agent
from guandan.core.deal import PLAY, RETURN, TRIBUTE
from guandan.core.match import Game, action_from_json
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view
from guandan.records import dumps, record_lines, replay_lines
from guandan.server import db as gdb
from guandan.server import models
from guandan.server.gamestore import DuplicateEventError, GameStore, StoredRecordError
from guandan.server.settings import Settings
from guandan.server.connections import Conn
from guandan.server.manager import TableManager
from guandan.server.table.flow import Table
from guandan.server.table.views import view_for

SEED = 11


# -- helpers ---------------------------------------------------------------------------------------


def make_room(factory: Any, room_id: str = "room0001", seed: int = SEED) -> list[int]:
    """A ``playing`` room with four seated people (no clocks); returns their user ids."""
    with factory() as db:
        users = [models.User(name=f"{room_id}p{s}", password_hash=None, is_guest=True) for s in range(4)]
        db.add_all(users)
        db.flush()
        db.add(models.Room(id=room_id, name="r", preset="official", options=RuleSet.preset("official").to_dict(),
                           owner_id=users[0].id, status="playing", seed=seed, record=""))
        db.flush()
        for s, u in enumerate(users):
            db.add(models.RoomSeat(room_id=room_id, seat=s, user_id=u.id))
        db.commit()
        return [u.id for u in users]


def manager_for(url: str) -> TableManager:
    """A table manager on ``url`` with seeded deals; nobody's absence ever hands a seat to the bot."""
    engine = gdb.make_engine(url)
    settings = Settings(db_url=url, bot_delay_s=0.0, seeded_deals=True)
    return TableManager(gdb.make_session_factory(engine), settings, away_grace_s=10_000.0)


async def drive(manager: TableManager, room_id: str, uids: list[int],
                stop: Callable[[Table], bool], start: bool = True) -> Table:
    """Play the room's game through :meth:`Table.act` / :meth:`Table.ready` (heuristic moves for
    every seat) until ``stop(table)`` holds between two actions; the writes are then flushed."""
    table = await manager.start_game(room_id) if start else manager.tables[room_id]
    conns = [Conn(user_id=u) for u in uids]
    agents = [make_agent("heuristic", SEED * 4 + s) for s in range(4)]
    for _ in range(20_000):
        game = table.game
        assert game is not None
        if table.between is not None:
            for c in conns:
                await table.ready(c)
            for _ in range(2000):
                if table.between is None:
                    break
                await asyncio.sleep(0.005)
            assert table.between is None, "the next deal did not start once everyone was ready"
            continue
        if stop(table) or game.over:
            break
        seat = game.to_act()
        assert seat is not None
        await table.act(conns[seat], agents[seat].act(seat_view(game, seat)))
    await manager.writer.flush()
    assert manager.writer.lost == 0
    return table


def snapshot(table: Table) -> dict[str, Any]:
    """Everything a restart must keep: events, phase, whose turn, hands, the trick (in each seat's
    view), levels, legal actions, the record lines."""
    g = table.game
    assert g is not None
    return {
        "events": json.loads(json.dumps(g.events)),
        "phase": g.phase,
        "to_act": g.to_act(),
        "hands": [list(h) for h in g.deal.hands],
        "views": [view_for(g, s, ["a", "b", "c", "d"]) for s in range(4)] + [view_for(g, None, ["a", "b", "c", "d"])],
        "levels": list(g.score.levels),
        "legal": sorted(map(str, g.legal_actions())) if not g.over else [],
        "deal": (g.game_number, g.deal_number),
        "lines": list(table._lines),
    }


def tracker(engine: Any) -> list[tuple[str, int, int, int]]:
    """Record every write statement sent to ``engine``: (statement, rows, bytes of its text
    values, bytes of the largest row's text values)."""
    seen: list[tuple[str, int, int, int]] = []

    def size(params: Any) -> int:
        values = params.values() if isinstance(params, dict) else params
        return sum(len(v.encode()) for v in values if isinstance(v, str))

    @event.listens_for(engine, "before_cursor_execute")
    def _before(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool) -> None:
        head = statement.lstrip().split(None, 1)[0].upper()
        if head not in ("INSERT", "UPDATE", "DELETE"):
            return
        rows = list(parameters) if executemany else [parameters]
        sizes = [size(p) for p in rows]
        seen.append((" ".join(statement.split()[:3]), len(rows), sum(sizes), max(sizes, default=0)))

    return seen


# -- the tests -------------------------------------------------------------------------------------


def test_an_action_writes_only_its_new_lines_however_long_the_game(db_url: str) -> None:  # noqa: F811
    manager = manager_for(db_url)
    uids = make_room(manager.session_factory)
    writes = tracker(manager.session_factory.kw["bind"])

    async def play() -> tuple[Table, int]:
        table = await drive(manager, "room0001", uids, lambda t: False)
        n = table.seq
        await manager.shutdown()
        return table, n

    table, actions = asyncio.run(play())
    game = table.game
    assert game is not None and game.over
    record = table.record_text()
    assert len(record) > 30_000  # a whole game: tens of KB
    inserts = [w for w in writes if w[0].startswith("INSERT INTO game_events")]
    lines = record.splitlines()
    # every record line was inserted exactly once: the game wrote its record once in all (plus
    # the room id of each row), where rewriting the record after every action writes it
    # about (number of actions) / 2 times
    assert sum(w[1] for w in inserts) == len(lines)
    room_id_bytes = len("room0001") * len(lines)
    assert sum(w[2] for w in inserts) == sum(len(x.encode()) for x in lines) + room_id_bytes
    assert len(inserts) <= actions + 1  # the header, then at most one insert per action (batched)
    # a row is one event, however late in the game: never more than a deal's four hands
    assert max(w[3] for w in inserts) < 2_000
    assert max(w[3] for w in inserts[-100:]) < 2_000
    # the whole record is written once, when the game is over (rooms.record and games.record)
    # (a batch of game_events rows holds only new lines: checked above)
    big = [w for w in writes if w[2] > 10_000 and not w[0].startswith("INSERT INTO game_events")]
    assert sorted(w[0] for w in big) == ["INSERT INTO games", "UPDATE rooms SET"]
    assert all(w[2] >= len(record.encode()) for w in big)


def test_the_record_assembled_from_rows_is_the_engines_record(db_url: str) -> None:  # noqa: F811
    manager = manager_for(db_url)
    uids = make_room(manager.session_factory)
    games = GameStore(manager.session_factory)
    seen_live: list[str] = []

    async def play() -> Table:
        # half way through, the live record is already readable from the rows
        table = await drive(manager, "room0001", uids, lambda t: t.seq >= 300)
        seen_live.extend(games.load("room0001"))
        assert seen_live == table._lines
        table = await drive(manager, "room0001", uids, lambda t: False, start=False)
        await manager.shutdown()
        return table

    table = asyncio.run(play())
    assert table.game is not None and table.game.over
    with manager.session_factory() as db:
        room = db.get(models.Room, "room0001")
        stored = db.query(models.GameRow).filter_by(room_id="room0001").one()
        assert room.status == "finished" and room.record == stored.record
        winner = stored.winner_team
    assert games.load("room0001") == []  # the rows are gone once the game is stored
    lines = stored.record.splitlines()
    assert lines[: len(seen_live)] == seen_live
    # the engine, given only the record's deals and actions, produces exactly the same record
    result = replay_lines(lines)
    assert result.complete and result.game.winner == winner
    fresh = Game(RuleSet.preset("official"), seed=SEED, max_games=1)
    for ev in (json.loads(x) for x in lines[1:]):
        if ev["type"] == "action":
            fresh.apply(action_from_json(ev["action"]), ev["seat"])
    assert [dumps(e) for e in fresh.events] == lines[1:]
    assert lines == record_lines(fresh, "official", [f"room0001p{s}" for s in range(4)], seed=SEED)


@pytest.mark.parametrize("point", ["started", "mid_deal", "tribute", "return"])
def test_restart_restores_exactly_the_same_table(db_url: str, point: str) -> None:  # noqa: F811
    stops: dict[str, Callable[[Table], bool]] = {
        "started": lambda t: t.seq == 0,  # the first deal is dealt, nobody acted yet
        "mid_deal": lambda t: t.game is not None and t.game.deal_number == 1 and t.seq >= 17,
        "tribute": lambda t: t.game is not None and t.game.phase == TRIBUTE,
        "return": lambda t: t.game is not None and t.game.phase == RETURN,
    }
    manager = manager_for(db_url)
    uids = make_room(manager.session_factory)

    async def first() -> dict[str, Any]:
        table = await drive(manager, "room0001", uids, stops[point])
        assert table.game is not None and not table.game.over, f"the game never reached {point}"
        snap = snapshot(table)
        await manager.shutdown()  # the server stops; the next one reads the database
        return snap

    before = asyncio.run(first())
    expected_phase = {"started": PLAY, "mid_deal": PLAY, "tribute": TRIBUTE, "return": RETURN}[point]
    assert before["phase"] == expected_phase
    if point == "mid_deal":
        assert before["events"][-1]["type"] == "action" and before["views"][0]["last_actions"] != [None] * 4

    manager2 = manager_for(db_url)
    assert manager2.restore() == 1
    table2 = manager2.tables["room0001"]
    assert snapshot(table2) == before
    # the pause between deals is not part of the record: a restart at the very start of a deal
    # (no action of it yet, e.g. before the first tribute) shows the pause again, a fresh deadline
    ends = [i for i, e in enumerate(before["events"]) if e["type"] == "deal_end"]
    paused = bool(ends) and not any(e["type"] == "action" for e in before["events"][ends[-1]:])
    assert (table2.between is not None) == paused

    async def finish() -> Table:  # and the restored table plays on to the end, stored whole
        t = await drive(manager2, "room0001", uids, lambda t: False, start=False)
        await manager2.shutdown()
        return t

    t = asyncio.run(finish())
    assert t.game is not None and t.game.over
    with manager2.session_factory() as db:
        record = db.query(models.GameRow).filter_by(room_id="room0001").one().record
    assert record.splitlines()[: len(before["lines"])] == before["lines"]
    assert replay_lines(record.splitlines()).complete


def test_a_line_stored_twice_is_refused(db_url: str) -> None:  # noqa: F811
    engine = gdb.make_engine(db_url)
    factory = gdb.make_session_factory(engine)
    make_room(factory)
    store = GameStore(factory)
    store.start("room0001", '{"format":"pyguandan-record"}', ['{"type":"deal"}'])
    store.append("room0001", 2, ['{"type":"action","seat":0}'])
    with pytest.raises(DuplicateEventError) as info:
        store.append("room0001", 2, ['{"type":"action","seat":1}'])  # index 2 exists
    assert info.value.index == 2
    with pytest.raises(DuplicateEventError):
        store.start("room0001", '{"format":"pyguandan-record"}')  # a second game's header
    # the refused writes changed nothing, not even their new indices
    assert store.load("room0001") == ['{"format":"pyguandan-record"}', '{"type":"deal"}', '{"type":"action","seat":0}']
    assert store.count("room0001") == 3
    # the database itself enforces it (not only the store): a raw duplicate insert fails
    with engine.begin() as conn, pytest.raises(IntegrityError):
        conn.execute(text("INSERT INTO game_events (room_id, idx, line) VALUES ('room0001', 1, 'x')"))
    # a line for a room that does not exist is refused too (foreign key), and is not a duplicate
    with pytest.raises(IntegrityError):
        store.append("nosuchrm", 0, ["{}"])
    # a hole (line 3 missing) is reported, never replayed as a shorter game
    store.append("room0001", 4, ['{"type":"action","seat":2}'])
    with pytest.raises(StoredRecordError):
        store.load("room0001")
    engine.dispose()


def _record_mid_deal(n_actions: int) -> tuple[Game, list[str]]:
    """A seeded official game after ``n_actions`` heuristic actions, and its record lines."""
    game = Game(RuleSet.preset("official"), seed=SEED, max_games=1)
    agents = [make_agent("heuristic", SEED * 4 + s) for s in range(4)]
    for _ in range(n_actions):
        seat = game.to_act()
        assert seat is not None
        game.apply(agents[seat].act(seat_view(game, seat)), seat)
    return game, record_lines(game, "official", [f"room0001p{s}" for s in range(4)], seed=SEED)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_migration_0004_moves_a_live_record_into_rows(backend: str, tmp_path: Any) -> None:
    game, lines = _record_mid_deal(25)
    assert game.phase == PLAY and not game.over
    record = "".join(ln + "\n" for ln in lines)

    def check(url: str) -> None:
        gdb.migrate(url, "0003")
        engine = gdb.make_engine(url)
        assert "game_events" not in inspect(engine).get_table_names()
        with engine.begin() as conn:  # the rooms of a revision-0003 server: one live, one finished
            conn.execute(text("INSERT INTO users (name, is_guest, created_at, rating_mu, rating_sigma, games_played, "
                              "games_won, anhui_points) VALUES ('owner', true, '2026-01-01', 25, 8.3, 0, 0, 0)"))
            for rid, status, rec in (("room0001", "playing", record), ("room0002", "finished", "{}\n")):
                conn.execute(text("INSERT INTO rooms (id, name, preset, options, owner_id, status, seed, record, "
                                  "created_at, updated_at, default_clocks) VALUES (:id, 'r', 'official', :o, 1, "
                                  ":st, :seed, :rec, '2026-01-01', '2026-01-01', false)"),
                             {"id": rid, "o": json.dumps(RuleSet.preset("official").to_dict()), "st": status,
                              "seed": SEED, "rec": rec})
                for s in range(4):
                    conn.execute(text("INSERT INTO room_seats (room_id, seat, bot) VALUES (:r, :s, 'heuristic')"),
                                 {"r": rid, "s": s})
        gdb.migrate(url)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT idx, line FROM game_events WHERE room_id = 'room0001' ORDER BY idx")).all()
            recs = dict(conn.execute(text("SELECT id, record FROM rooms")).all())
        assert [r[0] for r in rows] == list(range(len(lines)))
        assert [r[1] for r in rows] == lines
        assert recs == {"room0001": "", "room0002": "{}\n"}  # a finished game keeps its record

        manager = manager_for(url)
        assert manager.restore() == 1
        g2 = manager.tables["room0001"].game
        assert g2 is not None
        assert g2.events == json.loads(json.dumps(game.events))
        assert [list(h) for h in g2.deal.hands] == [list(h) for h in game.deal.hands]
        assert g2.to_act() == game.to_act() and list(g2.score.levels) == list(game.score.levels)
        assert all(seat_view(g2, s) == seat_view(game, s) for s in range(4))
        manager.db_executor.shutdown()

        # and back: downgrade puts the live record into rooms.record again
        with engine.connect() as conn:
            cfg = gdb.alembic_config()
            cfg.attributes["connection"] = conn
            from alembic import command

            with conn.begin():
                command.downgrade(cfg, "0003")
            assert conn.execute(text("SELECT record FROM rooms WHERE id = 'room0001'")).scalar_one() == record
            assert "game_events" not in inspect(conn).get_table_names()
        engine.dispose()

    if backend == "sqlite":
        check(f"sqlite:///{tmp_path / 'old.db'}")
    else:
        with fresh_pg_database() as url:
            check(url)


def test_one_transaction_for_many_tables_and_only_the_faulty_one_fails(db_url: str) -> None:  # noqa: F811
    """The writer gathers the appends of every table into one transaction; when one of them
    repeats a stored line the others are still stored and only that table hears of it."""
    manager = manager_for(db_url)
    for rid in ("room0001", "room0002", "room0003"):
        make_room(manager.session_factory, rid)
    games = manager.store.games
    for rid in ("room0001", "room0002", "room0003"):
        games.start(rid, '{"h":1}', ['{"e":0}'])
    games.append("room0002", 2, ['{"e":"already"}'])  # room0002's line 2 is stored already
    batcher = manager.writer._batch

    async def write() -> list[Any]:
        return await asyncio.gather(*(batcher.append(rid, 2, [f'{{"e":"{rid}"}}']) for rid in
                                      ("room0001", "room0002", "room0003")), return_exceptions=True)

    before = batcher.transactions
    results = asyncio.run(write())
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], DuplicateEventError) and results[1].room_id == "room0002"
    assert games.load("room0001")[2] == '{"e":"room0001"}' and games.load("room0003")[2] == '{"e":"room0003"}'
    assert games.load("room0002")[2] == '{"e":"already"}'  # never overwritten
    # one multi-room try, then one per room
    assert batcher.transactions - before == 4

    async def write_ok() -> None:
        await asyncio.gather(*(batcher.append(rid, 3, ['{"e":3}']) for rid in ("room0001", "room0003")))

    before = batcher.transactions
    asyncio.run(write_ok())
    assert batcher.transactions - before == 1  # both tables' lines in one transaction
    assert games.count("room0001") == 4 and games.count("room0003") == 4
    manager.db_executor.shutdown()
