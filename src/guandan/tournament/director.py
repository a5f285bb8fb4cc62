"""The tournament director's actions: the engine rules of who may do what, and when.

Every function takes the :class:`~guandan.tournament.model.Tournament`, changes it in place, appends a
:class:`~guandan.tournament.model.LogEntry` (who, when, before, after) and returns what it made. ``by``
is the acting person (an account name, ``"cli"``...) and ``at`` the time as a string passed in by the caller:
nothing here reads a clock, a file or a socket.

Rules enforced (issue 21 "Who may do what"):

* organiser actions (pair, re-pair, enter, decide, correct, penalise, withdraw, add) need ``by`` in
  ``t.directors`` when that list is not empty (:class:`NotDirector`);
* a round is paired only when the previous one is complete — every table has a final result
  (:class:`RoundIncomplete`, naming the pending and disputed tables);
* a round can be re-paired while none of its tables has a result or a claim, never after
  (:class:`RoundHasResults`);
* at physical tables each pair enters its result (:func:`claim_result`); two equal claims make the result
  final, two different ones leave the table ``disputed`` until the organiser decides (:func:`enter_result`);
* a final result is never entered twice (:class:`ResultAlreadyEntered`): changes go through
  :func:`correct_result`, which keeps the value before and after; every change of a result is logged.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from typing import Any

from . import brackets, swiss
from .errors import (ConfigError, DuplicateEntry, EntryWithdrawn, InvalidResult, NoMoreRounds, NoResultToCorrect,
                     NotAtTable, NotDirector, NotEnoughEntries, NoWinner, ResultAlreadyEntered, RoundHasResults,
                     RoundIncomplete, UnknownRound, UnknownTable)
from .model import (FORMATS, LATE_ACTIONS, VENUES, Entry, LogEntry, Match, MatchResult, Penalty, Player, Round, Tournament,
                    result_to_dict)
from .scoring import TIEBREAKS, decide, knockout_winner, no_winner_reason, other, standings, validate_result
from .teams import target_of, upgrade_of


def check_config(t: Tournament) -> None:
    """Raise :class:`ConfigError` (``params["field"]``) for an unknown rule preset or a bad rule override,
    an unknown format or tie-break, fewer than one
    round, a knock-out size that is not a power of two, fewer than one group, a bad first-round mode, or
    a random first round without a seed."""
    o = t.options
    upgrade_of(t.preset, t.overrides)  # ConfigError for an unknown preset or a bad override
    if t.format not in FORMATS:
        raise ConfigError(f"format {t.format!r} is not one of {', '.join(FORMATS)}", field="format", value=t.format)
    if t.rounds < 1:
        raise ConfigError("a tournament has at least one round", field="rounds", value=t.rounds)
    bad = [x for x in o.tiebreaks if x not in TIEBREAKS]
    if bad or len(set(o.tiebreaks)) != len(o.tiebreaks):
        raise ConfigError(f"tie-breaks must be distinct names from {', '.join(TIEBREAKS)}", field="tiebreaks",
                          value=list(o.tiebreaks))
    if o.first_round not in ("seeded", "random"):
        raise ConfigError("first_round is 'seeded' or 'random'", field="first_round", value=o.first_round)
    if o.first_round == "random" and o.random_seed is None:
        raise ConfigError("a random first round needs a random_seed (the engine has no hidden randomness)",
                          field="random_seed")
    if t.format == "groups_knockout":
        if o.groups < 1:
            raise ConfigError("at least one group", field="groups", value=o.groups)
        if not brackets.is_power_of_two(o.knockout_size):
            raise ConfigError("the knock-out size is a power of two (2, 4, 8, ...)", field="knockout_size",
                              value=o.knockout_size)
    if t.venue not in VENUES:
        raise ConfigError(f"venue {t.venue!r} is not one of {', '.join(VENUES)}", field="venue", value=t.venue)
    if t.late_action not in LATE_ACTIONS:
        raise ConfigError(f"late_action is one of {', '.join(LATE_ACTIONS)}", field="late_action",
                          value=t.late_action)
    if t.late_minutes is not None and t.late_minutes < 1:
        raise ConfigError("late_minutes is at least 1 (or none)", field="late_minutes", value=t.late_minutes)
    if not (1 <= t.clock_lead_s <= 600 and 1 <= t.clock_follow_s <= 600):
        raise ConfigError("move clocks are 1..600 seconds (R53: 60 and 30)", field="clocks")
    if o.late_minutes_per_level < 1 or o.free_timeouts < 0 or o.prizes < 0:
        raise ConfigError("penalty and prize settings must be positive", field="options")


def _director(t: Tournament, by: str) -> None:
    if t.directors and by not in t.directors:
        raise NotDirector(f"{by!r} is not a director of {t.name!r}", who=by)


def _log(t: Tournament, action: str, by: str, at: str | None, **kw: Any) -> None:
    t.log.append(LogEntry(action=action, by=by, at=at, **kw))


# --- entries ----------------------------------------------------------------------------------------------


def add_entry(t: Tournament, name: str, players: list[Player], *, by: str = "organiser", at: str | None = None,
              club: str | None = None, rating: float | None = None, seed: int | None = None,
              bot: str | None = None, entry_id: int | None = None) -> Entry:
    """Enter a pair (two players) or, in a team tournament, a team (four players: pair 1 then pair 2).

    After round 1 has been paired this is a late entry: it joins from the next round with no points
    (Swiss only; a round robin or group stage is fixed once paired). Raises :class:`DuplicateEntry` for a
    taken id or name, :class:`ConfigError` for the wrong number of players, a late entry outside Swiss,
    a name or player name that is not a non-empty string, a ``rating`` that is not a finite number (NaN
    and infinities would break the seeding order and cannot be saved as JSON), a ``seed`` or
    ``entry_id`` that is not an int.
    """
    _director(t, by)
    want = 4 if t.team else 2
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"an entry's name is a non-empty string, not {name!r}", field="name", value=repr(name))
    if len(players) != want:
        raise ConfigError(f"an entry has {want} players", field="players", value=len(players))
    if not all(isinstance(p, Player) and isinstance(p.name, str) and p.name.strip() for p in players):
        raise ConfigError(f"entry {name!r}: every player has a non-empty name", field="players", name=name)
    if rating is not None and (isinstance(rating, bool) or not isinstance(rating, (int, float))
                               or not math.isfinite(rating)):
        raise ConfigError(f"entry {name!r}: the rating {rating!r} is not a finite number", field="rating",
                          name=name, value=repr(rating))
    for what, v in (("seed", seed), ("entry_id", entry_id)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise ConfigError(f"entry {name!r}: the {what} {v!r} is not an integer", field=what, name=name,
                              value=repr(v))
    if t.played and t.format != "swiss":
        raise ConfigError("late entries are only possible in Swiss", field="format", value=t.format)
    if entry_id is None:
        entry_id = max((e.id for e in t.entries), default=0) + 1
    if any(e.id == entry_id for e in t.entries):
        raise DuplicateEntry(f"entry id {entry_id} is taken", entry=entry_id)
    if any(e.name == name for e in t.entries):
        raise DuplicateEntry(f"an entry is already called {name!r}", name=name)
    e = Entry(id=entry_id, name=name, players=list(players), kind="team" if t.team else "pair", club=club,
              rating=rating, seed=seed, bot=bot, joined_round=len(t.played) + 1)
    t.entries.append(e)
    _log(t, "add_entry", by, at, after={"id": e.id, "name": name, "joined_round": e.joined_round})
    return e


def withdraw(t: Tournament, entry_id: int, *, by: str = "organiser", at: str | None = None,
             reason: str | None = None) -> Entry:
    """Withdraw an entry: it keeps its results and is never paired again. A table of the current round
    that has no result stays to be settled (usually as ``absent``). Raises :class:`UnknownEntry`,
    :class:`EntryWithdrawn` when already withdrawn."""
    _director(t, by)
    e = t.entry(entry_id)
    if not e.active:
        raise EntryWithdrawn(f"entry {entry_id} has already withdrawn", entry=entry_id)
    e.withdrawn_after = len(t.played)
    _log(t, "withdraw", by, at, after={"id": entry_id, "withdrawn_after": e.withdrawn_after}, reason=reason)
    return e


# --- pairing ----------------------------------------------------------------------------------------------


def _active(t: Tournament, round_no: int) -> list[Entry]:
    return [e for e in t.entries if e.active and e.joined_round <= round_no]


def _seed_order(entries: list[Entry]) -> list[int]:
    return swiss.seeding_order((e.id, e.seed, e.rating) for e in entries)


def pair_next_round(t: Tournament, *, by: str = "organiser", at: str | None = None) -> Round:
    """Pair the next round in the tournament's format and append it.

    Swiss: :mod:`guandan.tournament.swiss`. Round robin: the next Berger round of the whole field.
    Groups and knock-out: the group rounds (all groups at once, tables numbered across groups), then the
    first knock-out round of the top ``knockout_size`` (group places first, then field points and
    tie-breaks across groups), then each next knock-out round from the winners in bracket order.
    Raises :class:`RoundIncomplete` (``params["tables"]``: the unfinished table numbers),
    :class:`NoMoreRounds`, :class:`NotEnoughEntries`, :class:`NotDirector`.
    """
    _director(t, by)
    check_config(t)
    if t.played and not t.played[-1].complete:
        last = t.played[-1]
        raise RoundIncomplete(f"round {last.number} is not complete",
                              round=last.number, tables=[m.table for m in last.matches
                                                         if m.status not in ("final", "bye")])
    number = len(t.played) + 1
    if t.format == "swiss":
        rnd = _pair_swiss(t, number)
    elif t.format == "round_robin":
        rnd = _pair_round_robin(t, number)
    else:
        rnd = _pair_groups_knockout(t, number)
    rnd.paired_at = at
    t.played.append(rnd)
    _log(t, "pair", by, at, round=number, after=_pairing_dict(rnd))
    return rnd


def repair_round(t: Tournament, *, by: str = "organiser", at: str | None = None) -> Round:
    """Pair the latest round again (after a withdrawal or a late entry, say). Allowed only while none of
    its tables has a result or a claim (:class:`RoundHasResults`); :class:`UnknownRound` before round 1."""
    _director(t, by)
    if not t.played:
        raise UnknownRound("no round has been paired", round=1)
    last = t.played[-1]
    if last.has_results:
        raise RoundHasResults(f"round {last.number} already has results", round=last.number)
    t.played.pop()
    try:
        rnd = pair_next_round(t, by=by, at=at)
    except Exception:
        t.played.append(last)
        raise
    t.log.pop()
    _log(t, "repair", by, at, round=rnd.number, before=_pairing_dict(last), after=_pairing_dict(rnd))
    return rnd


def _pairing_dict(r: Round) -> dict[str, Any]:
    return {"tables": [[m.a, m.b] for m in r.matches if m.b is not None],
            "byes": [m.a for m in r.matches if m.b is None]}


def _make_round(number: int, kind: str, pairs: list[tuple[int, int | None]],
                stages: list[str | None] | None = None) -> Round:
    """Tables 1.. with the byes last. A knock-out round's ``pairs`` come in bracket order: each match
    keeps that place as its ``slot``, since moving the byes last changes the table order."""
    stages = stages or [None] * len(pairs)
    slots: list[int | None] = list(range(len(pairs))) if kind == "knockout" else [None] * len(pairs)
    rows = list(zip(pairs, stages, slots))
    games = [x for x in rows if x[0][1] is not None]
    byes = [x for x in rows if x[0][1] is None]
    matches = [Match(table=i, a=a, b=b, stage=s, slot=k) for i, ((a, b), s, k) in enumerate(games + byes, 1)]
    return Round(number=number, kind=kind, matches=matches)


def _pair_swiss(t: Tournament, number: int) -> Round:
    if number > t.rounds:
        raise NoMoreRounds(f"all {t.rounds} rounds have been paired", rounds=t.rounds)
    active = _active(t, number)
    if len(active) < 2:
        raise NotEnoughEntries("at least two active entries are needed", entries=len(active))
    if number == 1:
        pairs, bye = swiss.pair_first_round(_seed_order(active), t.options.first_round, t.options.random_seed)
    else:
        ids = {e.id for e in active}
        table = standings(t)
        ranked = [s.id for s in table if s.id in ids]
        fp = {s.id: s.field_points for s in table}
        played, had_bye = history(t)
        pairs, bye = swiss.pair_round(ranked, fp, played, had_bye)
    out: list[tuple[int, int | None]] = list(pairs)
    if bye is not None:
        out.append((bye, None))
    return _make_round(number, "swiss", out)


def history(t: Tournament) -> tuple[set[frozenset[int]], Counter[int]]:
    """``(pairs that have met, byes per entry)`` over every paired round (an entry without a bye is not
    in the counter; ``e in byes`` says whether ``e`` had one)."""
    played: set[frozenset[int]] = set()
    byes: Counter[int] = Counter()
    for r in t.played:
        for m in r.matches:
            if m.b is None:
                byes[m.a] += 1
            else:
                played.add(frozenset((m.a, m.b)))
    return played, byes


def _pair_round_robin(t: Tournament, number: int) -> Round:
    entries = [e for e in t.entries if e.joined_round == 1]
    schedule = brackets.berger_rounds(_seed_order(entries))
    if len(entries) < 2:
        raise NotEnoughEntries("at least two entries are needed", entries=len(entries))
    if number > len(schedule):
        raise NoMoreRounds(f"the round robin has {len(schedule)} rounds", rounds=len(schedule))
    return _make_round(number, "round_robin", _drop_withdrawn(t, schedule[number - 1]))


def _drop_withdrawn(t: Tournament, pairs: list[tuple[int, int | None]]) -> list[tuple[int, int | None]]:
    """A fixed schedule with withdrawn entries: their opponents get a bye."""
    out: list[tuple[int, int | None]] = []
    for a, b in pairs:
        live = [x for x in (a, b) if x is not None and t.entry(x).active]
        if len(live) == 2:
            out.append((a, b))
        elif live:
            out.append((live[0], None))
    return out


def groups_of(t: Tournament) -> list[list[int]]:
    """The groups of a groups_knockout tournament (assigned at round 1 by snake seeding)."""
    n = max((e.group or 0 for e in t.entries), default=0)
    return [[e.id for e in t.entries if e.group == g] for g in range(1, n + 1)]


def _pair_groups_knockout(t: Tournament, number: int) -> Round:
    o = t.options
    if number == 1:
        entries = [e for e in t.entries if e.active]
        if len(entries) < max(2 * o.groups, o.knockout_size // 2 + 1):
            raise NotEnoughEntries("too few entries for the groups and the knock-out", entries=len(entries))
        for g, ids in enumerate(brackets.snake_groups(_seed_order(entries), o.groups), 1):
            for i in ids:
                t.entry(i).group = g
    groups = groups_of(t)
    schedules = [brackets.berger_rounds(_seed_order([t.entry(i) for i in g])) for g in groups]
    group_rounds = max(len(s) for s in schedules)
    if number <= group_rounds:
        pairs: list[tuple[int, int | None]] = []
        stages: list[str | None] = []
        for g, s in enumerate(schedules, 1):
            if number <= len(s):
                got = _drop_withdrawn(t, s[number - 1])
                pairs += got
                stages += [f"g{g}"] * len(got)
        return _make_round(number, "group", pairs, stages)
    ko = [r for r in t.played if r.kind == "knockout"]
    if not ko:
        qualifiers = knockout_qualifiers(t)
        first = brackets.first_knockout_round(qualifiers, o.knockout_size)
        stage = brackets.stage_name(len(first))
        return _make_round(number, "knockout", first, [stage] * len(first))
    last = ko[-1]
    if len(last.matches) == 1:
        winner_of(t, last.matches[0])  # NoWinner: the final has no champion
        raise NoMoreRounds("the knock-out final has been played", rounds=number - 1)
    winners = [winner_of(t, m) for m in sorted(last.matches, key=_bracket_key)]
    nxt: list[tuple[int, int | None]] = [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]
    stage = brackets.stage_name(len(nxt))
    rnd = _make_round(number, "knockout", nxt, [stage] * len(nxt))
    return rnd


def _bracket_key(m: Match) -> int:
    """The match's place in the bracket: its ``slot`` (the table in states saved before slots existed)."""
    return m.table if m.slot is None else m.slot


