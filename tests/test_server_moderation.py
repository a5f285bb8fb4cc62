"""Reports and moderation (issue 25 item 8): the rules of :mod:`guandan.server.moderation` as plain functions,
and reports, the admin role (``guandan admin``), the admin API, suspensions and phrase mutes through the
real app on SQLite and PostgreSQL (the ``db_url`` fixture of ``test_server_storage.py``).

Expected values come from the rules in the module docstring: reasons from the list, one open report per
reporter, target and table, only table mates, hours 1..8760, every action logged with who/what/when/why,
a suspension ends the sessions and refuses the login until its end.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from test_server_storage import (
    db_url,  # noqa: F401 (fixture)
    pg_session_url,  # noqa: F401 (fixture)
)
from typer.testing import CliRunner

from guandan.cli import app as cli_app
from guandan.server import moderation as rules
from guandan.server.app import create_app
from guandan.server.moderation import ModerationError
from guandan.server.settings import Settings

T0 = datetime(2026, 12, 5, 8, 0, 0, tzinfo=UTC)


# -- the rules -------------------------------------------------------------------------------------------


def _report(**over: Any) -> None:
    args = {"reporter_id": 1, "target_id": 2, "reason": "stalling", "deal_no": 3, "shared_table": True,
            "open_same": False, "reports_last_day": 0}
    args.update(over)
    rules.check_report(**args)


def _code(fn: Any, **kw: Any) -> tuple[int, str]:
    with pytest.raises(ModerationError) as e:
        fn(**kw)
    return e.value.status, e.value.code


def test_report_rules() -> None:
    _report()  # allowed
    _report(deal_no=None)  # the deal is optional
    assert _code(_report, target_id=1) == (400, "report_self")
    assert _code(_report, reason="rude") == (400, "bad_reason")
    assert _code(_report, deal_no=0) == (400, "bad_deal")
    assert _code(_report, deal_no=1001) == (400, "bad_deal")
    assert _code(_report, deal_no=True) == (400, "bad_deal")
    assert _code(_report, shared_table=False) == (403, "not_table_mate")
    assert _code(_report, open_same=True) == (409, "already_reported")
    _report(reports_last_day=19)
    assert _code(_report, reports_last_day=20) == (429, "too_many_reports")


def test_action_rules_and_ends() -> None:
    assert rules.check_action("suspend", 48, "  abusive   phrases ") == ("suspend", 48, "abusive phrases")
    assert rules.check_action("unsuspend", 5, "appeal granted") == ("unsuspend", None, "appeal granted")
    assert _code(rules.check_action, action="ban", hours=1, why="x") == (400, "bad_action")
    assert _code(rules.check_action, action="suspend", hours=0, why="x") == (400, "bad_hours")
    assert _code(rules.check_action, action="mute_phrases", hours=8761, why="x") == (400, "bad_hours")
    assert _code(rules.check_action, action="mute_phrases", hours=2.5, why="x") == (400, "bad_hours")
    assert _code(rules.check_action, action="dismiss", hours=None, why="   ") == (400, "why_required")
    assert _code(rules.check_action, action="dismiss", hours=None, why="x" * 501) == (400, "why_required")
    assert rules.action_until("suspend", 48, T0) == datetime(2026, 12, 7, 8, 0, 0, tzinfo=UTC)
    assert rules.action_until("mute_phrases", 1, T0) == datetime(2026, 12, 5, 9, 0, 0, tzinfo=UTC)
    assert rules.action_until("unsuspend", None, T0) == T0
    assert rules.action_until("dismiss", None, T0) is None
    assert rules.active_until(T0, T0) is None  # ends exactly now: over
    assert rules.active_until(T0 + timedelta(seconds=1), T0) == T0 + timedelta(seconds=1)
    assert rules.active_until(None, T0) is None
    assert rules.report_link("abcd1234", 7) == "/replay/7"
    assert rules.report_link("abcd1234", None) == "/room/abcd1234"
    assert rules.report_link(None, None) is None


# -- through the app -------------------------------------------------------------------------------------


pytestmark = pytest.mark.usefixtures("fast_hashing")  # tests/conftest.py


@pytest.fixture
def app(db_url: str) -> Iterator[Any]:  # noqa: F811
    application = create_app(Settings(db_url=db_url, bot_delay_s=0.0))
    with TestClient(application):
        yield application


def person(app: Any, name: str) -> TestClient:
    c = TestClient(app)
    r = c.post("/api/register", json={"name": name, "password": "secret-pw-1"})
    assert r.status_code == 200, r.text
    return c


def refused(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "code", "params"} and body["code"] == code, body
    return body


def admin_cli(db_url: str, *args: str) -> str:  # noqa: F811
    result = CliRunner().invoke(cli_app, ["admin", *args, "--db", db_url])
    assert result.exit_code == 0, result.output
    return result.output.strip()


def parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def test_report_admin_suspend_and_log(app: Any, db_url: str) -> None:  # noqa: F811
    ann, bob, carl, root = (person(app, n) for n in ("ann", "bob", "carl", "root"))
    rid = ann.post("/api/rooms", json={"preset": "official"}).json()["room"]["id"]
    assert bob.post(f"/api/rooms/{rid}/seat", json={"seat": 1}).status_code == 200

    # reports: only table mates, reasons from the list, one open per table
    r = bob.post("/api/reports", json={"name": "ANN", "reason": "stalling", "room_id": rid, "deal": 2})
    assert r.status_code == 201, r.text
    report = r.json()["report"]
    assert report == {"id": report["id"], "target": "ann", "reason": "stalling", "room_id": rid, "game_id": None, "deal": 2}
    refused(bob.post("/api/reports", json={"name": "ann", "reason": "cheating", "room_id": rid}), 409, "already_reported")
    refused(bob.post("/api/reports", json={"name": "bob", "reason": "stalling", "room_id": rid}), 400, "report_self")
    refused(carl.post("/api/reports", json={"name": "ann", "reason": "stalling", "room_id": rid}), 403, "not_table_mate")
    body = refused(ann.post("/api/reports", json={"name": "bob", "reason": "rude", "room_id": rid}), 400, "bad_reason")
    assert body["params"]["valid"] == list(rules.REPORT_REASONS)
    refused(ann.post("/api/reports", json={"name": "bob", "reason": "name"}), 400, "table_required")
    refused(ann.post("/api/reports", json={"name": "nobody", "reason": "name", "room_id": rid}), 404, "no_user")
    refused(TestClient(app).post("/api/reports", json={"name": "ann", "reason": "name", "room_id": rid}), 401,
            "login_required")
    assert TestClient(app).get("/api/moderation/me").json() == {"admin": False, "phrases_muted_until": None}

    # the admin pages: admins only; the role comes from the command line
    refused(root.get("/api/admin/reports"), 403, "admin_only")
    assert root.get("/api/moderation/me").json() == {"admin": False, "phrases_muted_until": None}
    assert admin_cli(db_url, "grant", "Root", "--why", "site owner") == "root is now an admin"
    assert admin_cli(db_url, "grant", "root") == "root was an admin already"
    assert admin_cli(db_url, "list") == "root"
    assert root.get("/api/moderation/me").json()["admin"] is True
    listed = root.get("/api/admin/reports").json()["reports"]
    assert [(x["id"], x["reporter"], x["target"], x["reason"], x["deal"], x["link"], x["status"]) for x in listed] == \
        [(report["id"], "bob", "ann", "stalling", 2, f"/room/{rid}", "open")]
    assert listed[0]["target_state"] == {"muted_until": None, "suspended_until": None}

    # suspend ann for 48 hours on bob's report: her sessions end, her socket closes, login is refused
    with ann.websocket_connect(f"/ws/rooms/{rid}") as ws:
        assert ws.receive_json()["type"] == "state"
        before = datetime.now(UTC).replace(microsecond=0)
        refused(root.post("/api/admin/actions", json={"action": "suspend", "report_id": report["id"], "hours": 48}),
                400, "why_required")
        r = root.post("/api/admin/actions", json={"action": "suspend", "report_id": report["id"], "hours": 48,
                                                  "why": "stalled every deal"})
        assert r.status_code == 200, r.text
        entry = r.json()["entry"]
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                ws.receive_json()
        assert closed.value.code == 4401
    until = parse(entry["until"])
    assert before + timedelta(hours=48) <= until <= datetime.now(UTC) + timedelta(hours=48)
    assert (entry["admin"], entry["action"], entry["target"], entry["report_id"], entry["why"]) == \
        ("root", "suspend", "ann", report["id"], "stalled every deal")
    refused(ann.get("/api/me"), 401, "login_required")
    body = refused(ann.post("/api/login", json={"name": "ann", "password": "secret-pw-1"}), 403, "account_suspended")
    assert body["params"] == {"until": entry["until"]}
    assert root.get("/api/admin/reports").json() == {"reports": []}  # acted on: closed
    refused(root.post("/api/admin/actions", json={"action": "dismiss", "report_id": report["id"], "why": "again"}),
            409, "report_closed")

    # a phrase mute of bob, by name; then ann's suspension lifted
    r = root.post("/api/admin/actions", json={"action": "mute_phrases", "name": "bob", "hours": 2, "why": "spam"})
    muted = parse(r.json()["entry"]["until"])
    assert timedelta(hours=2) - timedelta(seconds=5) <= muted - datetime.now(UTC) <= timedelta(hours=2)
    assert bob.get("/api/moderation/me").json()["phrases_muted_until"] == r.json()["entry"]["until"]
    refused(root.post("/api/admin/actions", json={"action": "mute_phrases", "name": "bob", "hours": 0, "why": "x"}),
            400, "bad_hours")
    refused(root.post("/api/admin/actions", json={"action": "dismiss", "name": "bob", "why": "x"}),
            400, "dismiss_needs_report")
    root.post("/api/admin/actions", json={"action": "unsuspend", "name": "ann", "why": "appeal"})
    assert ann.post("/api/login", json={"name": "ann", "password": "secret-pw-1"}).status_code == 200

    # the log: newest first, who/what/when/why, the command line's grant included
    log = root.get("/api/admin/log").json()["log"]
    assert [(e["admin"], e["action"], e["target"], e["why"]) for e in log] == [
        ("root", "unsuspend", "ann", "appeal"),
        ("root", "mute_phrases", "bob", "spam"),
        ("root", "suspend", "ann", "stalled every deal"),
        ("(command line)", "grant_admin", "root", "site owner"),
    ]
    assert all(parse(e["at"]) <= datetime.now(UTC) for e in log)
    assert [e["cli"] for e in log] == [False, False, False, True]  # the page words "(command line)" itself

    # the role taken away: the pages are closed again
    assert admin_cli(db_url, "revoke", "root") == "root is no longer an admin"
    refused(root.get("/api/admin/log"), 403, "admin_only")
    refused(bob.post("/api/admin/actions", json={"action": "suspend", "name": "ann", "hours": 1, "why": "x"}),
            403, "admin_only")


def test_report_from_a_finished_game(app: Any, db_url: str) -> None:  # noqa: F811
    """A report may name a finished game both sat in (the game-over table, a replay): the admin's link is the replay."""
    from guandan.server.models import GamePlayer, GameRow, User

    ann, bob = person(app, "ann"), person(app, "bob")
    with app.state.session_factory() as db:
        ids = {u.name: u.id for u in db.query(User).all()}
        game = GameRow(room_id=None, preset="official", record="{}\n", winner_team=0)
        game.players = [GamePlayer(seat=0, user_id=ids["ann"]), GamePlayer(seat=1, user_id=ids["bob"]),
                        GamePlayer(seat=2, bot="heuristic"), GamePlayer(seat=3, bot="heuristic")]
        db.add(game)
        db.commit()
        gid = game.id
    r = ann.post("/api/reports", json={"name": "bob", "reason": "abusive_phrases", "game_id": gid, "deal": 5})
    assert r.status_code == 201, r.text
    refused(ann.post("/api/reports", json={"name": "bob", "reason": "name", "game_id": gid + 1}), 403, "not_table_mate")
    admin_cli(db_url, "grant", "bob")
    (listed,) = bob.get("/api/admin/reports").json()["reports"]
    assert (listed["game_id"], listed["link"], listed["deal"]) == (gid, f"/replay/{gid}", 5)


