"""Game records (guandan.records): round trips, determinism, and every kind of corrupt record.

What a record must satisfy comes from DESIGN.md section 3 and docs/rules.md section P (a record stores the
preset and every option value and replays identically).
"""

from __future__ import annotations

import io
import json
import random
from functools import cache

import pytest

from guandan.agents.base import RandomAgent
from guandan.agents.driver import run_game
from guandan.core.cards import card_text, parse_card, wild_face
from guandan.core.match import Game, action_from_json, shuffle_deal
from guandan.core.rules import PRESET_NAMES, RuleSet
from guandan.records import (
    EVENT_FIELDS,
    FORMAT,
    RecordError,
    record_lines,
    replay,
    replay_lines,
    write_record,
)

EVENT_TYPES = set(EVENT_FIELDS)


def play(preset: str, seed: int, max_games: int | None = 1, **kw) -> Game:  # type: ignore[no-untyped-def]
    """A complete game between four seeded random agents."""
    g = Game(RuleSet.preset(preset), seed=seed, max_games=max_games, **kw)
    run_game(g, [RandomAgent(seed * 4 + s) for s in range(4)])
    return g


@cache
def record_of(preset: str, seed: int, max_games: int = 1) -> tuple[str, ...]:
    g = play(preset, seed, max_games)
    return tuple(record_lines(g, preset, ["random"] * 4))


def events_of(lines: tuple[str, ...] | list[str]) -> list[tuple[int, dict]]:  # type: ignore[type-arg]
    """(line number, event) of every event line."""
    return [(i, json.loads(s)) for i, s in enumerate(lines[1:], 2)]


def with_line(lines: tuple[str, ...] | list[str], line_no: int, obj: object) -> list[str]:
    out = list(lines)
    out[line_no - 1] = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return out


def expect_error(lines: list[str], line_no: int, *words: str) -> RecordError:
    with pytest.raises(RecordError) as info:
        replay_lines(lines)
    err = info.value
    assert err.line == line_no, str(err)
    assert str(err).startswith(f"line {line_no}: ")
    for w in words:
        assert w in str(err), str(err)
    assert isinstance(err, ValueError)
    return err


# -- format -----------------------------------------------------------------------------------------


def test_header_fields_and_event_lines() -> None:
    g = play("official", 3)
    lines = record_lines(g, "official", ["a", "b", "c", "d"])
    header = json.loads(lines[0])
    assert header == {
        "format": FORMAT,
        "version": 1,
        "preset": "official",
        "options": RuleSet.preset("official").to_dict(),
        "seed": 3,
        "hands": "shuffled",
        "first_leader": None,
        "max_games": 1,
        "players": ["a", "b", "c", "d"],
    }
    # one line per game event, exactly the game's events, compact JSON
    assert [json.loads(s) for s in lines[1:]] == g.events
    for s in lines:
        assert s == json.dumps(json.loads(s), ensure_ascii=False, separators=(",", ":"))
    types = {json.loads(s)["type"] for s in lines[1:]}
    assert {"deal", "action", "deal_end", "game_over"} <= types <= EVENT_TYPES
    assert json.loads(lines[-1])["type"] == "game_over"


def test_write_record_path_and_file_give_the_same_bytes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    g = play("huaian", 5)
    p = tmp_path / "r.jsonl"
    n = write_record(p, g, "huaian", ["random"] * 4)
    buf = io.StringIO()
    write_record(buf, g, "huaian", ["random"] * 4)
    data = p.read_bytes()
    assert data == buf.getvalue().encode("utf-8")
    assert data.endswith(b"\n") and data.count(b"\n") == n == len(g.events) + 1


def test_created_is_optional_and_ignored_by_replay() -> None:
    g = play("official", 4)
    lines = record_lines(g, "official", None, created="2024-01-02T03:04:05+00:00")
    assert json.loads(lines[0])["created"] == "2024-01-02T03:04:05+00:00"
    assert "created" not in json.loads(record_lines(g)[0])
    assert replay_lines(lines).complete