def knockout_qualifiers(t: Tournament) -> list[int]:
    """The top ``knockout_size`` entries after the groups, in seeding order: by place in their group,
    then field points, net, cumulative, entry id across groups. Withdrawn entries do not qualify."""
    ranked: list[tuple[int, int, int, int, int]] = []
    for g in range(1, len(groups_of(t)) + 1):
        for s in standings(t, group=g):
            if not s.withdrawn:
                ranked.append((s.place, -s.field_points, -s.net, -s.cumulative, s.id))
    ranked.sort()
    size = t.options.knockout_size
    return [r[-1] for r in ranked[:size]]


def winner_of(t: Tournament, m: Match) -> int:
    """The entry that won a knock-out match with a final result (or a bye); a draw goes to the extra
    deal's winner (R58).

    Raises :class:`NoWinner` (params ``round``, ``table``, ``entries``, ``reason``) when nobody won it:
    both entries absent (R58) or both lost by penalty (R54)."""
    side = knockout_winner(m, t.options, team=t.team)
    if side is not None:
        return m.a if side == "a" else m.b  # type: ignore[return-value]
    assert m.result is not None and m.b is not None
    number = next((r.number for r in t.played if any(x is m for x in r.matches)), None)
    reason = no_winner_reason(m.result)
    if reason == "both_absent":
        why = "both entries were absent"
    elif m.result.absent in ("a", "b"):
        why = f"side {m.result.absent} was absent and the other side lost the match by penalty (R54)"
    else:
        why = "both sides lost the match by penalty (R54)"
    what = "the final has no champion" if m.stage == "final" else "nobody goes through to the next round"
    raise NoWinner(f"round {number} table {m.table} ({m.a} v {m.b}) has no winner: {why}, so {what}; "
                   "correct the result to name the side that goes through", round=number, table=m.table,
                   entries=[m.a, m.b], reason=reason)


