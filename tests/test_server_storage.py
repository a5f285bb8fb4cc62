"""Server storage: migrations, tables, ratings and Anhui points, on SQLite and on PostgreSQL.

Every database test runs twice, on a temporary SQLite file and on PostgreSQL. PostgreSQL is
``GUANDAN_TEST_POSTGRES_URL`` (default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``); each
test session creates its own ``gd_test_<random>`` database there and drops it at the end. When
PostgreSQL cannot be reached those tests fail with a message saying so when ``CI=true`` or
``GUANDAN_REQUIRE_POSTGRES=1`` (CI runs them against a real server); elsewhere (a newcomer's
machine without PostgreSQL) they are skipped with that message.

The fixtures here are also used by ``test_server_accounts.py``.
"""

from __future__ import annotations

import json
import os
import secrets
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError

from guandan.agents.driver import run_game
from guandan.agents.registry import make_agent
from guandan.core.match import Game
from guandan.core.rules import RuleSet
from guandan.records import record_lines
from guandan.server import db as gdb
from guandan.server import models
from guandan.server.models import GamePlayer, GameRow, Room, RoomSeat, User, UserSession
from guandan.server.ratings import (
    BOT_RATINGS,
    display_rating,
    parse_record,
    record_points,
    update_ratings,
)

PG_URL = os.environ.get("GUANDAN_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
# A user's fresh machine has no PostgreSQL: skip there; CI (CI=true) must have it and fails without it.
SKIP_PG = os.environ.get("GUANDAN_SKIP_POSTGRES") == "1" or (
    os.environ.get("CI", "").lower() != "true" and os.environ.get("GUANDAN_REQUIRE_POSTGRES") != "1"
)
BACKENDS = ["sqlite", "postgresql"]
TABLES = ["users", "sessions", "rooms", "room_seats", "games", "game_players", "game_events", "reviews",
          "tournaments", "tournament_directors", "tournament_audit", "tournament_tables", "tournament_table_codes",
          "challenges", "challenge_plays", "friend_links", "friend_invites",
          "account_moderation", "reports", "moderation_log", "team_matches", "team_match_plays", "server_fence"]

# The contract's columns (server_contract.md, "Database").
CONTRACT_COLUMNS = {
    "users": {
        "id", "name", "password_hash", "is_guest", "created_at", "rating_mu", "rating_sigma",
        "games_played", "games_won", "anhui_points", "name_key", "last_seen_at",
    },
    "sessions": {"token", "user_id", "created_at", "expires_at"},
    "rooms": {
        "id", "name", "preset", "options", "owner_id", "status", "seed", "record", "created_at", "updated_at",
        "default_clocks", "board", "secret_until", "unrated",
    },
    "room_seats": {"room_id", "seat", "user_id", "bot"},
    "games": {"id", "room_id", "preset", "record", "winner_team", "finished_at"},
    "game_players": {"game_id", "seat", "user_id", "bot"},
    "game_events": {"room_id", "idx", "line"},
    "reviews": {"id", "game_id", "deal", "seat", "budget", "result", "created_at"},
    "tournaments": {"id", "name", "format", "status", "rounds_played", "rounds_total", "organiser_id", "state",
                    "version", "created_at", "updated_at"},
    "tournament_directors": {"tournament_id", "user_id"},
    "tournament_audit": {"id", "tournament_id", "user_id", "at", "operation", "version", "before", "after"},
    "challenges": {"id", "day", "preset", "bots", "n_boards", "boards", "created_at"},
    "challenge_plays": {"id", "challenge_id", "board", "user_id", "seat", "ranked", "room_id", "game_id", "result",
                        "started_at", "finished_at"},
    "friend_links": {"user_low", "user_high", "requester_id", "status", "created_at"},
    "friend_invites": {"id", "room_id", "from_id", "to_id", "created_at", "expires_at"},
    "account_moderation": {"user_id", "is_admin", "phrases_muted_until", "suspended_until"},
    "reports": {"id", "reporter_id", "target_id", "reason", "room_id", "game_id", "deal_no", "status", "created_at",
                "closed_at"},
    "moderation_log": {"id", "admin_id", "admin_name", "action", "target_id", "target_name", "until", "report_id",
                       "why", "created_at"},
    "team_matches": {"id", "name", "organiser_id", "preset", "n_boards", "boards", "seats", "ranked", "status",
                     "tournament_id", "round", "table_no", "created_at", "finished_at"},
    "team_match_plays": {"id", "match_id", "board", "table_no", "room_id", "game_id", "result", "started_at",
                         "finished_at"},
}


# -- database fixtures (shared with test_server_accounts.py) ---------------------------------------


def _admin_engine() -> Any:
    return create_engine(gdb.normalize_url(PG_URL), isolation_level="AUTOCOMMIT")


def _pg_reachable() -> None:
    """Fail (or skip with GUANDAN_SKIP_POSTGRES=1) with a clear message when PostgreSQL is down."""
    engine = _admin_engine()
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc).splitlines()[0]
        msg = (
            f"PostgreSQL is not reachable at {PG_URL} ({reason}); start it (CI does), point "
            "GUANDAN_TEST_POSTGRES_URL at one, or set GUANDAN_SKIP_POSTGRES=1 to skip these tests"
        )
        if SKIP_PG:
            pytest.skip(msg)
        pytest.fail(msg, pytrace=False)
    finally:
        engine.dispose()


