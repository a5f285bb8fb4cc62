"""Rendering of the terminal game (pure functions, no game loop).

Everything here turns engine values (faces, plays, seat views) into Rich renderables or plain
strings; :func:`render_view` draws the whole table for the person's decision. Nothing prints and
nothing reads from the terminal, so the helpers are unit-testable. Reading the person's input is
:mod:`guandan.terminal.commands`; the game loop is :mod:`guandan.terminal.session`.

Seats (docs/rules.md R2-R3): seats 0-3 in play order, counter-clockwise; the person sits at seat 0
("You", south), the partner at seat 2 (north), opponents at seats 1 (east) and 3 (west).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text

from guandan.core.cards import (
    BIG_JOKER,
    FACE_RANK,
    FACE_SUIT,
    SMALL_JOKER,
    SUIT_SYMBOLS,
    card_text,
    rank_char,
    wild_face,
)
from guandan.core.plays import (
    BOMB,
    JOKER_BOMB,
    PASS_TYPE,
    PLATE,
    PLATE_WINDOWS,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRAIGHT_WINDOWS,
    STRENGTH,
    TUBE,
    TUBE_WINDOWS,
    Play,
    as_play,
    play_text,
    wild_assignment,
)

from .i18n import language, tr

if TYPE_CHECKING:  # pragma: no cover
    from guandan.core.match import Game
    from guandan.core.views import SeatView

#: The person's seat (South); the others are bots.
HUMAN = 0

#: Display names of seats 0-3 (seat 0 is the person at the keyboard).
SEAT_NAMES: tuple[str, ...] = ("You", "East", "North", "West")
#: Team names: team 0 = seats 0/2, team 1 = seats 1/3.
TEAM_NAMES: tuple[str, ...] = ("you & North", "East & West")
_PLACES = ("1st", "2nd", "3rd", "4th")
_RED_SUITS = (1, 3)  # hearts, diamonds


def seat_name(seat: int, number: bool = True) -> str:
    """``'East (seat 1)'`` (``number=True``) or ``'East'``; seat 0 is ``'You'``.

    Raises:
        IndexError: ``seat`` is not 0-3.
    """
    name = tr(SEAT_NAMES[seat])
    return tr("{name} (seat {seat})", name=name, seat=seat) if number else name


def team_name(team: int) -> str:
    """Team 0 (seats 0/2) or 1 (seats 1/3) in the current language: ``'you & North'``."""
    return tr(TEAM_NAMES[team])


def place_name(index: int) -> str:
    """Finishing place name for a 0-based position: 0 → ``'1st'`` … 3 → ``'4th'`` (头游 … 末游)."""
    return tr(_PLACES[index])


def rank_label(rank: int) -> str:
    """Human rank label: ``'10'`` for T, the jokers ``'SJ'``/``'BJ'`` (小王/大王 in Chinese, as
    the web table), else the notation."""
    if rank in (13, 14):
        return tr(rank_char(rank))
    return "10" if rank == 8 else rank_char(rank)


def card_label(face: int) -> str:
    """Human display of one face without emoji: ``'10♥'``, ``'A♠'``, ``'SJ'``, ``'BJ'`` (小王 and
    大王 in Chinese; what is typed stays ``SJ``/``BJ``, see :func:`card_text`).

    The joker playing-card emoji have ambiguous terminal widths, so jokers stay as text.
    Raises:
        NotationError: ``face`` is not 0..53.
    """
    if face in (SMALL_JOKER, BIG_JOKER):
        return tr(card_text(face))
    card_text(face)  # validates
    return rank_label(FACE_RANK[face]) + SUIT_SYMBOLS[FACE_SUIT[face]]


def card_style(face: int, level: int) -> str:
    """Rich style of a face at ``level``: wilds (R8) bold magenta, red suits red, big joker bold red."""
    if face == wild_face(level):
        return "bold magenta"
    if face == BIG_JOKER:
        return "bold red"
    if face == SMALL_JOKER:
        return "bold"
    return "red" if FACE_SUIT[face] in _RED_SUITS else ""


def card_rich(face: int, level: int, notation: bool = False) -> Text:
    """One card as styled text: Unicode label (or the typed notation when ``notation``)."""
    return Text(card_text(face) if notation else card_label(face), style=card_style(face, level))


def sort_hand(hand: Iterable[int], level: int) -> list[int]:
    """Faces in level order (R9): 2..A without the level rank, then the level rank (natural
    cards by suit, the wilds last), then small and big jokers."""
    w = wild_face(level)
    st = STRENGTH[level]
    return sorted(hand, key=lambda f: (st[FACE_RANK[f]], f == w, FACE_SUIT[f]))


def group_hand(hand: Iterable[int], level: int) -> list[tuple[int, tuple[int, ...]]]:
    """The hand grouped by rank in level order: ``[(rank, faces), ...]`` (see :func:`sort_hand`)."""
    groups: list[tuple[int, list[int]]] = []
    for f in sort_hand(hand, level):
        r = FACE_RANK[f]
        if groups and groups[-1][0] == r:
            groups[-1][1].append(f)
        else:
            groups.append((r, [f]))
    return [(r, tuple(fs)) for r, fs in groups]


def _group_block(rank: int, faces: Sequence[int], level: int) -> tuple[Text, Text, Text, int]:
    """Three aligned lines for one rank group: header, Unicode cards, typed notation."""
    w = wild_face(level)
    cells = []
    for f in faces:
        top = card_label(f) + ("*" if f == w else "")
        cells.append((f, top, card_text(f), max(Text(top).cell_len, 2)))  # 小王 takes 4 cells
    width = sum(c[3] for c in cells) + len(cells) - 1
    head_txt = rank_label(rank) + (tr(" level") if rank == level else "")
    width = max(width, Text(head_txt).cell_len)
    head = Text(head_txt + " " * (width - Text(head_txt).cell_len), style="bold cyan" if rank == level else "dim")
    uni = Text()
    nota = Text()
    for i, (f, top, txt, cw) in enumerate(cells):
        if i:
            uni.append(" ")
            nota.append(" ")
        uni.append(top + " " * (cw - Text(top).cell_len), style=card_style(f, level))
        nota.append(txt.ljust(cw), style="magenta" if f == w else "dim")
    pad = width - uni.cell_len
    uni.append(" " * pad)
    nota.append(" " * (width - nota.cell_len))
    return head, uni, nota, width


def render_hand(hand: Iterable[int], level: int, width: int = 100, indent: int = 2) -> Group:
    """The hand as rows of rank groups, each group three lines (rank, ``10♥``, ``TH``).

    Groups are in level order (level cards, then jokers at the top end); wilds are marked
    ``*`` and drawn magenta. Rows wrap so that no line exceeds ``width`` cells.

    Args:
        hand: faces (any order).
        level: the deal's level (rank index 0..12).
        width: the console width in cells.
        indent: spaces before each line.
    Returns:
        A Rich ``Group`` of ``Text`` lines (empty hand: one ``(no cards)`` line).
    """
    groups = group_hand(hand, level)
    if not groups:
        return Group(Text(" " * indent + tr("(no cards)"), style="dim"))
    gap = 3
    lines: list[Text] = []
    row: list[tuple[Text, Text, Text, int]] = []
    used = indent

    def flush() -> None:
        if not row:
            return
        for k in range(3):
            line = Text(" " * indent)
            for i, block in enumerate(row):
                if i:
                    line.append(" " * gap)
                line.append_text(block[k])
            line.rstrip()
            lines.append(line)

    for rank, faces in groups:
        block = _group_block(rank, faces, level)
        need = block[3] + (gap if row else 0)
        if row and used + need > width:
            flush()
            row, used = [], indent
            need = block[3]
        row.append(block)
        used += need
    flush()
    return Group(*lines)


def _play_obj(play: Sequence[object]) -> Play:
    return as_play(tuple(play))  # type: ignore[arg-type]


def wild_substitutes(p: Play, level: int) -> list[int]:
    """The faces the wilds of play ``p`` stand for, in order of the wilds (R8, as
    :func:`guandan.core.plays.wild_assignment` reads it); ``[]`` for a play without wilds, a
    tribute or return, the joker bomb, or a play no reading fits."""
    if wild_face(level) not in p.cards or p.type in ("tribute", "return", JOKER_BOMB):
        return []
    try:
        return wild_assignment(p, level)
    except (ValueError, AssertionError):
        return []


def _drawing_order(p: Play, level: int) -> list[tuple[int, int]]:
    """``[(face, what it stands for), ...]`` in the order to show a play: a straight, tube, plate
    or straight flush in sequence order (R10: ``A 2 3 4 5``, each wild where the card it stands
    for sits), any other play as it is."""
    w = wild_face(level)
    subs = iter(wild_substitutes(p, level))
    pairs = [(f, next(subs, f) if f == w else f) for f in p.cards]
    windows = {STRAIGHT: STRAIGHT_WINDOWS, STRAIGHT_FLUSH: STRAIGHT_WINDOWS, TUBE: TUBE_WINDOWS, PLATE: PLATE_WINDOWS}
    ranks = windows[p.type].get(p.rank) if p.type in windows and p.rank is not None else None
    if not ranks or any(FACE_RANK[s] not in ranks for _, s in pairs):
        return pairs
    return sorted(pairs, key=lambda fs: (ranks.index(FACE_RANK[fs[1]]), fs[0] == w))


def play_line(play: Sequence[object], level: int) -> Text:
    """A play for people: ``'pair 10: 10♥ 10♦'``; a wild shows what it stands for (``7♥→9♠``); a
    sequence reads in sequence order (``'straight 5: A♠ 2♦ 3♠ 4♦ 5♣'``).

    Tribute/return actions read ``'tribute: BJ'``; a pass reads ``'pass'``.
    """
    p = _play_obj(play)
    if p.type == PASS_TYPE:
        return Text(tr("pass"), style="dim")
    w = wild_face(level)
    head = reading_name(p) + ":"  # 'pair 10:' / '5-card bomb 9:'
    if p.type in ("tribute", "return"):
        head = tr(p.type) + ":"
    out = Text(head + " ", style="bold")
    for i, (f, stands) in enumerate(_drawing_order(p, level)):
        if i:
            out.append(" ")
        out.append(card_label(f), style=card_style(f, level))
        # a wild standing for a level card of the same rank needs no note, except in a
        # straight flush where its suit matters
        if f == w and stands != f and (FACE_RANK[stands] != FACE_RANK[f] or p.type == "straight_flush"):
            out.append("→" + card_label(stands), style="magenta")
    return out


def play_plain(play: Sequence[object], level: int) -> str:
    """:func:`play_line` as a plain string (no styles)."""
    return play_line(play, level).plain


def typed(play: Sequence[object]) -> str:
    """What to type for a play: its cards in notation (``'TH TD'``), or ``'p'`` for a pass."""
    p = _play_obj(play)
    if p.type == PASS_TYPE:
        return "p"
    return " ".join(card_text(f) for f in p.cards)


def reading_name(play: Sequence[object]) -> str:
    """The reading of a play (R17), e.g. ``'straight 9'`` (top card 9) or ``'5-card bomb 7'``."""
    p = _play_obj(play)
    english = play_text(p, unicode=True).split(": ", 1)[0]
    if language() == "en":
        return english
    if p.type == PASS_TYPE:
        return tr("pass")
    name = tr("{n}-card bomb", n=len(p.cards)) if p.type == BOMB else tr(english.rsplit(" ", 1)[0])
    if p.type in (JOKER_BOMB, "tribute", "return") or p.rank is None:
        return tr(english) if p.type == JOKER_BOMB else name
    return f"{name} {rank_label(p.rank)}"


def counts_cell(count: int | None) -> str:
    """A seat's card count for display: ``'?'`` when hidden (``card_counts=le10``, R32)."""
    return "?" if count is None else str(count)


