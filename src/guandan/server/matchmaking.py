"""Matchmaking decisions (issue 25 item 1): who plays with whom, as plain functions with no I/O.

A *ticket* is one entry of the queue: one person alone, or two partners (friends who joined
together and always sit as one team, seats 0+2 or 1+3: docs/rules.md R1). Storage (memory or
Redis) and the HTTP API live in :mod:`guandan.server.matchmaking_store` and
:mod:`guandan.server.api_matchmaking`; this module only decides.

Ratings are the OpenSkill display rating ``mu - 3*sigma`` (:func:`guandan.server.ratings.display_rating`;
0 for a new player); a pair's rating is the mean of its two members'.

**Allowed range** (:func:`allowed_range`). A ticket that has waited ``t`` seconds accepts
opponents and partners whose ticket rating is within ``w(t)`` of its own::

    w(t) = 3 + 3 * floor(t / 10)      rating points, for t < 120 s   (3 at 0 s, 6 at 10 s, ... 36 at 110 s)
    w(t) = unlimited                  from t = 120 s

A table of tickets is allowed when the spread of its ticket ratings (highest minus lowest) is
at most the *smallest* range among them: every ticket accepts every other one.

**Forming tables** (:func:`decide`). Two sets of tables are made, and the one that seats more
people is taken; when both seat as many, (b), the oldest-first rule.

(a) *Runs in rating order, then the rest* (:func:`_runs`). With the tickets sorted by rating,
    tables are chosen among runs of neighbours (consecutive tickets making exactly four seats and
    passing the spread rule), none sharing a ticket, so as to seat as many people as possible;
    among the choices that seat as many, the one whose seated people have waited longest in all
    (each ticket's wait counted once per person in it); then the one with the smallest spreads in
    all. Found exactly by dynamic programming over the rating order (each run holds 2 to 4
    tickets). The tickets left then go through (b). This exists for bursts (1,000 players joining
    within a second): taking tickets one by one leaves, at each round, a few tickets whose
    neighbours went to other tables and who then wait for their range to widen (measured in
    docs/matchmaking.md). For people alone who joined together it seats as many as any choice of
    tables could.
(b) *Oldest first.* Tickets are taken oldest first (``joined_at``; a ticket put back after a failed
    ready check keeps its old time, so it stands at the front). For each ticket not yet placed, the
    candidates are the unplaced tickets it accepts, nearest rating first (then oldest; when more
    than 48 tickets stand at the same distance, the oldest of the 48 nearest in the rating order);
    the first 12 are tried, and the first set of them that makes exactly four seats with the ticket
    and passes the spread rule is a match.

So the oldest ticket is passed over only for a set of tables that seats more people in all.

**Settling** (:func:`formed_now`, applied by the queue's round to what :func:`decide` found). While
players are still arriving (the newest ticket joined less than 0.1 s ago), tables wait for the queue
to be still, unless one of their tickets has waited 2 s (a newest join more than 2 s after the round's
time, a clock stepped back, counts as still). In a burst this lets one decision over the
whole burst seat everyone that any choice of tables could, instead of leaving the last few arrivals
without neighbours; in steady traffic of 30 joins a second or more, players wait up to 2 s longer
for closer tables (docs/matchmaking.md has the figures).
Seats: two pairs face each other (0+2 and 1+3); a pair and two people
alone: the pair at 0+2, the two at 1 and 3; four people alone: the highest and lowest rated
at 0+2, the middle two at 1+3 (the teams' sums are as close as four ratings allow in this way).

**Bot fill** (:data:`BOT_FILL_AFTER_S`). A ticket that named a bot level (when joining, or later)
and has waited at least 60 s without a match is seated with bots of that level in the empty
seats, together with other such tickets it accepts (up to four people): a pair at 0+2 (a second
pair at 1+3), people alone in the free seats in join order (0, 1, 2, 3), bots in the rest. Such a
table is *unrated* (issue 25: "rated games count toward the rating only with no bot seats"): its room
is made with ``rooms.unrated`` and its games move no rating and no Anhui points
(:func:`guandan.server.games.record_finished_game`). A table of four people is rated.

**Ready check** (:func:`ready_outcome`). A match is offered to its people, who have
:data:`READY_S` seconds to accept. All accept: they are seated. One declines, or the time runs
out: the decliners (and those who did not answer) leave the queue, with their partner; the other
tickets go back with their old ``joined_at``.

**Decline cool-down** (:func:`cooldown_left`). A person who declined :data:`DECLINE_LIMIT` (3) ready
checks within :data:`DECLINE_WINDOW_S` (10 minutes) may not join again until
:data:`DECLINE_COOLDOWN_S` (2 minutes) after the last of them. Letting the time of a ready check
run out counts as declining it (the three others waited for nothing all the same); leaving the
queue during a ready check is declining it. The partner of a decliner is not held back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

#: Half-width of the allowed range at 0 s (rating points).
RANGE_BASE = 3.0
#: The range grows by this much ...
RANGE_STEP = 3.0
#: ... every this many seconds of waiting.
RANGE_STEP_S = 10.0
#: From this wait on, any rating is accepted.
RANGE_OPEN_S = 120.0
#: Seconds of waiting after which a ticket with a bot level is seated with bots.
BOT_FILL_AFTER_S = 60.0
#: Seconds the people of a match have to accept it.
READY_S = 15.0
#: Candidates tried per ticket when forming a table (bounds the work per ticket).
MAX_CANDIDATES = 12
#: Declines (or ready checks let run out) within :data:`DECLINE_WINDOW_S` that start a cool-down.
DECLINE_LIMIT = 3
#: Seconds within which :data:`DECLINE_LIMIT` declines start a cool-down (10 minutes).
DECLINE_WINDOW_S = 600.0
#: Seconds after the last of those declines before the person may join again (2 minutes).
DECLINE_COOLDOWN_S = 120.0
#: Tickets at the same distance looked at for the "then oldest" order (bounds the work when many
#: ratings are equal: 1,000 new players all rate 0).
TIES_SEEN = 48
#: Settling (:func:`formed_now`): the queue is *still* when its newest ticket joined at least this
#: many seconds ago; while it is not, tables wait ...
SETTLE_QUIET_S = 0.1
#: ... unless one of their tickets has waited at least this many seconds.
SETTLE_MAX_S = 2.0


@dataclass(frozen=True)
class Ticket:
    """One queue entry.

    Attributes:
        id: the ticket's id (unique in the queue).
        members: user ids, one (alone) or two (partners, seated as one team).
        ratings: display ratings (``mu - 3*sigma``) of the members, same order.
        joined_at: when the ticket joined (seconds, any epoch shared by the queue).
        bot_level: bot difficulty to fill empty seats with after :data:`BOT_FILL_AFTER_S`, or ``None``.
    """

    id: str
    members: tuple[int, ...]
    ratings: tuple[float, ...]
    joined_at: float
    bot_level: str | None = None

    def __post_init__(self) -> None:
        if len(self.members) not in (1, 2) or len(self.ratings) != len(self.members):
            raise ValueError("a ticket holds one person or two partners, with one rating each")
        if len(set(self.members)) != len(self.members):
            raise ValueError("a ticket's two partners must be two different people")

    @property
    def rating(self) -> float:
        """The ticket's rating: its member's, or the mean of the two partners'."""
        return sum(self.ratings) / len(self.ratings)

    @property
    def size(self) -> int:
        """Seats it needs (1 or 2)."""
        return len(self.members)


