"""The web review of a deal (issue 22, 复盘): ``POST /api/games/{id}/deals/{n}/review`` and
``GET /api/reviews/{job}`` on a live server over loopback with a real SQLite file.

* a game played through the server (``guandan loadtest``'s scripted table) to its end is reviewed;
  one abandoned after a deal is refused;
* start -> poll -> result for a finished bots' game: the decisions are the seat's actions of the
  deal as the record has them (counted here from the record's JSON), and the result equals the
  review computed in this process by the engine (``review_lines``, same budget and seed);
* the position where the seat could go out at once but passed is marked, with the move that goes
  out as the best alternative;
* a second request answers from the cache at once (same job id, status ``done``), also after a
  restart of the server on the same database;
* a worker process killed mid-review fails its job (``review_failed``, nothing more) and the next
  request starts a fresh pool;
* refusals: an abandoned (unfinished) game 409, unknown game or deal 404, bad seat 400, a review
  to compute without an account 401, too many at once 429, an unknown job 404;
* the replay's access rule is the review's (``public_game``).

The budget is tiny (``TEST_BUDGET``), so a deal's review takes seconds.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_helpers import LiveServer
from review_helpers import TEST_BUDGET, finished_mistake_game, store_game

from guandan.review import Budget, review_lines
from guandan.server.reviews import SEED

SETTINGS = {"review_budget": TEST_BUDGET, "review_jobs_per_account": 1, "review_jobs_max": 2}


@pytest.fixture(scope="module")
def game() -> tuple[list[str], int, int]:
    return finished_mistake_game()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, game: Any) -> Any:
    db = tmp_path_factory.mktemp("reviews") / "reviews.db"
    server = LiveServer(db, settings=SETTINGS)
    lines = game[0]
    ids = {"finished": store_game(server.app.state.session_factory, lines)}
    # abandoned in the second deal: stored (the replay shows it) but not over
    cut = [i for i, ln in enumerate(lines) if json.loads(ln).get("type") == "deal"][1] + 5
    ids["unfinished"] = store_game(server.app.state.session_factory, lines[:cut])
    yield server, ids, db
    server.stop()


@contextlib.contextmanager
def _client(server: LiveServer, login: bool = True) -> Iterator[httpx.Client]:
    """An HTTP client of the live server, logged in as a new guest unless ``login`` is false."""
    with httpx.Client(base_url=server.base, timeout=30) as c:
        if login:
            assert c.post("/api/guest", json={}).status_code == 200
        yield c


def _poll(c: httpx.Client, job: str, limit_s: float = 240) -> dict[str, Any]:
    seen = []
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        r = c.get(f"/api/reviews/{job}")
        assert r.status_code == 200, r.text
        body = r.json()
        seen.append((body["status"], body["done"], body["total"]))
        if body["status"] in ("done", "failed"):
            body["_seen"] = seen
            return body
        time.sleep(0.2)
    raise AssertionError(f"the review did not finish: {seen[-3:]}")


def _seat_actions(lines: list[str], seat: int, deal: int) -> list[list[Any]]:
    """The seat's actions in the deal-th deal, read from the record's JSON (not the engine)."""
    n = 0
    out = []
    for ln in lines[1:]:
        ev = json.loads(ln)
        if ev["type"] == "deal":
            n += 1
        elif ev["type"] == "action" and n == deal and ev["seat"] == seat:
            out.append(ev["action"])
    return out


def test_start_poll_result_marks_the_mistake_and_matches_the_engine(served: Any, game: Any) -> None:
    server, ids, _db = served
    lines, seat, idx = game
    with _client(server) as c:
        r = c.post(f"/api/games/{ids['finished']}/deals/1/review", params={"seat": seat})
        assert r.status_code == 202, r.text
        start = r.json()
        assert start["status"] in ("queued", "running") and start["game"] == ids["finished"]
        assert (start["deal"], start["seat"]) == (1, seat) and len(start["job"]) == 32
        # the same request while it runs joins the job
        again = c.post(f"/api/games/{ids['finished']}/deals/1/review", params={"seat": seat}).json()
        assert again["job"] == start["job"]
        body = _poll(c, start["job"])
    assert body["status"] == "done", body
    result = body["result"]
    # progress went up to done == total
    assert any(s == "running" for s, _, _ in body["_seen"]) or body["_seen"][0][0] == "done"
    assert body["done"] == body["total"] == sum(1 for e in result["decisions"] if e["evaluated"])
    # the decisions are the seat's actions in deal 1, as the record has them
    assert [e["played"] for e in result["decisions"]] == _seat_actions(lines, seat, 1)
    assert result["seat"] == seat and result["deal"]["number"] == 1
    # the same review, computed here by the engine with the server's budget and seed
    mine = review_lines(lines, seat, 1, Budget.parse(TEST_BUDGET), SEED, 0)
    assert result == json.loads(json.dumps(mine))
    # the clear mistake is marked; the best alternative goes out at once and wins every world
    e = result["decisions"][idx]
    assert e["severity"] in ("mistake", "blunder") and e["costliest"] == 1 and idx in result["marked"]
    assert len(e["best_alternative"][2]) == e["hand"]
    assert e["view"]["best_alternative"]["win"] == 1.0 and e["real"]["best_alternative"]["win"] == 1.0
    assert e["view"]["played"]["win"] < 1.0


def test_a_second_request_is_cached_also_after_a_restart(served: Any, game: Any) -> None:
    server, ids, db = served
    _lines, seat, _idx = game
    url = f"/api/games/{ids['finished']}/deals/1/review"
    with _client(server, login=False) as c:  # a cached review needs no account
        t0 = time.monotonic()
        r = c.post(url, params={"seat": seat})
        assert r.status_code == 200, r.text
        cached = r.json()
        assert cached["status"] == "done" and time.monotonic() - t0 < 5
        again = c.get(f"/api/reviews/{cached['job']}").json()
        assert again["result"] == cached["result"]
    second = LiveServer(db, settings=SETTINGS)
    try:
        with _client(second, login=False) as c:
            r = c.post(url, params={"seat": seat})
            assert r.status_code == 200 and r.json()["job"] == cached["job"]
            assert r.json()["result"] == cached["result"]
            assert c.get(f"/api/reviews/{cached['job']}").json()["status"] == "done"
    finally:
        second.stop()


def test_refusals(served: Any) -> None:
    server, ids, _db = served
    fin, unf = ids["finished"], ids["unfinished"]
    with _client(server) as c:
        def post(path: str, **params: Any) -> tuple[int, Any]:
            r = c.post(path, params=params)
            return r.status_code, r.json().get("code")

        # the replay shows the abandoned game, but it is not over: no review
        assert c.get(f"/api/games/{unf}").status_code == 200
        assert post(f"/api/games/{unf}/deals/1/review", seat=0) == (409, "game_unfinished")
        assert post("/api/games/999999/deals/1/review", seat=0) == (404, "no_game")
        assert post("/api/games/abc/deals/1/review", seat=0) == (404, "no_game")
        assert post("/api/games/0/deals/1/review", seat=0) == (404, "no_game")
        assert post(f"/api/games/{fin}/deals/0/review", seat=0) == (404, "no_deal")
        assert post(f"/api/games/{fin}/deals/99/review", seat=0) == (404, "no_deal")
        assert post(f"/api/games/{fin}/deals/x/review", seat=0) == (404, "no_deal")
        assert post(f"/api/games/{fin}/deals/1/review", seat=4) == (400, "bad_seat")
        assert post(f"/api/games/{fin}/deals/1/review", seat="-1") == (400, "bad_seat")
        assert post(f"/api/games/{fin}/deals/1/review") == (400, "bad_seat")
        r = c.get("/api/reviews/" + "0" * 32)
        assert r.status_code == 404 and set(r.json()) == {"error", "code", "params"} and r.json()["code"] == "no_review"
        assert c.get("/api/reviews/..%2Fx").status_code == 404
    with _client(server, login=False) as c:
        r = c.post(f"/api/games/{fin}/deals/2/review", params={"seat": 1})
        assert r.status_code == 401 and r.json()["code"] == "login_required"


def test_limits_per_account_and_overall(served: Any) -> None:
    server, ids, _db = served
    fin = ids["finished"]
    with _client(server) as a, _client(server) as b, _client(server) as third:
        first = a.post(f"/api/games/{fin}/deals/2/review", params={"seat": 0})
        assert first.status_code == 202, first.text
        r = a.post(f"/api/games/{fin}/deals/2/review", params={"seat": 1})
        assert r.status_code == 429 and r.json()["code"] == "review_running"
        assert r.json()["params"]["job"] == first.json()["job"]
        assert b.post(f"/api/games/{fin}/deals/3/review", params={"seat": 0}).status_code == 202
        r = third.post(f"/api/games/{fin}/deals/3/review", params={"seat": 1})
        assert r.status_code == 429 and r.json()["code"] == "reviews_busy"
        done = _poll(a, first.json()["job"])
        assert done["status"] == "done"
        # the server's active jobs drain: nothing stays counted after they finish
        deadline = time.monotonic() + 240
        while server.app.state.reviews.active() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert server.app.state.reviews.active() == 0


def test_a_worker_that_dies_fails_its_job_and_the_next_review_works(served: Any) -> None:
    import os
    import signal

    server, ids, _db = served
    service = server.app.state.reviews
    url = f"/api/games/{ids['finished']}/deals/4/review"
    with _client(server) as c:
        r = c.post(url, params={"seat": 2})
        assert r.status_code == 202, r.text
        job = r.json()["job"]
        pool = service._pool  # the review processes (private: only this test kills one)
        deadline = time.monotonic() + 60
        while not getattr(pool, "_processes", None) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in list(pool._processes):
            os.kill(pid, signal.SIGKILL)
        failed = _poll(c, job)
        assert failed["status"] == "failed" and failed["error"] == {"code": "review_failed"}
        assert "result" not in failed
        r = c.post(url, params={"seat": 2})
        assert r.status_code == 202 and r.json()["job"] != job
        assert _poll(c, r.json()["job"])["status"] == "done"


def _played_by_the_server(server: LiveServer, deals: int) -> tuple[int, str]:
    """Play one table through the server's HTTP API and websockets (``guandan loadtest``: a guest
    in seat 0 playing at random, three heuristic bots) for ``deals`` deals or to the game's end,
    then return the stored game's id and record."""
    import asyncio

    from guandan.server import models
    from guandan.server.loadtest import run_load

    with server.app.state.session_factory() as db:
        before = {g.id for g in db.query(models.GameRow).all()}
    asyncio.run(run_load(server.base, 1, deals=deals, timeout_s=240))
    with server.app.state.session_factory() as db:
        new = [g for g in db.query(models.GameRow).order_by(models.GameRow.id).all() if g.id not in before]
        assert len(new) == 1
        return new[0].id, new[0].record


