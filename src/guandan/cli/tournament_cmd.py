"""``guandan tournament``: run a competition locally with the pairing and scoring engine
(:mod:`guandan.tournament`): create, pair, enter results, standings, simulate, bench.

Every name, reason and path the user typed is printed with its Rich markup escaped (``[bold]`` in a pair's
name is printed as written); errors are one line (see :mod:`.tournament_io`)."""

from __future__ import annotations

import datetime as _dt
import json
import sys
from pathlib import Path
from typing import Any

import typer

from .app import PRESET_HELP, RULE_HELP, app, load_rules
from .tournament_io import esc, fail, fail_tournament, load_state, parse_pair, read_entries, save_state

tournament_app = typer.Typer(
    help="Run a Guandan tournament: Swiss (积分编排), round robin, groups and knock-out, team matches; "
    "R58 scoring with R54 penalties.",
    no_args_is_help=True,
)
app.add_typer(tournament_app, name="tournament")

STATE = typer.Argument(..., metavar="STATE", help="The tournament's state file (JSON, written by create).")
BY_HELP = "Who does this (logged with the action)."
AT_HELP = "When, logged with the action (default: now, UTC, ISO 8601)."


def _now(at: str | None) -> str:
    return at or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _console() -> Any:
    from rich.console import Console

    return Console()


def _render(renderable: Any) -> str:
    """``renderable`` as the text the console would print (so that printing cannot fail later)."""
    console = _console()
    with console.capture() as cap:
        console.print(renderable)
    return cap.get()


#: column headings of the tie-breaks in the standings table, and their meaning (R58)
TIEBREAK_HEADINGS = {"net": "net", "cumulative": "cum", "opponents": "opp", "head_to_head": "h2h", "seed": "seed"}
TIEBREAK_WORDS = {
    "net": "净积小分 (own level - opponent's)",
    "cumulative": "累积小分 (own level - 2, +1 for passing A)",
    "opponents": "opponents' field points",
    "head_to_head": "head to head",
    "seed": "seeding",
}


def _round_table(t: Any, number: int) -> Any:
    """The Rich table of one round (user text escaped)."""
    from rich.table import Table

    rnd = t.played[number - 1]
    names = {e.id: esc(e.name) for e in t.entries}
    tab = Table(title=f"{esc(t.name)}: round {number} ({rnd.kind})")
    for col in ("table", "entry a", "entry b", "stage", "status", "result"):
        tab.add_column(col)
    for m in rnd.matches:
        res = ""
        if m.result is not None:
            r = m.result
            from guandan.tournament.model import level_name

            res = "absent " + r.absent if r.absent else f"{level_name(r.level_a)}:{level_name(r.level_b)}"
            if r.passed_a:
                res += f" (A passed by {r.passed_a})"
            if r.extra_deal:
                res += f" (extra deal at 2: {r.extra_deal})"
            if r.team_deals:
                res = f"{len(r.team_deals)} deals"
            if rnd.kind == "knockout" and m.b is not None and _no_winner(t, m):
                res += " (no winner)"
        tab.add_row(str(m.table), f"{m.a} {names[m.a]}", "bye" if m.b is None else f"{m.b} {names[m.b]}",
                    m.stage or "", m.status, res)
    return tab


def _print_round(t: Any, number: int) -> None:
    _console().print(_round_table(t, number))


def _no_winner(t: Any, m: Any) -> bool:
    from guandan.tournament.scoring import knockout_winner

    return knockout_winner(m, t.options, team=t.team) is None


