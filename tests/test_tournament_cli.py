"""``guandan tournament``: the simulate JSON shape and its determinism, and a whole event run through the
CLI from a CSV of entries, with a dispute, a correction, standings as JSON and CSV, and bad files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from typer.testing import CliRunner

from guandan.cli import app

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, ["tournament", *args], env={"COLUMNS": "200"})


def test_simulate_json_shape_and_determinism() -> None:
    r = _run("simulate", "--pairs", "9", "--rounds", "4", "--format", "swiss", "--seed", "7", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert set(out) == {"rounds", "standings"}
    assert [x["round"] for x in out["rounds"]] == [1, 2, 3, 4]
    for rnd in out["rounds"]:
        assert set(rnd) == {"round", "tables", "byes"}
        ids = [e for pair in rnd["tables"] for e in pair] + rnd["byes"]
        assert sorted(ids) == list(range(1, 10)) and len(rnd["byes"]) == 1
        assert all(len(p) == 2 for p in rnd["tables"])
    meetings = [frozenset(p) for rnd in out["rounds"] for p in rnd["tables"]]
    assert len(meetings) == len(set(meetings))  # no repeat in 4 rounds of 9
    byes = [b for rnd in out["rounds"] for b in rnd["byes"]]
    assert len(byes) == len(set(byes))
    st = out["standings"]
    assert sorted(s["pair"] for s in st) == list(range(1, 10))
    assert all(set(s) == {"pair", "field_points", "tiebreaks"} and len(s["tiebreaks"]) == 5 for s in st)
    fps = [s["field_points"] for s in st]
    assert fps == sorted(fps, reverse=True)
    # every table hands out 4 field points (3+1 or 2+2), every bye 3
    assert sum(fps) == 4 * 4 * 4 + 3 * 4
    again = _run("simulate", "--pairs", "9", "--rounds", "4", "--format", "swiss", "--seed", "7", "--json")
    assert again.output == r.output
    other = _run("simulate", "--pairs", "9", "--rounds", "4", "--format", "swiss", "--seed", "8", "--json")
    assert other.output != r.output


def test_simulate_round_robin_and_groups() -> None:
    out = json.loads(_run("simulate", "--pairs", "6", "--format", "round_robin", "--seed", "1", "--json").output)
    assert len(out["rounds"]) == 5 and all(len(r["tables"]) == 3 for r in out["rounds"])
    out = json.loads(_run("simulate", "--pairs", "8", "--format", "groups_knockout", "--json").output)
    assert [len(r["tables"]) for r in out["rounds"]] == [4, 4, 4, 2, 1]
    final = out["rounds"][-1]["tables"][0]
    assert out["standings"][0]["pair"] in final and out["standings"][1]["pair"] in final


def test_an_event_through_the_cli(tmp_path: Path) -> None:
    entries = tmp_path / "entries.csv"
    entries.write_text("name,partner,club,rating\n张三,李四,南京,1500\nAnn,Bob,,1400\nCid,Dan,X,\nEve,Fay,Y,1300\n",
                       encoding="utf-8")
    state = str(tmp_path / "event.json")
    r = _run("create", state, "--entries", str(entries), "--name", "Club night", "--rounds", "2")
    assert r.exit_code == 0, r.output
    assert _run("create", state).exit_code == 2  # no overwrite without --force
    r = _run("pair", state, "--at", "2026-12-03T19:00:00Z")
    assert r.exit_code == 0 and "张三" in r.output
    # seeding by rating: 1 (1500), 2 (1400), 4 (1300), 3 (none) -> 1 v 4, 2 v 3
    t = json.loads(Path(state).read_text("utf-8"))
    assert [[m["a"], m["b"]] for m in t["played"][0]["matches"]] == [[1, 4], [2, 3]]
    assert _run("result", state, "--round", "1", "--table", "1", "--levels", "A:K", "--passed-a", "a").exit_code == 0
    assert _run("result", state, "--round", "1", "--table", "2", "--claim", "2", "--levels", "9:7").exit_code == 0
    r = _run("result", state, "--round", "1", "--table", "2", "--claim", "3", "--levels", "9:8")
    assert "disputed" in r.output
    r = _run("pair", state)
    assert r.exit_code == 2 and "round_incomplete" in r.output
    r = _run("result", state, "--round", "1", "--table", "2", "--levels", "9:7", "--timeouts", "4:0",
             "--reason", "sheet", "--by", "td")
    assert r.exit_code == 0 and "final" in r.output
    r = _run("result", state, "--round", "1", "--table", "2", "--levels", "9:7")
    assert r.exit_code == 2 and "result_already_entered" in r.output
    r = _run("standings", state, "--json")
    data = json.loads(r.output)
    rows = {s["id"]: s for s in data["standings"]}
    # table 2: 9:7 but side a (entry 2) had 4 timeouts -> entry 3 +2 -> 9:9, a draw
    assert (rows[2]["field_points"], rows[3]["field_points"], rows[2]["penalty_levels"]) == (2, 2, 2)
    assert (rows[1]["field_points"], rows[1]["cumulative"]) == (3, 13)
    assert [p["id"] for p in data["prizes"]] == [s["id"] for s in data["standings"][:3]]
    r = _run("standings", state, "--csv")
    lines = list(csv.reader(io.StringIO(r.output)))
    assert lines[0][:4] == ["place", "id", "name", "field_points"] and lines[1][1] == "1"
    r = _run("show", state, "--log")
    assert r.exit_code == 0 and "decide" in r.output
    assert _run("standings", state).exit_code == 0


def test_bad_files_give_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    r = _run("pair", str(bad))
    assert r.exit_code == 2 and "not a tournament state" in r.output
    r = _run("pair", str(tmp_path / "missing.json"))
    assert r.exit_code == 2 and "missing.json" in r.output
    csvf = tmp_path / "e.csv"
    csvf.write_text("player,club\nx,y\n", encoding="utf-8")
    r = _run("create", str(tmp_path / "s.json"), "--entries", str(csvf))
    assert r.exit_code == 2 and "name, partner" in r.output
    r = _run("create", str(tmp_path / "s.json"), "--format", "ladder")
    assert r.exit_code == 2 and "bad_config" in r.output


def test_bench_prints_figures() -> None:
    r = _run("bench", "--pairs", "40", "--rounds", "2", "--repeat", "1", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["pairs"] == 40 and out["round"] == 3 and out["pair_seconds"] > 0


def test_bots_event_through_the_arena(tmp_path: Path) -> None:
    state = tmp_path / "bots.json"
    r = _run("bots", "--bots", "random,random,random", "--deals", "2", "--seed", "3", "--json", "--save", str(state))
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    # 3 entries round robin: 3 rounds of one table and one bye
    assert [(len(x["tables"]), len(x["byes"])) for x in out["rounds"]] == [(1, 1)] * 3
    from guandan.tournament.model import from_json

    t = from_json(state.read_text("utf-8"))
    for rnd in t.played:
        for m in rnd.matches:
            if m.b is not None:
                res = m.result
                assert res is not None and 2 <= res.level_a <= 14 and 2 <= res.level_b <= 14
                assert res.time_called == (res.passed_a is None)
    assert _run("bots", "--bots", "random,nobody", "--deals", "1").exit_code != 0


def _entries_csv(tmp_path: Path, names: list[str]) -> Path:
    f = tmp_path / "entries.csv"
    f.write_text("name,partner,seed\n" + "".join(f"{n},{n} partner,{i}\n" for i, n in enumerate(names, 1)),
                 encoding="utf-8")
    return f


def test_knockout_without_a_winner_is_reported_in_words(tmp_path: Path) -> None:
    state = str(tmp_path / "ko.json")
    r = _run("create", state, "--entries", str(_entries_csv(tmp_path, ["A1", "B2", "C3", "D4"])),
             "--format", "groups_knockout", "--groups", "1", "--knockout-size", "4")
    assert r.exit_code == 0, r.output
    for _ in range(3):  # the group: lower seed wins every table
        assert _run("pair", state).exit_code == 0
        t = json.loads(Path(state).read_text("utf-8"))
        rnd = t["played"][-1]
        for m in rnd["matches"]:
            if m["b"] is not None:
                levels = "10:5" if m["a"] < m["b"] else "5:10"
                assert _run("result", state, "--round", str(rnd["number"]), "--table", str(m["table"]),
                            "--levels", levels).exit_code == 0
    assert _run("pair", state).exit_code == 0  # semis: 1 v 4, 2 v 3
    r = _run("result", state, "--round", "4", "--table", "1", "--absent", "both")
    assert r.exit_code == 0 and "No winner: both entries were absent" in r.output, r.output
    assert _run("result", state, "--round", "4", "--table", "2", "--levels", "12:6").exit_code == 0
    r = _run("pair", state)
    assert r.exit_code == 2 and "no_winner" in r.output and "nobody goes through" in r.output
    assert "Traceback" not in r.output


def test_team_deals_as_result_codes_valued_by_the_preset(tmp_path: Path) -> None:
    entries = tmp_path / "teams.csv"
    entries.write_text("team,name,partner,name2,partner2\nEast,a,b,c,d\nWest,e,f,g,h\n", encoding="utf-8")
    state = str(tmp_path / "t.json")
    r = _run("create", state, "--entries", str(entries), "--team", "--format", "round_robin", "--preset", "anhui")
    assert r.exit_code == 0, r.output
    assert _run("pair", state).exit_code == 0
    # anhui 6/4/2 (docs/rules.md section P): deal 1 East 1-2 at table 1 (+6), West 1-3 at table 2 (-4);
    # deal 2 East 1-4 at both (+2, +2): D = 2 + 4 = 6 -> 19:7
    r = _run("result", state, "--round", "1", "--table", "1", "--deals", "a1-2,b1-3;a14,a1-4")
    assert r.exit_code == 0, r.output
    t = json.loads(Path(state).read_text("utf-8"))
    assert t["played"][0]["matches"][0]["result"]["team_deals"] == [[6, -4], [2, 2]]
    rows = {s["id"]: s for s in json.loads(_run("standings", state, "--json").output)["standings"]}
    assert (rows[1]["cumulative"], rows[2]["cumulative"]) == (19, 7)
    r = _run("result", state, "--round", "1", "--table", "1", "--deals", "a1-5,b1-2", "--correct")
    assert r.exit_code == 2 and "-6, -4, -2, 2, 4, 6" in r.output
    r = _run("result", state, "--round", "1", "--table", "1", "--deals", "3,-3", "--correct")
    assert r.exit_code == 2 and "invalid_result" in r.output and "[-6, -4, -2, 2, 4, 6]" in r.output