def test_a_game_played_by_the_server_is_reviewed_and_an_abandoned_one_is_not(served: Any) -> None:
    server, _ids, _db = served
    gid, record = _played_by_the_server(server, deals=50)  # to the game's end (seat 0 plays at random)
    lines = [ln for ln in record.splitlines() if ln.strip()]
    assert json.loads(lines[-1])["type"] == "game_over"
    with _client(server) as c:
        r = c.post(f"/api/games/{gid}/deals/1/review", params={"seat": 1})
        assert r.status_code == 202, r.text
        body = _poll(c, r.json()["job"])
        assert body["status"] == "done"
        assert [e["played"] for e in body["result"]["decisions"]] == _seat_actions(lines, 1, 1)
        assert body["result"] == json.loads(json.dumps(review_lines(lines, 1, 1, Budget.parse(TEST_BUDGET), SEED, 0)))
        # one deal, then the game is abandoned: stored and replayed, but not reviewed
        gid2, _record2 = _played_by_the_server(server, deals=1)
        assert c.get(f"/api/games/{gid2}").status_code == 200
        r = c.post(f"/api/games/{gid2}/deals/1/review", params={"seat": 1})
        assert r.status_code == 409 and r.json()["code"] == "game_unfinished"


def test_the_review_page_path_serves_the_ui(served: Any) -> None:
    server, ids, _db = served
    with _client(server, login=False) as c:
        r = c.get(f"/review/{ids['finished']}")
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]


def test_the_migration_creates_the_reviews_table(served: Any) -> None:
    from sqlalchemy import inspect

    server, _ids, _db = served
    insp = inspect(server.app.state.engine)
    assert "reviews" in insp.get_table_names()
    assert {ix["name"] for ix in insp.get_indexes("reviews")} >= {"ix_reviews_key"}


def test_budget_default_is_documented() -> None:
    from guandan.server.settings import DEFAULT_REVIEW_BUDGET, Settings

    assert Budget.parse(DEFAULT_REVIEW_BUDGET).seconds == 1.5
    assert Settings(db_url="sqlite://").review_budget in (DEFAULT_REVIEW_BUDGET, __import__("os").environ.get(
        "GUANDAN_REVIEW_BUDGET"))
    assert "worlds=40,candidates=6,seconds=1.5" in Path(__file__).resolve().parents[1].joinpath(
        "docs", "duplicate.md").read_text("utf-8")
