"""``guandan.server.tournament_parsed.ParsedStates``: a parsed state is handed back only for the exact
row version it was kept at, once, and entries of one tournament take turns."""

from __future__ import annotations

import threading
import time

import pytest

from guandan.server.tournament_parsed import ParsedStates
from guandan.tournament.simulate import build


def test_a_state_comes_back_only_at_its_version_and_only_once() -> None:
    p = ParsedStates()
    t = build(4, 1, "swiss", seed=0)
    assert p.take(7, 3) is None  # nothing kept
    p.keep(7, 3, t)
    assert p.take(7, 4) is None  # another writer made version 4: parse the row
    assert p.take(7, 3) is None  # ... and the stale object is gone
    p.keep(7, 3, t)
    assert p.take(7, 3) is t
    assert p.take(7, 3) is None  # taken: a failed entry cannot leave a changed object behind
    assert (p.hits, p.misses) == (1, 4)


def test_at_most_keep_tournaments_are_kept_the_oldest_dropped_first() -> None:
    p = ParsedStates(keep=2)
    ts = [build(2, 1, "swiss", seed=s) for s in range(3)]
    for i, t in enumerate(ts):
        p.keep(i, 1, t)
    assert p.take(0, 1) is None
    assert p.take(1, 1) is ts[1] and p.take(2, 1) is ts[2]
    with pytest.raises(ValueError, match="at least 1"):
        ParsedStates(keep=0)


def test_entries_of_one_tournament_take_turns_others_do_not_wait() -> None:
    p = ParsedStates()
    inside: list[str] = []
    order: list[str] = []

    def enter(tid: int, name: str) -> None:
        with p.entering(tid):
            inside.append(name)
            order.append(f"{name} in, {len(inside)} inside")
            time.sleep(0.2)
            inside.remove(name)

    threads = [threading.Thread(target=enter, args=(1, "a")), threading.Thread(target=enter, args=(1, "b"))]
    started = time.monotonic()
    for th in threads:
        th.start()
    time.sleep(0.05)
    other = time.monotonic()
    with p.entering(2):  # another tournament: no wait for tournament 1
        waited = time.monotonic() - other
    for th in threads:
        th.join()
    assert waited < 0.19  # less than one holder's 0.2 s: it did not wait for tournament 1
    assert order in (["a in, 1 inside", "b in, 1 inside"], ["b in, 1 inside", "a in, 1 inside"])
    assert time.monotonic() - started >= 0.4  # one after the other
