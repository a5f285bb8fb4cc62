"""The version-checked write of :mod:`guandan.server.tournament_store` on a real database (a fresh
SQLite file, and a fresh PostgreSQL database when one runs): two organisers who read the same version
race; the one who writes second is refused (409 ``stale_version``) even though its version check passed
before the other wrote, and nothing of its change is stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import HTTPException

from guandan.server import tournament_store as store
from guandan.server.db import make_engine, make_session_factory, migrate
from guandan.server.models import TournamentAuditRow, TournamentRow, User
from guandan.tournament import Player, Tournament, add_entry, from_json, pair_next_round


@pytest.fixture(params=["sqlite", "postgresql"])
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from contextlib import ExitStack

    with ExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path / 't.db'}"
        else:
            from test_tournament_web_api import _postgres_url

            if _postgres_url() is None:
                pytest.skip("PostgreSQL is not reachable (GUANDAN_TEST_POSTGRES_URL)")
            from cluster_helpers import fresh_database

            url = stack.enter_context(fresh_database())
        engine = make_engine(url)
        migrate(engine)
        try:
            yield make_session_factory(engine)
        finally:
            engine.dispose()


def _user(db: Any, name: str) -> User:
    u = User(name=name, password_hash=None, is_guest=False)
    db.add(u)
    db.commit()
    return u


def test_the_second_of_two_racing_writes_is_refused(factory: Any) -> None:
    with factory() as db:
        alice, bob = _user(db, "alice"), _user(db, "bob")
        t = Tournament(name="race", rounds=3)
        row = store.create(db, t, alice)  # version 1
        tid = row.id
        store.change(db, tid, alice, 1, "add_entries", lambda t: [
            add_entry(t, f"p{i}", [Player(f"a{i}"), Player(f"b{i}")], by="alice") for i in range(4)])
        store.add_codirector(db, tid, alice, 2, "bob")  # version 3
        bob_id = bob.id

    def alice_pairs(t: Tournament) -> Any:
        # alice has read version 3 and passed the check; meanwhile bob pairs round 1 and commits
        with factory() as db2:
            store.change(db2, tid, db2.get(User, bob_id), 3, "pair", lambda t2: pair_next_round(t2, by="bob"))
        return pair_next_round(t, by="alice")

    with factory() as db:
        with pytest.raises(HTTPException) as err:
            store.change(db, tid, db.get(User, alice.id), 3, "pair", alice_pairs)
        assert err.value.status_code == 409 and err.value.detail["code"] == "stale_version"
    with factory() as db:
        row = db.get(TournamentRow, tid)
        state = from_json(row.state)
        assert (row.version, row.rounds_played, len(state.played)) == (4, 1, 1)
        audit = db.query(TournamentAuditRow).filter_by(tournament_id=tid).order_by(TournamentAuditRow.id).all()
        assert [(a.operation, a.version, a.user_id) for a in audit] == [
            ("create", 1, alice.id), ("add_entries", 2, alice.id), ("codirector", 3, alice.id), ("pair", 4, bob_id)]
        assert [x.action for x in state.log].count("pair") == 1 and state.log[-1].by == "bob"
