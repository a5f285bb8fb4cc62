"""Matchmaking decisions and the in-memory queue (issue 25 item 1).

Expected values are worked out by hand from the schedule in :mod:`guandan.server.matchmaking`'s
docstring: half-width ``3 + 3 * floor(t / 10)`` rating points, unlimited from 120 s; a table is
allowed when its ratings' spread is at most every ticket's width; bot fill after 60 s; 15 s to
accept a match.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from guandan.server import matchmaking as mm
from guandan.server.matchmaking_store import MatchError, MatchQueue, MemoryBackend


def T(tid: str, members: tuple[int, ...], ratings: tuple[float, ...], joined: float = 0.0,
      bot: str | None = None) -> mm.Ticket:
    return mm.Ticket(tid, members, ratings, joined, bot)


# -- ranges -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("waited", "width"), [
    (0.0, 3.0), (9.99, 3.0), (10.0, 6.0), (25.0, 9.0), (59.0, 18.0), (60.0, 21.0),
    (110.0, 36.0), (119.9, 36.0), (120.0, None), (3600.0, None),
])
def test_range_widens_every_ten_seconds_then_opens(waited: float, width: float | None) -> None:
    assert mm.allowed_range(waited) == width


def test_negative_wait_refused() -> None:
    with pytest.raises(ValueError):
        mm.allowed_range(-1.0)
    with pytest.raises(ValueError):
        mm.allowed_range(float("nan"))


def test_four_close_ratings_match_at_once_and_far_one_waits() -> None:
    # ratings 10, 11, 12, 13: spread 3 <= width 3 at t=0 -> one table
    q = [T("a", (1,), (10.0,)), T("b", (2,), (11.0,)), T("c", (3,), (12.0,)), T("d", (4,), (13.0,))]
    d = mm.decide(q, now=0.0)
    assert len(d.matches) == 1
    m = d.matches[0]
    assert set(m.tickets) == {"a", "b", "c", "d"}
    # highest (13, user 4) and lowest (10, user 1) partner at 0+2; 12 (user 3) at 1, 11 (user 2) at 3
    assert m.seats == (4, 3, 1, 2)
    assert m.bot_level is None
    # spread 4 > 3: nobody matched at t=0 ...
    q2 = [T("a", (1,), (10.0,)), T("b", (2,), (11.0,)), T("c", (3,), (12.0,)), T("d", (4,), (14.0,))]
    assert mm.decide(q2, now=0.0).matches == []
    # ... but at t=10 every width is 6 >= 4
    assert len(mm.decide(q2, now=10.0).matches) == 1


def test_spread_must_suit_the_newest_ticket_too() -> None:
    # a, b, c waited 30 s (width 12); d just joined (width 3): spread 10 > 3 -> no table
    q = [T("a", (1,), (0.0,)), T("b", (2,), (5.0,)), T("c", (3,), (10.0,)), T("d", (4,), (10.0,), joined=30.0)]
    d = mm.decide(q, now=30.0)
    assert d.matches == []
    assert d.ranges == {"a": 12.0, "b": 12.0, "c": 12.0, "d": 3.0}
    # 10 s later d's width is 6, still < 10; at 60 s (d waited 30 s) it is 12 >= 10
    assert mm.decide(q, now=40.0).matches == []
    assert len(mm.decide(q, now=60.0).matches) == 1


def test_after_two_minutes_any_rating_matches() -> None:
    q = [T("a", (1,), (0.0,)), T("b", (2,), (40.0,)), T("c", (3,), (-5.0,)), T("d", (4,), (30.0,))]
    assert mm.decide(q, now=119.0).matches == []
    assert len(mm.decide(q, now=120.0).matches) == 1


def test_oldest_ticket_first_and_nearest_ratings_chosen() -> None:
    # a is oldest (rating 20); five others all within 3 of it: the nearest three are taken
    q = [T("a", (1,), (20.0,), joined=0.0), T("b", (2,), (21.0,), joined=5.0), T("c", (3,), (17.5,), joined=5.0),
         T("d", (4,), (19.5,), joined=5.0), T("e", (5,), (22.0,), joined=5.0), T("f", (6,), (20.5,), joined=5.0)]
    d = mm.decide(q, now=5.0)
    # distances from 20: d 0.5, f 0.5, b 1.0, e 2.0, c 2.5 -> a, d, f, b; e and c (spread 4.5) wait
    assert [set(m.tickets) for m in d.matches] == [{"a", "b", "d", "f"}]


def test_partners_kept_together_pair_against_pair() -> None:
    q = [T("p", (1, 2), (10.0, 14.0)), T("q", (3, 4), (11.0, 13.0))]  # both rate 12
    (m,) = mm.decide(q, now=0.0).matches
    assert m.seats == (1, 3, 2, 4)  # 1+2 at seats 0+2, 3+4 at 1+3
    assert mm.ready_outcome(m.people, [], [], 15.0, 0.0)[0] == mm.WAITING


def test_pair_with_two_solos_sits_as_a_team() -> None:
    q = [T("s1", (7,), (12.0,), joined=0.0), T("p", (1, 2), (11.0, 13.0), joined=1.0), T("s2", (8,), (13.0,), joined=2.0)]
    (m,) = mm.decide(q, now=2.0).matches
    assert m.seats == (1, 7, 2, 8)
    # a pair never splits: three solos and a pair need 5 seats -> only pair + two solos
    q.append(T("s3", (9,), (12.0,), joined=3.0))
    (m,) = mm.decide(q, now=3.0).matches
    assert m.seats[0] == 1 and m.seats[2] == 2
    assert len(m.tickets) == 3


def test_pairs_never_split_when_seats_do_not_add_up() -> None:
    q = [T("p", (1, 2), (10.0, 10.0)), T("s1", (3,), (10.0,)), T("q", (4, 5), (10.0, 10.0))]
    (m,) = mm.decide(q, now=0.0).matches  # p + q (4 seats); s1 waits
    assert set(m.tickets) == {"p", "q"}


def test_bot_fill_after_sixty_seconds_with_the_chosen_level() -> None:
    q = [T("a", (1,), (0.0,), joined=0.0, bot="hard"), T("b", (2,), (50.0,), joined=0.0)]
    assert mm.decide(q, now=59.9).matches == []
    (m,) = mm.decide(q, now=60.0).matches  # b chose no bots: not taken
    assert m.tickets == ("a",)
    assert m.seats == (1, None, None, None)
    assert m.bot_level == "hard"


def test_bot_fill_gathers_other_bot_fill_tickets_in_range() -> None:
    # at 60 s both widths are 21: ratings 0 and 20 accept each other; the pair at 0+2, the solo at 1
    q = [T("a", (1,), (0.0,), joined=0.0, bot="easy"), T("p", (2, 3), (20.0, 20.0), joined=0.0, bot="normal")]
    (m,) = mm.decide(q, now=60.0).matches
    assert m.seats == (2, 1, 3, None)
    assert m.bot_level == "easy"  # the oldest ticket's level (a joined first by id order)
    # 30 apart: two tables, one each
    q = [T("a", (1,), (0.0,), joined=0.0, bot="easy"), T("b", (2,), (30.0,), joined=1.0, bot="easy")]
    d = mm.decide(q, now=61.0)
    assert [m.seats for m in d.matches] == [(1, None, None, None), (2, None, None, None)]


def test_people_matched_before_bots() -> None:
    # four people in range, one asked for bots after 60 s: a table of people, not a bot table
    q = [T("a", (1,), (10.0,), joined=0.0, bot="easy"), T("b", (2,), (11.0,), joined=61.0),
         T("c", (3,), (12.0,), joined=61.0), T("d", (4,), (13.0,), joined=61.0)]
    (m,) = mm.decide(q, now=61.0).matches
    assert m.bot_level is None and len(m.people) == 4


def test_bad_queue_refused() -> None:
    with pytest.raises(ValueError):
        mm.decide([T("a", (1,), (0.0,)), T("b", (1,), (0.0,))], 0.0)
    with pytest.raises(ValueError):
        T("a", (1, 1), (0.0, 0.0))


def test_ready_outcomes() -> None:
    people = [1, 2, 3, 4]
    assert mm.ready_outcome(people, [1, 2], [], 15.0, 10.0) == (mm.WAITING, frozenset())
    assert mm.ready_outcome(people, [1, 2, 3, 4], [], 15.0, 20.0) == (mm.ALL_READY, frozenset())
    assert mm.ready_outcome(people, [1, 2], [3], 15.0, 1.0) == (mm.FAILED, frozenset({3}))
    assert mm.ready_outcome(people, [1, 2], [], 15.0, 15.0) == (mm.FAILED, frozenset({3, 4}))


# -- the queue in memory -------------------------------------------------------------------------

def join(q: MatchQueue, uid: int, rating: float, now: float, bot: str | None = None) -> dict:
    state, _ = q.join([uid], [rating], [f"u{uid}"], bot, now)
    return state


def test_queue_join_twice_answers_the_same_entry() -> None:
    q = MatchQueue()
    first, created = q.join([1], [5.0], ["u1"], None, 0.0)
    again, created2 = q.join([1], [5.0], ["u1"], None, 1.0)
    assert created and not created2
    assert again["ticket"]["id"] == first["ticket"]["id"]
    assert q.counts() == {"tickets": 1, "people": 1, "proposals": 0}


def test_decline_puts_the_others_back_at_the_front() -> None:
    q = MatchQueue()
    for uid, joined in ((1, 0.0), (2, 1.0), (3, 2.0), (4, 3.0)):
        join(q, uid, 10.0, joined)
    assert q.tick(3.0) == []
    assert q.state(1, 3.0)["status"] == "ready_check"
    assert q.answer(1, True, 4.0)
    assert q.answer(3, False, 4.0)
    assert q.state(3, 4.0) == {"status": "idle"}
    back = q.state(1, 4.0)
    assert back["status"] == "queued" and back["ticket"]["joined_at"] == 0.0  # old time: the front
    assert q.state(4, 4.0)["ticket"]["joined_at"] == 3.0
    # a newcomer and the three others form the next table; the time-out leaves out whoever did not answer
    join(q, 5, 10.0, 5.0)
    q.tick(5.0)
    for uid in (1, 2, 5):
        q.answer(uid, True, 6.0)
    q.tick(20.0)  # deadline 5 + 15 = 20: user 4 never answered
    assert q.state(4, 20.0) == {"status": "idle"}
    assert {q.state(u, 20.0)["status"] for u in (1, 2, 5)} == {"queued"}


def test_all_ready_is_claimed_once_then_seated() -> None:
    q = MatchQueue()
    for uid in (1, 2, 3, 4):
        join(q, uid, 0.0, 0.0)
    q.tick(mm.SETTLE_QUIET_S)  # the queue is still: formed
    for uid in (1, 2, 3, 4):
        q.answer(uid, True, 1.0)
    claimed = q.tick(1.0)
    assert len(claimed) == 1 and q.tick(1.5) == []  # claimed once
    q.seated(claimed[0]["id"], "room1", 2.0)
    assert q.state(2, 3.0) == {"status": "seated", "room": "room1"}
    assert q.state(2, 2.0 + 301.0) == {"status": "idle"}
    # the answers are kept 300 s; the sweep (every 60 s) then deletes them from the store
    q.tick(61.0)
    assert len(q.b.all("who")) == 4
    q.tick(302.5)
    assert q.b.all("who") == {}


def test_leave_with_partner_removes_both() -> None:
    q = MatchQueue()
    q.join([1, 2], [3.0, 5.0], ["u1", "u2"], None, 0.0)
    assert q.state(2, 0.0)["status"] == "queued"
    assert q.leave(2, 1.0)
    assert q.state(1, 1.0) == {"status": "idle"} and q.counts()["tickets"] == 0
    assert not q.leave(2, 1.0)


class SlowBackend(MemoryBackend):
    """The memory back end with a pause in each read, so that threads interleave inside the queue's
    operations as processes on Redis do (without the queue's lock this run matched 186 people into
    1,040 seats)."""

    def get(self, coll: str, key: str) -> dict | None:
        value = super().get(coll, key)
        time.sleep(0.0001)
        return value

    def all(self, coll: str) -> dict:
        out = super().all(coll)
        time.sleep(0.001)
        return out


def test_no_double_match_with_threads() -> None:
    """Eight threads join 200 people (ratings 0..49, four of each) and tick at once: every person ends
    in exactly one place (one ready check, or still queued), none in two; every table's spread is
    within the 3 points allowed at 0 s. The rounds run at 0.1 s, when a queue of tickets joined at
    0 s is still (settling): they form tables while the other threads join."""
    q = MatchQueue(SlowBackend())
    barrier = threading.Barrier(8)

    def worker(k: int) -> None:
        barrier.wait()
        for uid in range(k, 200, 8):
            join(q, uid, float(uid % 50), 0.0)
            q.tick(mm.SETTLE_QUIET_S)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    q.tick(mm.SETTLE_QUIET_S)
    props = q.b.all("props")
    seated = [u for p in props.values() for u in p["seats"] if u is not None]
    waiting = [u for t in q.b.all("tickets").values() for u in t["members"]]
    assert len(seated) == len(set(seated))
    assert sorted(seated + waiting) == list(range(200))
    assert len(seated) == 4 * len(props) and len(props) >= 40
    for p in props.values():
        ratings = [float(u % 50) for u in p["seats"]]
        assert max(ratings) - min(ratings) <= 3.0


def _naive_decide(queue: list[mm.Ticket], now: float) -> list[tuple[str, ...]]:
    """The rule of the module docstring written plainly (every unplaced ticket looked at for each
    anchor): the reference of the fast candidate walk."""
    widths = {t.id: mm.allowed_range(now - t.joined_at) for t in queue}

    def ok(w: float | None, d: float) -> bool:
        return w is None or d <= w + 1e-9

    placed: set[str] = set()
    out = []
    for a in sorted(queue, key=lambda t: (t.joined_at, t.id)):
        if a.id in placed:
            continue
        cands = [c for c in queue if c.id != a.id and c.id not in placed
                 and ok(widths[a.id], abs(c.rating - a.rating)) and ok(widths[c.id], abs(c.rating - a.rating))]
        cands.sort(key=lambda c: (abs(c.rating - a.rating), c.joined_at, c.id))
        group = mm._four(a, cands[:mm.MAX_CANDIDATES], widths)
        if group is None:
            continue
        placed.update(t.id for t in group)
        out.append(tuple(sorted(t.id for t in group)))
    return out


def test_fast_candidate_walk_agrees_with_the_plain_rule() -> None:
    import random

    rng = random.Random(7)
    for trial in range(150):
        n = rng.randint(4, 60)
        queue = []
        uid = 0
        for i in range(n):
            size = 2 if rng.random() < 0.2 else 1
            members = tuple(range(uid, uid + size))
            uid += size
            ratings = tuple(float(rng.randint(0, 30)) for _ in members)  # whole points: many ties
            queue.append(mm.Ticket(f"t{i:02d}", members, ratings, float(rng.choice([0, 0, 5, 20, 40]))))
        now = float(rng.choice([40, 60, 90, 130]))
        fast = sorted(tuple(sorted(m.tickets)) for m in mm.decide(queue, now).matches if m.bot_level is None)
        # rule (a): the runs, then the plain rule on the tickets left; rule (b): the plain rule alone;
        # the one seating more people, (b) on equal numbers
        widths = {t.id: mm.allowed_range(now - t.joined_at) for t in queue}
        runs = mm._runs(sorted(queue, key=lambda t: (t.rating, t.joined_at, t.id)), widths, now)
        in_runs = {t.id for r in runs for t in r}
        with_runs = [tuple(sorted(t.id for t in r)) for r in runs]
        with_runs += _naive_decide([t for t in queue if t.id not in in_runs], now)
        plain = _naive_decide(queue, now)
        size = {t.id: t.size for t in queue}

        def seated(groups: list[tuple[str, ...]]) -> int:
            return sum(size[i] for g in groups for i in g)

        assert fast == sorted(with_runs if seated(with_runs) > seated(plain) else plain), trial
        assert seated(fast) >= seated(plain), trial  # never fewer people than the oldest-first rule
        # every run is a valid table: four seats, ratings within every member's range
        for r in runs:
            assert sum(t.size for t in r) == 4 and mm._group_ok(r, widths)


def _best_runs_by_search(by_rating: list[mm.Ticket], now: float) -> tuple[int, float, float]:
    """The best value ``(seats, people's total wait, -total spread)`` of any set of disjoint runs
    (2-4 consecutive tickets of ``by_rating`` making four seats and passing the spread rule),
    by trying every set: the reference of :func:`guandan.server.matchmaking._runs`."""
    widths = {t.id: mm.allowed_range(now - t.joined_at) for t in by_rating}
    n = len(by_rating)
    runs = [(j, k) for j in range(n) for k in range(j + 2, min(n, j + 4) + 1)
            if sum(t.size for t in by_rating[j:k]) == 4 and mm._group_ok(by_rating[j:k], widths)]
    best = (0, 0.0, 0.0)

    def go(i: int, used_to: int, value: tuple[int, float, float]) -> None:
        nonlocal best
        best = max(best, value)
        for r in range(i, len(runs)):
            j, k = runs[r]
            if j >= used_to:
                grp = by_rating[j:k]
                go(r + 1, k, (value[0] + 4, value[1] + sum(t.size * (now - t.joined_at) for t in grp),
                              value[2] - (grp[-1].rating - grp[0].rating)))

    go(0, 0, best)
    return best


def test_runs_are_the_best_set_of_runs() -> None:
    import random

    rng = random.Random(5)
    for trial in range(200):
        n = rng.randint(2, 10)
        queue = []
        for i in range(n):
            members = (2 * i, 2 * i + 1) if rng.random() < 0.3 else (2 * i,)
            queue.append(mm.Ticket(f"t{i:02d}", members, tuple(float(rng.randint(0, 9)) for _ in members),
                                   float(rng.choice([0, 3, 10, 20]))))
        now = 25.0
        by_rating = sorted(queue, key=lambda t: (t.rating, t.joined_at, t.id))
        widths = {t.id: mm.allowed_range(now - t.joined_at) for t in queue}
        runs = mm._runs(by_rating, widths, now)
        value = (4 * len(runs), sum(t.size * (now - t.joined_at) for r in runs for t in r),
                 -sum(r[-1].rating - r[0].rating for r in runs))
        assert value[0] == _best_runs_by_search(by_rating, now)[0], trial
        assert value[1:] == pytest.approx(_best_runs_by_search(by_rating, now)[1:]), trial


def _best_seats_by_search(queue: list[mm.Ticket], now: float) -> int:
    """Most people seatable at four-seat tables passing the spread rule (exhaustive search; small queues)."""
    import itertools

    widths = {t.id: mm.allowed_range(now - t.joined_at) for t in queue}
    best = 0

    def go(left: list[mm.Ticket], seated: int) -> None:
        nonlocal best
        best = max(best, seated)
        if not left:
            return
        first, rest = left[0], left[1:]
        go(rest, seated)  # first left out
        for k in range(1, 4):
            for others in itertools.combinations(rest, k):
                group = [first, *others]
                if sum(t.size for t in group) == 4 and mm._group_ok(group, widths):
                    go([t for t in rest if t not in others], seated + 4)

    go(sorted(queue, key=lambda t: t.id), 0)
    return best


def test_decide_seats_as_many_as_an_exhaustive_search_in_a_burst() -> None:
    """A burst: people alone who joined together (one range for all). Any tables passing the
    spread rule can then be exchanged for as many tables of neighbours in rating order, so the
    runs pass seats as many people as any choice of tables (checked exhaustively)."""
    import random

    rng = random.Random(11)
    for trial in range(60):
        n = rng.randint(4, 11)
        joined = float(rng.choice([0, 5, 10]))
        queue = [mm.Ticket(f"t{i:02d}", (i,), (float(rng.randint(0, 12)),), joined) for i in range(n)]
        now = joined + float(rng.choice([0, 10]))
        seated = sum(len(m.people) for m in mm.decide(queue, now).matches)
        assert seated == _best_seats_by_search(queue, now), trial


def test_runs_in_rating_order_strand_nobody_where_oldest_first_would() -> None:
    # 0..7 within 3 of their neighbours; d (3) is the oldest. Taking d first with its nearest
    # (2, 4, 1) would leave 0, 5, 6, 7 (spread 7) waiting; the runs seat all eight.
    q = [T(n, (i + 1,), (float(i),), joined=0.0 if n == "d" else 1.0) for i, n in enumerate("abcdefgh")]
    d = mm.decide(q, now=1.0)
    assert [set(m.tickets) for m in d.matches] == [{"a", "b", "c", "d"}, {"e", "f", "g", "h"}]


def test_runs_prefer_the_longest_waits_then_the_smallest_spread() -> None:
    def runs(q: list[mm.Ticket], now: float) -> list[set[str]]:
        widths = {t.id: mm.allowed_range(now - t.joined_at) for t in q}
        by_rating = sorted(q, key=lambda t: (t.rating, t.joined_at, t.id))
        return [{t.id for t in r} for r in mm._runs(by_rating, widths, now)]

    # 10 (waited 30 s), then 11, 12, 13, 13 just joined: either run seats four; the one with the old
    # ticket wins although its spread (3) is larger than the other's (2)
    q = [T("old", (1,), (10.0,), joined=0.0), T("b", (2,), (11.0,), joined=30.0), T("c", (3,), (12.0,), joined=30.0),
         T("d", (4,), (13.0,), joined=30.0), T("e", (5,), (13.0,), joined=30.0)]
    assert runs(q, 30.0) == [{"old", "b", "c", "d"}]
    # all of one age: the smaller spread wins (11, 12, 13, 13)
    q[0] = T("old", (1,), (10.0,), joined=30.0)
    assert runs(q, 30.0) == [{"b", "c", "d", "e"}]
    # a wait counts once per person: a pair that waited 15 s (2 x 15) and two solos of 11 s beat four
    # solos of 11 s (4 x 11 = 44 < 52)
    q = [T("pair", (1, 2), (10.0, 10.0), joined=0.0), T("s1", (3,), (10.5,), joined=4.0),
         T("s2", (4,), (11.0,), joined=4.0), T("s3", (5,), (11.5,), joined=4.0), T("s4", (6,), (12.0,), joined=4.0)]
    assert runs(q, 15.0) == [{"pair", "s1", "s2"}]


def test_on_equal_seats_the_oldest_first_rule_decides() -> None:
    # five within 3 points, all of one age, so either rule seats four: the oldest-first rule's table
    # (anchor b, 11: its nearest c and old at 1, then d at 2), not the runs' smallest spread
    q = [T("old", (1,), (10.0,), joined=30.0), T("b", (2,), (11.0,), joined=30.0), T("c", (3,), (12.0,), joined=30.0),
         T("d", (4,), (13.0,), joined=30.0), T("e", (5,), (13.0,), joined=30.0)]
    (m,) = mm.decide(q, now=30.0).matches
    assert set(m.tickets) == {"old", "b", "c", "d"}


def test_a_thousand_equal_ratings_make_250_tables_oldest_first() -> None:
    """1,000 new players (all rated 0, joined one per 10 ms): 250 tables, everyone once; the first
    table holds the four oldest (the anchor is the oldest, and among equal ratings the oldest win)."""
    queue = [mm.Ticket(f"t{i:04d}", (i,), (0.0,), i / 100) for i in range(1000)]
    d = mm.decide(queue, 10.0)
    assert len(d.matches) == 250
    people = [u for m in d.matches for u in m.people]
    assert sorted(people) == list(range(1000))
    assert d.matches[0].tickets == ("t0000", "t0001", "t0002", "t0003")


# -- settling (a burst's tables wait for the joins to pause) -------------------------------------

def test_tables_wait_while_players_are_still_arriving() -> None:
    # spread 2.5 <= 3: one table by decide; the newest joined 0.05 s before 0.1 -> not still
    q = [T("a", (1,), (0.0,), 0.0), T("b", (2,), (1.0,), 0.01), T("c", (3,), (2.0,), 0.02), T("d", (4,), (2.5,), 0.05)]
    d = mm.decide(q, now=0.1)
    assert len(d.matches) == 1
    assert not mm.settled(q, 0.1) and not mm.must_form(q, 0.1)
    assert mm.formed_now(d, q, 0.1) == []
    # 0.2: the newest joined 0.15 s ago -> still -> formed
    d = mm.decide(q, now=0.2)
    assert mm.settled(q, 0.2) and mm.must_form(q, 0.2)
    assert [m.tickets for m in mm.formed_now(d, q, 0.2)] == [("a", "b", "c", "d")]


def test_a_table_waits_at_most_two_seconds_for_the_joins_to_pause() -> None:
    # two tables by rating: {a, b, c, d} around 0 (a joined at 0 s), {e, f, g, h} around 20 (joined
    # from 1.0 s); at 2.0 s the last join was at 1.95 s (not still): only the table holding a
    # ticket that has waited 2 s is formed
    q = [T("a", (1,), (0.0,), 0.0), T("b", (2,), (1.0,), 1.0), T("c", (3,), (1.5,), 1.2), T("d", (4,), (2.0,), 1.3),
         T("e", (5,), (20.0,), 1.0), T("f", (6,), (20.5,), 1.5), T("g", (7,), (21.0,), 1.9), T("h", (8,), (21.5,), 1.95)]
    assert not mm.settled(q, 2.0) and mm.must_form(q, 2.0)
    assert not mm.must_form(q, 1.99)  # nobody has waited 2 s yet: the round may skip deciding
    d = mm.decide(q, now=2.0)
    assert sorted(m.tickets for m in d.matches) == [("a", "b", "c", "d"), ("e", "f", "g", "h")]
    assert [m.tickets for m in mm.formed_now(d, q, 2.0)] == [("a", "b", "c", "d")]


def test_bot_tables_are_formed_while_players_arrive() -> None:
    # a (bots "easy") has waited 61 s; b joined just now far away: a's bot table is formed at once
    q = [T("a", (1,), (0.0,), 0.0, "easy"), T("b", (2,), (40.0,), 61.0)]
    d = mm.decide(q, now=61.0)
    assert not mm.settled(q, 61.0)
    assert [(m.tickets, m.bot_level) for m in mm.formed_now(d, q, 61.0)] == [(("a",), "easy")]


def test_empty_queue_is_still_and_needs_no_round() -> None:
    assert mm.settled([], 5.0) and not mm.must_form([], 5.0)
    assert mm.formed_now(mm.Decision(), [], 5.0) == []


@pytest.mark.parametrize("seed", range(1, 7))
def test_a_burst_seats_as_many_as_one_decision_over_all_of_it(seed: int) -> None:
    """400 people (ratings ~ N(15, 6)) join over 0.8 s, one every 2 ms, with a round every 0.1 s as
    the server runs it: no table is formed until the joins pause, and then as many people are seated
    as any choice of tables could seat. That maximum is worked out here on its own: people alone with
    one range (3 points: nobody has waited 10 s) can always be seated four at a time in runs of
    neighbours in rating order (a table that skips a waiting player can take that player in place of
    its highest or lowest one), so a plain dynamic programme over the sorted ratings finds it. Forming
    each round's tables at once, as before settling, seated 4 to 8 fewer people in 5 of these 6
    bursts when the rule was written (396, 396, 392, 392, 392, 388 against 400, 396, 396, 396, 396, 396)."""
    import random

    rng = random.Random(seed)
    ratings = [rng.gauss(15.0, 6.0) for _ in range(400)]
    q = MatchQueue()
    rounds_with_tables = []
    for k, r in enumerate(ratings):
        now = k * 0.002
        join(q, k, r, now)
        if k % 50 == 49:  # a round every 0.1 s of joins
            if q.tick(now) or q.b.all("props"):
                rounds_with_tables.append(now)
    assert rounds_with_tables == []  # players still arriving at every round: nothing formed yet
    last = 399 * 0.002
    q.tick(last + 0.05)
    assert q.b.all("props") == {}  # 0.05 s after the last join: not still yet
    q.tick(last + mm.SETTLE_QUIET_S + 0.001)
    seated = sorted(u for p in q.b.all("props").values() for u in p["seats"] if u is not None)
    rs = sorted(ratings)
    most = [0] * (len(rs) + 1)  # most[i]: people seated among the i lowest
    for i in range(1, len(rs) + 1):
        most[i] = most[i - 1]
        if i >= 4 and rs[i - 1] - rs[i - 4] <= 3.0:
            most[i] = max(most[i], most[i - 4] + 4)
    assert len(seated) == most[-1]
    assert len(set(seated)) == len(seated)
    for p in q.b.all("props").values():
        rs = [ratings[u] for u in p["seats"]]
        assert max(rs) - min(rs) <= 3.0


class CountingBackend(MemoryBackend):
    """The memory back end, counting the reads of every ticket (``all("tickets")``) and the times
    the queue's lock is taken."""

    def __init__(self) -> None:
        super().__init__()
        self.ticket_reads = 0
        self.locks = 0

    def all(self, coll: str) -> dict:
        if coll == "tickets":
            self.ticket_reads += 1
        return super().all(coll)

    def lock(self) -> Any:
        self.locks += 1
        return super().lock()


def test_a_round_during_a_burst_reads_no_ticket() -> None:
    b = CountingBackend()
    q = MatchQueue(b)
    for k in range(8):  # ratings 0..3.5, joined 0.00 .. 0.07
        join(q, k, 0.5 * k, 0.01 * k)
    locks = b.locks
    q.tick(0.075)  # the oldest is not known yet: one read of the tickets, nothing formed
    assert b.ticket_reads == 1 and b.locks == locks + 1 and q.b.all("props") == {}
    assert q.b.get("meta", "oldest") == {"t": 0.0} and q.b.get("meta", "newest") == {"t": 0.07}
    q.tick(0.1)  # newest joined 0.03 s ago, oldest 0.1 s: the hint says no table yet
    assert b.ticket_reads == 1 and b.locks == locks + 1 and q.b.all("props") == {}  # not even the lock
    q.tick(0.2)  # still: read, decide, formed (two tables: 0..1.5 and 2..3.5)
    assert b.ticket_reads == 2 and b.locks == locks + 2 and len(q.b.all("props")) == 2
    assert q.b.get("meta", "oldest") is None  # nobody left queued


def test_tickets_put_back_after_a_decline_are_matched_while_others_arrive() -> None:
    q = MatchQueue(CountingBackend())
    for u in (1, 2, 3, 4):
        join(q, u, 10.0, 0.0)
    q.tick(0.2)
    assert q.state(1, 0.2)["status"] == "ready_check"
    assert q.answer(4, False, 5.0)  # 4 declines: 1, 2, 3 go back with joined_at 0
    join(q, 5, 11.0, 5.0)  # a new player joins at the same moment: the queue is not still
    q.tick(5.05)  # but 1, 2, 3 have waited 5 s (>= 2): their table is formed at once
    assert {q.state(u, 5.05)["status"] for u in (1, 2, 3, 5)} == {"ready_check"}


def test_tickets_put_back_lower_the_oldest_bound() -> None:
    q = MatchQueue()
    for u in (1, 2, 3, 4):
        join(q, u, 10.0, 0.0)
    join(q, 9, 50.0, 0.15)  # a far player stays queued: the bound stays set
    q.tick(0.3)  # the table 1-4 is formed; the oldest left joined at 0.15
    assert q.b.get("meta", "oldest") == {"t": 0.15}
    assert q.answer(4, False, 1.0)  # 1, 2, 3 go back with joined_at 0
    assert q.b.get("meta", "oldest") == {"t": 0.0}
    join(q, 5, 10.5, 1.0)
    join(q, 6, 60.0, 1.05)  # arrivals keep the queue from being still
    q.tick(1.1)  # 1, 2, 3 have waited 1.1 s: nothing yet
    assert q.state(1, 1.1)["status"] == "queued"
    join(q, 7, 70.0, 2.0)
    q.tick(2.05)  # 1, 2, 3 have waited 2.05 s: their table (with 5) is formed while 7 has just joined
    assert {q.state(u, 2.05)["status"] for u in (1, 2, 3, 5)} == {"ready_check"}


def test_a_join_timed_before_a_round_lowers_the_oldest_bound() -> None:
    # a join's time is taken before it waits for the lock; a round may set the bound meanwhile
    q = MatchQueue()
    join(q, 9, 90.0, 10.5)
    q.tick(11.0)  # one far ticket: nothing formed; the bound is exact: 10.5
    assert q.b.get("meta", "oldest") == {"t": 10.5}
    for u in (1, 2, 3, 4):
        join(q, u, 50.0, 10.0)  # timed at 10.0, in the queue after the round
    assert q.b.get("meta", "oldest") == {"t": 10.0} and q.b.get("meta", "newest") == {"t": 10.0}
    for k, u in enumerate(range(20, 40)):  # far-rated arrivals every 0.05 s: never still
        join(q, u, 200.0 + 10 * k, 11.05 + 0.05 * k)
        q.tick(11.05 + 0.05 * k)
        if q.state(1, 11.05 + 0.05 * k)["status"] == "ready_check":
            formed_at = 11.05 + 0.05 * k
            break
    else:
        raise AssertionError("the table of 1-4 was never formed")
    assert formed_at == pytest.approx(12.0)  # waited 2 s from 10.0, not from 10.5


def test_an_idle_queue_takes_no_lock() -> None:
    b = CountingBackend()
    q = MatchQueue(b)
    q.tick(0.0)  # the process's first round: the sweep
    locks, reads = b.locks, b.ticket_reads
    for k in range(1, 11):
        q.tick(0.1 * k)
    assert (b.locks, b.ticket_reads) == (locks, reads)
    join(q, 1, 0.0, 2.0)  # one ticket: the first round after it reads the queue once
    q.tick(2.2)
    assert b.ticket_reads == reads + 1


def test_a_clock_stepped_back_fails_open() -> None:
    # four joined at 100.0; a round at 97.5 (a clock stepped back 2.5 s): formed, as before settling
    q = [T("a", (1,), (10.0,), 100.0), T("b", (2,), (10.0,), 100.0), T("c", (3,), (10.0,), 100.0),
         T("d", (4,), (10.0,), 100.0)]
    assert mm.settled(q, 97.5) and mm.must_form(q, 97.5)
    assert len(mm.formed_now(mm.decide(q, 97.5), q, 97.5)) == 1
    # a round's clock 1 s behind the joins' (two processes): the table waits until it is 0.1 s past
    assert not mm.settled(q, 99.0) and mm.formed_now(mm.decide(q, 99.0), q, 99.0) == []
    assert not mm.settled(q, 100.05) and mm.settled(q, 100.15)


def test_times_are_read_once_the_lock_is_held() -> None:
    """The server's queue reads its clock under the lock: a round whose time was taken before it
    waited for the lock, or a join timed before a round that ran meanwhile, still sees the order in
    which they held the lock."""
    t = [10.0]
    q = MatchQueue(clock=lambda: t[0])
    for u in (1, 2, 3, 4):
        t[0] = 10.0 + 0.01 * u
        join(q, u, 10.0, 9.0)  # timed at 9.0 by the caller: stored at the clock's 10.0x
    assert sorted(x["joined_at"] for x in q.b.all("tickets").values()) == [10.01, 10.02, 10.03, 10.04]
    t[0] = 10.2
    q.tick(10.0)  # the round's time taken 0.2 s before it got the lock: at 10.2 the queue is still
    assert {q.state(u, 10.2)["status"] for u in (1, 2, 3, 4)} == {"ready_check"}


# -- decline cool-down (issue 25: 3 declines in 10 minutes, 2 minutes' wait) -------------------------

@pytest.mark.parametrize(("declines", "now", "left"), [
    ([], 0.0, 0.0),
    ([0.0, 100.0], 101.0, 0.0),  # two declines: no wait
    ([0.0, 100.0, 200.0], 200.0, 120.0),  # the third within 10 min: 2 minutes from it
    ([0.0, 100.0, 200.0], 250.0, 70.0),  # 200 + 120 - 250
    ([200.0, 0.0, 100.0], 319.5, 0.5),  # any order
    ([0.0, 100.0, 200.0], 320.0, 0.0),  # waited out
    ([0.0, 300.0, 600.0], 650.0, 70.0),  # 600 - 0 = 10 minutes exactly: still within
    ([0.0, 300.0, 601.0], 650.0, 0.0),  # 601 s apart: not within 10 minutes
    ([0.0, 100.0, 200.0, 700.0, 750.0], 800.0, 70.0),  # 200, 700, 750 within 10 min: 750 + 120 - 800
])
def test_cooldown_left(declines: list[float], now: float, left: float) -> None:
    assert mm.cooldown_left(declines, now) == pytest.approx(left)


def test_declines_kept_forgets_what_cannot_matter() -> None:
    # a decline matters for 10 + 2 minutes (720 s): one at 0 is forgotten at 720
    assert mm.declines_kept([0.0, 500.0, 100.0], 719.0) == [0.0, 100.0, 500.0]
    assert mm.declines_kept([0.0, 500.0, 100.0], 720.0) == [100.0, 500.0]


def _three_declines(q: MatchQueue, decliner: int, t0: float, timeout: bool = False) -> float:
    """Four people of rating 0 join at ``t0 + 20k - 0.5`` (so that the queue is still at ``t0 + 20k``:
    settling); ``decliner`` declines (or lets the 15 s run out) the ready check formed at ``t0 + 20k``,
    three times. Returns the time of the last decline."""
    others = [u for u in (1, 2, 3, 4) if u != decliner]
    now = t0
    for k in range(3):
        now = t0 + 20.0 * k
        for u in (1, 2, 3, 4):
            q.join([u], [0.0], [f"u{u}"], None, now - 0.5)
        q.tick(now)
        assert q.state(decliner, now)["status"] == "ready_check"
        if timeout:
            for u in others:
                q.answer(u, True, now)
            now += mm.READY_S
            q.tick(now)
        else:
            assert q.answer(decliner, False, now)
        assert q.state(decliner, now)["status"] == "idle"
        for u in others:
            q.leave(u, now)
    return now


def test_three_declines_in_ten_minutes_wait_two_minutes() -> None:
    q = MatchQueue()
    last = _three_declines(q, 2, 1000.0)  # declines at 1000, 1020, 1040
    assert last == 1040.0
    with pytest.raises(MatchError) as e:
        q.join([2], [0.0], ["u2"], None, 1100.0)
    assert (e.value.status, e.value.code, e.value.params) == (429, "decline_cooldown", {"retry_s": 60})
    with pytest.raises(MatchError) as e:  # as a partner: the joiner is told the partner's wait
        q.join([1, 2], [0.0, 0.0], ["u1", "u2"], None, 1159.5)
    assert (e.value.status, e.value.code, e.value.params) == (429, "partner_cooldown", {"name": "u2", "retry_s": 1})
    _, created = q.join([2], [0.0], ["u2"], None, 1160.0)  # 1040 + 120
    assert created
    assert q.join([1], [0.0], ["u1"], None, 1160.0)[1]  # the others were never held back


def test_ready_checks_let_run_out_count_as_declines() -> None:
    q = MatchQueue()
    last = _three_declines(q, 3, 0.0, timeout=True)  # run out at 15, 35, 55
    assert last == 55.0
    with pytest.raises(MatchError) as e:
        q.join([3], [0.0], ["u3"], None, 60.0)
    assert (e.value.code, e.value.params) == ("decline_cooldown", {"retry_s": 115})


def test_lock_not_taken_in_time_is_a_retryable_503() -> None:
    q = MatchQueue()
    q.lock_wait_s = 0.05
    held = q.b.lock()
    assert held.acquire(1.0)
    try:
        t0 = time.monotonic()
        with pytest.raises(MatchError) as e:
            q.join([1], [0.0], ["u1"], None, 0.0)
        assert time.monotonic() - t0 < 1.0
        assert (e.value.status, e.value.code, e.value.params) == (503, "temporarily_unavailable", {"retry_s": 2})
    finally:
        held.release()
    assert q.join([1], [0.0], ["u1"], None, 0.0)[1]  # released: the same request goes through
