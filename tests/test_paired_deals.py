"""``scripts/paired_deals.py``: which deals two ``match.py`` runs played from the same position.

The records are written by hand in the compat host's record format (only the events the script
reads: ``deal``, the pre-play tribute events R42-R48, ``deal_end``), so each expected count is
known from the construction.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "paired_deals", Path(__file__).resolve().parents[1] / "scripts" / "paired_deals.py")
assert _SPEC is not None and _SPEC.loader is not None
paired_deals = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(paired_deals)

HANDS_1 = [["3S"], ["4S"], ["5S"], ["6S"]]
HANDS_2 = [["7S"], ["8S"], ["9S"], ["TS"]]


def _write(root: Path, seating: str, deals: list[tuple[list[list[str]], list[dict], int]]) -> None:
    """One record file: each deal as (hands, pre-play events, winner team)."""
    rec = root / seating / "rec"
    rec.mkdir(parents=True)
    lines = [{"format": "pyguandan-record", "version": 1}]
    for i, (hands, pre, winner) in enumerate(deals, 1):
        lines.append({"type": "deal", "game": 1, "deal": i, "level": "2", "levels": ["2", "2"],
                      "hands": hands, "first_leader": 0})
        lines.extend(pre)
        lines.append({"type": "deal_end", "winner_team": winner})
    (rec / "game-0001.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_same_deals_and_differing_winners(tmp_path: Path) -> None:
    tribute_a = [{"type": "tribute_paid", "tributes": [[1, 0, "BJ"]]}]
    tribute_b = [{"type": "tribute_paid", "tributes": [[3, 0, "BJ"]]}]
    a, b = tmp_path / "a", tmp_path / "b"
    # seats 0/2 are ours: deal 1 won in A (team 0), lost in B; deal 2 lost in both;
    # deal 3 has other tribute facts in B, so it is not the same deal
    _write(a, "ours-seats02", [(HANDS_1, [], 0), (HANDS_2, [], 1), (HANDS_1, tribute_a, 0)])
    _write(b, "ours-seats02", [(HANDS_1, [], 1), (HANDS_2, [], 1), (HANDS_1, tribute_b, 1)])
    # seats 1/3 are ours: the same dealt cards, won only in B (team 1)
    _write(a, "ours-seats13", [(HANDS_1, [], 0)])
    _write(b, "ours-seats13", [(HANDS_1, [], 1)])
    summary, diff = paired_deals.compare(str(a), str(b))
    assert summary["same_deals"] == 3
    assert (summary["a_wins"], summary["b_wins"]) == (1, 1)
    assert (summary["a_only"], summary["b_only"]) == (1, 1)
    assert summary["sign_test_p"] == 1.0
    assert sorted(x[0][0] for x in diff) == [False, True]


def test_sign_test_values() -> None:
    # binomial(n, 1/2): P(X <= 0) = 1/32 for n = 5, P(X <= 1) = 6/32; two-sided doubles it
    assert paired_deals.sign_test(0, 5) == pytest.approx(2 / 32)
    assert paired_deals.sign_test(4, 1) == pytest.approx(12 / 32)
    assert paired_deals.sign_test(0, 0) == 1.0
    assert paired_deals.sign_test(3, 3) == 1.0


def test_missing_records_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        paired_deals.main([str(tmp_path / "none"), str(tmp_path / "none")])
    assert err.value.code == 2
    assert "no records under" in capsys.readouterr().err
    assert paired_deals.main(["only-one"]) == 2
