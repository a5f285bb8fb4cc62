"""Static checks of the browser UI shipped in ``guandan/server/static`` (issue 3).

* every file referenced by ``index.html``, by CSS ``url()`` and by ``import`` statements of the
  JavaScript modules exists in the package, and every imported name is exported;
* no ``http(s)://`` URL to another host (no CDNs, web fonts or image hosts; XML namespace names,
  which browsers never fetch, are allowed);
* ``js/i18n.js`` has the same keys and placeholders in English and Chinese, and every literal
  ``t("key")`` used by the modules exists;
* every literal ``data-testid`` used by the modules is listed in the comment at the top of ``app.js``;
* with ``node`` available: ``node --check`` on each module, the modules load as ES modules, the
  hand sort follows the level order (docs/rules.md R9), and the replay viewer's hand bookkeeping matches
  the rules core move by move on real games (tribute and return included).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

STATIC = Path(str(resources.files("guandan.server") / "static"))
JS_DIR = STATIC / "js"
NODE = shutil.which("node")

#: XML namespace names: identifiers written as URLs, never fetched.
ALLOWED_URLS = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink", "http://www.w3.org/1999/xhtml"}

IMPORT_RE = re.compile(
    r"""(?:^|;|\n)\s*(?:import|export)\s+(?P<what>[^'";]*?)\s*from\s*["'](?P<path>[^"']+)["']"""
    r"""|(?:^|\n)\s*import\s*["'](?P<bare>[^"']+)["']"""
    r"""|import\(\s*["'](?P<dyn>[^"']+)["']\s*\)""",
    re.DOTALL,
)


def js_files() -> list[Path]:
    return sorted(JS_DIR.rglob("*.js"))


def static_files() -> list[Path]:
    return sorted(p for p in STATIC.rglob("*") if p.is_file())


def resolve(ref: str, base: Path) -> Path:
    """Map a URL or relative reference used in ``base`` to a file under STATIC."""
    ref = ref.split("?")[0].split("#")[0]
    if ref.startswith("/static/"):
        return STATIC / ref[len("/static/") :]
    assert not ref.startswith("/"), f"{base.name}: {ref} is outside /static/"
    return (base.parent / ref).resolve()


def imports_of(path: Path) -> list[tuple[str, str]]:
    """(imported-names clause, module path) of every import/export-from in a module."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in IMPORT_RE.finditer(text):
        ref = m.group("path") or m.group("bare") or m.group("dyn")
        out.append((m.group("what") or "", ref))
    return out


def exports_of(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    names = set(
        re.findall(
            r"^export\s+(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)",
            text,
            re.MULTILINE,
        )
    )
    for block in re.findall(r"^export\s*\{([^}]*)\}", text, re.MULTILINE):
        for part in block.split(","):
            part = part.strip()
            if part:
                names.add(part.split(" as ")[-1].strip())
    return names


def test_core_files_exist() -> None:
    for rel in ("index.html", "js/app.js", "js/i18n.js", "css/app.css"):
        assert (STATIC / rel).is_file(), rel


def test_index_references_exist() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
    assert "/static/js/app.js" in refs and "/static/css/app.css" in refs
    for ref in refs:
        if ref == "/manifest.webmanifest":  # served at the root by guandan.server.webapp (issue 25)
            assert (STATIC / "manifest.webmanifest").is_file()
            continue
        assert ref.startswith("/static/"), f"index.html must use absolute /static/ URLs: {ref}"
        assert resolve(ref, STATIC / "index.html").is_file(), ref


def test_css_urls_exist() -> None:
    for css in STATIC.rglob("*.css"):
        for ref in re.findall(r"""url\(\s*["']?([^"')]+)["']?\s*\)""", css.read_text(encoding="utf-8")):
            if ref.startswith("data:"):
                continue
            assert resolve(ref, css).is_file(), f"{css.name}: {ref}"


def test_js_imports_exist_and_names_are_exported() -> None:
    files = js_files()
    assert len(files) >= 5
    for path in files:
        for clause, ref in imports_of(path):
            assert ref.startswith((".", "/static/")), f"{path.name}: bare or remote import {ref!r}"
            target = resolve(ref, path)
            assert target.is_file(), f"{path.name} imports missing {ref}"
            assert STATIC.resolve() in target.resolve().parents, f"{path.name}: {ref} leaves the static dir"
            named = re.search(r"\{([^}]*)\}", clause)
            if named:
                exported = exports_of(target)
                for part in named.group(1).split(","):
                    name = part.strip().split(" as ")[0].strip()
                    if name:
                        assert name in exported, (
                            f"{path.name} imports {name} which {target.name} does not export"
                        )


def test_every_module_is_reachable_from_app() -> None:
    seen: set[Path] = set()
    todo = [JS_DIR / "app.js"]
    while todo:
        p = todo.pop().resolve()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(resolve(ref, p) for _, ref in imports_of(p))
    assert {p.resolve() for p in js_files()} <= seen


def test_no_remote_urls() -> None:
    url_re = re.compile(r"""https?://[^\s"'<>`)\\]+""")
    for path in static_files():
        if path.suffix not in (".html", ".js", ".css", ".svg", ".json", ".txt", ".webmanifest"):
            continue
        text = path.read_text(encoding="utf-8")
        for url in url_re.findall(text):
            assert url in ALLOWED_URLS, f"{path.relative_to(STATIC)} refers to another host: {url}"
        assert not re.search(r"""["'(]\s*//[a-z0-9.-]+\.[a-z]{2,}/""", text, re.IGNORECASE), (
            f"{path.name}: protocol-relative URL"
        )


#: The string tables: i18n.js's EN and ZH, and the topic tables it merges in (same format).
I18N_TABLES = (("i18n.js", "EN", "ZH"), ("i18n_tournament.js", "TOURNAMENT_EN", "TOURNAMENT_ZH"), ("i18n_app.js", "APP_EN", "APP_ZH"),
               ("i18n_challenge.js", "CHALLENGE_EN", "CHALLENGE_ZH"),
               ("i18n_friends.js", "FRIENDS_EN", "FRIENDS_ZH"), ("i18n_table.js", "TABLE_EN", "TABLE_ZH"),
               ("i18n_seeds.js", "SEEDS_EN", "SEEDS_ZH"),
               ("i18n_match.js", "MATCH_EN", "MATCH_ZH"),
               ("i18n_phrases.js", "PHRASES_EN", "PHRASES_ZH"),
               ("i18n_moderation.js", "MODERATION_EN", "MODERATION_ZH"),
               ("i18n_teammatch.js", "TEAMMATCH_EN", "TEAMMATCH_ZH"))


def i18n_tables() -> dict[str, dict[str, str]]:
    tables: dict[str, dict[str, str]] = {"en": {}, "zh": {}}
    for name, *consts in I18N_TABLES:
        text = (JS_DIR / name).read_text(encoding="utf-8")
        for lang, const in zip(("en", "zh"), consts):
            m = re.search(r"^(?:export )?const " + const + r" = \{\n(.*?)^\};", text, re.MULTILINE | re.DOTALL)
            assert m, f"{name}: no {const} table"
            entries = tables[lang]
            for line in m.group(1).splitlines():
                if not line.strip() or line.strip().startswith("//"):
                    continue
                em = re.fullmatch(r'\s+([a-z0-9_]+): ("(?:[^"\\]|\\.)*"),', line)
                assert em, f"{const}: unexpected line {line!r}"
                assert em.group(1) not in entries, f"{const}: duplicate key {em.group(1)}"
                entries[em.group(1)] = json.loads(em.group(2))
    return tables


def test_i18n_same_keys_and_placeholders() -> None:
    t = i18n_tables()
    en, zh = t["en"], t["zh"]
    assert len(en) > 100
    assert set(en) == set(zh), f"only en: {sorted(set(en) - set(zh))}; only zh: {sorted(set(zh) - set(en))}"
    for key in en:
        assert en[key].strip() and zh[key].strip(), key
        ph_en = set(re.findall(r"\{(\w+)\}", en[key]))
        ph_zh = set(re.findall(r"\{(\w+)\}", zh[key]))
        assert ph_en == ph_zh, f"{key}: placeholders differ {ph_en} vs {ph_zh}"


def test_i18n_keys_used_exist() -> None:
    en = i18n_tables()["en"]
    used: set[str] = set()
    for path in js_files():
        used.update(re.findall(r"""\bt\(\s*"([a-z0-9_]+)"\s*[,)]""", path.read_text(encoding="utf-8")))
    assert used, "no t() calls found"
    missing = sorted(used - set(en))
    assert not missing, f"keys used but not defined: {missing}"
    # keys built at run time: t(`type_${type}`), t(`place_${i + 1}`), t(`room_status_${status}`)
    types = [
        "single",
        "pair",
        "triple",
        "full_house",
        "straight",
        "tube",
        "plate",
        "bomb",
        "straight_flush",
        "joker_bomb",
        "pass",
        "tribute",
        "return",
    ]
    for key in (
        [f"type_{x}" for x in types]
        + [f"place_{i}" for i in range(1, 5)]
        + [f"room_status_{s}" for s in ("waiting", "playing", "finished")]
    ):
        assert key in en, key


def test_every_room_status_has_a_label_in_both_languages() -> None:
    """The lobby and room page show ``t(`room_status_${status}`)`` for every status the server
    stores (``rooms.status``: waiting, playing, finished and damaged, issue 11), in both languages;
    a missing key showed the raw key ``room_status_damaged`` in the lobby."""
    from guandan.server.table.info import DAMAGED, FINISHED, PLAYING, WAITING

    tables = i18n_tables()
    for status in (WAITING, PLAYING, FINISHED, DAMAGED):
        for lang in ("en", "zh"):
            assert f"room_status_{status}" in tables[lang], (lang, status)
    assert tables["zh"]["room_status_damaged"] == "已损坏"
    assert "err_room_damaged" in tables["en"] and "err_room_damaged" in tables["zh"]


def test_testids_are_documented() -> None:
    app = (JS_DIR / "app.js").read_text(encoding="utf-8")
    header = app.split("import ", 1)[0]
    documented = set(re.findall(r"[a-z][a-z0-9-]*[a-z0-9]", header))
    for path in js_files():
        text = path.read_text(encoding="utf-8")
        for tid in re.findall(r"""testid:\s*"([a-z0-9-]+)\"""", text):
            assert tid in documented, f"{path.name}: data-testid {tid!r} missing from the list in app.js"
        for prefix in re.findall(r"""testid:\s*`([a-z0-9-]+)\$\{""", text):
            assert f"{prefix}0" in header or f"{prefix}0..3" in header, (
                f"{path.name}: {prefix}N not documented"
            )


# --- node-based checks ----------------------------------------------------------------------

needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def run_node(script: str, timeout: float = 60) -> str:
    assert NODE is not None
    proc = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@needs_node
@pytest.mark.parametrize("path", js_files(), ids=lambda p: p.name)
def test_node_check(path: Path) -> None:
    assert NODE is not None
    proc = subprocess.run(
        [NODE, "--check", str(path)], check=False, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


@needs_node
def test_modules_load() -> None:
    """Every module but app.js (which builds the page at load) imports cleanly in node, which also
    proves that each imported name is exported."""
    mods = [p for p in js_files() if p.name != "app.js"]
    script = "\n".join(f"await import({json.dumps(p.as_uri())});" for p in mods) + "\nconsole.log('ok');"
    assert run_node(script).strip() == "ok"


@needs_node
def test_hand_sort_level_order() -> None:
    """R9: 2 < ... < A < level rank < SJ < BJ; the level rank leaves its natural slot."""
    cards = (JS_DIR / "cards.js").as_uri()
    script = f"""
      const c = await import({json.dumps(cards)});
      const out = {{
        l7: c.sortCards(["7H", "AS", "2C", "SJ", "BJ", "7S", "KD", "8C"], "7"),
        l2: c.sortCards(["2S", "3D", "AH", "BJ", "2H", "KS"], "2"),
        lT: c.sortCards(["TD", "JS", "9C", "AS", "SJ"], "T"),
        same: c.sameCards(["TH", "TD", "TH"], ["TH", "TH", "TD"]),
        diff: c.sameCards(["TH", "TD"], ["TH", "TH"]),
        label: c.cardUnicode("TH"),
        wild: [c.isWild("7H", "7"), c.isWild("7S", "7"), c.isWild("SJ", "7")],
      }};
      console.log(JSON.stringify(out));
    """
    out = json.loads(run_node(script))
    # the wild (heart of the level rank) sorts last among the level cards
    assert out["l7"] == ["2C", "8C", "KD", "AS", "7S", "7H", "SJ", "BJ"]
    # at level 2 the 2s move above A and 3 is the lowest card (R9 example)
    assert out["l2"] == ["3D", "KS", "AH", "2S", "2H", "BJ"]
    # at level 10: ... 9 < J < ... < A < 10 < SJ (R9 example)
    assert out["lT"] == ["9C", "JS", "AS", "TD", "SJ"]
    assert out["same"] is True and out["diff"] is False
    assert out["label"] == "10\u2665"
    assert out["wild"] == [True, False, False]


@needs_node
def test_replay_hands_follow_the_core(tmp_path: Path) -> None:
    """The replay viewer's hands equal the core's hands after every event (cards leave a hand
    when played; tribute and return cards reach their receivers when revealed, R50), and its
    finishing order agrees with each ``deal_end`` event."""
    from guandan.agents.registry import make_agent
    from guandan.core.cards import card_text
    from guandan.core.match import Game
    from guandan.core.rules import RuleSet
    from guandan.core.views import seat_view

    def hands_text(game: Game) -> list[list[str]]:
        d = game.deal
        return [sorted(card_text(f) for f in range(54) for _ in range(d.hands[s][f])) for s in range(4)]

    games = []
    for preset, seed in (("anhui", 3), ("classic", 11)):
        game = Game(RuleSet.preset(preset), seed=seed)
        agents = [make_agent("random", 100 + i) for i in range(4)]
        checks: dict[int, list[list[str]]] = {}
        pending_private: set[int] = set()

        checks[len(game.events) - 1] = hands_text(game)
        saw_tribute = False
        while not game.over and game.deal_number <= 4:
            seat = game.to_act()
            act = agents[seat].act(seat_view(game, seat))
            game.apply(act, seat)
            if act[0] in ("tribute", "return"):
                saw_tribute = True
                if game.events[-1]["type"] == "action":
                    # not revealed yet: the viewer shows the card in transit (out of the giver's
                    # hand, not yet in the receiver's); the core moves it at the reveal
                    pending_private.add(len(game.events) - 1)
            checks[len(game.events) - 1] = hands_text(game)
        for k in pending_private:
            checks.pop(k, None)
        games.append({"events": game.events, "checks": checks, "tribute": saw_tribute})
    assert any(g["tribute"] for g in games), "the chosen seeds must include a tribute"
    revealed = [
        k
        for g in games
        for k in g["checks"]
        if g["events"][k]["type"] in ("tribute_paid", "returns_revealed")
    ]
    assert revealed, "no step right after a tribute/return reveal is checked"
    data = tmp_path / "records.json"
    data.write_text(json.dumps(games), encoding="utf-8")
    replay = (JS_DIR / "replay.js").as_uri()
    script = f"""
      import fs from "fs";
      const {{ buildSteps }} = await import({json.dumps(replay)});
      const games = JSON.parse(fs.readFileSync({json.dumps(str(data))}, "utf8"));
      const problems = [];
      let checked = 0;
      for (const g of games) {{
        const steps = buildSteps(g.events);
        if (steps.length !== g.events.length) problems.push(`steps ${{steps.length}} != events ${{g.events.length}}`);
        for (const [k, hands] of Object.entries(g.checks)) {{
          const s = steps[Number(k)];
          for (let i = 0; i < 4; i++) {{
            checked++;
            const a = [...s.hands[i]].sort().join(" "), b = [...hands[i]].sort().join(" ");
            if (a !== b) problems.push(`event ${{k}} (${{s.event.type}}) seat ${{i}}: ${{a}} != ${{b}}`);
          }}
        }}
        steps.forEach((s) => {{
          if (s.event.type === "deal_end") {{
            const fo = s.event.finish_order;
            if (s.finished.slice(0, fo.length).join() !== fo.join()) problems.push(`finish ${{s.finished}} vs ${{fo}}`);
          }}
        }});
      }}
      console.log(JSON.stringify({{ checked, problems: problems.slice(0, 5) }}));
    """
    out = json.loads(run_node(script, timeout=120))
    assert out["checked"] > 400
    assert out["problems"] == []


def test_english_strings_have_no_chinese() -> None:
    """The English UI shows no Chinese (review of issue 7: 托管, 抗贡, 接风 and 亮牌 appeared in
    English banners and results); only the names of the Chinese language and of the game itself
    may be written in Chinese."""
    en = i18n_tables()["en"]
    allowed = {"lang_zh", "app_title"}
    mixed = {k: v for k, v in en.items() if k not in allowed and re.search("[\u4e00-\u9fff]", v)}
    assert not mixed, mixed


def test_ui_strings_carry_no_rule_ids() -> None:
    """A player reads plain words, never the ids of docs/rules.md (R53, AMB-04, EC-31): the create-room
    form said "(R53)" next to the move clocks. Ids belong in code and tests, not in the UI."""
    tables = i18n_tables()
    ids = re.compile(r"\b(?:R\d{1,2}|AMB-\d+|EC-\d+)\b")
    found = {(lang, k): v for lang, table in tables.items() for k, v in table.items() if ids.search(v)}
    assert not found, found


def test_tournament_labels_and_error_codes_in_both_languages() -> None:
    """The tournament pages build keys at run time (formats, statuses, table statuses, tie-breaks, the
    audit log's operations) and translate every error code the tournament API can answer: the
    engine's (guandan.tournament.errors) and the server's own (api_error(..., "code") in the modules)."""
    import inspect

    from guandan.server.models import TOURNAMENT_STATUSES
    from guandan.tournament import errors
    from guandan.tournament.model import FORMATS
    from guandan.tournament.scoring import TIEBREAKS

    keys = [f"tformat_{f}" for f in FORMATS] + [f"tstatus_{s}" for s in TOURNAMENT_STATUSES]
    keys += [f"tmatch_{s}" for s in ("pending", "claimed", "disputed", "final", "bye")]
    keys += [f"tb_{x}" for x in TIEBREAKS] + [f"tb_{x}_help" for x in TIEBREAKS]
    server = STATIC.parent
    from guandan.server.tournament_store import OPERATIONS

    keys += [f"tour_op_{x}" for x in OPERATIONS]
    codes = {c.code for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.TournamentError)}
    codes.discard("tournament_error")
    for name in ("api_tournaments.py", "tournament_store.py", "tournament_views.py", "tournament_claims.py",
                 "tournament_rounds.py"):
        codes |= set(re.findall(r'api_error\(\s*\d+,.*?"([a-z_]+)"(?:,|\))', (server / name).read_text(encoding="utf-8"),
                                re.DOTALL))
    assert {"stale_version", "not_director", "round_has_results", "impossible_level", "bad_csv"} <= codes
    keys += [f"err_{c}" for c in codes]
    tables = i18n_tables()
    for lang in ("en", "zh"):
        missing = sorted(k for k in keys if k not in tables[lang])
        assert not missing, (lang, missing)
    assert tables["zh"]["tformat_swiss"].startswith("积分编排")
    assert (tables["zh"]["tb_net"], tables["zh"]["tb_cumulative"], tables["zh"]["tour_field_points"]) == \
        ("净积小分", "累积小分", "场分")