# --- results ----------------------------------------------------------------------------------------------


def find_match(t: Tournament, round_no: int, table: int) -> tuple[Round, Match]:
    """The round and the match at ``table``; :class:`UnknownRound`, :class:`UnknownTable`."""
    if not 1 <= round_no <= len(t.played):
        raise UnknownRound(f"round {round_no} has not been paired", round=round_no)
    rnd = t.played[round_no - 1]
    for m in rnd.matches:
        if m.table == table:
            return rnd, m
    raise UnknownTable(f"round {round_no} has no table {table}", round=round_no, table=table)


def _validate(t: Tournament, rnd: Round, m: Match, result: MatchResult) -> None:
    if m.b is None:
        raise InvalidResult(f"table {m.table} is a bye", reason="bye_table", round=rnd.number, table=m.table)
    validate_result(result, knockout=rnd.kind == "knockout", team=t.team, options=t.options,
                    upgrade=upgrade_of(t.preset, t.overrides) if t.team else None,
                    target=target_of(t.preset, t.overrides))
    timed = (t.knockout_minutes if rnd.kind == "knockout" else t.match_minutes) is not None
    if (not timed and not t.team and result.absent is None and result.passed_a is None and not result.time_called
            and not any(p.loses_match for p in result.penalties)):
        # R5: an untimed match ends when a side passes A; levels decide only when time is called (R58)
        raise InvalidResult(f"table {m.table}: nobody passed A in an untimed match (R5): the match is not over",
                            reason="unfinished", round=rnd.number, table=m.table)