@contextmanager
def fresh_pg_database() -> Iterator[str]:
    """A new empty PostgreSQL database ``gd_test_<random>``, dropped afterwards; yields its URL."""
    _pg_reachable()
    name = f"gd_test_{secrets.token_hex(6)}"
    admin = _admin_engine()
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        url = make_url(gdb.normalize_url(PG_URL)).set(database=name).render_as_string(hide_password=False)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def pg_session_url() -> Iterator[str]:
    """One migrated PostgreSQL database for the whole test session."""
    with fresh_pg_database() as url:
        gdb.migrate(url)
        yield url


def _head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(gdb.alembic_config()).get_current_head()


def _truncate(url: str) -> None:
    engine = gdb.make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """A migrated, empty database: a new SQLite file, or the session's PostgreSQL database emptied."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'gd.db'}"
        gdb.migrate(url)
        return url
    url = request.getfixturevalue("pg_session_url")
    _truncate(url)
    return str(url)


@pytest.fixture
def engine(db_url: str) -> Iterator[Any]:
    eng = gdb.make_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def factory(engine: Any) -> gdb.SessionFactory:
    return gdb.make_session_factory(engine)


# -- game records for the tests --------------------------------------------------------------------


def played_record(preset: str, seed: int) -> tuple[str, int, list[dict[str, Any]]]:
    """A complete game played by random bots: (record text, winner team, parsed lines)."""
    game = Game(RuleSet.preset(preset), seed=seed)
    run_game(game, [make_agent("random", seed * 4 + s) for s in range(4)])
    lines = record_lines(game, preset, ["p0", "p1", "p2", "p3"])
    assert game.over and game.winner in (0, 1)
    return "\n".join(lines) + "\n", game.winner, [json.loads(x) for x in lines]


def expected_anhui_points(parsed: list[dict[str, Any]]) -> list[int]:
    """Per-seat Anhui points of a record, from docs/rules.md section 2.1 (seed 000): each deal gives the
    first finisher's team +4 (1-2), +2 (1-3) or +1 (1-4) per seat and the other team as much less."""
    unit = {"1-2": 4, "1-3": 2, "1-4": 1}
    total = [0, 0, 0, 0]
    for ev in parsed:
        if ev.get("type") == "deal_end":
            first = ev["finish_order"][0]
            for s in range(4):
                total[s] += unit[ev["result"]] if s % 2 == first % 2 else -unit[ev["result"]]
    return total


def synthetic_record(points_option: bool, deals: list[tuple[list[int], str]], winner: int) -> str:
    """A minimal record: a header with ``options.points`` and one ``deal_end`` per (finish_order, result)."""
    opts = RuleSet.preset("anhui" if points_option else "official").to_dict()
    lines: list[dict[str, Any]] = [
        {"format": "pyguandan-record", "version": 1, "preset": "anhui" if points_option else "official",
         "options": opts, "seed": 1, "hands": "shuffled", "first_leader": None, "max_games": 1,
         "players": ["a", "b", "c", "d"]}
    ]
    unit = {"1-2": 4, "1-3": 2, "1-4": 1}
    for order, result in deals:
        first = order[0]
        pts = [unit[result] if s % 2 == first % 2 else -unit[result] for s in range(4)]
        ev: dict[str, Any] = {"type": "deal_end", "finish_order": order, "result": result,
                              "winner_team": first % 2}
        if points_option:
            ev["points"] = pts
        lines.append(ev)
    lines.append({"type": "game_over", "game": 1, "winner_team": winner})
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


