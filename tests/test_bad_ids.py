"""Odd ids in paths answer clean 4xx errors, never 500 (found by an attack on 2026-12-04):
a superscript digit as a challenge board number passed ``str.isdigit`` and broke ``int()``; an
Arabic-Indic digit was read as board 1; a 20-digit tournament id overflowed SQLite's integer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from guandan.server.app import create_app
    from guandan.server.settings import Settings

    with TestClient(create_app(Settings(db_url=f"sqlite:///{tmp_path / 'ids.db'}"))) as c:
        c.post("/api/register", json={"name": "idtester", "password": "a-good-pass-9"})
        yield c


@pytest.mark.parametrize("number", ["%C2%B2", "%D9%A1", "%EF%BC%91", "99999999999999999999"])
def test_challenge_board_numbers(client: Any, number: str) -> None:
    day = client.get("/api/challenge/today").json()["day"]
    r = client.post(f"/api/challenge/boards/{number}/play", json={})
    assert r.status_code == 404 and r.json()["code"] in ("no_board", "board_hidden"), r.text
    r = client.get(f"/api/challenge/days/{day}/boards/{number}")
    assert r.status_code == 404, r.text


@pytest.mark.parametrize("path", ["/api/tournaments/{t}", "/api/tournaments/{t}/log", "/api/tournaments/{t}/export.csv",
                                  "/api/tournaments/{t}/export.json"])
def test_huge_tournament_ids_are_not_found(client: Any, path: str) -> None:
    for t in ("99999999999999999999", "2147483648", "0"):
        r = client.get(path.format(t=t))
        assert r.status_code == 404 and r.json()["code"] == "tournament_not_found", (t, r.text)
    r = client.post("/api/tournaments/99999999999999999999/rounds", json={"version": 1})
    assert r.status_code == 404 and r.json()["code"] == "tournament_not_found", r.text
