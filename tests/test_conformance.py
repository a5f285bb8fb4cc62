"""The rules acceptance corpus (``tests/cases/cases.jsonl``, the project's copy of the shared corpus) through
the project's conformance runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guandan.evaluation.conformance import run_case, run_file

CASES = Path(__file__).resolve().parent / "cases" / "cases.jsonl"


def _cases() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_corpus_case(case: dict) -> None:
    out = run_case(case)
    assert out.ok, out.detail


def test_runner_cli_on_corpus() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "guandan.conformance", str(CASES)], capture_output=True, text=True, check=False
    )
    n = len(_cases())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == f"{n} passed, 0 failed"


def test_failing_case_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # SJ + BJ is not a pair (R19, EC-17): claiming it is must fail
    bad = {"id": "X1", "kind": "classify", "level": "5", "cards": ["SJ", "BJ"], "expected": [{"type": "pair", "rank": "SJ"}]}
    good = {"id": "X2", "kind": "classify", "level": "5", "cards": ["BJ"], "expected": [{"type": "single", "rank": "BJ"}]}
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    assert run_file(str(f)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("FAIL X1 (classify)")
    assert out[-1] == "1 passed, 1 failed"


def test_malformed_file_names_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = {"id": "X2", "kind": "classify", "level": "5", "cards": ["BJ"], "expected": [{"type": "single", "rank": "BJ"}]}
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    assert run_file(str(f)) == 2
    assert "line 2" in capsys.readouterr().err
    f.write_text(json.dumps({"id": "Y", "kind": "classify", "level": "5", "cards": ["ZZ"], "expected": []}) + "\n")
    assert run_file(str(f)) == 1  # a case with a bad card fails alone, naming its line and the token
    out = capsys.readouterr().out
    assert "FAIL Y" in out and "line 1" in out and "'ZZ'" in out
    f.write_text(json.dumps(["not", "a", "case"]) + "\n")
    assert run_file(str(f)) == 2
    assert "line 1" in capsys.readouterr().err


def test_bad_case_fails_alone_and_the_file_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = {"id": "G", "kind": "classify", "level": "5", "cards": ["BJ"], "expected": [{"type": "single", "rank": "BJ"}]}
    odd = {"id": "K", "kind": "nonsense", "level": "5"}
    bad_value = {"id": "V", "kind": "upgrade", "level": 8, "levels_before": {"team02": "8", "team13": "3"},
                 "finish_order": [0, 2], "expected": {"winner": "team02"}}
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(json.dumps(c) for c in (odd, bad_value, good)) + "\n", encoding="utf-8")
    assert run_file(str(f)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("FAIL K") and "unknown kind" in out[0]
    assert out[1].startswith("FAIL V") and "malformed case (line 2)" in out[1]
    assert out[-1] == "1 passed, 2 failed"
    assert not run_case(odd).ok


def test_compare_lets_the_side_on_the_move_choose_its_reading() -> None:
    # level 5: 7 7 8 8 + two wilds can be the plate 777888 (among other readings), which beats 666777
    case = {"id": "P", "kind": "compare", "level": "5", "a": ["6S", "6D", "6C", "7S", "7D", "7C"],
            "b": ["7H", "7C", "8S", "8D", "5H", "5H"], "table": {"on_table": "b"}, "expected": "a<b"}
    assert run_case(case).ok


def test_restart_after_passing_target_r42() -> None:
    case = {"id": "R", "kind": "upgrade", "level": "A", "options": {"after_target": "restart"},
            "levels_before": {"team02": "A", "team13": "9"}, "finish_order": [0, 2],
            "expected": {"winner": "team02", "match_over": True, "next_deal_level": "2"}}
    assert run_case(case).ok


def test_options_are_applied() -> None:
    # C129-style: returning an ace is refused officially (R47) and allowed with return_rule=any
    base = {
        "id": "O1", "kind": "tribute", "level": "7", "prev_finish_order": [0, 1, 2, 3],
        "hands": {"3": ["AS", "4C"], "0": ["AD", "3C", "9S"]},
        "return_card": {"from": 0, "to": 3, "card": "AD"},
    }
    assert run_case({**base, "expected": {"return_allowed": False}}).ok
    assert run_case({**base, "options": {"return_rule": "any"}, "expected": {"return_allowed": True}}).ok
    assert not run_case({**base, "expected": {"return_allowed": True}}).ok


EXTRA = Path(__file__).resolve().parent / "cases" / "review_cases.jsonl"


def test_project_corpus_from_rules_review() -> None:
    """227 more cases written from docs/rules.md during the rules review (every EC and section P option)."""
    n = sum(1 for line in EXTRA.read_text(encoding="utf-8").splitlines() if line.strip())
    assert n >= 200
    proc = subprocess.run([sys.executable, "-m", "guandan.conformance", str(EXTRA)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == f"{n} passed, 0 failed"


def test_output_piped_into_head_ends_without_a_traceback() -> None:
    """``python -m guandan.conformance FILE -v | head -1`` (issue 11): no BrokenPipe traceback."""
    proc = subprocess.run(
        f"'{sys.executable}' -m guandan.conformance '{EXTRA}' -v | head -n 1",
        shell=True, capture_output=True, text=True, check=False,
    )
    assert proc.stdout.startswith("ok   ") and proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
