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
    # at 80 columns nothing is cut: every heading whole, table 2's penalty shown, no line over 80
    r = runner.invoke(app, ["tournament", "standings", state], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    from rich.cells import cell_len  # a Chinese character takes two cells

    assert max(cell_len(line) for line in r.output.splitlines()) <= 80, r.output
    head = next(line for line in r.output.splitlines() if "pts" in line).split()
    assert head == ["#", "id", "name", "pts", "net", "cum", "opp", "h2h", "seed", "W-D-L", "byes",
                    "penalties"], r.output
    assert "+2" in r.output and "net = 净积小分" in r.output


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


def test_bots_event_title_counts_in_words() -> None:
    # two entries, one Swiss round of one match of one deal: singular words, not "1 rounds"
    r = _run("bots", "--bots", "random,random", "--format", "swiss", "--rounds", "1", "--deals", "1", "--seed", "5")
    assert r.exit_code == 0, r.output
    assert "swiss, 1 round, 1 deal per match" in r.output
    r = _run("bots", "--bots", "random,random", "--format", "swiss", "--rounds", "2", "--deals", "2", "--seed", "5")
    assert r.exit_code == 0, r.output
    assert "swiss, 2 rounds, 2 deals per match" in r.output


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


def _one_line_error(r, *words: str) -> None:
    """Exit code 2, one line ``error: ...`` naming every word, and no traceback."""
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_names_with_rich_markup_are_printed_as_written(tmp_path: Path) -> None:
    names = ["[bold]Ann[/bold]", "[/x]", "[x", "Bob[/]"]
    entries = tmp_path / "e.json"
    entries.write_text(json.dumps([{"name": n, "players": [f"{n} 1", f"{n} 2"], "seed": i}
                                   for i, n in enumerate(names, 1)]), encoding="utf-8")
    state = str(tmp_path / "s.json")
    assert _run("create", state, "--entries", str(entries)).exit_code == 0
    r = _run("pair", state)  # the tables name the entries
    assert r.exit_code == 0, r.output
    for n in names:
        assert n in r.output
    r = _run("create", state, "--entries", str(entries), "--name", "[/red]Cup[red", "--force")
    assert r.exit_code == 0 and "[/red]Cup[red" in r.output, r.output
    r = _run("pair", state)
    assert r.exit_code == 0 and "[/red]Cup[red" in r.output, r.output
    assert _run("result", state, "--round", "1", "--table", "1", "--levels", "10:8",
                "--penalty", "b:1:[/i] slow", "--by", "[/by]").exit_code == 0
    r = _run("standings", state)
    assert r.exit_code == 0 and "[/x]" in r.output and "[/i] slow" in r.output, r.output
    r = _run("show", state, "--log")
    assert r.exit_code == 0 and "[/by]" in r.output, r.output
    r = _run("add", state, "--player", "[/p]", "--player", "q")
    assert r.exit_code == 0 and "[/p] / q" in r.output, r.output


def test_result_without_levels_is_refused(tmp_path: Path) -> None:
    state = str(tmp_path / "s.json")
    assert _run("create", state, "--entries", str(_entries_csv(tmp_path, ["A", "B", "C", "D"]))).exit_code == 0
    assert _run("pair", state).exit_code == 0
    _one_line_error(_run("result", state, "--round", "1", "--table", "1"), "--levels")
    assert json.loads(Path(state).read_text("utf-8"))["played"][0]["matches"][0]["result"] is None
    # an absence needs no levels
    assert _run("result", state, "--round", "1", "--table", "1", "--absent", "b").exit_code == 0


def test_json_entries_are_type_checked(tmp_path: Path) -> None:
    cases = [
        ([{"name": 5, "players": ["a", "b"]}], "entry 1"),
        ([{"players": ["a", "b"]}, {"name": "  ", "players": ["c", "d"]}], "entry 2"),
        ([{"name": "X", "players": ["a", 3]}], "'X'"),
        ([{"name": "X", "players": ["a", ""]}], "'X'"),
        ([{"name": "X", "players": ["a", "b", "c"]}], "'X'"),
        ([{"name": "X", "players": ["a", "b"], "rating": "high"}], "rating"),
        ([{"name": "X", "players": ["a", "b"], "rating": True}], "rating"),
        ([{"name": "X", "players": ["a", "b"], "seed": 1.5}], "seed"),
        ([{"name": "X", "players": ["a", "b"], "club": 7}], "club"),
        ([{"name": "X", "players": ["a", "b"], "bot": ["hard"]}], "bot"),
        ([{"name": "X", "players": ["a", "b"], "colour": "red"}], "colour"),
    ]
    for i, (rows, word) in enumerate(cases):
        f = tmp_path / f"e{i}.json"
        f.write_text(json.dumps(rows), encoding="utf-8")
        state = tmp_path / f"s{i}.json"
        _one_line_error(_run("create", str(state), "--entries", str(f)), f.name, word)
        assert not state.exists()
    for bad in ("NaN", "Infinity", "-Infinity", "1e999"):
        f = tmp_path / "nan.json"
        f.write_text('[{"name": "X", "players": ["a", "b"], "rating": ' + bad + "}]", encoding="utf-8")
        _one_line_error(_run("create", str(tmp_path / "n.json"), "--entries", str(f)), "rating")


def test_nan_and_infinite_ratings_are_refused(tmp_path: Path) -> None:
    state = str(tmp_path / "s.json")
    assert _run("create", state).exit_code == 0
    for bad in ("nan", "inf", "-inf", "1e999"):
        _one_line_error(_run("add", state, "--player", "a", "--player", "b", "--rating", bad), "rating")
    assert json.loads(Path(state).read_text("utf-8"))["entries"] == []
    csvf = tmp_path / "e.csv"
    csvf.write_text("name,partner,rating\na,b,1500\nc,d,NaN\n", encoding="utf-8")
    _one_line_error(_run("create", str(tmp_path / "t.json"), "--entries", str(csvf)), "line 3", "rating")


def test_csv_extra_columns(tmp_path: Path) -> None:
    # columns the reader does not know are ignored, and named on stderr
    f = tmp_path / "e.csv"
    f.write_text("name,partner,phone,rating\na,b,555,1500\nc,d,556,\n", encoding="utf-8")
    r = _run("create", str(tmp_path / "s.json"), "--entries", str(f))
    assert r.exit_code == 0 and "ignored" in r.output and "phone" in r.output, r.output
    t = json.loads((tmp_path / "s.json").read_text("utf-8"))
    assert [(e["name"], e["rating"]) for e in t["entries"]] == [("a / b", 1500.0), ("c / d", None)]
    # a row with more cells than the header is refused, naming its line
    f.write_text("name,partner\na,b\nc,d,1400\n", encoding="utf-8")
    _one_line_error(_run("create", str(tmp_path / "t.json"), "--entries", str(f)), "line 3", "3 cells", "2 columns")
    # a column named twice
    f.write_text("name,partner,name\na,b,c\n", encoding="utf-8")
    _one_line_error(_run("create", str(tmp_path / "u.json"), "--entries", str(f)), "name")


def test_state_files_are_checked_on_load(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    assert _run("create", str(state), "--entries", str(_entries_csv(tmp_path, ["A", "B", "C", "D"]))).exit_code == 0
    good = json.loads(state.read_text("utf-8"))

    def broken(change) -> dict:
        d = json.loads(json.dumps(good))
        change(d)
        return d

    cases = [
        (broken(lambda d: d.update(rounds="5")), "rounds"),
        (broken(lambda d: d.pop("name")), "name"),
        (broken(lambda d: d.update(format="ladder")), "format"),
        (broken(lambda d: d.update(entries={"1": "A"})), "entries"),
        (broken(lambda d: d["entries"][0].update(rating="high")), "rating"),
        (broken(lambda d: d["entries"][1].update(id=1)), "id"),
        (broken(lambda d: d["entries"][0]["players"][0].update(name=None)), "name"),
        (broken(lambda d: d.update(played=[{"number": 1, "kind": "swiss", "matches": [{"table": 1, "a": 1, "b": 9}]}])),
         "9"),
        (broken(lambda d: d["options"].update(tiebreaks=["luck"])), "tie-break"),
        (broken(lambda d: d["options"].update(colour="red")), "colour"),
        (broken(lambda d: d.update(version=2)), "version"),
        ([1, 2], "object"),
    ]
    for i, (d, word) in enumerate(cases):
        f = tmp_path / f"bad{i}.json"
        f.write_text(json.dumps(d), encoding="utf-8")
        for cmd in (["pair", str(f)], ["standings", str(f)], ["show", str(f)]):
            _one_line_error(_run(*cmd), f.name, word)
    f = tmp_path / "nan.json"
    f.write_text(json.dumps(good).replace('"rating": null', '"rating": NaN', 1), encoding="utf-8")
    _one_line_error(_run("standings", str(f)), f.name, "NaN")
    f.write_text("[" * 100_000, encoding="utf-8")
    _one_line_error(_run("standings", str(f)), f.name)


def test_a_failed_save_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()  # a directory where the state file should go: the final rename fails
    _one_line_error(_run("create", str(target), "--force"), "taken")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"] and list(target.iterdir()) == []


def test_levels_in_other_digits_are_refused(tmp_path: Path) -> None:
    state = str(tmp_path / "s.json")
    assert _run("create", state, "--entries", str(_entries_csv(tmp_path, ["A", "B", "C", "D"]))).exit_code == 0
    assert _run("pair", state).exit_code == 0
    for levels in ("１０:8", "١٠:8", "10:８", "²:3", "10.0:8"):
        _one_line_error(_run("result", state, "--round", "1", "--table", "1", "--levels", levels),
                        "2..10, J, Q, K, A")
    _one_line_error(_run("result", state, "--round", "1", "--table", "1", "--levels", "10:8", "--timeouts", "３:0"),
                    "--timeouts")
    _one_line_error(_run("result", state, "--round", "1", "--table", "1", "--levels", "10:8", "--penalty", "a:２:x"),
                    "--penalty")
    assert json.loads(Path(state).read_text("utf-8"))["played"][0]["matches"][0]["result"] is None
    assert _run("result", state, "--round", "1", "--table", "1", "--levels", "t:q").exit_code == 0  # T and Q


def test_standings_of_a_round_that_does_not_exist(tmp_path: Path) -> None:
    state = str(tmp_path / "s.json")
    assert _run("create", state, "--entries", str(_entries_csv(tmp_path, ["A", "B", "C", "D"]))).exit_code == 0
    assert _run("pair", state).exit_code == 0
    for n in ("2", "0", "-1"):
        _one_line_error(_run("standings", state, "--round", n), f"round {n}")
        _one_line_error(_run("show", state, "--round", n), f"round {n}")
    assert _run("standings", state, "--round", "1", "--json").exit_code == 0


def test_a_rule_option_with_markup_gives_a_one_line_error(tmp_path: Path) -> None:
    _one_line_error(_run("create", str(tmp_path / "s.json"), "--rule", "[/x]=1"), "[/x]")
    _one_line_error(_run("create", str(tmp_path / "s.json"), "--preset", "[/p]"), "[/p]")
    assert not (tmp_path / "s.json").exists()


def test_saving_keeps_the_state_file_mode(tmp_path: Path) -> None:
    import os
    import stat

    state = tmp_path / "s.json"
    assert _run("create", str(state)).exit_code == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(state.stat().st_mode) == 0o666 & ~mask  # as a plain write makes it
    state.chmod(0o640)
    assert _run("add", str(state), "--player", "a", "--player", "b").exit_code == 0
    assert stat.S_IMODE(state.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_standings_word_a_lose_the_match_penalty(tmp_path: Path) -> None:
    """R54: a penalty that loses the game reads "loses the match" in the standings, not "+0"."""
    state = str(tmp_path / "s.json")
    assert _run("create", state, "--entries", str(_entries_csv(tmp_path, ["A", "B", "C", "D"]))).exit_code == 0
    assert _run("pair", state).exit_code == 0
    r = _run("result", state, "--round", "1", "--table", "1", "--levels", "10:8", "--penalty", "a:lose:hid cards")
    assert r.exit_code == 0, r.output
    r = _run("standings", state)
    assert r.exit_code == 0 and "r1 loses the match hid cards" in r.output and "+0" not in r.output, r.output
