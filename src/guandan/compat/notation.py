"""Conversions between the AI-competition platform's notation and pyguandan's (PROTOCOL.md §3-4).

Platform cards are ``<suit><rank>``: suits ``S H C D``, ranks ``A 2..9 T J Q K``; the small joker
is ``SB`` and the big joker ``HR``. Platform actions are ``[type, rank, cards]`` with types
``Single Pair Trips ThreePair ThreeWithTwo TwoTrips Straight StraightFlush Bomb PASS tribute back``;
the rank of a sequence is its **lowest** natural rank (``'A'`` for A-2-3-4-5), jokers are
ranks ``'B'`` (small) and ``'R'`` (big), and the four-joker bomb is ``['Bomb', 'JOKER', cards]``.
A wild appears as the literal heart level card. Nothing is guessed: anything else raises.
"""

from __future__ import annotations

from typing import Any

from guandan.core.cards import BIG_JOKER, RANK_CHARS, SMALL_JOKER, SUIT_CHARS
from guandan.core.errors import IllegalAction, NotationError
from guandan.core.plays import (
    BOMB,
    FULL_HOUSE,
    JOKER_BOMB,
    PAIR,
    PASS_TYPE,
    PLATE,
    PLATE_WINDOWS,
    RETURN_TYPE,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRAIGHT_WINDOWS,
    TRIBUTE_TYPE,
    TRIPLE,
    TUBE,
    TUBE_WINDOWS,
    PlayT,
    canonical,
    classify,
)

#: pyguandan type -> platform type
TYPE_TO_PLATFORM = {
    SINGLE: "Single",
    PAIR: "Pair",
    TRIPLE: "Trips",
    TUBE: "ThreePair",
    FULL_HOUSE: "ThreeWithTwo",
    PLATE: "TwoTrips",
    STRAIGHT: "Straight",
    STRAIGHT_FLUSH: "StraightFlush",
    BOMB: "Bomb",
    JOKER_BOMB: "Bomb",
    PASS_TYPE: "PASS",
    TRIBUTE_TYPE: "tribute",
    RETURN_TYPE: "back",
}
_PLATFORM_TO_TYPE = {v: k for k, v in TYPE_TO_PLATFORM.items() if k != JOKER_BOMB}
_WINDOWS = {STRAIGHT: STRAIGHT_WINDOWS, STRAIGHT_FLUSH: STRAIGHT_WINDOWS, TUBE: TUBE_WINDOWS, PLATE: PLATE_WINDOWS}
PASS_ACTION: list[Any] = ["PASS", "PASS", "PASS"]


def card_to_platform(face: int) -> str:
    """Face → platform card (``'HT'``, ``'SB'`` small joker, ``'HR'`` big joker).

    Raises:
        NotationError: ``face`` is not 0..53.
    """
    if face == SMALL_JOKER:
        return "SB"
    if face == BIG_JOKER:
        return "HR"
    if not isinstance(face, int) or not 0 <= face < 52:
        raise NotationError(str(face), f"no card face {face!r}")
    return SUIT_CHARS[face & 3] + RANK_CHARS[face >> 2]


def card_from_platform(text: str) -> int:
    """Platform card → face.

    Raises:
        NotationError: naming ``text`` when it is not a platform card.
    """
    if text == "SB":
        return SMALL_JOKER
    if text == "HR":
        return BIG_JOKER
    if isinstance(text, str) and len(text) == 2 and text[0] in SUIT_CHARS and text[1] in RANK_CHARS:
        return RANK_CHARS.index(text[1]) * 4 + SUIT_CHARS.index(text[0])
    raise NotationError(str(text), f"bad platform card {text!r}: expected suit+rank like 'HT', or SB/HR")


def rank_to_platform(rank: int) -> str:
    """Rank index → platform rank character (``'B'``/``'R'`` for the jokers)."""
    if 0 <= rank <= 12:
        return RANK_CHARS[rank]
    if rank == 13:
        return "B"
    if rank == 14:
        return "R"
    raise NotationError(str(rank), f"no rank {rank!r}")


def rank_from_platform(text: str) -> int:
    """Platform rank character → rank index.

    Raises:
        NotationError: not ``2..9 T J Q K A B R``.
    """
    if isinstance(text, str) and len(text) == 1 and text in RANK_CHARS:
        return RANK_CHARS.index(text)
    if text == "B":
        return 13
    if text == "R":
        return 14
    raise NotationError(str(text), f"bad platform rank {text!r}")


def _lowest(ptype: str, top: int) -> int:
    """Lowest natural rank of a sequence from its top (A is lowest in the A-low windows)."""
    return _WINDOWS[ptype][top][0]


def _top_from_lowest(ptype: str, low: int) -> int:
    for top, ranks in _WINDOWS[ptype].items():
        if ranks[0] == low:
            return top
    raise NotationError(RANK_CHARS[low], f"no {ptype} starts at {RANK_CHARS[low]}")


def action_to_platform(act: PlayT) -> list[Any]:
    """pyguandan action → platform ``[type, rank, cards]`` (PROTOCOL.md §4)."""
    t, r, cards = act
    if t == PASS_TYPE:
        return list(PASS_ACTION)
    pcards = [card_to_platform(f) for f in cards]
    if t in (TRIBUTE_TYPE, RETURN_TYPE):
        name = TYPE_TO_PLATFORM[t]
        return [name, name, pcards]
    if t == JOKER_BOMB:
        return ["Bomb", "JOKER", pcards]
    assert r is not None
    rank = _lowest(t, r) if t in _WINDOWS else r
    return [TYPE_TO_PLATFORM[t], rank_to_platform(rank), pcards]


def action_from_platform(data: Any, level: int) -> PlayT:
    """Platform ``[type, rank, cards]`` → pyguandan action at ``level`` (cards canonical).

    Plays are checked against :func:`~guandan.core.plays.classify`: the declared type and
    rank must be a reading of the cards.

    Raises:
        IllegalAction: ``malformed`` (not a platform action) or ``not_a_reading``.
        NotationError: a bad card or rank.
    """
    if not (isinstance(data, (list, tuple)) and len(data) == 3):
        raise IllegalAction("malformed", f"not a platform action: {data!r}")
    ptype, prank, pcards = data
    if ptype == "PASS":
        return (PASS_TYPE, None, ())
    if not isinstance(pcards, (list, tuple)):
        raise IllegalAction("malformed", f"cards must be a list: {data!r}")
    faces = tuple(card_from_platform(c) for c in pcards)
    if ptype in ("tribute", "back"):
        if len(faces) != 1:
            raise IllegalAction("malformed", f"{ptype} takes exactly one card")
        t = TRIBUTE_TYPE if ptype == "tribute" else RETURN_TYPE
        from guandan.core.cards import FACE_RANK

        return (t, FACE_RANK[faces[0]], faces)
    if ptype == "Bomb" and prank == "JOKER":
        t, rank = JOKER_BOMB, None
    else:
        t = _PLATFORM_TO_TYPE.get(ptype)  # type: ignore[assignment]
        if t is None or t in (PASS_TYPE, TRIBUTE_TYPE, RETURN_TYPE):
            raise IllegalAction("malformed", f"unknown platform action type {ptype!r}")
        low = rank_from_platform(prank)
        rank = _top_from_lowest(t, low) if t in _WINDOWS else low
    cards = canonical(faces, level)
    for p in classify(cards, level):
        if p[0] == t and p[1] == rank:
            return (t, rank, cards)
    raise IllegalAction("not_a_reading", f"{data!r} is not a reading of its cards at this level")