def streak_lines(streaks: Any) -> list[str]:
    """The Yangzhou streak words of a ``deal_end`` event's ``streaks`` (AMB-17): one line per run of
    three or more that changed levels this deal (``[]`` when none did, or without the field)."""
    if not isinstance(streaks, dict):
        return []
    out = []
    seat, run = streaks.get("first_run") or (None, 0)
    if streaks.get("bonus") and seat is not None and run >= 3:
        out.append(tr("{who} 1st out {n} deals running: {team} +{k} extra", who=seat_name(seat, False), n=run,
                      team=team_name(seat % 2), k=run - 2))
    for seat, run in streaks.get("last_runs") or []:
        if run >= 3:
            out.append(tr("{who} last {n} deals running: {team} -{k}", who=seat_name(seat, False), n=run,
                          team=team_name(seat % 2), k=run - 2))
    return out


def level_text(rank: int) -> str:
    """A level for display: ``'10'`` for T, else the rank notation."""
    return rank_label(rank)


def return_rule_text(return_rule: str, to_partner: bool) -> str:
    """One-line reminder of the return rule (R47, AMB-02/03) for a return to partner or opponent."""
    limited = return_rule == "le10" or (return_rule == "le10_partner_only" and to_partner)
    if limited:
        return tr("return one card ranked 10 or lower that is not a level card; if you have none, your smallest card")
    return tr("return any one card (return_rule={rule})", rule=return_rule)


