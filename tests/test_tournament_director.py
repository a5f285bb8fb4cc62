"""The director's rules (issue 21): result entry at physical tables with agreement and disputes,
corrections kept with before and after, re-pairing only before results, withdrawals and late entries,
directors, error codes, and the versioned JSON state."""

from __future__ import annotations

import pytest

from guandan.tournament.director import (add_entry, claim_result, correct_result, enter_result, pair_next_round,
                                         repair_round, withdraw)
from guandan.tournament.errors import (DuplicateEntry, EntryWithdrawn, ImpossibleLevel, InvalidResult,
                                       NoResultToCorrect, NotAtTable, NotDirector, ResultAlreadyEntered,
                                       RoundHasResults, RoundIncomplete, StateError, TournamentError, UnknownEntry,
                                       UnknownRound, UnknownTable)
from guandan.tournament.model import MatchResult, Penalty, Player, Tournament, from_json, to_json
from guandan.tournament.scoring import standings


def _t(n: int = 5, directors: list[str] | None = None) -> Tournament:
    t = Tournament(name="club night", rounds=3, directors=directors or [])
    by = (directors or ["x"])[0]
    for i in range(1, n + 1):
        add_entry(t, f"E{i}", [Player(f"p{i}", account=f"acc{i}"), Player(f"q{i}")], seed=i, by=by, at="t0")
    return t


def test_both_pairs_agree_then_final() -> None:
    t = _t()
    pair_next_round(t, at="t1")  # seeded: 1-3, 2-4, bye 5
    m = claim_result(t, 1, 1, 1, MatchResult(10, 8), by="acc1", at="t2")
    assert m.status == "claimed" and m.result is None
    m = claim_result(t, 1, 1, 3, MatchResult(10, 8), by="acc3", at="t3")
    assert m.status == "final" and m.result == MatchResult(10, 8)
    with pytest.raises(ResultAlreadyEntered):
        claim_result(t, 1, 1, 3, MatchResult(10, 8), by="acc3")
    with pytest.raises(ResultAlreadyEntered):  # entered twice, even by the organiser
        enter_result(t, 1, 1, MatchResult(10, 8))


def test_disagreement_is_disputed_until_the_organiser_decides() -> None:
    t = _t()
    pair_next_round(t)
    enter_result(t, 1, 1, MatchResult(9, 9))
    claim_result(t, 1, 2, 2, MatchResult(10, 8), by="acc2", at="t2")
    m = claim_result(t, 1, 2, 4, MatchResult(8, 10), by="acc4", at="t3")
    assert m.status == "disputed" and m.result is None
    with pytest.raises(RoundIncomplete) as e:
        pair_next_round(t)
    assert e.value.params == {"round": 1, "tables": [2]} and e.value.code == "round_incomplete"
    assert standings(t)[0].id == 5  # the disputed table counts for nothing yet; 5 has its bye
    enter_result(t, 1, 2, MatchResult(10, 8), by="td", at="t4", reason="score sheet")
    last = t.log[-1]
    assert (last.action, last.by, last.at, last.reason) == ("decide", "td", "t4", "score sheet")
    assert last.before["a"]["level_a"] == 10 and last.before["b"]["level_a"] == 8
    assert last.after["level_a"] == 10
    pair_next_round(t)


def test_a_pair_may_change_its_claim_until_final() -> None:
    t = _t()
    pair_next_round(t)
    claim_result(t, 1, 1, 1, MatchResult(10, 8), by="acc1")
    claim_result(t, 1, 1, 3, MatchResult(10, 9), by="acc3")
    m = claim_result(t, 1, 1, 3, MatchResult(10, 8), by="acc3")  # 3 checks the sheet and agrees
    assert m.status == "final"
    claims = [x for x in t.log if x.action == "claim"]
    assert claims[-1].before["level_b"] == 9 and claims[-1].after["level_b"] == 8


def test_corrections_keep_who_when_before_after() -> None:
    t = _t()
    pair_next_round(t)
    with pytest.raises(NoResultToCorrect):
        correct_result(t, 1, 1, MatchResult(10, 8))
    enter_result(t, 1, 1, MatchResult(10, 8), by="td", at="t1")
    correct_result(t, 1, 1, MatchResult(8, 10), by="td2", at="t5", reason="sides swapped")
    c = t.log[-1]
    assert (c.action, c.by, c.at, c.round, c.table, c.reason) == ("correct", "td2", "t5", 1, 1, "sides swapped")
    assert (c.before["level_a"], c.after["level_a"]) == (10, 8)
    assert {s.id: s.field_points for s in standings(t)}[3] == 3