# -- round trips --------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_round_trip_every_preset(preset: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = record_of(preset, 21)
    path = tmp_path / "g.jsonl"
    path.write_text("".join(s + "\n" for s in lines), encoding="utf-8")
    res = replay(path)
    assert res.complete and res.game.over
    assert res.n_lines == len(lines)
    assert res.n_deals == sum(1 for _, e in events_of(lines) if e["type"] == "deal")
    assert res.n_actions == sum(1 for _, e in events_of(lines) if e["type"] == "action")
    # the replayed game writes the very same bytes again
    assert record_lines(res.game, preset, ["random"] * 4) == list(lines)
    assert res.header["options"] == RuleSet.preset(preset).to_dict()


def test_anhui_points_round_trip() -> None:
    """Anhui records carry per-deal points and their running total (docs/rules.md section P ``points``, 2.1)."""
    lines = record_of("anhui", 8)
    ends = [e for _, e in events_of(lines) if e["type"] == "deal_end"]
    assert ends
    total = [0, 0, 0, 0]
    for e in ends:
        assert len(e["points"]) == 4
        total = [t + p for t, p in zip(total, e["points"])]
        assert e["points_total"] == total
        # winners gain what the losers lose
        assert sum(e["points"]) == 0
    assert replay_lines(list(lines)).complete
    # official records have no points fields
    assert all("points" not in e for _, e in events_of(record_of("official", 8)) if e["type"] == "deal_end")


def test_classic_restart_two_games_round_trip() -> None:
    """classic: after_target=restart (R42, AMB-28) and double tribute by remaining cards (AMB-05)."""
    lines = record_of("classic", 2, max_games=2)
    evs = [e for _, e in events_of(lines)]
    overs = [e for e in evs if e["type"] == "game_over"]
    assert [e["game"] for e in overs] == [1, 2]
    second = [e for e in evs if e["type"] == "deal" and e["game"] == 2]
    # a new game restarts at level 2 for both teams, with no tribute and a first leader (R42, AMB-28)
    assert second[0]["deal"] == 1 and second[0]["levels"] == ["2", "2"] and "first_leader" in second[0]
    assert any(e["type"] == "tribute_paid" and len(e["tributes"]) == 2 for e in evs)  # double tribute exercised
    res = replay_lines(list(lines))
    assert res.complete and res.game.games_won[0] + res.game.games_won[1] == 2
    assert json.loads(lines[0])["max_games"] == 2


def test_explicit_hands_round_trip() -> None:
    """Deal 1 supplied, later deals shuffled from the seed: replay reproduces both."""
    hands = shuffle_deal(random.Random(99))
    g = Game(RuleSet.preset("official"), seed=11, hands=hands)
    run_game(g, [RandomAgent(s) for s in range(4)])
    lines = record_lines(g, "official", None)
    header = json.loads(lines[1 - 1])
    assert header["hands"] == "explicit"
    first = json.loads(lines[1])
    assert first["type"] == "deal" and first["hands"] == [[card_text(f) for f in sorted(h)] for h in hands]
    res = replay_lines(lines)
    assert res.complete and record_lines(res.game, "official", None) == lines
    # a shuffled-mode record of the same game does not replay: deal 1 was not shuffled from the seed
    bad = with_line(lines, 1, dict(header, hands="shuffled"))
    expect_error(bad, 2, "deal event differs", "hands")


def test_explicit_hands_without_seed_and_fixed_leader() -> None:
    """seed null is allowed with explicit hands when the game draws nothing at random."""
    rng = random.Random(5)
    source = {}

    def hands(g: int, d: int) -> list[list[int]]:
        if (g, d) not in source:
            source[(g, d)] = shuffle_deal(rng)
        return source[(g, d)]

    g = Game(RuleSet.preset("official"), hands=hands, first_leader=2)  # no seed; official ties by seat
    run_game(g, [RandomAgent(10 + s) for s in range(4)])
    lines = record_lines(g, "official", None)
    header = json.loads(lines[0])
    assert header["seed"] is None and header["hands"] == "explicit" and header["first_leader"] == 2
    assert json.loads(lines[1])["first_leader"] == 2
    assert replay_lines(lines).complete