def add_users(db: Any, names: list[str], guest: bool = False) -> list[User]:
    users = [User(name=n, password_hash=None if guest else "$argon2id$x", is_guest=guest) for n in names]
    db.add_all(users)
    db.flush()
    return users


# -- migrations ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_migrate_creates_schema_on_empty_database_and_is_idempotent(backend: str, tmp_path: Any) -> None:
    @contextmanager
    def empty_db() -> Iterator[str]:
        if backend == "sqlite":
            yield f"sqlite:///{tmp_path / 'fresh.db'}"
        else:
            with fresh_pg_database() as url:
                yield url

    with empty_db() as url:
        eng = gdb.make_engine(url)
        try:
            assert inspect(eng).get_table_names() == []
            assert gdb.current_revision(eng) is None
            gdb.migrate(url)
            names = set(inspect(eng).get_table_names())
            assert names == set(TABLES) | {"alembic_version"}
            for table, cols in CONTRACT_COLUMNS.items():
                assert {c["name"] for c in inspect(eng).get_columns(table)} == cols, table
            assert gdb.current_revision(eng) == _head_revision()
            # Data survives a second run, which changes nothing.
            with gdb.session_scope(gdb.make_session_factory(eng)) as db:
                add_users(db, ["keeper"])
            gdb.migrate(url)
            gdb.migrate(eng)
            assert gdb.current_revision(eng) == _head_revision()
            with eng.connect() as conn:
                assert conn.execute(text("SELECT name FROM users")).scalars().all() == ["keeper"]
        finally:
            eng.dispose()


def test_models_agree_with_migrations(engine: Any) -> None:
    import warnings

    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with engine.connect() as conn, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLite cannot reflect the lower(name) expression index
        diffs = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), models.Base.metadata)
    assert diffs == []


def test_fresh_sqlite_migration_prints_no_warning_and_keeps_the_name_index(tmp_path: Any) -> None:
    """`make serve` on a fresh clone migrates a new SQLite file: the batch migrations' reflection
    must not print SQLAlchemy's "Skipped unsupported reflection" warning to a new user, and the
    case-insensitive unique name index (lower(name)) must survive the batch table rebuilds."""
    path = tmp_path / "fresh.db"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gdb.migrate(f"sqlite:///{path}")
    assert [str(w.message) for w in caught if "reflection" in str(w.message)] == []
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = 'uq_users_name_lower'")).scalar()
    finally:
        engine.dispose()
    assert sql is not None and "lower(name)" in sql and "UNIQUE" in sql


def test_migrations_ship_inside_the_package() -> None:
    assert (gdb.MIGRATIONS_DIR / "env.py").is_file()
    assert (gdb.MIGRATIONS_DIR / "script.py.mako").is_file()
    assert (gdb.MIGRATIONS_DIR / "versions" / "0001_initial.py").is_file()
    assert (gdb.MIGRATIONS_DIR / "versions" / "0002_default_clocks.py").is_file()
    assert gdb.normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert gdb.normalize_url("sqlite:///x.db") == "sqlite:///x.db"
    with pytest.raises(ValueError, match="not a database URL"):
        gdb.normalize_url("nonsense")


def test_sqlite_engine_settings(tmp_path: Any) -> None:
    eng = gdb.make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        with eng.connect() as conn:
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    finally:
        eng.dispose()


# -- tables ----------------------------------------------------------------------------------------