def test_repair_only_before_the_first_result() -> None:
    t = _t(6)
    pair_next_round(t)
    withdraw(t, 6, reason="ill")
    rnd = repair_round(t, at="t9")
    assert 6 not in [m.a for m in rnd.matches] + [m.b for m in rnd.matches]
    assert t.log[-1].action == "repair" and t.log[-1].before["tables"][2] == [3, 6]
    claim_result(t, 1, 1, rnd.matches[0].a, MatchResult(9, 7), by="p")
    with pytest.raises(RoundHasResults):
        repair_round(t)


def test_late_entry_joins_the_next_round() -> None:
    t = _t(4)
    pair_next_round(t)
    e = add_entry(t, "Late", [Player("l1"), Player("l2")])
    assert e.joined_round == 2
    for m in t.played[0].matches:
        enter_result(t, 1, m.table, MatchResult(10, 5))
    rnd = pair_next_round(t)
    assert e.id in [x for m in rnd.matches for x in (m.a, m.b)]
    assert sum(m.b is None for m in rnd.matches) == 1


def test_errors_have_stable_codes_and_params() -> None:
    t = _t(directors=["boss"])
    with pytest.raises(NotDirector) as e:
        pair_next_round(t, by="mallory")
    assert e.value.to_dict()["code"] == "not_director" and e.value.params == {"who": "mallory"}
    pair_next_round(t, by="boss")
    with pytest.raises(NotAtTable):
        claim_result(t, 1, 1, 2, MatchResult(10, 8), by="acc2")
    with pytest.raises(UnknownRound):
        enter_result(t, 4, 1, MatchResult(10, 8), by="boss")
    with pytest.raises(UnknownTable) as e:
        enter_result(t, 1, 9, MatchResult(10, 8), by="boss")
    assert e.value.params == {"round": 1, "table": 9}
    with pytest.raises(InvalidResult) as e:
        enter_result(t, 1, 3, MatchResult(10, 8), by="boss")  # table 3 is the bye
    assert e.value.params["reason"] == "bye_table"
    with pytest.raises(UnknownEntry):
        withdraw(t, 99, by="boss")
    withdraw(t, 5, by="boss")
    with pytest.raises(EntryWithdrawn):
        withdraw(t, 5, by="boss")
    with pytest.raises(DuplicateEntry):
        add_entry(t, "E1", [Player("a"), Player("b")], by="boss")
    assert all(issubclass(c, TournamentError) for c in (NotDirector, UnknownRound, RoundIncomplete))


def test_json_round_trip_and_version() -> None:
    t = _t()
    pair_next_round(t)
    claim_result(t, 1, 1, 1, MatchResult(10, 8, timeouts_a=3), by="acc1")
    enter_result(t, 1, 2, MatchResult(14, 9, passed_a="a", late_b=6))
    text = to_json(t)
    back = from_json(text)
    assert back == t and to_json(back) == text
    assert back.played[0].matches[0].claims["a"].timeouts_a == 3
    with pytest.raises(StateError) as e:
        from_json(text.replace('"version": 1', '"version": 99'))
    assert e.value.params["reason"] == "version"
    with pytest.raises(StateError):
        from_json("[1, 2]")
    with pytest.raises(StateError):
        from_json('{"version": 1, "name": "x", "entries": [{"id": 1}]}')


def test_team_tournament_pairs_teams_and_scores_on_the_scale() -> None:
    t = Tournament(name="teams", format="round_robin", team=True)
    for i in range(1, 4):
        add_entry(t, f"T{i}", [Player(f"t{i}p{k}") for k in range(4)])
    import pytest as _pytest

    from guandan.tournament.errors import ConfigError

    with _pytest.raises(ConfigError):
        add_entry(t, "short", [Player("a"), Player("b")])
    rnd = pair_next_round(t)  # Berger of 3: 1 v dummy (bye), 2 v 3
    m = next(m for m in rnd.matches if m.b is not None)
    assert (m.a, m.b) == (2, 3)
    with pytest.raises(InvalidResult) as e:
        enter_result(t, 1, m.table, MatchResult(10, 8))
    assert e.value.params["reason"] == "team_deals_needed"
    enter_result(t, 1, m.table, MatchResult(team_deals=[[3, -1], [-2, 2], [1, 1]]))  # D = 2+0+2 = 4 -> 17:9
    rows = {s.id: s for s in standings(t)}
    assert (rows[2].field_points, rows[2].net, rows[2].cumulative) == (3, 4, 17)
    assert (rows[3].field_points, rows[3].net, rows[3].cumulative) == (1, -4, 9)
    assert rows[1].field_points == 3 and rows[1].byes == 1