def test_same_seed_same_bytes_different_seed_different_bytes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for preset in ("official", "anhui", "classic"):
        a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
        write_record(a, play(preset, 31), preset, ["random"] * 4)
        write_record(b, play(preset, 31), preset, ["random"] * 4)
        write_record(c, play(preset, 32), preset, ["random"] * 4)
        assert a.read_bytes() == b.read_bytes()
        assert a.read_bytes() != c.read_bytes()


def test_incomplete_record_is_valid_but_not_complete() -> None:
    lines = list(record_of("official", 3))
    # stop after some action of the first deal: a record of a game in progress
    n = next(i for i, e in events_of(lines) if e["type"] == "action" and i > 40)
    res = replay_lines(lines[:n])
    assert not res.complete and not res.game.over
    assert res.n_actions == sum(1 for _, e in events_of(lines[:n]) if e["type"] == "action")


# -- corrupt records ------------------------------------------------------------------------------------


def test_truncated_last_line() -> None:
    lines = list(record_of("official", 3))
    lines[-1] = lines[-1][: len(lines[-1]) // 2]
    expect_error(lines, len(lines), "not valid JSON")


def test_garbage_middle_line_is_reported_before_replaying() -> None:
    lines = list(record_of("official", 3))
    lines[99] = '{"type":"action","seat":1,"act'
    expect_error(lines, 100, "not valid JSON")
    lines[99] = "[1,2,3]"
    expect_error(lines, 100, "JSON object")
    lines[99] = ""
    expect_error(lines, 100, "empty line")


def test_unknown_event_missing_and_extra_fields() -> None:
    lines = list(record_of("official", 3))
    i, ev = next((i, e) for i, e in events_of(lines) if e["type"] == "action")
    expect_error(with_line(lines, i, {"type": "bogus"}), i, "unknown event type 'bogus'")
    expect_error(with_line(lines, i, {"type": "action", "action": ev["action"]}), i, "'seat' is missing")
    expect_error(with_line(lines, i, dict(ev, note=1)), i, "unexpected field 'note'")
    expect_error(with_line(lines, i, {"seat": 0}), i, "no 'type'")


def test_bad_header() -> None:
    lines = list(record_of("official", 3))
    h = json.loads(lines[0])
    expect_error(with_line(lines, 1, dict(h, format="other")), 1, "not a pyguandan record")
    expect_error(with_line(lines, 1, dict(h, version=2)), 1, "unsupported record version 2")
    expect_error(with_line(lines, 1, dict(h, options={"no_such_option": 1})), 1, "bad rule options")
    expect_error(with_line(lines, 1, dict(h, seed=None)), 1, "need a seed")
    expect_error(with_line(lines, 1, dict(h, players=["a"])), 1, "players")
    del h["options"]
    expect_error(with_line(lines, 1, h), 1, "'options' is missing")
    expect_error([], 1, "empty record")


def test_wrong_options_show_up_as_a_mismatch() -> None:
    """The header's options are authoritative: anhui options on an official game change the deal_end."""
    lines = list(record_of("official", 3))
    h = json.loads(lines[0])
    h["options"] = dict(h["options"], upgrade=[6, 4, 2])  # anhui upgrades (docs/rules.md section P)
    i, _ = next((i, e) for i, e in events_of(lines) if e["type"] == "deal_end")
    expect_error(with_line(lines, 1, h), i, "deal_end event differs", "upgrade")


def test_action_not_in_hand() -> None:
    lines = list(record_of("official", 3))
    first_deal = json.loads(lines[1])
    i, ev = next((i, e) for i, e in events_of(lines) if e["type"] == "action")
    hand = first_deal["hands"][ev["seat"]]
    missing = next(c for c in ("3S", "3H", "3C", "3D", "4S", "4H", "4C", "4D") if c not in hand)
    bad = dict(ev, action=["single", missing[0], [missing]])
    expect_error(with_line(lines, i, bad), i, "illegal action", f"seat {ev['seat']}", "not_in_hand")


def _strength(rank: int, level: int) -> int:
    """R9 level order: 2..A, then the level rank above A, then small and big joker."""
    if rank == 14:
        return 15
    if rank == 13:
        return 14
    if rank == level:
        return 13
    return rank


def test_action_that_does_not_beat() -> None:
    """Replace a follow by a single that ranks lower than the single on the table (R9, R23)."""
    lines = list(record_of("official", 3))
    header = json.loads(lines[0])
    g = Game(RuleSet.from_dict(header["options"]), seed=header["seed"])
    target = None
    for i, ev in events_of(lines):
        if ev["type"] != "action":
            continue
        d = g.deal
        top = d.top
        if d.phase == "play" and top is not None and top[0] == "single" and top[1] < 13:
            level = d.level
            hand = d.hands[ev["seat"]]
            low = [
                f for f in range(52)
                if hand[f] and f // 4 != level and _strength(f // 4, level) < _strength(top[1], level)
            ]
            if low:
                target = (i, ev, low[0])
                break
        g.apply(action_from_json(ev["action"]), ev["seat"])
    assert target is not None
    i, ev, face = target
    bad = dict(ev, action=["single", card_text(face)[0], [card_text(face)]])
    expect_error(with_line(lines, i, bad), i, "illegal action", "does_not_beat")


def test_action_by_the_wrong_seat_and_malformed_action() -> None:
    lines = list(record_of("official", 3))
    i, ev = next((i, e) for i, e in events_of(lines) if e["type"] == "action")
    expect_error(with_line(lines, i, dict(ev, seat=(ev["seat"] + 1) % 4)), i, "not_your_turn")
    expect_error(with_line(lines, i, dict(ev, action=["single", "T", ["ZZ"]])), i, "malformed action")
    expect_error(with_line(lines, i, dict(ev, action="pass")), i, "malformed action")
    expect_error(with_line(lines, i, dict(ev, action=["single", 5, ["3S"]])), i, "malformed action")
    expect_error(with_line(lines, i, dict(ev, action=["single", "3", [7]])), i, "malformed action")


def test_leader_may_not_pass() -> None:
    """R27: the first action of a deal is a lead; a pass there is illegal."""
    lines = list(record_of("official", 3))
    i, ev = next((i, e) for i, e in events_of(lines) if e["type"] == "action")
    expect_error(with_line(lines, i, dict(ev, action=["pass", None, []])), i, "must_lead")


def test_mismatched_deal_end() -> None:
    lines = list(record_of("official", 3))
    i, ev = next((i, e) for i, e in events_of(lines) if e["type"] == "deal_end")
    expect_error(with_line(lines, i, dict(ev, upgrade=ev["upgrade"] + 1)), i, "deal_end event differs", "upgrade")
    order = list(reversed(ev["finish_order"]))
    expect_error(with_line(lines, i, dict(ev, finish_order=order)), i, "finish_order")
    # the same value with another JSON type is a mismatch too (byte-for-byte re-serialisation)
    expect_error(with_line(lines, i, dict(ev, passed=int(ev["passed"]))), i, "passed")


def test_mismatched_deal_hands_in_a_shuffled_record() -> None:
    lines = list(record_of("official", 3))
    ev = json.loads(lines[1])
    hands = [list(h) for h in ev["hands"]]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    expect_error(with_line(lines, 2, dict(ev, hands=hands)), 2, "deal event differs", "hands")
    hands = [list(h) for h in ev["hands"]]
    hands[0][0] = "XX"
    expect_error(with_line(lines, 2, dict(ev, hands=hands)), 2, "bad card 'XX'")
    hands = [list(h) for h in ev["hands"]]
    c = hands[0][0]
    hands[1][0] = hands[2][0] = c  # three copies of one face (R1: two decks)
    expect_error(with_line(lines, 2, dict(ev, hands=hands)), 2, "more than twice")


def test_missing_and_extra_events() -> None:
    lines = list(record_of("official", 3))
    evs = events_of(lines)
    # drop a deal_end: the next line (the next deal) is not what the game produced
    i, _ = next((i, e) for i, e in evs if e["type"] == "deal_end")
    dropped = lines[: i - 1] + lines[i:]
    expect_error(dropped, i, "expected a deal_end event")
    # duplicate a jiefeng (or any non-action event) line
    j, _ = next((i, e) for i, e in evs if e["type"] in ("jiefeng", "tribute_paid"))
    dup = lines[:j] + [lines[j - 1]] + lines[j:]
    expect_error(dup, j + 1, "event", "the replayed game")
    # drop game_over: the record ends early
    expect_error(lines[:-1], len(lines), "record ends early", "game_over")
    # an action after the game is over
    last_action = next(s for s in reversed(lines) if '"type":"action"' in s)
    expect_error(lines + [last_action], len(lines) + 1, "game_over")


def test_read_lines_tolerates_crlf_and_rejects_bad_utf8(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = record_of("official", 3)
    p = tmp_path / "crlf.jsonl"
    p.write_bytes("".join(s + "\r\n" for s in lines).encode("utf-8"))
    assert replay(p).complete
    raw = bytearray("".join(s + "\n" for s in lines).encode("utf-8"))
    pos = raw.index(b"\n", raw.index(b"\n") + 1) + 5  # inside line 3
    raw[pos] = 0xFF
    p.write_bytes(bytes(raw))
    with pytest.raises(RecordError) as info:
        replay(p)
    assert info.value.line == 3 and "UTF-8" in str(info.value)


def test_deal_event_hands_are_two_full_decks() -> None:
    """A sanity anchor on card notation inside records: deal hands parse back to 27 cards each (R4)."""
    lines = record_of("official", 3)
    ev = json.loads(lines[1])
    assert [len(h) for h in ev["hands"]] == [27, 27, 27, 27]
    faces = [parse_card(c) for h in ev["hands"] for c in h]
    assert sorted(faces) == sorted(list(range(54)) * 2)
    assert ev["level"] == "2" and card_text(wild_face(0)) == "2H"


def test_records_without_a_seed_replay_their_random_draws() -> None:
    """Issue 11: a game whose randomness cannot be replayed (the system CSPRNG) is recorded with
    ``"seed": null`` and explicit hands; its first leader (R51, random seat) and a double-tribute
    tie given at random (AMB-04, Anhui) are read back from the events, so the record replays."""
    from guandan.core.cards import parse_cards as _cards
    from guandan.core.plays import PASS as _PASS
    from guandan.records import record_lines, replay_lines

    # deal 1: seat 1 leads its only card and is out, 接风 lets seat 3 out: East & West win 1-2
    # (R30, R33); deal 2: You and North pay a double tribute of equal aces (R44, R46): a tie
    d1 = [_cards("3S 4S"), _cards("AS"), _cards("5C 6C"), _cards("KD")]
    d2 = [_cards("AS 3C 4D"), _cards("SJ 2S 9C"), _cards("AD 4C 6D"), _cards("7C 8C 9D")]
    anhui = RuleSet.preset("anhui")  # random tie (AMB-04) and random first leader (R51)
    tie_winners, leaders = set(), set()
    for s in range(12):
        game = Game(anhui, rng=random.Random(s), hands=lambda g, d: d1 if d == 1 else d2, first_leader=1)
        while game.deal_number == 1 or game.phase in ("tribute", "return"):
            acts = game.legal_actions()
            game.apply(_PASS if _PASS in acts else acts[0])
        paid = next(ev for ev in game.events if ev["type"] == "tribute_paid")["tributes"]
        tie_winners.add(next(p for p, r, _ in paid if r == 1))  # who pays the 1st out, East
        lines = record_lines(game, "anhui", ["a", "b", "c", "d"], seed=None, hands="explicit")
        assert replay_lines(lines).n_deals == 2  # raises RecordError when a draw differs

        one = Game(anhui, rng=random.Random(100 + s), hands=d1)  # the first leader is drawn
        leaders.add(one.deal.turn)
        for _ in range(3):
            acts = one.legal_actions()
            one.apply(_PASS if _PASS in acts else acts[0])
        lines = record_lines(one, "anhui", ["a", "b", "c", "d"], seed=None, hands="explicit")
        assert replay_lines(lines).n_actions == 3
    assert tie_winners == {0, 2} and len(leaders) >= 2  # the draws went both ways, and replayed
