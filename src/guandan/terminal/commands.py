"""Input of the terminal game: one typed line → a :class:`Command`, and ranks typed without
suits → the cards to play (pure functions, nothing reads from the terminal).

Cards may be typed in full (``QS QH``) or by rank only (``QQ``): :func:`rank_selections` then
picks suits so that no wild card is spent when natural cards do, and straight flushes stay intact
where possible (wilds: docs/rules.md R12-R16).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from guandan.core.cards import FACE_RANK, RANK_CHARS, parse_cards, wild_face
from guandan.core.errors import NotationError

from .i18n import tr
from .render import _play_obj, rank_label, wild_substitutes


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
    subs = wild_substitutes(p, level)
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
    "Command",
    "RankShortage",
    "parse_command",
    "rank_selections",
    "reading_ranks",
    "straight_flushes_left",
]
