"""Terminal rendering and input helpers for ``guandan play`` (pure functions, no game loop).

Everything here turns engine values (faces, plays, seat views) into Rich renderables or plain
strings, or reads one line of player input into a :class:`Command`. Nothing prints and nothing
reads from the terminal, so the helpers are unit-testable.

Seats (RULES.md R2-R3): seats 0-3 in play order, counter-clockwise; the person sits at seat 0
("You", south), the partner at seat 2 (north), opponents at seats 1 (east) and 3 (west).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Group
from rich.text import Text

from guandan.core.cards import (
    BIG_JOKER,
    FACE_RANK,
    FACE_SUIT,
    SMALL_JOKER,
    SUIT_SYMBOLS,
    card_text,
    parse_cards,
    rank_char,
    wild_face,
)
from guandan.core.plays import JOKER_BOMB, PASS_TYPE, STRENGTH, Play, as_play, play_text, wild_assignment

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
    name = SEAT_NAMES[seat]
    return f"{name} (seat {seat})" if number else name


def place_name(index: int) -> str:
    """Finishing place name for a 0-based position: 0 → ``'1st'`` … 3 → ``'4th'``."""
    return _PLACES[index]


def rank_label(rank: int) -> str:
    """Human rank label: ``'10'`` for T, ``'SJ'``/``'BJ'`` for the jokers, else the notation."""
    return "10" if rank == 8 else rank_char(rank)


def card_label(face: int) -> str:
    """Human display of one face without emoji: ``'10♥'``, ``'A♠'``, ``'SJ'``, ``'BJ'``.

    The joker playing-card emoji have ambiguous terminal widths, so jokers stay as text.
    Raises:
        NotationError: ``face`` is not 0..53.
    """
    if face in (SMALL_JOKER, BIG_JOKER):
        return card_text(face)
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
        cells.append((f, top, card_text(f), max(len(top), 2)))
    width = sum(c[3] for c in cells) + len(cells) - 1
    head_txt = rank_label(rank) + (" level" if rank == level else "")
    width = max(width, len(head_txt))
    head = Text(head_txt.ljust(width), style="bold cyan" if rank == level else "dim")
    uni = Text()
    nota = Text()
    for i, (f, top, txt, cw) in enumerate(cells):
        if i:
            uni.append(" ")
            nota.append(" ")
        uni.append(top.ljust(cw), style=card_style(f, level))
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
        return Group(Text(" " * indent + "(no cards)", style="dim"))
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


def play_line(play: Sequence[object], level: int) -> Text:
    """A play for people: ``'pair 10: 10♥ 10♦'``; a wild shows what it stands for (``7♥→9♠``).

    Tribute/return actions read ``'tribute: BJ'``; a pass reads ``'pass'``.
    """
    p = _play_obj(play)
    if p.type == PASS_TYPE:
        return Text("pass", style="dim")
    w = wild_face(level)
    subs: list[int] = []
    if w in p.cards and p.type not in ("tribute", "return", JOKER_BOMB):
        try:
            subs = wild_assignment(p, level)
        except (ValueError, AssertionError):
            subs = []
    head = play_text(p, unicode=True).split(": ", 1)[0] + ":"  # 'pair 10:' / '5-card bomb 9:'
    if p.type in ("tribute", "return"):
        head = p.type + ":"
    out = Text(head + " ", style="bold")
    k = 0
    for i, f in enumerate(p.cards):
        if i:
            out.append(" ")
        out.append(card_label(f), style=card_style(f, level))
        if f == w and subs:
            stands = subs[k] if k < len(subs) else f
            k += 1
            # a wild standing for a level card of the same rank needs no note, except in a
            # straight flush where its suit matters
            if stands != f and (FACE_RANK[stands] != FACE_RANK[f] or p.type == "straight_flush"):
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
    return play_text(p, unicode=True).split(": ", 1)[0]


def counts_cell(count: int | None) -> str:
    """A seat's card count for display: ``'?'`` when hidden (``card_counts=le10``, R32)."""
    return "?" if count is None else str(count)


def level_text(rank: int) -> str:
    """A level for display: ``'10'`` for T, else the rank notation."""
    return rank_label(rank)


def return_rule_text(return_rule: str, to_partner: bool) -> str:
    """One-line reminder of the return rule (R47, AMB-02/03) for a return to partner or opponent."""
    limited = return_rule == "le10" or (return_rule == "le10_partner_only" and to_partner)
    if limited:
        return (
            "return one card ranked 10 or lower that is not a level card; "
            "if you have none, your smallest card (R47)"
        )
    return "return any one card (return_rule=" + return_rule + ", R47)"


TRIBUTE_RULE = "your highest card in level order; the ♥ level cards (wilds) do not count (R45)"


@dataclass(frozen=True)
class Command:
    """One line of player input.

    ``kind`` is ``'cards'`` (``faces`` holds the parsed faces, ascending), ``'pass'``,
    ``'hint'``, ``'quit'``, ``'help'``, ``'table'`` or ``'empty'``.
    """

    kind: str
    faces: tuple[int, ...] = ()


_WORDS = {
    "p": "pass",
    "pass": "pass",
    "h": "hint",
    "hint": "hint",
    "q": "quit",
    "quit": "quit",
    "exit": "quit",
    "?": "help",
    "help": "help",
    "t": "table",
    "table": "table",
}


def parse_command(text: str) -> Command:
    """Read one input line: a command word or cards (``'TH th 9s'``, ``'10h'``, commas allowed).

    Raises:
        NotationError: the line is neither a command nor valid card notation (names the token).
    """
    t = text.strip()
    if not t:
        return Command("empty")
    word = _WORDS.get(t.lower())
    if word is not None:
        return Command(word)
    return Command("cards", parse_cards(t))


HELP_LINES: tuple[str, ...] = (
    "Type cards rank then suit, separated by spaces: TH TD (10h works too); suits S H C D; jokers SJ BJ.",
    "Ranks: 2-9, T (or 10), J, Q, K, A.  The two ♥ level cards are wild (marked *).",
    "If your cards can be read several ways (R17) you are asked which reading you mean.",
    "p = pass   h = hint (a bot's suggestion)   t = table again   q = quit   ? = this help",
)


__all__ = [
    "HELP_LINES",
    "SEAT_NAMES",
    "TEAM_NAMES",
    "TRIBUTE_RULE",
    "Command",
    "card_label",
    "card_rich",
    "card_style",
    "counts_cell",
    "group_hand",
    "level_text",
    "parse_command",
    "place_name",
    "play_line",
    "play_plain",
    "rank_label",
    "reading_name",
    "render_hand",
    "return_rule_text",
    "seat_name",
    "sort_hand",
    "typed",
]