@dataclass(frozen=True)
class Match:
    """A table decided by :func:`decide`.

    Attributes:
        tickets: ids of the tickets seated.
        seats: four entries in seat order, a user id or ``None`` for a bot seat.
        bot_level: the level of the bot seats, or ``None`` when four people sit.
    """

    tickets: tuple[str, ...]
    seats: tuple[int | None, int | None, int | None, int | None]
    bot_level: str | None = None

    @property
    def people(self) -> tuple[int, ...]:
        """The user ids seated, in seat order."""
        return tuple(u for u in self.seats if u is not None)


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` found: the matches, and every ticket's allowed range at ``now``
    (``None``: unlimited), tickets matched included."""

    matches: list[Match] = field(default_factory=list)
    ranges: dict[str, float | None] = field(default_factory=dict)


def allowed_range(waited_s: float) -> float | None:
    """Half-width of the rating range a ticket accepts after waiting ``waited_s`` seconds.

    Returns:
        Rating points (3, 6, 9, ... every 10 s), or ``None`` (any rating) from 120 s.
    Raises:
        ValueError: a negative or NaN wait.
    """
    if not waited_s >= 0:
        raise ValueError("the wait must be a number of seconds >= 0")
    if waited_s >= RANGE_OPEN_S:
        return None
    return RANGE_BASE + RANGE_STEP * math.floor(waited_s / RANGE_STEP_S)


def _accepts(width: float | None, spread: float) -> bool:
    return width is None or spread <= width + 1e-9


def _group_ok(group: Sequence[Ticket], widths: dict[str, float | None]) -> bool:
    ratings = [t.rating for t in group]
    spread = max(ratings) - min(ratings)
    return all(_accepts(widths[t.id], spread) for t in group)


def seat_people(group: Sequence[Ticket]) -> tuple[int | None, int | None, int | None, int | None]:
    """Seats of a group of tickets filling at most four seats (see the module docstring).

    Args:
        group: tickets in join order, at most four seats in all.
    Returns:
        Four entries in seat order: a user id, or ``None`` for a seat left to a bot.
    Raises:
        ValueError: more than four seats.
    """
    if sum(t.size for t in group) > 4:
        raise ValueError("a table has four seats")
    seats: list[int | None] = [None] * 4
    pairs = [t for t in group if t.size == 2]
    solos = [t for t in group if t.size == 1]
    if sum(t.size for t in group) == 4 and len(solos) == 4:
        ranked = sorted(solos, key=lambda t: (-t.rating, t.joined_at, t.id))
        order = [ranked[0], ranked[1], ranked[3], ranked[2]]  # seats 0, 1, 2, 3: high+low vs the middle two
        return (order[0].members[0], order[1].members[0], order[2].members[0], order[3].members[0])
    for pair in pairs:
        a, b = (0, 2) if seats[0] is None else (1, 3)
        seats[a], seats[b] = pair.members
    free = [s for s in (0, 1, 2, 3) if seats[s] is None]
    for solo, s in zip(solos, free, strict=False):
        seats[s] = solo.members[0]
    return (seats[0], seats[1], seats[2], seats[3])


def _four(anchor: Ticket, candidates: list[Ticket], widths: dict[str, float | None]) -> list[Ticket] | None:
    """The first group (anchor + candidates, in candidate order) of exactly four seats that passes
    the spread rule, or ``None``."""
    best: list[Ticket] | None = None

    def grow(group: list[Ticket], seats: int, start: int) -> bool:
        nonlocal best
        if seats == 4:
            if _group_ok(group, widths):
                best = list(group)
                return True
            return False
        for i in range(start, len(candidates)):
            c = candidates[i]
            if seats + c.size > 4:
                continue
            group.append(c)
            if _group_ok(group, widths) and grow(group, seats + c.size, i + 1):
                return True
            group.pop()
        return False

    grow([anchor], anchor.size, 0)
    return best


class _Skipper:
    """Positions ``0..n-1`` of the rating order not yet placed: the nearest one at or left/right of
    a position in near-constant time (path-compressed "next free" links), so that finding a
    ticket's nearest candidates does not walk over the tickets already placed."""

    def __init__(self, n: int) -> None:
        self.right = list(range(n + 1))  # right[i]: smallest free j >= i (n: none)
        self.left = list(range(n + 1))  # left[i + 1] - 1: largest free j <= i (-1: none)

    @staticmethod
    def _find(links: list[int], i: int) -> int:
        root = i
        while links[root] != root:
            root = links[root]
        while links[i] != root:
            links[i], i = root, links[i]
        return root

    def next_right(self, i: int) -> int:
        return self._find(self.right, i)

    def next_left(self, i: int) -> int:
        return self._find(self.left, i + 1) - 1

    def remove(self, i: int) -> None:
        self.right[i] = i + 1
        self.left[i + 1] = i


def _nearest(anchor: Ticket, by_rating: list[Ticket], at: int, skip: _Skipper,
             widths: dict[str, float | None]) -> list[Ticket]:
    """Up to :data:`MAX_CANDIDATES` unplaced tickets that ``anchor`` accepts and that accept it,
    nearest rating first (ties: the older first), walking out from its place ``at`` in the
    rating order."""
    w = widths[anchor.id]
    r = anchor.rating
    found: list[tuple[float, float, str, Ticket]] = []
    lo, hi = skip.next_left(at - 1), skip.next_right(at + 1)
    n = len(by_rating)
    last = -1.0
    while lo >= 0 or hi < n:
        dl = r - by_rating[lo].rating if lo >= 0 else math.inf
        dh = by_rating[hi].rating - r if hi < n else math.inf
        d = min(dl, dh)
        if (w is not None and d > w + 1e-9) or (len(found) >= MAX_CANDIDATES and d > last):
            break  # the walk meets distances in rising order: nothing nearer is left
        if len(found) >= TIES_SEEN:
            break  # a crowd at one distance: the oldest among the nearest TIES_SEEN in rating order
        if dl <= dh:
            c, lo = by_rating[lo], skip.next_left(lo - 1)
        else:
            c, hi = by_rating[hi], skip.next_right(hi + 1)
        last = d
        if _accepts(widths[c.id], d):
            found.append((d, c.joined_at, c.id, c))
    found.sort(key=lambda f: f[:3])
    return [f[3] for f in found[:MAX_CANDIDATES]]


def _runs(by_rating: list[Ticket], widths: dict[str, float | None], now: float) -> list[list[Ticket]]:
    """Rule (a) of :func:`decide` (module docstring): the best set of runs of neighbours in rating
    order, by dynamic programming over ``by_rating``.

    ``best[i]`` is the best value for the first ``i`` tickets: ``(seats, total wait of the people
    seated, -total spread)``, compared in that order; the last ticket of the prefix is either left out or the last
    of a run of 2 to 4 tickets making exactly four seats that passes the spread rule.

    Returns:
        The runs chosen (lists of tickets, in rating order).
    """
    n = len(by_rating)
    best: list[tuple[int, float, float]] = [(0, 0.0, 0.0)] * (n + 1)
    start: list[int] = [-1] * (n + 1)  # start[i]: first ticket of the run ending at i - 1, or -1 (left out)
    for i in range(1, n + 1):
        best[i], start[i] = best[i - 1], -1
        seats = 0
        for j in range(i - 1, max(-1, i - 5), -1):
            seats += by_rating[j].size
            if seats >= 4:
                if seats == 4 and _group_ok(by_rating[j:i], widths):
                    prev = best[j]
                    value = (prev[0] + 4, prev[1] + sum(t.size * max(0.0, now - t.joined_at) for t in by_rating[j:i]),
                             prev[2] - (by_rating[i - 1].rating - by_rating[j].rating))
                    if value > best[i]:
                        best[i], start[i] = value, j
                break
    runs: list[list[Ticket]] = []
    i = n
    while i > 0:
        if start[i] < 0:
            i -= 1
        else:
            runs.append(by_rating[start[i]:i])
            i = start[i]
    runs.reverse()
    return runs


def _seated(groups: list[list[Ticket]]) -> int:
    return sum(t.size for g in groups for t in g)


def _oldest_first(by_age: list[Ticket], by_rating: list[Ticket], widths: dict[str, float | None],
                  placed: set[str]) -> list[list[Ticket]]:
    """Rule (b) of :func:`decide` (module docstring) over the tickets not in ``placed``.

    Returns:
        The tables made (lists of tickets).
    """
    pos = {t.id: i for i, t in enumerate(by_rating)}
    skip = _Skipper(len(by_rating))
    for t in by_rating:
        if t.id in placed:
            skip.remove(pos[t.id])
    taken = set(placed)
    out: list[list[Ticket]] = []
    for anchor in by_age:
        if anchor.id in taken:
            continue
        group = _four(anchor, _nearest(anchor, by_rating, pos[anchor.id], skip, widths), widths)
        if group is None:
            continue
        taken.update(t.id for t in group)
        for t in group:
            skip.remove(pos[t.id])
        out.append(group)
    return out


def decide(queue: Sequence[Ticket], now: float) -> Decision:
    """Form tables from the queue at time ``now`` (rules: module docstring).

    Args:
        queue: the waiting tickets (any order; ids unique, no person in two tickets).
        now: the current time, same clock as ``Ticket.joined_at`` (seconds).
    Returns:
        :class:`Decision`: the matches (each ticket in at most one) and every ticket's range.
    Raises:
        ValueError: a person in two tickets, or two tickets with one id.
    """
    seen: set[int] = set()
    ids: set[str] = set()
    for t in queue:
        if t.id in ids or seen.intersection(t.members):
            raise ValueError("a ticket id or a person appears twice in the queue")
        ids.add(t.id)
        seen.update(t.members)
    widths = {t.id: allowed_range(max(0.0, now - t.joined_at)) for t in queue}
    by_age = sorted(queue, key=lambda t: (t.joined_at, t.id))
    by_rating = sorted(queue, key=lambda t: (t.rating, t.joined_at, t.id))
    runs = _runs(by_rating, widths, now)
    groups = _oldest_first(by_age, by_rating, widths, set())
    if runs:  # no run: (a) would be (b) made again
        with_runs = runs + _oldest_first(by_age, by_rating, widths, {t.id for g in runs for t in g})
        if _seated(with_runs) > _seated(groups):
            groups = with_runs
    placed = {t.id for g in groups for t in g}
    for group in groups:
        group.sort(key=lambda t: (t.joined_at, t.id))
    groups.sort(key=lambda g: (g[0].joined_at, g[0].id))  # the table of the oldest ticket first
    matches = [Match(tuple(t.id for t in g), seat_people(g)) for g in groups]
    matches.extend(_bot_fills([t for t in by_age if t.id not in placed], widths, now, placed))
    return Decision(matches, widths)


def _still(newest: float, now: float) -> bool:
    """No join for :data:`SETTLE_QUIET_S` seconds. A newest join more than :data:`SETTLE_MAX_S`
    *after* ``now`` (a clock stepped back) counts as still: the rule fails open, as matching did
    before settling, rather than wait for the clock to catch up. A smaller lead (processes whose
    clocks differ a little) keeps the queue unsettled for at most that lead; the queue's times are
    read under its lock (``MatchQueue(clock=...)``), so waiting for the lock adds none."""
    return now - newest >= SETTLE_QUIET_S or newest - now > SETTLE_MAX_S


def settled(queue: Sequence[Ticket], now: float) -> bool:
    """True when ``queue`` is still at ``now``: its newest ticket joined at least
    :data:`SETTLE_QUIET_S` seconds ago, or more than :data:`SETTLE_MAX_S` after ``now`` (a clock
    stepped back: :func:`_still`), or the queue is empty. Rule: *settling*, module docstring. ``now``: seconds, same clock as
    ``Ticket.joined_at``."""
    return not queue or _still(max(t.joined_at for t in queue), now)


def settle_due(newest: float, oldest: float, now: float) -> bool:
    """:func:`must_form` for a non-empty queue known only by two times.

    Args:
        newest: the latest ``joined_at`` of the queue (seconds; a later time is harmless: at most
            :data:`SETTLE_QUIET_S` more wait).
        oldest: the earliest ``joined_at``, or any lower bound of it (seconds).
        now: the round's time, same clock.
    Returns:
        ``False`` only when no table would be formed at ``now`` (:func:`formed_now` would keep every
        match waiting), so that the round may stop without reading the tickets.
    """
    return _still(newest, now) or now - oldest >= SETTLE_MAX_S


def must_form(queue: Sequence[Ticket], now: float) -> bool:
    """True when a round must decide now: the queue is still (:func:`settled`), or some ticket has
    waited :data:`SETTLE_MAX_S` seconds. False: no table would be formed (:func:`formed_now` keeps
    every match waiting), and the round may skip :func:`decide`. ``now``: seconds, same clock as
    ``Ticket.joined_at``."""
    return bool(queue) and settle_due(max(t.joined_at for t in queue), min(t.joined_at for t in queue), now)


def formed_now(decision: Decision, queue: Sequence[Ticket], now: float) -> list[Match]:
    """The matches of ``decision`` to form at ``now``; the others wait for the queue to settle.

    Rule (*settling*, module docstring): while players are still arriving (the newest ticket of
    ``queue`` joined less than :data:`SETTLE_QUIET_S` seconds ago), a table is formed only when one
    of its tickets has waited at least :data:`SETTLE_MAX_S` seconds. Once the queue is still, every
    match is formed. Tables with bots are always formed (their tickets waited 60 s).

    Why: in a burst (1,000 players joining within two seconds) tables formed round by round take a
    player's near neighbours before the later arrivals next to them have joined, and a few players
    are left whom no table within their range can take any more; they wait 10 s or more for it to
    widen. Waiting for the arrivals to pause lets one :func:`decide` over the whole burst seat
    everyone that any choice of tables could (measured in docs/matchmaking.md).

    Args:
        decision: what :func:`decide` found for ``queue`` at ``now``.
        queue: the waiting tickets given to :func:`decide`.
        now: the same time as given to :func:`decide` (seconds).
    Returns:
        The matches to form now, in the decision's order (the rest stay queued for the next round).
    Raises:
        KeyError: a match names a ticket that is not in ``queue``.
    """
    if settled(queue, now):
        return list(decision.matches)
    joined = {t.id: t.joined_at for t in queue}
    return [m for m in decision.matches
            if m.bot_level is not None or now - min(joined[i] for i in m.tickets) >= SETTLE_MAX_S]


def _bot_fills(waiting: list[Ticket], widths: dict[str, float | None], now: float, placed: set[str]) -> list[Match]:
    """Tables with bots for the tickets ready for bot fill (module docstring), oldest first."""
    ready = [t for t in waiting if t.bot_level is not None and now - t.joined_at >= BOT_FILL_AFTER_S]
    out: list[Match] = []
    for anchor in ready:
        if anchor.id in placed:
            continue
        group = [anchor]
        for other in ready:
            if other.id in placed or other is anchor or sum(t.size for t in group) + other.size > 4:
                continue
            if _group_ok([*group, other], widths):
                group.append(other)
        placed.update(t.id for t in group)
        out.append(Match(tuple(t.id for t in group), seat_people(group), anchor.bot_level))
    return out


def cooldown_left(declines: Sequence[float], now: float) -> float:
    """Seconds a person must still wait before joining the queue (module docstring, "Decline
    cool-down").

    Args:
        declines: times (seconds, the queue's clock) of the person's declined ready checks, any order.
        now: the current time, same clock.
    Returns:
        0.0 when the person may join; else the seconds left until :data:`DECLINE_COOLDOWN_S` after
        the latest decline that was the :data:`DECLINE_LIMIT`-th within :data:`DECLINE_WINDOW_S`.
    """
    times = sorted(declines)
    until = 0.0
    for i in range(DECLINE_LIMIT - 1, len(times)):
        if times[i] - times[i - DECLINE_LIMIT + 1] <= DECLINE_WINDOW_S + 1e-9:
            until = max(until, times[i] + DECLINE_COOLDOWN_S)
    return max(0.0, until - now)


def declines_kept(declines: Sequence[float], now: float) -> list[float]:
    """The declines that can still matter at ``now`` or later (the others are forgotten): those
    within :data:`DECLINE_WINDOW_S` + :data:`DECLINE_COOLDOWN_S`, oldest first."""
    return sorted(t for t in declines if now - t < DECLINE_WINDOW_S + DECLINE_COOLDOWN_S)


#: Outcomes of :func:`ready_outcome`.
WAITING, ALL_READY, FAILED = "waiting", "all_ready", "failed"


def ready_outcome(people: Sequence[int], ready: Sequence[int], declined: Sequence[int], deadline: float,
                  now: float) -> tuple[str, frozenset[int]]:
    """The state of a ready check (module docstring, "Ready check").

    Args:
        people: user ids of the match. ready: those who accepted. declined: those who declined.
        deadline: when the check ends (seconds, the queue's clock). now: the current time.
    Returns:
        ``(WAITING, {})`` while answers are missing and time is left; ``(ALL_READY, {})`` when all
        accepted (even after the deadline); ``(FAILED, out)`` when someone declined or time ran
        out, ``out`` being the people who declined or did not accept.
    """
    everyone = set(people)
    accepted = everyone.intersection(ready)
    refused = everyone.intersection(declined)
    if refused:
        return FAILED, frozenset(refused)
    if accepted == everyone:
        return ALL_READY, frozenset()
    if now >= deadline:
        return FAILED, frozenset(everyone - accepted)
    return WAITING, frozenset()


__all__ = ["ALL_READY", "BOT_FILL_AFTER_S", "DECLINE_COOLDOWN_S", "DECLINE_LIMIT", "DECLINE_WINDOW_S", "FAILED",
           "READY_S", "WAITING", "Decision", "Match", "Ticket", "allowed_range", "cooldown_left", "decide",
           "declines_kept", "formed_now", "must_form", "ready_outcome", "seat_people", "settle_due", "settled"]
