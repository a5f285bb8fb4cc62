"""Terminal rendering and input helpers for ``guandan play`` (pure functions, no game loop).

Everything here turns engine values (faces, plays, seat views) into Rich renderables or plain
strings, or reads one line of player input into a :class:`Command`. Nothing prints and nothing
reads from the terminal, so the helpers are unit-testable.

Seats (RULES.md R2-R3): seats 0-3 in play order, counter-clockwise; the person sits at seat 0
("You", south), the partner at seat 2 (north), opponents at seats 1 (east) and 3 (west).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Group
from rich.text import Text

from guandan.core.cards import (
    BIG_JOKER,
    FACE_RANK,
    FACE_SUIT,
    RANK_CHARS,
    SMALL_JOKER,
    SUIT_SYMBOLS,
    card_text,
    parse_cards,
    rank_char,
    wild_face,
)
from guandan.core.errors import NotationError
from guandan.core.plays import BOMB, JOKER_BOMB, PASS_TYPE, STRENGTH, Play, as_play, play_text, wild_assignment
from guandan.play_i18n import language, tr

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
    head_txt = rank_label(rank) + (tr(" level") if rank == level else "")
    width = max(width, Text(head_txt).cell_len)
    head = Text(head_txt + " " * (width - Text(head_txt).cell_len), style="bold cyan" if rank == level else "dim")
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


def play_line(play: Sequence[object], level: int) -> Text:
    """A play for people: ``'pair 10: 10♥ 10♦'``; a wild shows what it stands for (``7♥→9♠``).

    Tribute/return actions read ``'tribute: BJ'``; a pass reads ``'pass'``.
    """
    p = _play_obj(play)
    if p.type == PASS_TYPE:
        return Text(tr("pass"), style="dim")
    w = wild_face(level)
    subs: list[int] = []
    if w in p.cards and p.type not in ("tribute", "return", JOKER_BOMB):
        try:
            subs = wild_assignment(p, level)
        except (ValueError, AssertionError):
            subs = []
    head = reading_name(p) + ":"  # 'pair 10:' / '5-card bomb 9:'
    if p.type in ("tribute", "return"):
        head = tr(p.type) + ":"
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


@dataclass(frozen=True)
class Command:
    """One line of player input.

    ``kind`` is ``'cards'`` (``faces`` holds the parsed faces, ascending), ``'ranks'`` (some
    cards were typed by rank only: ``ranks`` holds those ranks, ascending, ``faces`` the cards
    typed in full), ``'pass'``, ``'hint'``, ``'quit'``, ``'help'``, ``'table'`` or ``'empty'``.
    """

    kind: str
    faces: tuple[int, ...] = ()
    ranks: tuple[int, ...] = ()


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
    try:
        return Command("cards", parse_cards(t))
    except NotationError as first:
        ranks = _parse_ranks(t)
        if ranks is None:
            raise first from None
        return ranks


_RANK_RUN = re.compile(r"(?:10|[2-9TJQKA])+", re.IGNORECASE)
_RANK_TOKEN = re.compile(r"10|[2-9TJQKA]", re.IGNORECASE)


def _parse_ranks(text: str) -> Command | None:
    """Read a line where some cards are given by rank only (``'QQQ'``, ``'10 10'``, ``'55 3H'``).

    Each token is a full card (``TH``, ``SJ``) or a run of ranks (``QQQ``, ``1010``);
    ``None`` when a token is neither (the caller reports the card-notation error).
    """
    faces: list[int] = []
    ranks: list[int] = []
    for tok in text.replace(",", " ").split():
        try:
            faces.extend(parse_cards(tok))
            continue
        except NotationError:
            pass
        if not _RANK_RUN.fullmatch(tok):
            return None
        ranks.extend(RANK_CHARS.index("T" if r == "10" else r.upper()) for r in _RANK_TOKEN.findall(tok))
    if not ranks:
        return None
    return Command("ranks", tuple(sorted(faces)), tuple(sorted(ranks)))


#: The ``?`` help of the terminal game (English message ids: print ``tr(line)``).
HELP_LINES: tuple[str, ...] = (
    "Type cards rank then suit, separated by spaces: TH TD (10h works too); suits S H C D; jokers SJ BJ.",
    "Or type ranks only when the suits do not matter: QQQ, 10 10, 55566; the suits are picked for you.",
    "Ranks: 2-9, T (or 10), J, Q, K, A.  The two ♥ level cards are wild (marked *).",
    "If your cards can be read several ways you are asked which reading you mean.",
    "p = pass   h = hint (a bot's suggestion)   t = table again   q = quit   ? = this help",
)


class RankShortage(ValueError):
    """Cards typed by rank only that the hand cannot supply. ``rank``: rank index; ``have``:
    natural cards of that rank held; ``wilds``: wild cards that could stand in; ``want``."""

    def __init__(self, rank: int, have: int, wilds: int, want: int) -> None:
        self.rank, self.have, self.wilds, self.want = rank, have, wilds, want
        super().__init__(self.message())

    def message(self) -> str:
        """One line in the current language."""
        rank = rank_label(self.rank)
        if self.have == 0 and self.wilds == 0:
            return tr("you have no {rank}", rank=rank)
        if self.wilds == 0:
            return tr("you hold {have} × {rank} and no wild card to stand for more", have=self.have, rank=rank)
        return tr(
            "you hold {have} × {rank} and {wilds} wild card(s): not enough for {want}",
            have=self.have, rank=rank, wilds=self.wilds, want=self.want,
        )


def _multisets(items: list[tuple[int, int]], k: int) -> Iterable[tuple[int, ...]]:
    """Every multiset of ``k`` faces from ``items`` (``(face, copies held)``), as sorted tuples."""
    if k == 0:
        yield ()
        return
    if not items:
        return
    (face, n), rest = items[0], items[1:]
    for take in range(min(n, k), -1, -1):
        for more in _multisets(rest, k - take):
            yield (face,) * take + more


def rank_selections(
    hand: Sequence[int], faces: Sequence[int], ranks: Sequence[int], level: int, limit: int = 20000
) -> list[tuple[tuple[int, ...], int]]:
    """The ways to pick actual cards for ranks typed without suits (``'QQQ'``, ``'10 10'``).

    Args:
        hand: the hand as 54 per-face counts.
        faces: cards typed in full on the same line (already taken from the hand).
        ranks: the ranks typed without a suit (0..12), one entry per card.
        level: the deal's level; its heart card is wild (R8) and stands in for a missing card
            only when the hand has too few natural cards of a rank.
        limit: at most this many selections are returned.
    Returns:
        ``[(selected faces sorted, wild cards used), ...]`` (fewest wilds first).
    Raises:
        RankShortage: the hand cannot supply one of the ranks, even with its wilds.
    """
    counts = list(hand)
    for f in faces:
        counts[f] -= 1
    w = wild_face(level)
    wilds = max(0, counts[w])
    need: dict[int, int] = {}
    for r in ranks:
        need[r] = need.get(r, 0) + 1
    per_rank: list[list[tuple[tuple[int, ...], int]]] = []
    for r, k in sorted(need.items()):
        natural = [(f, counts[f]) for f in range(4 * r, 4 * r + 4) if f != w and counts[f] > 0]
        have = sum(n for _, n in natural)
        if have == 0 and r != FACE_RANK[w] and len(need) == 1:
            raise RankShortage(r, 0, 0, k)  # wilds alone are level cards, never another rank (R8)
        options = [
            (combo + (w,) * (k - j), k - j)
            for j in range(min(k, have), max(0, k - wilds) - 1, -1)
            for combo in _multisets(natural, j)
        ]
        if not options:
            raise RankShortage(r, have, wilds, k)
        per_rank.append(options)
    out: list[tuple[tuple[int, ...], int]] = []

    def build(i: int, acc: tuple[int, ...], used: int) -> None:
        if len(out) >= limit:
            return
        if i == len(per_rank):
            out.append((tuple(sorted(acc)), used))
            return
        for sel, u in per_rank[i]:
            if used + u <= wilds:
                build(i + 1, acc + sel, used + u)

    build(0, (), 0)
    if not out:  # each rank alone was possible but not all together: too few wilds
        r, k = max(need.items(), key=lambda rk: rk[1])
        raise RankShortage(r, sum(counts[f] for f in range(4 * r, 4 * r + 4) if f != w), wilds, k)
    out.sort(key=lambda sel: sel[1])
    return out


def reading_ranks(play: Sequence[object], level: int) -> tuple[int, ...]:
    """The ranks a play's cards stand for, ascending: a wild counts as the card it stands for
    (R8, as :func:`guandan.core.plays.wild_assignment` reads it). Used to keep only the readings
    of cards picked for typed ranks that match those ranks (``KK`` is never two wilds read as a
    pair of level cards)."""
    p = _play_obj(play)
    w = wild_face(level)
    subs: list[int] = []
    if w in p.cards and p.type not in ("tribute", "return", JOKER_BOMB):
        try:
            subs = wild_assignment(p, level)
        except (ValueError, AssertionError):
            subs = []
    out: list[int] = []
    k = 0
    for f in p.cards:
        if f == w and k < len(subs):
            out.append(FACE_RANK[subs[k]])
            k += 1
        else:
            out.append(FACE_RANK[f])
    return tuple(sorted(out))


def straight_flushes_left(counts: Sequence[int]) -> int:
    """How many five-card straight flushes (R14: same suit, A low or high) ``counts`` still holds
    (per-face counts; each suit and run counted once)."""
    order = [12, *range(13)]  # A-2-3-4-5 up to 10-J-Q-K-A
    total = 0
    for suit in range(4):
        present = [counts[4 * r + suit] > 0 for r in order]
        total += sum(all(present[i : i + 5]) for i in range(len(order) - 4))
    return total


__all__ = [
    "HELP_LINES",
    "RankShortage",
    "rank_selections",
    "reading_ranks",
    "straight_flushes_left",
    "team_name",
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