@tournament_app.command("create")
def create_command(
    state: Path = STATE,
    entries: Path = typer.Option(None, "--entries", "-e", help="Entries: a CSV with the columns name, partner, club, rating (optional seed, pair, bot; teams add name2, partner2, team) or a JSON list of objects with players."),
    name: str = typer.Option("Tournament", "--name", help="The tournament's name."),
    fmt: str = typer.Option("swiss", "--format", "-f", help="swiss, round_robin or groups_knockout."),
    rounds: int = typer.Option(5, "--rounds", min=1, help="Swiss rounds (round robin and groups play every round)."),
    minutes: int = typer.Option(70, "--minutes", min=0, help="Time limit of a match in minutes, 0 for none (R58: 70)."),
    knockout_minutes: int = typer.Option(120, "--knockout-minutes", min=0, help="Time limit of a knock-out match (R58: 120)."),
    preset: str = typer.Option("official", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
    first_round: str = typer.Option("seeded", "--first-round", help="Round 1 by seeding (1 v N/2+1) or random."),
    seed: int = typer.Option(None, "--seed", help="Random seed of a random first round (default: drawn and stored)."),
    team: bool = typer.Option(False, "--team", help="Entries are teams of two pairs (复式 team matches)."),
    groups: int = typer.Option(2, "--groups", min=1, help="Groups of the groups_knockout format."),
    knockout_size: int = typer.Option(4, "--knockout-size", min=2, help="Entries in the knock-out (a power of two)."),
    prizes: int = typer.Option(3, "--prizes", min=0, help="Places in the prize list."),
    tiebreaks: str = typer.Option("net,cumulative,opponents,head_to_head,seed", "--tiebreaks", help="Tie-breaks in order, comma-separated, from net, cumulative, opponents, head_to_head, seed."),
    director: list[str] = typer.Option(None, "--director", help="Organiser or co-director allowed to pair and enter results (repeatable; none: anyone)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing state file."),
) -> None:
    """Create a tournament state file, optionally with its entries from a CSV or JSON file.

    Entries can also be added later with add (late entries join Swiss events from the next round).
    """
    from guandan.tournament.director import add_entry, check_config
    from guandan.tournament.errors import TournamentError
    from guandan.tournament.model import Options, Player, Tournament

    if state.exists() and not force:
        fail(f"{state} exists (use --force to overwrite it)")
    load_rules(preset, rule)
    if first_round == "random" and seed is None:
        import secrets

        seed = secrets.randbelow(10**9)
        _console().print(f"Random first round with --seed {seed} (kept in the state file).")
    overrides = dict(r.split("=", 1) for r in rule or [])
    opts = Options(tiebreaks=[x.strip() for x in tiebreaks.split(",") if x.strip()], first_round=first_round,
                   random_seed=seed, groups=groups, knockout_size=knockout_size, prizes=prizes)
    t = Tournament(name=name, format=fmt, rounds=rounds, preset=preset, overrides=overrides,
                   match_minutes=minutes or None, knockout_minutes=knockout_minutes or None, team=team,
                   options=opts, directors=list(director or []))
    try:
        check_config(t)
        for e in read_entries(entries, team) if entries else []:
            add_entry(t, e["name"], [Player(p) for p in e["players"]], by=t.directors[0] if t.directors else "cli",
                      at=_now(None), club=e["club"], rating=e["rating"], seed=e["seed"], bot=e["bot"])
    except TournamentError as e:
        fail_tournament(e)
    save_state(t, state)
    _console().print(f"Created {esc(state)}: {esc(t.name)}, {t.format}, {len(t.entries)} entries.")


@tournament_app.command("add")
def add_command(
    state: Path = STATE,
    player: list[str] = typer.Option(..., "--player", help="A player's name (twice for a pair, four times for a team)."),
    name: str = typer.Option(None, "--name", help="The entry's name (default: the players' names)."),
    club: str = typer.Option(None, "--club", help="Club."),
    rating: float = typer.Option(None, "--rating", help="Rating, used for seeding."),
    seed: int = typer.Option(None, "--seed", help="Seeding number (1 = strongest)."),
    by: str = typer.Option("cli", "--by", help=BY_HELP),
    at: str = typer.Option(None, "--at", help=AT_HELP),
) -> None:
    """Add an entry; after round 1 is paired it is a late entry that joins from the next round."""
    from guandan.tournament.director import add_entry
    from guandan.tournament.errors import TournamentError
    from guandan.tournament.model import Player

    t = load_state(state)
    try:
        e = add_entry(t, name or " / ".join(player), [Player(p) for p in player], by=by, at=_now(at), club=club,
                      rating=rating, seed=seed)
    except TournamentError as err:
        fail_tournament(err)
    save_state(t, state)
    _console().print(f"Entry {e.id}: {esc(e.name)} (from round {e.joined_round}).")


@tournament_app.command("withdraw")
def withdraw_command(
    state: Path = STATE,
    entry: int = typer.Argument(..., metavar="ENTRY", help="The entry id."),
    reason: str = typer.Option(None, "--reason", help="Why (logged)."),
    by: str = typer.Option("cli", "--by", help=BY_HELP),
    at: str = typer.Option(None, "--at", help=AT_HELP),
) -> None:
    """Withdraw an entry: its results stay, it is not paired again."""
    from guandan.tournament.director import withdraw
    from guandan.tournament.errors import TournamentError

    t = load_state(state)
    try:
        withdraw(t, entry, by=by, at=_now(at), reason=reason)
    except TournamentError as err:
        fail_tournament(err)
    save_state(t, state)
    _console().print(f"Entry {entry} withdrawn after round {len(t.played)}.")


@tournament_app.command("pair")
def pair_command(
    state: Path = STATE,
    again: bool = typer.Option(False, "--again", help="Pair the latest round again (only before its first result)."),
    by: str = typer.Option("cli", "--by", help=BY_HELP),
    at: str = typer.Option(None, "--at", help=AT_HELP),
) -> None:
    """Pair the next round (the previous one must be complete) and print its tables."""
    from guandan.tournament.director import pair_next_round, repair_round
    from guandan.tournament.errors import TournamentError

    t = load_state(state)
    try:
        rnd = (repair_round if again else pair_next_round)(t, by=by, at=_now(at))
    except TournamentError as err:
        fail_tournament(err)
    shown = _render(_round_table(t, rnd.number))  # made before saving: nothing can fail after the save
    save_state(t, state)
    sys.stdout.write(shown)


@tournament_app.command("show")
def show_command(
    state: Path = STATE,
    round_no: int = typer.Option(None, "--round", help="Only this round (default: every round)."),
    log: bool = typer.Option(False, "--log", help="Also print the log of every action (who, when, before, after)."),
) -> None:
    """Print the rounds with each table's status and result."""
    t = load_state(state)
    numbers = [round_no] if round_no is not None else range(1, len(t.played) + 1)
    for n in numbers:
        if not 1 <= n <= len(t.played):
            fail(f"round {n} has not been paired (rounds paired: {_paired(t)})")
        _print_round(t, n)
    if log:
        from rich.table import Table

        tab = Table(title="log")
        for col in ("at", "by", "action", "round", "table", "before", "after", "reason"):
            tab.add_column(col)
        for x in t.log:
            tab.add_row(esc(x.at or ""), esc(x.by), x.action, str(x.round or ""), str(x.table or ""),
                        esc(json.dumps(x.before, ensure_ascii=False)) if x.before is not None else "",
                        esc(json.dumps(x.after, ensure_ascii=False)) if x.after is not None else "",
                        esc(x.reason or ""))
        _console().print(tab)


def _paired(t: Any) -> str:
    return f"1..{len(t.played)}" if t.played else "none yet"


def _deal_cell(cell: str, upgrade: Any) -> int:
    """One table's result of a team deal: a signed number or a result code such as a1-2 (R35)."""
    from guandan.tournament.teams import deal_value

    x = cell.strip()
    if x.isascii() and x.lstrip("+-").isdecimal() and len(x) - len(x.lstrip("+-")) <= 1:
        return int(x)
    return deal_value(x, upgrade)


def _parse_deals(deals: str, upgrade: Any) -> list[list[int]]:
    """``--deals``: ``T1,T2;T1,T2;...``, each a result code (a1-2 ... b1-4) or a signed number."""
    from guandan.tournament.teams import deal_values

    out = []
    for d in deals.split(";"):
        if not d.strip():
            continue
        cells = d.split(",")
        try:
            if len(cells) != 2:
                raise ValueError("two tables")
            out.append([_deal_cell(c, upgrade) for c in cells])
        except ValueError:
            fail(f"--deals {d.strip()!r}: write TABLE1,TABLE2 per deal, deals separated by ';', each a result "
                 f"a1-2, a1-3, a1-4, b1-2, b1-3, b1-4 (the team whose pair took 头游) or its value, one of "
                 f"{', '.join(str(v) for v in sorted(set(deal_values(upgrade))))} under this tournament's rules")
    return out


def _build_result(levels: str | None, passed_a: str | None, time_called: bool, timeouts: str | None,
                  late: str | None, absent: str | None, extra_deal: str | None, deals: str | None,
                  penalty: list[str], upgrade: Any = None) -> Any:
    from guandan.tournament.model import MatchResult, Penalty, parse_level
    from guandan.tournament.teams import upgrade_of

    if levels is None and absent is None and deals is None:
        fail("--levels is needed (the levels reached by side a and side b, e.g. --levels 10:8 or A:K); "
             "only an absence (--absent) or a team match (--deals) goes without")
    la, lb = parse_pair(levels or "2:2", "levels", str)
    ta, tb = parse_pair(timeouts, "timeouts")
    ma, mb = parse_pair(late, "late")
    team_deals = None
    if deals:
        team_deals = _parse_deals(deals, upgrade if upgrade is not None else upgrade_of("official"))
    pens = []
    for p in penalty or []:
        parts = p.split(":", 2)
        if len(parts) != 3 or parts[0] not in ("a", "b"):
            fail(f"--penalty {p!r}: write SIDE:LEVELS:REASON, e.g. a:2:small tribute, or a:lose:REASON")
        if parts[1] == "lose":
            pens.append(Penalty(parts[0], 0, parts[2], loses_match=True))
        elif parts[1].isascii() and parts[1].isdecimal():
            pens.append(Penalty(parts[0], int(parts[1]), parts[2]))
        else:
            fail(f"--penalty {p!r}: LEVELS is a whole number (ASCII digits) or lose")
    return MatchResult(level_a=parse_level(la, "level_a"), level_b=parse_level(lb, "level_b"), passed_a=passed_a,
                       time_called=time_called, timeouts_a=ta, timeouts_b=tb, late_a=ma, late_b=mb,
                       penalties=pens, absent=absent, extra_deal=extra_deal, team_deals=team_deals)


@tournament_app.command("result")
def result_command(
    state: Path = STATE,
    round_no: int = typer.Option(..., "--round", help="Round number."),
    table: int = typer.Option(..., "--table", help="Table number."),
    levels: str = typer.Option(None, "--levels", help="Levels reached by side a and side b, e.g. 10:8 or A:K."),
    passed_a: str = typer.Option(None, "--passed-a", help="The side that passed A (a or b): it wins outright."),
    time_called: bool = typer.Option(False, "--time-called", help="The match ended on the time limit."),
    timeouts: str = typer.Option(None, "--timeouts", help="Timeouts of side a and side b, e.g. 3:0 (from the 3rd, +1 level for the opponents, R54)."),
    late: str = typer.Option(None, "--late", help="Minutes late of side a and side b, e.g. 0:7 (+1 level per 5 minutes for the opponents, R54)."),
    absent: str = typer.Option(None, "--absent", help="The absent side: a, b or both."),
    extra_deal: str = typer.Option(None, "--extra-deal", help="Knock-out draw: the side that took 头游 in the extra deal at level 2."),
    deals: str = typer.Option(None, "--deals", help="Team match: each deal's result at table 1 and table 2, deals separated by ';': a1-2, a1-3, a1-4 when team a's pair took 头游 with its partner 2nd, 3rd, 4th, b1-2... when team b's did, or the value for team a under the tournament's rule preset (official: 3,-2;1,-1)."),
    penalty: list[str] = typer.Option(None, "--penalty", help="Manual penalty SIDE:LEVELS:REASON (or SIDE:lose:REASON), repeatable."),
    claim: int = typer.Option(None, "--claim", help="Entered by this entry at the table: both entries must agree, else the table is disputed."),
    correct: bool = typer.Option(False, "--correct", help="Replace a final result (the log keeps before and after)."),
    reason: str = typer.Option(None, "--reason", help="Reason of a correction or decision."),
    by: str = typer.Option("cli", "--by", help=BY_HELP),
    at: str = typer.Option(None, "--at", help=AT_HELP),
) -> None:
    """Enter a table's result: by the organiser, by one of the table's entries (--claim), or a correction."""
    from guandan.tournament.director import claim_result, correct_result, enter_result
    from guandan.tournament.errors import TournamentError

    t = load_state(state)
    try:
        from guandan.tournament.teams import upgrade_of

        r = _build_result(levels, passed_a, time_called, timeouts, late, absent, extra_deal, deals, penalty,
                          upgrade_of(t.preset, t.overrides))
        if claim is not None:
            m = claim_result(t, round_no, table, claim, r, by=by, at=_now(at))
        elif correct:
            m = correct_result(t, round_no, table, r, by=by, at=_now(at), reason=reason)
        else:
            m = enter_result(t, round_no, table, r, by=by, at=_now(at), reason=reason)
    except TournamentError as err:
        fail_tournament(err)
    save_state(t, state)
    _console().print(f"Round {round_no} table {table}: {m.status}.")
    _report_no_winner(t, round_no, m)


def _report_no_winner(t: Any, round_no: int, m: Any) -> None:
    """Say in words that a final knock-out result has no winner (nobody goes through)."""
    from guandan.tournament.scoring import knockout_winner, no_winner_reason

    if t.played[round_no - 1].kind != "knockout" or m.result is None or m.b is None:
        return
    if knockout_winner(m, t.options, team=t.team) is not None:
        return
    if no_winner_reason(m.result) == "both_absent":
        why = "both entries were absent"
    elif m.result.absent in ("a", "b"):
        why = f"side {m.result.absent} was absent and the other side lost the match by penalty"
    else:
        why = "both sides lost the match by penalty"
    _console().print(f"No winner: {why}, so nobody goes through from this table; pairing the next round is "
                     "refused until the result is corrected.")


@tournament_app.command("standings")
def standings_command(
    state: Path = STATE,
    round_no: int = typer.Option(None, "--round", help="Standings after this round (default: all results)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (standings and prize list)."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV."),
) -> None:
    """Print the standings (places 1..N, field points, tie-breaks, penalties) and the prize list."""
    from guandan.tournament.errors import TournamentError
    from guandan.tournament.scoring import prize_list, standings

    t = load_state(state)
    if round_no is not None and not 1 <= round_no <= len(t.played):
        fail(f"round {round_no} has not been paired (rounds paired: {_paired(t)})")
    try:
        table = standings(t, round_no)
    except TournamentError as err:
        fail_tournament(err)
    prizes = prize_list(table, t.options.prizes)
    if as_json:
        typer.echo(json.dumps({"tiebreaks": t.options.tiebreaks, "standings": [s.to_dict() for s in table],
                               "prizes": prizes}, ensure_ascii=False))
        return
    if as_csv:
        import csv
        import sys

        w = csv.writer(sys.stdout)
        w.writerow(["place", "id", "name", "field_points", *t.options.tiebreaks, "played", "wins", "draws",
                    "losses", "byes", "penalty_levels", "withdrawn"])
        for s in table:
            w.writerow([s.place, s.id, s.name, s.field_points, *s.tiebreaks, s.played, s.wins, s.draws, s.losses,
                        s.byes, s.penalty_levels, int(s.withdrawn)])
        return
    from rich.table import Table

    from rich import box

    # short headings and no vertical rules: the table fits 80 columns (a legend below explains them)
    tab = Table(title=f"{esc(t.name)}: standings" + (f" after round {round_no}" if round_no else ""),
                box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    tab.add_column("#", justify="right", no_wrap=True)
    tab.add_column("id", justify="right", no_wrap=True)
    tab.add_column("name", min_width=10, ratio=1)
    for col in ("pts", *(TIEBREAK_HEADINGS[x] for x in t.options.tiebreaks), "W-D-L", "byes"):
        tab.add_column(col, justify="right", no_wrap=True)
    tab.add_column("penalties", ratio=1)
    for s in table:
        pen = "; ".join(f"r{p['round']} {'loses the match' if p.get('loses_match') else '+' + str(p['levels'])} "
                        f"{esc(p['reason'])}" for p in s.penalties)
        tab.add_row(str(s.place), str(s.id), esc(s.name) + (" (withdrawn)" if s.withdrawn else ""), str(s.field_points),
                    *("" if v is None else str(v) for v in s.tiebreaks), f"{s.wins}-{s.draws}-{s.losses}",
                    str(s.byes), pen)
    _console().print(tab)
    legend = ", ".join(f"{TIEBREAK_HEADINGS[x]} = {TIEBREAK_WORDS[x]}" for x in t.options.tiebreaks)
    _console().print(f"pts = field points (win 3, draw 2, loss 1, absent 0); {legend}", style="dim")
    _console().print("Prizes: " + ", ".join(f"{p['place']}. {esc(p['name'])}" for p in prizes))


@tournament_app.command("simulate")
def simulate_command(
    pairs: int = typer.Option(16, "--pairs", min=2, help="Entries (pairs) to create."),
    rounds: int = typer.Option(5, "--rounds", min=1, help="Swiss rounds."),
    fmt: str = typer.Option("swiss", "--format", "-f", help="swiss, round_robin or groups_knockout."),
    seed: int = typer.Option(0, "--seed", help="Random seed of the results (same seed, same output)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: rounds and final standings."),
) -> None:
    """Simulate an event with random match results: every round's pairings and the final standings."""
    from guandan.tournament.errors import TournamentError
    from guandan.tournament.simulate import simulate

    try:
        out = simulate(pairs, rounds, fmt, seed)
    except TournamentError as err:
        fail_tournament(err)
    if as_json:
        typer.echo(json.dumps(out))
        return
    from rich.table import Table

    for r in out["rounds"]:
        line = ", ".join(f"{a}-{b}" for a, b in r["tables"])
        _console().print(f"round {r['round']}: {line}" + (f"; bye {r['byes'][0]}" if r["byes"] else ""))
    tab = Table(title="final standings")
    for col in ("place", "pair", "field pts", "tie-breaks"):
        tab.add_column(col)
    for i, s in enumerate(out["standings"], 1):
        tab.add_row(str(i), str(s["pair"]), str(s["field_points"]), " ".join(str(v) for v in s["tiebreaks"]))
    _console().print(tab)


@tournament_app.command("bench")
def bench_command(
    pairs: int = typer.Option(600, "--pairs", min=2, help="Entries of the Swiss event."),
    rounds: int = typer.Option(4, "--rounds", min=1, help="Rounds played with random results before the timed pairing."),
    seed: int = typer.Option(1, "--seed", help="Random seed of the results."),
    repeat: int = typer.Option(3, "--repeat", min=1, help="Timed repetitions (the best is reported)."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Time the pairing of the next Swiss round and the standings of a large event (issue 21 targets: under 1 s and under 100 ms for 600 pairs)."""
    import copy
    import time

    from guandan.tournament.director import pair_next_round
    from guandan.tournament.scoring import standings
    from guandan.tournament.simulate import build

    t = build(pairs, rounds, "swiss", seed)
    t.rounds = rounds + 1
    pair_s, stand_s = [], []
    for _ in range(repeat):
        trial = copy.deepcopy(t)
        t0 = time.perf_counter()
        pair_next_round(trial)
        pair_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        standings(t)
        stand_s.append(time.perf_counter() - t0)
    out = {"pairs": pairs, "round": rounds + 1, "pair_seconds": round(min(pair_s), 4),
           "standings_seconds": round(min(stand_s), 4)}
    if as_json:
        typer.echo(json.dumps(out))
    else:
        _console().print(f"{pairs} pairs, round {rounds + 1}: pairing {out['pair_seconds'] * 1000:.0f} ms, "
                         f"standings {out['standings_seconds'] * 1000:.0f} ms (best of {repeat})")


@tournament_app.command("bots")
def bots_command(
    bots: str = typer.Option("easy,normal,random,easy,normal,random", "--bots", help="Comma-separated bot names or levels, one entry each (names may repeat)."),
    fmt: str = typer.Option("round_robin", "--format", "-f", help="swiss, round_robin or groups_knockout."),
    rounds: int = typer.Option(3, "--rounds", min=1, help="Swiss rounds."),
    deals: int = typer.Option(12, "--deals", min=1, help="Deals per match before time is called (the levels reached then decide)."),
    seed: int = typer.Option(0, "--seed", help="Seed of every game's cards."),
    preset: str = typer.Option("official", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
    save: Path = typer.Option(None, "--save", help="Also write the finished tournament's state to this file."),
    as_json: bool = typer.Option(False, "--json", help="Print the rounds and standings as JSON (the simulate shape)."),
) -> None:
    """Run a bots-only event at full speed through the arena and print the standings."""
    from guandan.tournament.errors import TournamentError
    from guandan.tournament.scoring import standings
    from guandan.tournament.simulate import summary

    from .tournament_bots import run_bots_event

    rules = load_rules(preset, rule)
    if rules.target_level != "A":
        fail("bots events score levels up to A: use a preset whose target level is A")
    names = [b.strip() for b in bots.split(",") if b.strip()]
    try:
        t = run_bots_event(names, fmt, rounds, seed, deals, preset, rules)
    except TournamentError as err:
        fail_tournament(err)
    except ValueError as err:
        fail(str(err))
    if save is not None:
        save_state(t, save)
    if as_json:
        typer.echo(json.dumps(summary(t)))
        return
    from rich.table import Table

    n_rounds = len(t.played)
    tab = Table(title=f"bots event: {fmt}, {n_rounds} round{'' if n_rounds == 1 else 's'}, "
                      f"{deals} deal{'' if deals == 1 else 's'} per match")
    for col in ("place", "entry", "field pts", "net", "cumulative", "W-D-L"):
        tab.add_column(col)
    for s in standings(t):
        tab.add_row(str(s.place), esc(s.name), str(s.field_points), str(s.net), str(s.cumulative),
                    f"{s.wins}-{s.draws}-{s.losses}")
    _console().print(tab)