def test_defaults_timestamps_and_json_options(factory: Any) -> None:
    opts = RuleSet.preset("anhui").to_dict()
    with gdb.session_scope(factory) as db:
        (owner,) = add_users(db, ["owner"])
        room = Room(id="abcd1234", name="t", preset="anhui", options=opts, owner_id=owner.id, seed=2**62)
        room.seats = [RoomSeat(seat=s, user_id=owner.id if s == 0 else None, bot=None if s == 0 else "random")
                      for s in range(4)]
        db.add(room)
    with gdb.session_scope(factory) as db:
        user = db.scalars(select(User).where(User.name == "owner")).one()
        # openskill prior: mu 25, sigma 25/3, so the display rating mu - 3*sigma starts at 0.
        assert (user.rating_mu, user.rating_sigma) == (25.0, 25.0 / 3.0)
        assert user.display_rating == pytest.approx(0.0)
        assert (user.games_played, user.games_won, user.anhui_points, user.is_guest) == (0, 0, 0, False)
        assert user.created_at.tzinfo is not None and user.created_at.utcoffset() == timedelta(0)
        assert abs(datetime.now(UTC) - user.created_at) < timedelta(minutes=1)
        room = db.get(Room, "abcd1234")
        assert room.options == opts and room.options["upgrade"] == [6, 4, 2]
        assert room.status == "waiting" and room.record == "" and room.seed == 2**62
        assert [(s.seat, s.user_id, s.bot) for s in room.seats] == [
            (0, user.id, None), (1, None, "random"), (2, None, "random"), (3, None, "random")]
        assert room.updated_at.utcoffset() == timedelta(0)


def test_constraints_are_enforced(factory: Any) -> None:
    with gdb.session_scope(factory) as db:
        add_users(db, ["Alice"])
    # Names are unique ignoring case.
    with pytest.raises(IntegrityError), gdb.session_scope(factory) as db:
        add_users(db, ["alice"])
    # Foreign keys hold (SQLite too: PRAGMA foreign_keys=ON).
    with pytest.raises(IntegrityError), gdb.session_scope(factory) as db:
        db.add(RoomSeat(room_id="nosuchrm", seat=0))
        db.flush()
    with pytest.raises(IntegrityError), gdb.session_scope(factory) as db:
        db.add(UserSession(token="t" * 43, user_id=987654, expires_at=datetime.now(UTC)))
        db.flush()
    # Seats are 0-3 and a room status is one of three.
    with pytest.raises(IntegrityError), gdb.session_scope(factory) as db:
        db.add(Room(id="r1", name="x", preset="official", options={}))
        db.flush()
        db.add(RoomSeat(room_id="r1", seat=4))
        db.flush()
    with pytest.raises(IntegrityError), gdb.session_scope(factory) as db:
        db.add(Room(id="r2", name="x", preset="official", options={}, status="paused"))
        db.flush()
    # Deleting a user deletes their sessions.
    with gdb.session_scope(factory) as db:
        alice = db.scalars(select(User)).one()
        db.add(UserSession(token="s" * 43, user_id=alice.id, expires_at=datetime.now(UTC)))
    with gdb.session_scope(factory) as db:
        db.delete(db.scalars(select(User)).one())
    with gdb.session_scope(factory) as db:
        assert db.scalars(select(UserSession)).all() == []


def test_session_scope_rolls_back_on_error(factory: Any) -> None:
    with pytest.raises(RuntimeError), gdb.session_scope(factory) as db:
        add_users(db, ["ghost"])
        raise RuntimeError("boom")
    with gdb.session_scope(factory) as db:
        assert db.scalars(select(User)).all() == []


# -- ratings ---------------------------------------------------------------------------------------


def _store_game(db: Any, record: str, winner: int, players: list[tuple[int | None, str | None]]) -> GameRow:
    game = GameRow(preset="official", record=record, winner_team=winner)
    game.players = [GamePlayer(seat=s, user_id=u, bot=b) for s, (u, b) in enumerate(players)]
    db.add(game)
    db.flush()
    return game


def test_ratings_move_winners_up_and_losers_down(factory: Any) -> None:
    record = synthetic_record(False, [([1, 3], "1-2")], winner=1)
    with gdb.session_scope(factory) as db:
        users = add_users(db, ["n0", "n1", "n2", "n3"])
        game = _store_game(db, record, 1, [(u.id, None) for u in users])
        changes = update_ratings(db, game)
    with gdb.session_scope(factory) as db:
        by_name = {u.name: u for u in db.scalars(select(User))}
    # Team 1 (seats 1 and 3) won: their display rating rises above the prior's 0, the others' falls.
    for name in ("n1", "n3"):
        u = by_name[name]
        assert u.rating_mu > 25.0 and u.rating_sigma < 25.0 / 3.0 and u.display_rating > 0
        assert (u.games_played, u.games_won) == (1, 1)
    for name in ("n0", "n2"):
        u = by_name[name]
        assert u.rating_mu < 25.0 and u.display_rating < 0
        assert (u.games_played, u.games_won) == (1, 0)
    # Partners are symmetric; points are not awarded by the official rules.
    assert by_name["n1"].rating_mu == pytest.approx(by_name["n3"].rating_mu)
    assert all(u.anhui_points == 0 for u in by_name.values())
    assert [(c.seat, c.won, c.rating_before) for c in changes] == [
        (0, False, 0.0), (1, True, 0.0), (2, False, 0.0), (3, True, 0.0)]
    assert changes[1].rating_after == display_rating(by_name["n1"].rating_mu, by_name["n1"].rating_sigma)


