"""Swiss pairing (issue 21): property tests against an exhaustive search on small fields, invariants over
whole events, seeded round 1, and the windowed matching of large fields."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guandan.tournament import swiss
from guandan.tournament.director import add_entry, enter_result, history, pair_next_round, withdraw
from guandan.tournament.model import Options, Player, Tournament
from guandan.tournament.scoring import standings
from guandan.tournament.simulate import random_result


def _perfect_matchings(nodes: list[int]):
    """Every perfect matching of ``nodes`` (a list of even length), by brute force."""
    if not nodes:
        yield []
        return
    first, rest = nodes[0], nodes[1:]
    for k, other in enumerate(rest):
        for m in _perfect_matchings(rest[:k] + rest[k + 1:]):
            yield [(first, other), *m]


def _tiers(matching, ranked, fp, played, had_bye):
    """The documented lexicographic tiers, computed here independently of swiss._Costs:
    (byes of the bye's recipient beyond the fewest of the field, repeats, bye distance from the bottom,
    Σ fp diff², Σ rank diff²). ``had_bye``: {entry: byes}."""
    n = len(ranked)
    rank = {e: i for i, e in enumerate(ranked)}
    floor = min(fp[e] for e in ranked)
    fewest = min(had_bye.get(e, 0) for e in ranked)
    second = repeats = bye_dist = d2 = r2 = 0
    for a, b in matching:
        if b == swiss.BYE or a == swiss.BYE:
            e = a if b == swiss.BYE else b
            second += had_bye.get(e, 0) - fewest
            bye_dist = n - 1 - rank[e]
            d2 += (fp[e] - floor) ** 2
            r2 += (n - rank[e]) ** 2
        else:
            repeats += frozenset((a, b)) in played
            d2 += (fp[a] - fp[b]) ** 2
            r2 += (rank[a] - rank[b]) ** 2
    return second, repeats, bye_dist, d2, r2


def _event(n: int, seed: int) -> Tournament:
    t = Tournament(name="prop", rounds=50, options=Options(first_round="random", random_seed=seed))
    for i in range(1, n + 1):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=i)
    return t


def _play(t: Tournament, rng: random.Random) -> None:
    rnd = t.played[-1]
    for m in rnd.matches:
        if m.b is not None:
            enter_result(t, rnd.number, m.table, random_result(rng))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 9), rounds=st.integers(2, 5), seed=st.integers(0, 10_000))
def test_swiss_rounds_are_optimal_against_exhaustive_search(n: int, rounds: int, seed: int) -> None:
    """Each round after the first: the engine's pairing has exactly the minimum of the documented
    lexicographic tiers over all perfect matchings (so no repeat whenever one is avoidable, no second
    bye while avoidable); every active entry plays exactly once; field points never decrease."""
    rng = random.Random(seed)
    t = _event(n, seed)
    pair_next_round(t)
    _play(t, rng)
    for _ in range(rounds - 1):
        before = {s.id: s.field_points for s in standings(t)}
        table = standings(t)
        ranked = [s.id for s in table]
        fp = {s.id: s.field_points for s in table}
        played, had_bye = history(t)
        rnd = pair_next_round(t)
        pairs = [(m.a, m.b) for m in rnd.matches if m.b is not None]
        byes = [m.a for m in rnd.matches if m.b is None]
        seen = [e for p in pairs for e in p] + byes
        assert sorted(seen) == list(range(1, n + 1))
        assert len(byes) == n % 2
        got = pairs + [(b, swiss.BYE) for b in byes]
        nodes = ranked + ([swiss.BYE] if n % 2 else [])
        best = min(_tiers(m, ranked, fp, played, had_bye) for m in _perfect_matchings(nodes))
        assert _tiers(got, ranked, fp, played, had_bye) == best
        _play(t, rng)
        after = {s.id: s.field_points for s in standings(t)}
        assert all(after[i] >= before[i] for i in before)
    _, had_bye = history(t)
    bye_counts = {}
    for r in t.played:
        for m in r.matches:
            if m.b is None:
                bye_counts[m.a] = bye_counts.get(m.a, 0) + 1
    if rounds <= n:
        assert all(c == 1 for c in bye_counts.values())


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_full_swiss_of_eight_has_no_repeat_for_seven_rounds_when_possible(seed: int) -> None:
    """8 entries, 7 rounds (a complete round robin's worth): the exhaustive check decides per round
    whether a repeat was avoidable; the engine's repeat count must equal that minimum."""
    rng = random.Random(seed)
    t = _event(8, seed)
    pair_next_round(t)
    _play(t, rng)
    for _ in range(6):
        table = standings(t)
        ranked = [s.id for s in table]
        played, _ = history(t)
        rnd = pair_next_round(t)
        got = sum(frozenset((m.a, m.b)) in played for m in rnd.matches)
        least = min(sum(frozenset(p) in played for p in m) for m in _perfect_matchings(ranked))
        assert got == least
        _play(t, rng)


def test_round_one_seeded_is_top_half_against_bottom_half() -> None:
    # 1 v N/2+1, 2 v N/2+2, ...; an odd field gives the bye to the last seed
    assert swiss.pair_first_round([1, 2, 3, 4, 5, 6]) == ([(1, 4), (2, 5), (3, 6)], None)
    assert swiss.pair_first_round([1, 2, 3, 4, 5, 6, 7]) == ([(1, 4), (2, 5), (3, 6)], 7)
    # seeding order: seed number, then rating, then id
    assert swiss.seeding_order([(1, None, 1500.0), (2, 2, None), (3, 1, None), (4, None, 1700.0), (5, None, None)]) \
        == [3, 2, 4, 1, 5]


def test_round_one_random_is_reproducible_and_a_permutation() -> None:
    a = swiss.pair_first_round(list(range(1, 12)), "random", 7)
    b = swiss.pair_first_round(list(range(1, 12)), "random", 7)
    assert a == b
    ids = sorted([e for p in a[0] for e in p] + [a[1]])
    assert ids == list(range(1, 12))


def test_later_round_pairs_by_points_then_adjacent_places() -> None:
    # 6 entries after round 1 (1-4, 2-5, 3-6 with 1, 2, 3 winning): the winners meet each other
    ranked = [1, 2, 3, 4, 5, 6]
    fp = {1: 3, 2: 3, 3: 3, 4: 1, 5: 1, 6: 1}
    played = {frozenset(p) for p in ((1, 4), (2, 5), (3, 6))}
    pairs, bye = swiss.pair_round(ranked, fp, played, set())
    assert bye is None
    # the score groups are odd (3 and 3): one pair must float; fewest squared differences with adjacent
    # places: 1-2, then 3 floats to 4 (3-6 is a repeat), 5-6
    assert pairs == [(1, 2), (3, 4), (5, 6)]


def test_bye_goes_to_lowest_ranked_without_a_bye() -> None:
    ranked = [1, 2, 3, 4, 5]
    fp = {1: 3, 2: 3, 3: 1, 4: 1, 5: 3}
    pairs, bye = swiss.pair_round(ranked, fp, set(), {5})
    assert bye == 4  # 5 is last but has had its bye


def test_withdrawn_entries_are_not_paired() -> None:
    rng = random.Random(3)
    t = _event(6, 3)
    pair_next_round(t)
    _play(t, rng)
    withdraw(t, 2)
    rnd = pair_next_round(t)
    ids = [m.a for m in rnd.matches] + [m.b for m in rnd.matches if m.b is not None]
    assert 2 not in ids and sorted(ids) == [1, 3, 4, 5, 6]


def test_large_field_windows_have_no_repeat_and_one_game_each() -> None:
    """150 entries (above the 64-entry limit of the complete graph), five rounds."""
    rng = random.Random(5)
    t = _event(151, 5)
    for _ in range(5):
        rnd = pair_next_round(t)
        ids = [m.a for m in rnd.matches] + [m.b for m in rnd.matches if m.b is not None]
        assert sorted(ids) == list(range(1, 152))
        _play(t, rng)
    seen = set()
    for r in t.played:
        for m in r.matches:
            if m.b is not None:
                key = frozenset((m.a, m.b))
                assert key not in seen
                seen.add(key)
    byes = [m.a for r in t.played for m in r.matches if m.b is None]
    assert len(byes) == len(set(byes)) == 5


@settings(max_examples=30, deadline=None)
@given(n=st.integers(5, 10), seed=st.integers(0, 10_000), rounds=st.integers(1, 5))
def test_windowed_path_never_worse_than_complete_on_tier_one(n: int, seed: int, rounds: int) -> None:
    """The large-field windows forced onto a small field (full_limit 2, windows of 4): whenever they
    would keep a repeat or a second bye they grow and finally fall back to the complete graph, so the
    round's (extra byes, repeats) equals the exhaustive minimum."""
    rng = random.Random(seed)
    ids = list(range(1, n + 1))
    played: set[frozenset[int]] = set()
    had_bye: dict[int, int] = {}
    for _ in range(rounds):  # a random history of earlier rounds (byes at random: some may have two)
        order = ids[:]
        rng.shuffle(order)
        if n % 2:
            e = order.pop()
            had_bye[e] = had_bye.get(e, 0) + 1
        played |= {frozenset(order[i:i + 2]) for i in range(0, len(order), 2)}
    fp = {i: rng.randint(0, 3 * rounds) for i in ids}
    ranked = sorted(ids, key=lambda i: (-fp[i], i))
    pairs, bye = swiss.pair_round(ranked, fp, played, had_bye, window=4, full_limit=2)
    assert sorted([e for p in pairs for e in p] + ([bye] if bye is not None else [])) == ids
    got = pairs + ([(bye, swiss.BYE)] if bye is not None else [])
    nodes = ranked + ([swiss.BYE] if n % 2 else [])
    best = min(_tiers(m, ranked, fp, played, had_bye)[:2] for m in _perfect_matchings(nodes))
    assert _tiers(got, ranked, fp, played, had_bye)[:2] == best


def _bye_counts(t: Tournament) -> dict[int, int]:
    counts = {e.id: 0 for e in t.entries}
    for r in t.played:
        for m in r.matches:
            if m.b is None:
                counts[m.a] += 1
    return counts


def test_odd_swiss_gives_each_bye_to_an_entry_with_the_fewest_byes() -> None:
    """3 pairs over 3 rounds: one bye each; over 6 rounds: two each (the bye goes to an entry with the
    fewest byes so far, also once every entry has had one); 5 pairs over 10 rounds: two each."""
    for n, rounds in ((3, 3), (3, 6), (5, 10)):
        for seed in range(12):
            rng = random.Random(seed)
            t = _event(n, seed)
            t.rounds = rounds
            for _ in range(rounds):
                before = _bye_counts(t)
                rnd = pair_next_round(t)
                bye = next(m.a for m in rnd.matches if m.b is None)
                assert before[bye] == min(before.values()), (n, seed, rnd.number, before, bye)
                _play(t, rng)
            assert set(_bye_counts(t).values()) == {rounds // n}, (n, rounds, seed, _bye_counts(t))


def test_bye_counts_beyond_one() -> None:
    # everyone has had a bye; 3 has had two: the bye goes to the lowest-ranked of those with one, 2
    pairs, bye = swiss.pair_round([1, 2, 3], {1: 6, 2: 4, 3: 4}, {frozenset((1, 2)), frozenset((2, 3)),
                                                                    frozenset((1, 3))}, {1: 1, 2: 1, 3: 2})
    assert (pairs, bye) == ([(1, 3)], 2)
    # an iterable of ids counts each occurrence as one bye
    assert swiss.pair_round([1, 2, 3], {1: 6, 2: 4, 3: 4}, set(), [1, 2, 3, 3])[1] == 2
