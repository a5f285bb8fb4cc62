"""``guandan tournament bots``: a bots-only event played at full speed through the arena
(:mod:`guandan.evaluation.arena`), paired and scored by :mod:`guandan.tournament` like any other event (issue 21
item 10; it doubles as a strength ladder).

Each match is one game of :func:`guandan.evaluation.arena.play_game` with entry a in seats 0/2 and entry b in
seats 1/3, cut after ``max_deals`` deals like a time-limited match (R58: the levels reached decide,
passing A wins)."""

from __future__ import annotations

from typing import Any

from guandan.tournament.model import MatchResult


def play_match(bot_a: str, bot_b: str, rules: Any, game_seed: int, max_deals: int) -> MatchResult:
    """Play one match between two bot pairs and return its result (levels as 2..14; ``time_called``
    when ``max_deals`` ran out before a team passed A).

    Raises ValueError for an unknown bot name (from the agents' factory)."""
    from guandan.evaluation.arena import play_game

    game, _ = play_game(bot_a, bot_b, rules, game_seed, (0, 2), max_deals=max_deals)
    last = game.settlements[-1]
    levels = [x + 2 for x in last.levels_after]
    passed = None
    if game.over and game.winner is not None:
        passed = "a" if game.winner == 0 else "b"
        levels[game.winner] = 14
    return MatchResult(level_a=levels[0], level_b=levels[1], passed_a=passed, time_called=passed is None)


def run_bots_event(bots: list[str], fmt: str, rounds: int, seed: int, max_deals: int, preset: str,
                   rules: Any, progress: Any = None) -> Any:
    """Create, pair and play a whole event of bot pairs (one entry per name in ``bots``; a name may
    repeat). Returns the finished :class:`~guandan.tournament.model.Tournament`. ``progress(done)`` is
    called after every match."""
    from guandan.tournament.director import add_entry, enter_result, pair_next_round
    from guandan.tournament.errors import NoMoreRounds
    from guandan.tournament.model import Options, Player, Tournament

    t = Tournament(name=f"bots {seed}", format=fmt, rounds=rounds, preset=preset, match_minutes=None,
                   knockout_minutes=None, options=Options(groups=2, knockout_size=4))
    for i, b in enumerate(bots, 1):
        add_entry(t, f"{b} #{i}", [Player(f"{b}-{i}a"), Player(f"{b}-{i}b")], bot=b, seed=i)
    limit = rounds if fmt == "swiss" else 10_000
    done = 0
    while len(t.played) < limit:
        try:
            rnd = pair_next_round(t)
        except NoMoreRounds:
            break
        for m in rnd.matches:
            if m.b is None:
                continue
            bot_a, bot_b = t.entry(m.a).bot, t.entry(m.b).bot
            r = play_match(bot_a or "random", bot_b or "random", rules,
                           seed * 100_000 + rnd.number * 1_000 + m.table, max_deals)
            if rnd.kind == "knockout" and r.passed_a is None and r.level_a == r.level_b:
                # R58: one extra deal at level 2 decides; the side that takes 头游 wins it
                extra = play_match(bot_a or "random", bot_b or "random", rules,
                                   seed * 100_000 + rnd.number * 1_000 + 500 + m.table, 1)
                r.extra_deal = "a" if extra.level_a > extra.level_b else "b"
            enter_result(t, rnd.number, m.table, r)
            done += 1
            if progress is not None:
                progress(done)
    return t
