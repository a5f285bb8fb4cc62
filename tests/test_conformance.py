"""The shared rules corpus (../shared/cases) through the project's conformance runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guandan.conformance import MalformedCase, run_case, run_file

CASES = Path(__file__).resolve().parents[2] / "shared" / "cases" / "cases.jsonl"


def _cases() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.skipif(not CASES.exists(), reason="shared corpus not present next to the checkout")
@pytest.mark.parametrize("case", _cases() if CASES.exists() else [], ids=lambda c: c["id"])
def test_corpus_case(case: dict) -> None:
    out = run_case(case)
    assert out.ok, out.detail


@pytest.mark.skipif(not CASES.exists(), reason="shared corpus not present next to the checkout")
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
    assert run_file(str(f)) == 2
    err = capsys.readouterr().err
    assert "line 1" in err and "'ZZ'" in err


def test_unknown_kind_is_malformed() -> None:
    with pytest.raises(MalformedCase):
        run_case({"id": "Z", "kind": "nonsense", "level": "5"})


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
