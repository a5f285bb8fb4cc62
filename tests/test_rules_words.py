"""Rules in words (static/js/rules.js) against docs/rules.md: preset descriptions and result words."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

NODE = shutil.which("node")
RULES_JS = Path(__file__).resolve().parents[1] / "src" / "guandan" / "server" / "static" / "js" / "rules.js"

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def _node(script: str) -> str:
    assert NODE is not None
    proc = subprocess.run([NODE, "--input-type=module", "-e", script], check=False, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_classic_anti_tribute_team_rule_is_said_for_1_3_only():
    """R48/AMB-08 (``anti_tribute_single = team_if_opponents``, the classic preset): the two
    losers' big jokers count together only when the single tribute's payer is an opponent of
    头游, i.e. after a 1-3 result; after 1-4 the payer is 头游's partner and only its own jokers
    count. The preset's description must not say it of every single tribute."""
    out = json.loads(_node(f"""
      const r = await import({json.dumps(RULES_JS.as_uri())});
      console.log(JSON.stringify([r.presetDescription("classic", "zh"), r.presetDescription("classic", "en")]));
    """))
    zh, en = out
    assert "1-3 单贡时两名输家的大王合计可抗贡" in zh
    assert "single tribute after 1-3" in en


def test_result_words_follow_amb23():
    """AMB-23/R35 vocabulary: 1-2 双下, 1-3 单下, 1-4 平下, from codes or neutral results."""
    out = json.loads(_node(f"""
      const r = await import({json.dumps(RULES_JS.as_uri())});
      console.log(JSON.stringify(["1-2", "1-3", "1-4", "double_down", "flat_down"].map((x) => r.resultWords(x, "zh"))
        .concat([r.resultWords("1-3", "en")])));
    """))
    assert out == ["双下", "单下", "平下", "双下", "平下", "Single down (1-3)"]