def claim_result(t: Tournament, round_no: int, table: int, entry_id: int, result: MatchResult, *,
                 by: str, at: str | None = None) -> Match:
    """A pair at a physical table enters its table's result (``result`` is written from the table's
    sides a and b, whichever pair enters it). When both pairs' claims are equal the result becomes
    final; when they differ the table is ``disputed`` until the organiser decides with
    :func:`enter_result`. A pair may change its claim until the result is final.

    Raises :class:`NotAtTable`, :class:`ResultAlreadyEntered` (final already), :class:`ImpossibleLevel`,
    :class:`InvalidResult`, :class:`UnknownRound`, :class:`UnknownTable`.
    """
    rnd, m = find_match(t, round_no, table)
    if entry_id not in (m.a, m.b):
        raise NotAtTable(f"entry {entry_id} does not play at table {table}", entry=entry_id, round=round_no,
                         table=table)
    if m.result is not None:
        raise ResultAlreadyEntered(f"table {table} of round {round_no} has its result", round=round_no, table=table)
    _validate(t, rnd, m, result)
    side = "a" if entry_id == m.a else "b"
    before = result_to_dict(m.claims.get(side))
    m.claims[side] = copy.deepcopy(result)
    _log(t, "claim", by, at, round=round_no, table=table, before=before, after=result_to_dict(result),
         reason=f"entry {entry_id}")
    if len(m.claims) == 2 and m.claims["a"] == m.claims["b"]:
        m.result = copy.deepcopy(result)
        _log(t, "agreed", by, at, round=round_no, table=table, after=result_to_dict(result))
    return m