def test_ratings_with_bots(factory: Any) -> None:
    record = synthetic_record(False, [([0, 2], "1-2")], winner=0)
    with gdb.session_scope(factory) as db:
        human, partner_of_bot = add_users(db, ["solo", "other"])
        # Seat 0 a person with a bot partner beats seat 1 person + seat 3 bot.
        game = _store_game(db, record, 0, [(human.id, None), (partner_of_bot.id, None), (None, "heuristic"),
                                           (None, "random")])
        changes = update_ratings(db, game)
        assert [c.user_id for c in changes] == [human.id, partner_of_bot.id]
        # Four bots: nobody is rated.
        all_bots = _store_game(db, record, 0, [(None, "random")] * 4)
        assert update_ratings(db, all_bots) == []
        # No winner (abandoned): nothing changes.
        abandoned = _store_game(db, record, 0, [(human.id, None), (None, "random"), (None, "random"),
                                                (None, "random")])
        abandoned.winner_team = None
        assert update_ratings(db, abandoned) == []
    with gdb.session_scope(factory) as db:
        solo = db.scalars(select(User).where(User.name == "solo")).one()
        other = db.scalars(select(User).where(User.name == "other")).one()
        assert solo.rating_mu > 25.0 and (solo.games_played, solo.games_won) == (1, 1)
        assert other.rating_mu < 25.0 and (other.games_played, other.games_won) == (1, 0)
    assert set(BOT_RATINGS) == {"random", "heuristic"}


def test_beating_weak_bots_gains_less_than_beating_people(factory: Any) -> None:
    record = synthetic_record(False, [([0, 2], "1-2")], winner=0)
    with gdb.session_scope(factory) as db:
        a0, a2, b0, b2, b1, b3 = add_users(db, ["a0", "a2", "b0", "b2", "b1", "b3"])
        vs_bots = _store_game(db, record, 0, [(a0.id, None), (None, "random"), (a2.id, None), (None, "random")])
        vs_people = _store_game(db, record, 0, [(b0.id, None), (b1.id, None), (b2.id, None), (b3.id, None)])
        gain_bots = update_ratings(db, vs_bots)[0]
        gain_people = update_ratings(db, vs_people)[0]
    assert 0 < gain_bots.rating_after - gain_bots.rating_before < gain_people.rating_after - gain_people.rating_before


def test_anhui_points_from_a_played_record(factory: Any) -> None:
    record, winner, parsed = played_record("anhui", 5)
    expected = expected_anhui_points(parsed)
    assert record_points(parse_record(record)) == expected
    assert any(p != 0 for p in expected)
    with gdb.session_scope(factory) as db:
        users = add_users(db, ["h0", "h1", "h2"])
        game = _store_game(db, record, winner, [(users[0].id, None), (users[1].id, None), (users[2].id, None),
                                               (None, "heuristic")])
        update_ratings(db, game)
    with gdb.session_scope(factory) as db:
        got = {u.name: u.anhui_points for u in db.scalars(select(User))}
    assert got == {"h0": expected[0], "h1": expected[1], "h2": expected[2]}
    # Partners share every deal's points (section 2.1 awards per team).
    assert expected[0] == expected[2] and expected[1] == expected[3] and expected[0] == -expected[1]


def test_no_points_without_the_option() -> None:
    record, _winner, parsed = played_record("official", 3)
    assert parsed[0]["options"]["points"] is False
    assert record_points(parse_record(record)) is None
    assert record_points(parse_record(synthetic_record(True, [([2, 0], "1-2"), ([1, 0, 3], "1-3")], 1))) == [
        4 - 2, -4 + 2, 4 - 2, -4 + 2]
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        parse_record('{"a": 1}\n{oops\n')
    with pytest.raises(ValueError, match="line 1 is not a JSON object"):
        parse_record("[1, 2]\n")