#: The tribute rule in plain words (R45), English message id (show it with ``tr(TRIBUTE_RULE)``).
TRIBUTE_RULE = "your highest card in level order; the ♥ level cards (wilds) do not count"


def render_view(game: Game, view: SeatView, width: int = 100) -> Any:
    """The table for seat 0's decision: header, levels, seats (cards, this trick, place), the
    play to beat and the hand. Hidden card counts (``card_counts=le10``, R32) show as ``?``.

    Args:
        game: the game (for rules and the deal's tribute plan; nothing hidden is shown).
        view: ``seat_view(game, 0)``.
        width: console width in cells.
    Returns:
        A Rich ``Group``.
    """
    from rich import box
    from rich.console import Group
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    from guandan.core.deal import partner
    from guandan.core.scoring import anhui_title

    level = view.level
    lv = level_text(level)
    parts: list[Any] = []
    parts.append(
        Rule(
            tr("Game {game} · Deal {deal} · level {level} · wilds {level}♥ (shown *)", game=view.game_number,
               deal=view.deal_number, level=lv),
            style="cyan",
        )
    )
    own = tr("yours") if view.levels[0] == level else (tr("theirs") if view.levels[1] == level else "")
    if view.levels[0] == level and view.levels[1] == level:
        own = tr("both teams'")
    head = Text(tr("Levels: "))
    head.append(f"{team_name(0)} {level_text(view.levels[0])}", style="bold green")
    head.append(" · ")
    head.append(f"{team_name(1)} {level_text(view.levels[1])}", style="bold red")
    head.append(tr("   deal level {level}", level=lv) + (tr(" ({whose})", whose=own) if own else ""))
    if any(view.a_fails):
        head.append(tr("   failed {target} attempts: you {n0}, them {n1}", target=game.rules.target_level,
                       n0=view.a_fails[0], n1=view.a_fails[1]))
    if game.rules.points:
        head.append(tr("   points {points} ({title})", points=view.points[0], title=anhui_title(view.points[0])))
    parts.append(head)

    last: dict[int, Any] = {}
    for s, a in view.trick:
        last[s] = a
    tbl = Table(box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False, pad_edge=False)
    tbl.add_column(" ", width=1)
    tbl.add_column(tr("seat"))
    tbl.add_column(tr("cards"), justify="right")
    tbl.add_column(tr("this trick"))
    tbl.add_column("")
    for s in range(4):
        mark = "▶" if view.to_act == s else ""
        name = seat_name(s) + (tr(" partner") if s == partner(HUMAN) else "")
        played = play_line(last[s], level) if s in last else Text("")
        note = ""
        if s in view.finished:
            note = tr("out {place}", place=place_name(view.finished.index(s)))
        elif view.phase == "play" and view.top_seat == s and view.top is not None:
            note = tr("top")
        style = "bold" if s == HUMAN else ""
        tbl.add_row(mark, name, counts_cell(view.card_counts[s]), played, note, style=style)
    parts.append(tbl)
    if view.finished:
        parts.append(
            Text(
                tr("Out so far: ")
                + ", ".join(f"{place_name(i)} {seat_name(s, False)}" for i, s in enumerate(view.finished))
            )
        )
    turn = Text()
    if view.phase == "play":
        if view.top is None:
            turn.append(tr("Your turn: you lead — play any combination."), style="bold")
        else:
            turn.append(tr("Your turn: beat "), style="bold")
            turn.append_text(play_line(view.top, level))
            top = view.top_seat or 0
            who = seat_name(top, False) + (tr(", your partner") if top == partner(HUMAN) else "")
            turn.append(tr(" ({who}) or pass.", who=who), style="bold")
    elif view.phase == "tribute":
        plan = game.deal.plan
        to = tr("the winners")
        if plan is not None and not plan.double:
            to = seat_name(plan.head)
        turn.append(tr("Your turn: pay tribute (进贡) to {to} — {rule}.\n", to=to, rule=tr(TRIBUTE_RULE)), style="bold")
        turn.append(tr("Allowed: ") + ", ".join(_both(a[2][0]) for a in view.legal_actions))
    elif view.phase == "return":
        plan = game.deal.plan
        target = dict(plan.returns_due)[HUMAN] if plan is not None else 1
        got = ""
        if plan is not None:
            got = ", ".join(
                tr("{card} from {who}", card=card_label(plan.paid[p]), who=seat_name(p, False))
                for p, r in plan.to.items()
                if r == HUMAN
            )
        turn.append(tr("Your turn: return a card (还贡) to {who}", who=seat_name(target)), style="bold")
        turn.append(tr(" — you received {got}.\n", got=got) if got else ".\n", style="bold")
        turn.append(tr("Rule: ") + return_rule_text(game.rules.return_rule, target == partner(HUMAN)) + ".\n")
        turn.append(tr("Allowed: ") + " ".join(_txt(a[2][0]) for a in view.legal_actions))
    parts.append(turn)
    parts.append(Text(tr("Your hand ({n} cards):", n=len(view.hand)), style="bold"))
    parts.append(render_hand(view.hand, level, width))
    return Group(*parts)


def _both(face: int) -> str:
    """``'A♠ (AS)'``: display label and typed notation (just ``'BJ'`` for jokers)."""
    label, txt = card_label(face), _txt(face)
    return txt if label == txt else f"{label} ({txt})"


def _txt(face: int) -> str:
    from guandan.core.cards import card_text

    return card_text(face)