def enter_result(t: Tournament, round_no: int, table: int, result: MatchResult, *, by: str = "organiser",
                 at: str | None = None, reason: str | None = None) -> Match:
    """The organiser enters a table's result, or decides a disputed one (logged as ``decide`` with both
    claims as ``before``). Raises :class:`ResultAlreadyEntered` when the table has a final result (use
    :func:`correct_result`), :class:`NotDirector`, and the validation errors of :func:`claim_result`."""
    _director(t, by)
    rnd, m = find_match(t, round_no, table)
    if m.result is not None:
        raise ResultAlreadyEntered(f"table {table} of round {round_no} has its result", round=round_no, table=table)
    _validate(t, rnd, m, result)
    disputed = m.status == "disputed"
    before = {k: result_to_dict(v) for k, v in m.claims.items()} if m.claims else None
    m.result = copy.deepcopy(result)
    _log(t, "decide" if disputed else "enter", by, at, round=round_no, table=table, before=before,
         after=result_to_dict(result), reason=reason)
    return m


def correct_result(t: Tournament, round_no: int, table: int, result: MatchResult, *, by: str = "organiser",
                   at: str | None = None, reason: str | None = None) -> Match:
    """Replace a final result; the log keeps who, when, the result before and after, and the reason.

    Raises :class:`NoResultToCorrect` for a table without a final result, :class:`InvalidResult`
    (``reason="knockout_advanced"``) when the correction would change the winner of a knock-out match
    whose next round is already paired, and the validation errors of :func:`claim_result`."""
    _director(t, by)
    rnd, m = find_match(t, round_no, table)
    if m.result is None:
        raise NoResultToCorrect(f"table {table} of round {round_no} has no result", round=round_no, table=table)
    _validate(t, rnd, m, result)
    _keep_advanced_winner(t, rnd, m, result)
    before = result_to_dict(m.result)
    m.result = copy.deepcopy(result)
    _log(t, "correct", by, at, round=round_no, table=table, before=before, after=result_to_dict(result),
         reason=reason)
    return m


