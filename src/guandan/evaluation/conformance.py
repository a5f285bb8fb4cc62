"""Conformance runner for the neutral rules-case format (``tests/cases/README.md``).

Usage::

    python -m guandan.conformance FILE.jsonl [--verbose]

Prints one line per failing case and a closing ``N passed, M failed``. Exit status 0 when
everything passed, 1 when any case failed, 2 when the file is malformed (the message names
the line). Every kind and field of the format is supported, ``options`` included (applied on
top of the ``official`` preset).
"""

from __future__ import annotations

import argparse
import os
import json
import random
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from guandan.core.cards import FACE_RANK, parse_card, parse_rank, rank_char
from guandan.core.deal import PLAY, RETURN, TRIBUTE, Deal, DealResult, deal_outcome, partner
from guandan.core.errors import GuandanError, IllegalAction
from guandan.core.movegen import ORDER, legal_plays
from guandan.core.plays import BOMB, BOMB_TYPES, PASS, PlayT, beats, canonical, classify, play_key
from guandan.core.rules import RuleSet
from guandan.core.scoring import MatchScore, settle, upgrade_for

KINDS = (
    "classify", "compare", "legal_moves_contains", "legal_moves_excludes", "tribute", "upgrade",
    "jiefeng", "deal_end",
)


class MalformedCase(ValueError):
    """A case that does not follow the format (reported with exit status 2)."""


@dataclass(frozen=True)
class Outcome:
    """Result of one case: ``ok`` and, when not, a one-line ``detail``."""

    case_id: str
    ok: bool
    detail: str = ""