def _teams(**kw) -> Tournament:
    t = Tournament(name="teams", format="round_robin", team=True, **kw)
    for i in (1, 2):
        add_entry(t, f"T{i}", [Player(f"t{i}p{k}") for k in range(4)])
    pair_next_round(t)  # Berger of 2: T1 v T2 at table 1
    return t


def test_team_deal_values_follow_the_tournament_preset() -> None:
    # anhui upgrades 6/4/2 for 1-2/1-3/1-4 (docs/rules.md section P, R35): a table's result is ±6, ±4 or ±2
    t = _teams(preset="anhui")
    for bad in ([[3, -3]], [[1, 2]], [[6, 0]]):
        with pytest.raises(InvalidResult) as e:
            enter_result(t, 1, 1, MatchResult(team_deals=bad))
        assert e.value.params["reason"] == "bad_team_deal"
    enter_result(t, 1, 1, MatchResult(team_deals=[[6, -4], [2, 2]]))  # D = 2 + 4 = 6 -> 19:7
    rows = {s.id: s for s in standings(t)}
    assert (rows[1].field_points, rows[1].cumulative, rows[2].cumulative) == (3, 19, 7)
    # the official preset's 3/2/1: 6 is not the value of any result
    t = _teams()
    with pytest.raises(InvalidResult):
        enter_result(t, 1, 1, MatchResult(team_deals=[[6, -6]]))
    enter_result(t, 1, 1, MatchResult(team_deals=[[3, -1]]))
    # a single override of the preset counts too: upgrade=4/2/1
    t = _teams(overrides={"upgrade": "4/2/1"})
    with pytest.raises(InvalidResult):
        enter_result(t, 1, 1, MatchResult(team_deals=[[3, -3]]))
    enter_result(t, 1, 1, MatchResult(team_deals=[[4, -1]]))  # D = 3 -> 16:10
    assert {s.id: s.cumulative for s in standings(t)} == {1: 16, 2: 10}


def test_team_deal_value_of_a_result_code() -> None:
    from guandan.tournament.teams import deal_value

    # team a's pair took 头游 with 1-2 / team b's pair with 1-3 / 1-4, under 6/4/2 and 3/2/1
    assert [deal_value(c, (6, 4, 2)) for c in ("a1-2", "a1-3", "a1-4", "b1-2", "b1-3", "b1-4")] == [6, 4, 2, -6, -4, -2]
    assert [deal_value(c, (3, 2, 1)) for c in ("a12", "b14")] == [3, -1]
    for bad in ("c1-2", "a1-5", "a2-1", "", "a１-2"):
        with pytest.raises(ValueError):
            deal_value(bad, (3, 2, 1))


def test_entries_need_names_and_finite_ratings() -> None:
    from guandan.tournament.errors import ConfigError

    t = _t(0)
    for kw in ({"rating": float("nan")}, {"rating": float("inf")}, {"rating": "1500"}, {"seed": 1.0}, {"seed": True}):
        with pytest.raises(ConfigError) as e:
            add_entry(t, "X", [Player("a"), Player("b")], **kw)
        assert e.value.params["field"] in ("rating", "seed")
    for name, players in (("", [Player("a"), Player("b")]), (" ", [Player("a"), Player("b")]),
                          ("X", [Player("a"), Player("")])):
        with pytest.raises(ConfigError):
            add_entry(t, name, players)
    assert t.entries == [] and t.log == []
    add_entry(t, "X", [Player("a"), Player("b")], rating=1500)


def test_nan_is_neither_written_nor_read() -> None:
    t = _t(2)
    t.entries[0].rating = float("nan")  # set behind add_entry's back
    with pytest.raises(StateError) as e:
        to_json(t)
    assert e.value.params["reason"] == "not_finite"
    t.entries[0].rating = 1500.0
    text = to_json(t)
    for bad in ("NaN", "Infinity", "-Infinity", "1e999"):
        with pytest.raises(StateError) as e:
            from_json(text.replace('"rating": 1500.0', f'"rating": {bad}'))
        assert e.value.params["reason"] == "not_finite"