def _keep_advanced_winner(t: Tournament, rnd: Round, m: Match, new: MatchResult) -> None:
    """Refuse a new result of a knock-out match that changes who goes through once the next round has
    been paired (:class:`InvalidResult`, ``reason="knockout_advanced"``)."""
    if rnd.kind != "knockout" or rnd.number >= len(t.played):
        return
    trial = Match(m.table, m.a, m.b, result=new)
    if knockout_winner(trial, t.options, team=t.team) != knockout_winner(m, t.options, team=t.team):
        raise InvalidResult("the winner has already been paired in the next round", reason="knockout_advanced",
                            round=rnd.number, table=m.table)


def add_penalty(t: Tournament, round_no: int, table: int, side: str, levels: int, reason: str, *,
                loses_match: bool = False, extra_deal: str | None = None, by: str = "organiser",
                at: str | None = None) -> Match:
    """The organiser's manual penalty (R54) against ``side`` (``"a"``/``"b"``) of a table with a final
    result: the opponents gain ``levels`` (capped at A, R36), or the side loses the match outright.
    Logged as ``penalty`` with the result before and after.

    The outcome is worked out again from the levels after every penalty, so in a knock-out the penalty
    can change who goes through (R58): a match that is no longer drawn drops its extra deal (the levels
    decide now; the log keeps it in ``before``), and a match that becomes drawn needs ``extra_deal``,
    the side that took 头游 in the extra deal at level 2.

    Raises :class:`NoResultToCorrect`, :class:`NotDirector`, :class:`InvalidResult` (reasons
    ``penalty_levels``, ``bad_side``, ``extra_deal_needed``, ``extra_deal_not_needed``, and
    ``knockout_advanced`` when the winner would change after the next round was paired); nothing
    changes when it raises."""
    _director(t, by)
    rnd, m = find_match(t, round_no, table)
    if m.result is None:
        raise NoResultToCorrect(f"table {table} of round {round_no} has no result", round=round_no, table=table)
    new = copy.deepcopy(m.result)
    new.penalties.append(Penalty(side=side, levels=levels, reason=reason, loses_match=loses_match))
    if extra_deal is not None:
        new.extra_deal = extra_deal
    elif rnd.kind == "knockout" and new.absent is None and decide(new, t.options, team=t.team) is not None:
        new.extra_deal = None
    _validate(t, rnd, m, new)
    _keep_advanced_winner(t, rnd, m, new)
    before = result_to_dict(m.result)
    m.result = new
    _log(t, "penalty", by, at, round=round_no, table=table, before=before, after=result_to_dict(new), reason=reason)
    return m


def side_of(m: Match, entry_id: int) -> str:
    """``"a"`` or ``"b"``: the side of ``entry_id`` at the match."""
    return "a" if m.a == entry_id else "b"


__all__ = ["add_entry", "withdraw", "pair_next_round", "repair_round", "claim_result", "enter_result",
           "correct_result", "add_penalty", "find_match", "history", "knockout_qualifiers", "winner_of",
           "groups_of", "check_config", "side_of", "other"]