# -- parsing helpers -----------------------------------------------------------------------
def _cards(value: Any, field: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise MalformedCase(f"{field} must be a list of cards")
    try:
        faces = tuple(sorted(parse_card(c) for c in value))
    except (GuandanError, AttributeError, TypeError) as e:
        raise MalformedCase(f"{field}: {e}") from None
    for f in set(faces):
        if faces.count(f) > 2:
            raise MalformedCase(f"{field}: a card appears more than twice (two decks, R1)")
    return faces


def _rank(value: Any, field: str) -> int:
    if not isinstance(value, str):
        raise MalformedCase(f"{field} must be a rank string")
    try:
        return parse_rank(value)
    except GuandanError as e:
        raise MalformedCase(f"{field}: {e}") from None


def _level(case: dict[str, Any]) -> int:
    lv = _rank(case.get("level"), "level")
    if lv > 12:
        raise MalformedCase("level must be 2..A")
    return lv


def _rules(case: dict[str, Any]) -> RuleSet:
    opts = case.get("options") or {}
    if not isinstance(opts, dict):
        raise MalformedCase("options must be an object")
    try:
        return RuleSet.from_dict(opts)
    except GuandanError as e:
        raise MalformedCase(f"options: {e}") from None


def _reading_tuple(play: PlayT) -> tuple[str, str | None, int | None]:
    t, r, cards = play
    return (t, None if r is None else rank_char(r), len(cards) if t == BOMB else None)


def _expected_reading(e: Any) -> tuple[str, str | None, int | None]:
    if not isinstance(e, dict) or "type" not in e:
        raise MalformedCase("a reading needs a type")
    t = e["type"]
    r = e.get("rank")
    if r is not None:
        r = rank_char(_rank(r, "rank"))
    size = e.get("size") if t == BOMB else None
    return (t, r, size)


def _table_play(spec: Any, level: int, rules: RuleSet) -> PlayT | None:
    if spec is None:
        return None
    if not isinstance(spec, dict) or "cards" not in spec:
        raise MalformedCase("table must be null or {cards, type, rank}")
    cards = _cards(spec["cards"], "table.cards")
    readings = classify(cards, level, rules.full_house_joker_pair)
    t = spec.get("type")
    r = spec.get("rank")
    if t is None:
        if not readings:
            raise MalformedCase("table cards are not a play")
        return max(readings, key=lambda p: _size_key(p, level))
    rank = None if r is None else _rank(r, "table.rank")
    for p in readings:
        if p[0] == t and p[1] == rank:
            return p
    return (t, rank, canonical(cards, level))


def _size_key(p: PlayT, level: int) -> tuple[int, int]:
    """Largest reading first (R17 default): bombs above everything, then by key."""
    return (1 if p[0] in BOMB_TYPES else 0, play_key(p, level))


def _declared(cards: tuple[int, ...], decl: Any, level: int, rules: RuleSet) -> list[PlayT]:
    readings = list(classify(cards, level, rules.full_house_joker_pair))
    if decl is None:
        return readings
    if isinstance(decl, str):
        decl = {"type": decl}
    if not isinstance(decl, dict):
        raise MalformedCase("a declared reading must be an object {type, rank}")
    t = decl.get("type")
    r = decl.get("rank")
    rank = None if r is None else _rank(r, "declared rank")
    return [p for p in readings if p[0] == t and (r is None or p[1] == rank)]


# -- kinds ---------------------------------------------------------------------------------
def _run_classify(case: dict[str, Any]) -> str | None:
    level, rules = _level(case), _rules(case)
    cards = _cards(case.get("cards"), "cards")
    got = {_reading_tuple(p) for p in classify(cards, level, rules.full_house_joker_pair)}
    exp_list = case.get("expected")
    if not isinstance(exp_list, list):
        raise MalformedCase("expected must be a list of readings")
    exp = {_expected_reading(e) for e in exp_list}
    # a bomb size given in the expectation must match; without it any size matches
    exp_cmp = {(t, r, s if s is not None else (len(cards) if t == BOMB else None)) for t, r, s in exp}
    if got != exp_cmp:
        return f"readings {sorted(got, key=str)} != expected {sorted(exp_cmp, key=str)}"
    return None


def _run_compare(case: dict[str, Any]) -> str | None:
    """``a>b``: some reading of ``a`` may be played over ``b``; ``a<b``: some reading of ``b``
    beats ``a``. The side on the table is its declared reading (``a_as``/``b_as``) or, when
    undeclared and ambiguous, its largest reading (R17); the side on the move may use any."""
    level, rules = _level(case), _rules(case)
    a = _cards(case.get("a"), "a")
    b = _cards(case.get("b"), "b")
    table = case.get("table") or {}
    if not isinstance(table, dict):
        raise MalformedCase("table must be an object")
    ra = _declared(a, table.get("a_as"), level, rules)
    rb = _declared(b, table.get("b_as"), level, rules)
    fixed_a = [max(ra, key=lambda p: _size_key(p, level))] if ra else []
    fixed_b = [max(rb, key=lambda p: _size_key(p, level))] if rb else []
    a_beats = any(beats(x, y, level) for x in ra for y in fixed_b)
    b_beats = any(beats(y, x, level) for y in rb for x in fixed_a)
    got = "a>b" if a_beats else ("a<b" if b_beats else "incomparable")
    exp = case.get("expected")
    if exp not in ("a>b", "a<b", "incomparable"):
        raise MalformedCase("compare expected must be a>b, a<b or incomparable")
    return None if got == exp else f"got {got}, expected {exp}"


def _run_legal(case: dict[str, Any], contains: bool) -> str | None:
    level, rules = _level(case), _rules(case)
    hand = _cards(case.get("cards"), "cards")
    counts = [0] * 54
    for f in hand:
        counts[f] += 1
    table = _table_play(case.get("table"), level, rules)
    plays = legal_plays(counts, level, table, rules.full_house_joker_pair)
    exp = case.get("expected")
    if not isinstance(exp, dict) or "cards" not in exp:
        raise MalformedCase("expected must be a play {cards, type, rank}")
    cards = canonical(_cards(exp["cards"], "expected.cards"), level)
    same = [p for p in plays if p[2] == cards]
    if contains:
        t = exp.get("type")
        r = exp.get("rank")
        rank = None if r is None else _rank(r, "expected.rank")
        size = exp.get("size")
        hit = [
            p for p in same
            if (t is None or p[0] == t) and (r is None or p[1] == rank) and (size is None or len(p[2]) == size)
        ]
        if not hit:
            return f"{exp} not among the {len(plays)} legal plays (cards found as: {[_reading_tuple(p) for p in same]})"
        return None
    if same:
        return f"{exp['cards']} is legal as {[_reading_tuple(p) for p in same]}"
    return None


def _seat_hands(spec: Any) -> list[tuple[int, ...]]:
    if not isinstance(spec, dict):
        raise MalformedCase("hands must be an object seat -> cards")
    hands: list[tuple[int, ...]] = [(), (), (), ()]
    for k, v in spec.items():
        try:
            s = int(k)
        except ValueError:
            raise MalformedCase(f"bad seat {k!r} in hands") from None
        if s not in range(4):
            raise MalformedCase(f"bad seat {k!r} in hands")
        hands[s] = _cards(v, f"hands[{k}]")
    return hands


def _prev_result(case: dict[str, Any], hands: list[tuple[int, ...]]) -> DealResult:
    fo = case.get("prev_finish_order")
    if not isinstance(fo, list) or not 2 <= len(fo) <= 4 or any(s not in range(4) for s in fo) or len(set(fo)) != len(fo):
        raise MalformedCase("prev_finish_order must list 2-4 distinct seats")
    if len(fo) == 3:
        fo = fo + [s for s in range(4) if s not in fo]
    if len(fo) == 2 and fo[1] != partner(fo[0]):
        raise MalformedCase("a two-seat prev_finish_order must be a double-down")
    rest = [0, 0, 0, 0]
    found = False
    for key in case:
        k = key.lower()
        if key in ("hands", "expected") or not any(w in k for w in ("rest", "remaining", "left", "card_count")):
            continue
        spec = case[key]
        items = spec.items() if isinstance(spec, dict) else enumerate(spec) if isinstance(spec, list) else None
        if items is None:
            raise MalformedCase(f"{key} must map seats to card counts")
        for s, v in items:
            rest[int(s)] = len(v) if isinstance(v, list) else int(v)
        found = True
        break
    if not found and _rules(case).double_tribute_by == "remaining_cards" and len(fo) == 2:
        raise MalformedCase("double_tribute_by=remaining_cards needs the losers' remaining card counts")
    return DealResult(tuple(fo), tuple(rest))


def _run_tribute(case: dict[str, Any]) -> str | None:
    level, rules = _level(case), _rules(case)
    hands = _seat_hands(case.get("hands"))
    prev = _prev_result(case, hands)
    deal = Deal(rules, level, hands, random.Random(0), prev=prev)
    exp = case.get("expected")
    if not isinstance(exp, dict):
        raise MalformedCase("expected must be an object")
    plan = deal.plan
    assert plan is not None
    problems: list[str] = []
    ret_card = case.get("return_card")
    if "anti_tribute" in exp and bool(exp["anti_tribute"]) != plan.anti_tribute:
        problems.append(f"anti_tribute {plan.anti_tribute}, expected {exp['anti_tribute']}")
        return "; ".join(problems)
    exp_trib = {int(t["from"]): t for t in exp.get("tributes", [])} if "tributes" in exp else None
    # pay tributes
    while deal.phase == TRIBUTE:
        seat = deal.turn
        assert seat is not None
        opts = deal.tribute_options(seat)
        choice = opts[0] if opts else None
        if exp_trib is not None and seat in exp_trib and "card" in exp_trib[seat]:
            want = _cards([exp_trib[seat]["card"]], "tributes.card")[0]
            if want not in opts:
                return f"seat {seat} may pay {[rank_char(FACE_RANK[f]) for f in opts]}, expected {exp_trib[seat]['card']}"
            if any(FACE_RANK[f] != FACE_RANK[want] for f in opts):
                return f"seat {seat}'s tribute options span several ranks"
            choice = want
        if choice is None:
            return f"seat {seat} has no card to pay"
        deal.apply(("tribute", FACE_RANK[choice], (choice,)))
    if exp_trib is not None:
        got = sorted((p, r) for p, r in plan.to.items())
        if sorted(exp_trib) != sorted(plan.to):
            problems.append(f"tributes {got}, expected payers {sorted(exp_trib)}")
        for payer, t in exp_trib.items():
            if "to" in t and plan.to.get(payer) != int(t["to"]):
                problems.append(f"tribute of seat {payer} went to {plan.to.get(payer)}, expected {t['to']}")
    if ret_card is not None:
        if deal.phase != RETURN:
            return "no return is due"
        frm, to = int(ret_card["from"]), int(ret_card["to"])
        card = _cards([ret_card["card"]], "return_card.card")[0]
        due = dict(plan.returns_due)
        if due.get(frm) != to:
            problems.append(f"returns due {plan.returns_due}, case asks about {frm}->{to}")
        allowed = card in deal.return_options(frm, to)
        exp_allowed = exp.get("return_allowed")
        if exp_allowed is not None and allowed != bool(exp_allowed):
            problems.append(f"return_allowed {allowed}, expected {exp_allowed}")
        return "; ".join(problems) or None
    if "returns" in exp:
        got_ret = sorted(plan.returns_due)
        due = dict(plan.returns_due)
        if sorted(int(r["from"]) for r in exp["returns"]) != sorted(due):
            problems.append(f"returns {got_ret}, expected {[(r.get('from'), r.get('to')) for r in exp['returns']]}")
        for r in exp["returns"]:
            frm = int(r["from"])
            to = int(r["to"]) if "to" in r else due.get(frm, -1)
            if due.get(frm) != to:
                problems.append(f"return of seat {frm} goes to {due.get(frm)}, expected {to}")
            limit = deal.return_limit(frm, to) if deal.phase == RETURN else None
            if "max_rank" in r:
                want = _rank(r["max_rank"], "max_rank")
                if limit != want:
                    problems.append(f"return {frm}->{to} limit {None if limit is None else rank_char(limit)}, expected {r['max_rank']}")
    while deal.phase == RETURN:
        seat = deal.turn
        assert seat is not None
        target = dict(plan.returns_due)[seat]
        opts = deal.return_options(seat, target)
        if not opts:
            return f"seat {seat} has nothing to return"
        deal.apply(("return", FACE_RANK[opts[0]], (opts[0],)))
    if "first_to_play" in exp and deal.leader != exp["first_to_play"]:
        problems.append(f"first_to_play {deal.leader}, expected {exp['first_to_play']}")
    return "; ".join(problems) or None


_HISTORY_PATTERNS = (
    (re.compile(r"^team_?(02|13).*fail", re.I), "a_fails"),
    (re.compile(r"^seat_?([0-3]).*(?:first|head|top)", re.I), "first_runs"),
    (re.compile(r"^seat_?([0-3]).*(?:last|tail|bottom)", re.I), "last_runs"),
    (re.compile(r"^seat_?([0-3]).*points?", re.I), "points"),
)


def _run_upgrade(case: dict[str, Any]) -> str | None:
    level, rules = _level(case), _rules(case)
    lb = case.get("levels_before")
    if not isinstance(lb, dict) or set(lb) != {"team02", "team13"}:
        raise MalformedCase("levels_before needs team02 and team13")
    score = MatchScore(levels=[_rank(lb["team02"], "levels_before"), _rank(lb["team13"], "levels_before")])
    for key, value in (case.get("history") or {}).items():
        for pat, attr in _HISTORY_PATTERNS:
            m = pat.match(key)
            if m:
                idx = m.group(1)
                slot = {"02": 0, "13": 1}.get(idx, None)
                getattr(score, attr)[slot if slot is not None else int(idx)] = int(value)
                break
        else:
            raise MalformedCase(f"unsupported history field {key!r}")
    fo = case.get("finish_order")
    if not isinstance(fo, list) or not 2 <= len(fo) <= 4:
        raise MalformedCase("finish_order must list 2-4 seats")
    res = deal_outcome(fo)
    if res is None:
        raise MalformedCase("finish_order does not end a deal")
    st = settle(rules, level, res, score)
    exp = case.get("expected") or {}
    got = {
        "winner": "team02" if st.winner == 0 else "team13",
        "upgrade": st.upgrade,
        "levels_after": {"team02": rank_char(st.levels_after[0]), "team13": rank_char(st.levels_after[1])},
        "match_over": st.passed,
        "next_deal_level": None if st.next_level is None else rank_char(st.next_level),
    }
    bad = []
    for k, v in exp.items():
        if k not in got:
            raise MalformedCase(f"unknown expected field {k!r}")
        want = v
        if k == "levels_after":
            want = {t: rank_char(_rank(x, k)) for t, x in v.items()}
        elif k == "next_deal_level" and v is not None:
            want = rank_char(_rank(v, k))
        if got[k] != want:
            bad.append(f"{k} {got[k]!r}, expected {want!r}")
    return "; ".join(bad) or None


def _run_jiefeng(case: dict[str, Any]) -> str | None:
    level, rules = _level(case), _rules(case)
    finished = case.get("finished_before") or []
    trick = case.get("trick")
    if not isinstance(trick, list) or not trick:
        raise MalformedCase("trick must be a non-empty list")
    # Build hands so that each "play" beats the previous one: singles climbing in level order.
    ranks = [r for r in ORDER[level] if r != level]
    plays_by_seat: dict[int, list[int]] = {s: [] for s in range(4)}
    last_seat: set[int] = set()
    for i, step in enumerate(trick):
        s, a = step.get("seat"), step.get("action")
        if s not in range(4) or a not in ("play", "play_last", "pass"):
            raise MalformedCase(f"bad trick step {step!r}")
        if a != "pass":
            plays_by_seat[s].append(ranks[len([1 for st in trick[:i] if st["action"] != "pass"])] * 4)
            if a == "play_last":
                last_seat.add(s)
    hands: list[list[int]] = []
    for s in range(4):
        h = list(plays_by_seat[s])
        if s not in last_seat and s not in finished:
            h += [ranks[0] * 4 + 2, ranks[0] * 4 + 3, ranks[1] * 4 + 2]  # filler, never played
        hands.append(h)
    deal = Deal(rules, level, hands, random.Random(0), first_leader=trick[0]["seat"])
    deal.finished = list(finished)
    for s in finished:
        if deal.n_cards[s]:
            raise MalformedCase("a finished seat acts in the trick")
    try:
        for step in trick:
            s, a = step["seat"], step["action"]
            if deal.phase != PLAY:
                return f"the deal ended before seat {s}'s {a}"
            if a == "pass":
                deal.apply(PASS, s)
            else:
                face = plays_by_seat[s].pop(0)
                deal.apply(("single", FACE_RANK[face], (face,)), s)
    except IllegalAction as e:
        return f"engine refused a step: {e}"
    over = deal.phase != PLAY
    trick_over = over or deal.top is None
    got = {
        "trick_over": trick_over,
        "deal_over": over,
        "next_leader": deal.turn if trick_over and not over else None,
        "jiefeng": deal.jiefeng_seat is not None,
    }
    exp = case.get("expected") or {}
    bad = [f"{k} {got[k]!r}, expected {v!r}" for k, v in exp.items() if k in got and got[k] != v]
    unknown = [k for k in exp if k not in got]
    if unknown:
        raise MalformedCase(f"unknown expected field(s) {unknown}")
    return "; ".join(bad) or None


def _run_deal_end(case: dict[str, Any]) -> str | None:
    rules = _rules(case)
    _level(case)
    fo = case.get("finish_order_so_far")
    if not isinstance(fo, list) or any(s not in range(4) for s in fo) or len(set(fo)) != len(fo):
        raise MalformedCase("finish_order_so_far must list distinct seats")
    res = deal_outcome(fo)
    if res is None:
        got: dict[str, Any] = {"deal_over": False, "winner": None, "upgrade": None, "last": None}
    else:
        last = list(res.last)
        got = {
            "deal_over": True,
            "winner": "team02" if res.winner_team == 0 else "team13",
            "upgrade": upgrade_for(rules, res.finish_order),
            "last": last[0] if len(last) == 1 else last,
        }
    exp = case.get("expected") or {}
    bad = []
    for k, v in exp.items():
        if k not in got:
            raise MalformedCase(f"unknown expected field {k!r}")
        g = got[k]
        if k == "last" and g is not None and v is not None:
            gs = sorted(g) if isinstance(g, list) else [g]
            vs = sorted(v) if isinstance(v, list) else [v]
            if gs != vs:
                bad.append(f"last {g}, expected {v}")
        elif g != v:
            bad.append(f"{k} {g!r}, expected {v!r}")
    return "; ".join(bad) or None


_RUNNERS = {
    "classify": _run_classify,
    "compare": _run_compare,
    "legal_moves_contains": lambda c: _run_legal(c, True),
    "legal_moves_excludes": lambda c: _run_legal(c, False),
    "tribute": _run_tribute,
    "upgrade": _run_upgrade,
    "jiefeng": _run_jiefeng,
    "deal_end": _run_deal_end,
}


def run_case(case: dict[str, Any]) -> Outcome:
    """Run one case.

    Raises:
        MalformedCase: the case does not follow the format.
    """
    if not isinstance(case, dict):
        raise MalformedCase("a case must be a JSON object")
    cid = case.get("id")
    kind = case.get("kind")
    if not isinstance(cid, str) or not cid:
        raise MalformedCase("missing id")
    if not isinstance(kind, str) or kind not in _RUNNERS:
        return Outcome(cid, False, f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
    try:
        detail = _RUNNERS[kind](case)
    except MalformedCase:
        raise
    except Exception as e:  # any other surprise in a case's fields: that case fails, the file goes on
        raise MalformedCase(f"{type(e).__name__}: {e}") from None
    return Outcome(cid, detail is None, detail or "")


def load_cases(lines: Iterable[str]) -> list[tuple[int, dict[str, Any]]]:
    """Parse JSON Lines; blank lines are skipped.

    Raises:
        MalformedCase: with the 1-based line number in the message.
    """
    out = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise MalformedCase(f"line {i}: invalid JSON ({e.msg})") from None
        except (ValueError, RecursionError) as e:
            raise MalformedCase(f"line {i}: unreadable JSON ({type(e).__name__})") from None
        out.append((i, obj))
    return out


def run_file(path: str, verbose: bool = False, out: Any = None) -> int:
    """Run every case of ``path``; print failures and the closing line; return the exit status."""
    out = out or sys.stdout
    try:
        with open(path, encoding="utf-8") as fh:
            cases = load_cases(fh)
    except OSError as e:
        print(f"error: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"error: {path} is not UTF-8 text", file=sys.stderr)
        return 2
    except MalformedCase as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        return 2
    passed = failed = 0
    seen: set[str] = set()
    for lineno, case in cases:
        if not isinstance(case, dict) or not isinstance(case.get("id"), str) or not case.get("id"):
            print(f"error: {path}: line {lineno}: a case must be a JSON object with an id", file=sys.stderr)
            return 2
        try:
            res = run_case(case)
        except MalformedCase as e:
            # an unreadable case fails alone; the rest of the file still runs
            res = Outcome(case["id"], False, f"malformed case (line {lineno}): {e}")
        if res.case_id in seen:
            print(f"error: {path}: line {lineno}: duplicate id {res.case_id}", file=sys.stderr)
            return 2
        seen.add(res.case_id)
        if res.ok:
            passed += 1
            if verbose:
                print(f"ok   {res.case_id}", file=out)
        else:
            failed += 1
            print(f"FAIL {res.case_id} ({case.get('kind')}): {res.detail}", file=out)
    print(f"{passed} passed, {failed} failed", file=out)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: ``python -m guandan.conformance FILE [--verbose]``."""
    ap = argparse.ArgumentParser(prog="python -m guandan.conformance", description=__doc__.split("\n\n")[0])
    ap.add_argument("file", help="cases in the neutral JSON Lines format")
    ap.add_argument("-v", "--verbose", action="store_true", help="also list passing cases")
    args = ap.parse_args(argv)
    return run_file(args.file, args.verbose)


def _cli() -> int:
    """``main`` for ``python -m``: a reader that stops early (``... | head``) ends the run quietly."""
    try:
        status = main()
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # the reader went away: send the rest of our output nowhere, so that the interpreter's own
        # flush at exit does not fail again, and exit like a program killed by SIGPIPE
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(_cli())
