"""Pure checks of the table view's modules (``static/js/tracker.js``, ``static/js/hand.js``) run in
node against the rules core on real games (issue 7, items 1, 4, 9, 10).

* the card tracker (记牌器) of seat 0, computed from seat 0's view only, equals the cards in the other
  three hands as the core holds them, rank by rank (R1: every card is in a hand or played), at every
  step of random games, tribute and return included;
* the tricks rebuilt from the public history (R29 end of a trick, R30 jiefeng) give the core's
  current trick at every step, and the completed tricks with the current one are exactly the plays;
* the hand's fan layout: every slot lies inside the width, slots of a row never overlap (a tap lands
  on one card only), the last card of each row shows whole, one row while the strips stay wide
  enough, two rows otherwise;
* 理牌's combination finder picks bombs, straight flushes (A low and high) and the joker bomb.

Skipped when node is not installed (as the node checks of ``tests/test_ui_static.py``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

NODE = shutil.which("node")
JS_DIR = Path(str(resources.files("guandan.server") / "static")) / "js"
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def run_node(script: str, timeout: float = 120) -> Any:
    assert NODE is not None
    proc = subprocess.run([NODE, "--input-type=module", "-e", script], check=False, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def recorded_games(tmp_path: Path) -> Path:
    """Random-agent games (official and anhui presets, several deals each) with, after every event,
    seat 0's view and the core's truth: the other hands by rank and the current trick."""
    from guandan.agents.registry import make_agent
    from guandan.core.cards import card_text
    from guandan.core.match import Game, action_to_json
    from guandan.core.rules import RuleSet
    from guandan.core.views import seat_view

    checks = []
    for preset, seed in (("official", 5), ("anhui", 8)):
        game = Game(RuleSet.preset(preset), seed=seed)
        agents = [make_agent("random", 40 + i) for i in range(4)]
        while not game.over and game.deal_number <= 3:
            seat = game.to_act()
            game.apply(agents[seat].act(seat_view(game, seat)), seat)
            if game.over:
                break
            view = seat_view(game, 0).to_json()
            others: dict[str, int] = {}
            for s in (1, 2, 3):
                for f in range(54):
                    n = game.deal.hands[s][f]
                    if n:
                        c = card_text(f)
                        key = c if c in ("SJ", "BJ") else c[0]
                        others[key] = others.get(key, 0) + n
            trick = [[s, action_to_json(a)] for s, a in game.deal.trick] if game.phase == "play" else None
            checks.append({"view": view, "others": others, "trick": trick})
    path = tmp_path / "checks.json"
    path.write_text(json.dumps(checks), encoding="utf-8")
    return path


def test_tracker_and_tricks_follow_the_core(tmp_path: Path) -> None:
    data = recorded_games(tmp_path)
    tracker = (JS_DIR / "tracker.js").as_uri()
    out = run_node(f"""
      import fs from "fs";
      const {{ unseenCounts, tricksOf }} = await import({json.dumps(tracker)});
      const checks = JSON.parse(fs.readFileSync({json.dumps(str(data))}, "utf8"));
      const problems = [];
      let counted = 0, tricks = 0, tribute = 0;
      for (const [i, c] of checks.entries()) {{
        const {{ ranks, wild }} = unseenCounts(c.view);
        for (const r of ranks) {{
          counted++;
          const want = c.others[r.rank] || 0;
          if (r.left !== want) problems.push(`step ${{i}} rank ${{r.rank}}: ${{r.left}} != ${{want}}`);
        }}
        if (c.view.history.some(([s, a]) => a[0] === "tribute")) tribute++;
        if (c.trick) {{
          tricks++;
          const t = tricksOf(c.view.history);
          if (JSON.stringify(t.current) !== JSON.stringify(c.trick)) problems.push(`step ${{i}}: trick ${{JSON.stringify(t.current)}} != ${{JSON.stringify(c.trick)}}`);
          const plays = c.view.history.filter(([s, a]) => a[0] !== "tribute" && a[0] !== "return");
          if (JSON.stringify([...t.done.flat(), ...t.current]) !== JSON.stringify(plays)) problems.push(`step ${{i}}: tricks do not partition the plays`);
        }}
      }}
      console.log(JSON.stringify({{ counted, tricks, tribute, problems: problems.slice(0, 5) }}));
    """)
    assert out["problems"] == []
    assert out["counted"] > 10_000 and out["tricks"] > 500
    assert out["tribute"] > 0, "the games must include a tribute"


def test_fan_layout_gives_each_card_its_own_target() -> None:
    hand = (JS_DIR / "hand.js").as_uri()
    out = run_node(f"""
      const {{ layoutFan }} = await import({json.dumps(hand)});
      const problems = [];
      const rows = {{}};
      for (const [width, cw, ch] of [[358, 52, 74], [832, 46, 64], [1350, 78, 108], [1904, 96, 134]]) {{
        for (let n = 1; n <= 27; n++) {{
          const ends = [];
          for (let i = 1; i < n - 1; i += 3) ends.push(i);
          const fan = layoutFan(n, ends, width, cw, ch);
          rows[`${{width}}:${{n}}`] = fan.rows;
          for (let i = 0; i < n; i++) {{
            const p = fan.positions[i];
            if (p.left < 0 || p.left + p.width > width + 0.01) problems.push(`${{width}} n=${{n}} card ${{i}} outside: ${{JSON.stringify(p)}}`);
            const next = fan.positions[i + 1];
            if (next && next.row === p.row && p.left + p.width > next.left + 0.01) problems.push(`${{width}} n=${{n}} card ${{i}} overlaps ${{i + 1}}`);
            const lastOfRow = !next || next.row !== p.row;
            if (lastOfRow && p.width !== cw) problems.push(`${{width}} n=${{n}} last card of a row not whole`);
            if (!lastOfRow && p.width < 20) problems.push(`${{width}} n=${{n}} card ${{i}} strip ${{p.width}} < 20 px`);
          }}
        }}
      }}
      console.log(JSON.stringify({{ problems: problems.slice(0, 5), rows }}));
    """)
    assert out["problems"] == []
    rows = out["rows"]
    assert rows["1350:27"] == 1 and rows["1904:27"] == 1 and rows["832:27"] == 1  # laptop, desktop, landscape phone
    assert rows["358:27"] == 2 and rows["358:10"] == 1  # portrait phone: two rows for a full hand


def test_combos_for_sorting() -> None:
    hand = (JS_DIR / "hand.js").as_uri()
    out = run_node(f"""
      const {{ findCombos, arrangeHand, flatten }} = await import({json.dumps(hand)});
      const cards = ["5C", "5D", "5H", "5S", "3S", "4S", "6S", "7S", "AH", "2H", "3H", "4H", "KD", "SJ", "SJ", "BJ", "BJ", "7H"];
      const {{ combos, rest }} = findCombos(cards, "7");
      const arranged = flatten(arrangeHand(cards, "7", {{ mode: "combos", custom: [] }}));
      const suit = arrangeHand(cards, "7", {{ mode: "suit", custom: [["KD", "3S"]] }}).map((g) => [g.kind, g.cards]);
      console.log(JSON.stringify({{ combos, rest, arranged, suit }}));
    """)
    kinds = [(c["kind"], sorted(c["cards"])) for c in out["combos"]]
    # the four 5s are a bomb; spades 3-4-6-7 cannot make a straight flush once the 5s are a bomb;
    # A-2-3-4 of hearts with 5H taken is no straight flush either; the four jokers are the joker bomb
    assert ("joker_bomb", ["BJ", "BJ", "SJ", "SJ"]) in kinds
    assert ("bomb", ["5C", "5D", "5H", "5S"]) in kinds
    assert not [k for k in kinds if k[0] == "straight_flush"]
    assert sorted(out["rest"] + [c for k in out["combos"] for c in k["cards"]]) == sorted(
        ["5C", "5D", "5H", "5S", "3S", "4S", "6S", "7S", "AH", "2H", "3H", "4H", "KD", "SJ", "SJ", "BJ", "BJ", "7H"])
    assert out["arranged"][-4:] == ["SJ", "SJ", "BJ", "BJ"]  # the joker bomb is the strongest group (R24)
    # by suit, a custom group at the right end
    assert out["suit"][-1] == ["custom", ["3S", "KD"]]
    sf = run_node(f"""
      const {{ findCombos }} = await import({json.dumps(hand)});
      console.log(JSON.stringify([findCombos(["AH", "2H", "3H", "4H", "5H", "9C"], "9").combos,
                                  findCombos(["TS", "JS", "QS", "KS", "AS"], "2").combos]));
    """)
    assert sf[0] == [{"kind": "straight_flush", "cards": ["AH", "2H", "3H", "4H", "5H"]}]  # A low (R10)
    assert sf[1] == [{"kind": "straight_flush", "cards": ["TS", "JS", "QS", "KS", "AS"]}]  # A high (R10)
