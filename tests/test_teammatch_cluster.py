"""Duplicate team matches (复式, issue 22 item 3) in cluster mode: two real ``guandan serve --redis``
processes on one fresh PostgreSQL database, bots in the seats, no mocks.

Every process hears the games its own tables finish and advances the match under a Redis lock of the
match (``TeamMatchService._settle_and_open``); the two tables' rooms may be owned by different
processes. ``kill -9`` of a process owning a board room in the middle of the match: the survivor takes
the room, finishes its board, settles it and starts the following boards, and the match ends with every
board played once at each table. A board's people get the same start grace as on one process
(``teammatch_start_grace_s``, 20 s) before the bot covers an absent one: the room's owner applies it.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from cluster_helpers import cluster, lease_holder, record_of

PASSWORD = "teammatch-pass-1"
BOTS = [["bot:easy", "bot:easy"], ["bot:easy", "bot:easy"]]


def _get(c: httpx.Client, mid: int) -> dict[str, Any]:
    r = c.get(f"/api/teammatches/{mid}")
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _rooms(d: dict[str, Any], db: str) -> list[str]:
    """The rooms of the boards in progress (from the database: the API gives them to their players only)."""
    from sqlalchemy import create_engine, text

    from guandan.server.db import normalize_url

    engine = create_engine(normalize_url(db))
    try:
        with engine.connect() as conn:
            return [r[0] for r in conn.execute(text(
                "SELECT p.room_id FROM team_match_plays p JOIN rooms r ON r.id = p.room_id "
                "WHERE p.match_id = :m AND r.status = 'playing'"), {"m": d["id"]})]
    finally:
        engine.dispose()


def test_a_match_goes_on_when_the_process_owning_its_tables_is_killed() -> None:
    # bots wait 0.1 s a move: a board takes several seconds, so the kill lands mid-match
    with cluster(2, bot_delay_s=0.1) as (db, nodes):
        c = httpx.Client(base_url=nodes[0].url, timeout=60)
        assert c.post("/api/register", json={"name": "tm_orga", "password": PASSWORD}).status_code == 200
        r = c.post("/api/teammatches", json={"name": "Cluster", "team_a": BOTS, "team_b": BOTS, "boards": 4})
        assert r.status_code == 200, r.text
        mid = r.json()["id"]
        # wait until board 1 was played at both tables and a later board is under way
        end = time.monotonic() + 120
        d = _get(c, mid)
        while time.monotonic() < end and not (d["boards"][0]["open"] and _rooms(d, db)):
            time.sleep(0.3)
            d = _get(c, mid)
        assert d["boards"][0]["open"] and d["status"] == "playing", d
        rooms = _rooms(d, db)
        end = time.monotonic() + 20
        while time.monotonic() < end and not all(lease_holder(x) for x in rooms):
            time.sleep(0.1)
        holders = {x: lease_holder(x) for x in rooms}
        assert None not in holders.values(), holders
        # the boards' rooms may be owned by either process; kill the owner of the first one
        owner = next(n for n in nodes if n.name == holders[rooms[0]])
        survivor = next(n for n in nodes if n is not owner)
        taken = [x for x in rooms if holders[x] == owner.name]
        owner.kill()
        c2 = httpx.Client(base_url=survivor.url, timeout=60)
        assert c2.post("/api/login", json={"name": "tm_orga", "password": PASSWORD}).status_code == 200
        end = time.monotonic() + 240
        d = _get(c2, mid)
        while time.monotonic() < end and d["status"] != "finished":
            time.sleep(0.5)
            d = _get(c2, mid)
        said = "\n".join(line for line in survivor.lines if "team match" in line or "Traceback" in line)[-2000:]
        assert d["status"] == "finished", (d, said)
        # every board played once at each table, each scored as the sum of its two tables (issue 22)
        assert d["boards_scored"] == 4
        for b in d["boards"]:
            assert b["open"] and b["status"] == ["played", "played"], b
            assert b["score"] == sum(b["results"]) and [g["table"] for g in b["games"]] == [1, 2]
        assert d["difference"] == sum(b["score"] for b in d["boards"])
        # the survivor took over the killed process's rooms and ran the rest of the match
        assert all(any(f"room {x}: owned by {survivor.name}" in line for line in survivor.lines) for x in taken)
        assert "advancing failed" not in said


def test_an_absent_person_gets_the_board_start_grace_in_a_cluster() -> None:
    """A board starts before its people's pages connect; in a cluster the bot covered an absent person
    after the table's 2 s away grace (``manager.start_game`` applied the 20 s start grace on one
    process only). Now the room's owner applies it: 8 s after the board started, the absent person's
    seat has not played (her turn comes within the first four moves)."""
    with cluster(1, bot_delay_s=0.1) as (db, nodes):
        c = httpx.Client(base_url=nodes[0].url, timeout=60)
        for name in ("tm_org2", "tm_ann"):
            r = httpx.post(f"{nodes[0].url}/api/register", json={"name": name, "password": PASSWORD}, timeout=60)
            assert r.status_code == 200, r.text
        assert c.post("/api/login", json={"name": "tm_org2", "password": PASSWORD}).status_code == 200
        r = c.post("/api/teammatches", json={"name": "Grace", "team_a": [["tm_ann", "bot:easy"], ["bot:easy", "bot:easy"]],
                                             "team_b": BOTS, "boards": 4})
        assert r.status_code == 200, r.text
        started = time.monotonic()
        d = _get(c, r.json()["id"])
        from sqlalchemy import create_engine, text

        from guandan.server.db import normalize_url

        engine = create_engine(normalize_url(db))
        try:
            with engine.connect() as conn:
                room, seat = conn.execute(text(
                    "SELECT s.room_id, s.seat FROM room_seats s JOIN users u ON u.id = s.user_id "
                    "JOIN team_match_plays p ON p.room_id = s.room_id WHERE u.name = 'tm_ann' AND p.match_id = :m"),
                    {"m": d["id"]}).one()
        finally:
            engine.dispose()
        time.sleep(max(0.0, 8.0 - (time.monotonic() - started)))
        events = [json.loads(x) for x in record_of(db, room).splitlines()[1:] if x.strip()]
        # plays and passes (a board that starts after tribute records the exchange first, for every seat)
        moves = [e for e in events if e.get("type") == "action" and e["action"][0] not in ("tribute", "return")]
        assert events and events[0]["type"] == "deal"  # the board runs (its bots play until her turn)
        assert not [e for e in moves if e["seat"] == seat], moves  # the absent person's seat waits