def test_cli_errors_are_one_line(db_url: str) -> None:  # noqa: F811
    result = CliRunner().invoke(cli_app, ["admin", "grant", "ghost", "--db", db_url])
    assert result.exit_code == 1
    assert "no account called 'ghost'" in result.output and len(result.output.strip().splitlines()) == 1


def test_ids_beyond_the_database_integer_are_refused_not_500(app: Any, db_url: str) -> None:  # noqa: F811
    """Attack (branch attack): ``game_id`` 2**70 in a report, or ``report_id`` 2**70 in an admin action, went to
    the database as is and came back a 500 (SQLite: OverflowError; PostgreSQL: out of range for bigint). Ids are
    64-bit signed integers: anything outside 1..2**63-1 names no game or report, so the answers are those of an
    unknown one (400 ``table_required`` for a game id that is not a game number, 404 ``no_report``)."""
    ann, bob = person(app, "ann"), person(app, "bob")
    for gid in (2**70, 2**63, -(2**70)):
        refused(ann.post("/api/reports", json={"name": "bob", "reason": "stalling", "game_id": gid}), 400, "table_required")
    admin_cli(db_url, "grant", "bob")
    for rid in (2**70, 2**63):
        refused(bob.post("/api/admin/actions", json={"action": "dismiss", "report_id": rid, "why": "x"}), 404, "no_report")


def test_suspension_takes_the_account_out_of_the_match_queue(app: Any, db_url: str) -> None:  # noqa: F811
    """Attack (branch attack): a suspension ended the sessions and closed the sockets but left the account in
    the match queue, where it was still matched (and held the others' ready check up for 15 s). Now it
    leaves the queue with the suspension."""
    import time

    from sqlalchemy import select

    from guandan.server.models import User

    ann, root = person(app, "ann"), person(app, "root")
    assert ann.post("/api/match/join", json={}).status_code == 201
    admin_cli(db_url, "grant", "root")
    r = root.post("/api/admin/actions", json={"action": "suspend", "name": "ann", "hours": 2, "why": "abuse"})
    assert r.status_code == 200, r.text
    with app.state.session_factory() as db:
        uid = db.scalar(select(User.id).where(User.name == "ann"))
    assert app.state.matchmaking.queue.state(uid, time.time())["status"] == "idle"
    assert app.state.matchmaking.queue.counts()["people"] == 0