def test_state_is_checked_field_by_field() -> None:
    import json

    t = _t(3)
    pair_next_round(t)
    enter_result(t, 1, 1, MatchResult(10, 8))
    good = json.loads(to_json(t))
    assert from_json(json.dumps(good)) == t

    def bad(change, field: str) -> None:
        d = json.loads(json.dumps(good))
        change(d)
        with pytest.raises(StateError) as e:
            from_json(json.dumps(d))
        assert e.value.params["reason"] == "malformed" and e.value.params["field"] == field, e.value
        assert field in str(e.value) and "\n" not in str(e.value)

    bad(lambda d: d.update(rounds="3"), "state.rounds")
    bad(lambda d: d.update(team=1), "state.team")
    bad(lambda d: d.update(format="ladder"), "state.format")
    bad(lambda d: d.update(colour="red"), "state")
    bad(lambda d: d["entries"][2].update(rating=[1]), "entries[2].rating")
    bad(lambda d: d["entries"][1].update(id=1), "entries[1].id")
    bad(lambda d: d["entries"][0]["players"].__setitem__(1, "q1"), "entries[0].players[1]")
    bad(lambda d: d["played"][0].update(number=2), "played[0].number")
    bad(lambda d: d["played"][0].update(kind="ladder"), "played[0].kind")
    bad(lambda d: d["played"][0]["matches"][0].update(b=7), "played[0].matches[0].b")
    bad(lambda d: d["played"][0]["matches"][1].update(table=1), "played[0].matches[1].table")
    bad(lambda d: d["played"][0]["matches"][0]["result"].update(level_a="10"), "played[0].matches[0].result.level_a")
    bad(lambda d: d["played"][0]["matches"][0]["result"].update(absent="c"), "played[0].matches[0].result.absent")
    bad(lambda d: d["options"].update(bye_net=0.5), "state.options.bye_net")
    bad(lambda d: d["log"][0].pop("by"), "log[0]")


def test_levels_are_ascii_digits_or_letters() -> None:
    from guandan.tournament.model import parse_level

    assert [parse_level(x) for x in ("2", "10", "t", "J", " q ", "K", "a", 14)] == [2, 10, 10, 11, 12, 13, 14, 14]
    for bad in ("１０", "١٠", "²", "10.0", "", "B", 10.0, True, "1", "15"):
        with pytest.raises(ImpossibleLevel) as e:
            parse_level(bad)
        assert "2..10, J, Q, K, A" in str(e.value)


def test_counts_in_a_result_are_whole_numbers() -> None:
    t = _t()
    pair_next_round(t)
    for r in (MatchResult(10, 8, late_a=float("nan")), MatchResult(10, 8, timeouts_b=2.5),
              MatchResult(10.0, 8), MatchResult(True, 8)):
        with pytest.raises((InvalidResult, ImpossibleLevel)):
            enter_result(t, 1, 1, r)
    assert t.played[0].matches[0].result is None


def test_an_untimed_match_without_a_pass_of_a_is_not_over() -> None:
    """R5: a game ends when a side passes A; R58: the levels reached decide only when time is called.
    In an untimed event a result where nobody passed A and time was not called is refused; with time
    called, a pass of A, an absence or a lose-the-match penalty it is a finished match."""
    t = _t(4)
    t.match_minutes = None
    pair_next_round(t, at="t1")  # seeded: 1-3, 2-4
    with pytest.raises(InvalidResult) as e:
        enter_result(t, 1, 1, MatchResult(10, 8))
    assert e.value.params["reason"] == "unfinished"
    assert t.played[0].matches[0].result is None
    enter_result(t, 1, 1, MatchResult(14, 8, passed_a="a"))
    enter_result(t, 1, 2, MatchResult(9, 8, penalties=(Penalty("b", 0, "hid cards", loses_match=True),)))
    assert [m.result is not None for m in t.played[0].matches] == [True, True]
    timed = _t(4)  # the default: 70-minute matches, where time called ends a match without a pass
    pair_next_round(timed, at="t1")
    enter_result(timed, 1, 1, MatchResult(10, 8))
    assert timed.played[0].matches[0].result == MatchResult(10, 8)
