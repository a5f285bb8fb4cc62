"""Cards, faces and text notation (docs/rules.md R1, R8, R11; DESIGN.md section 3).

Representation
--------------
* A **face** is an ``int`` in ``0..53``: ``rank * 4 + suit`` for the 52 ranked faces
  (rank ``0..12`` = ``2..A``, suit ``0..3`` = spades, hearts, clubs, diamonds), ``52`` is the
  small joker and ``53`` the big joker. Rules only care about faces; every face exists twice
  in the 108-card deck.
* A **physical card** is an ``int`` in ``0..107``: ``face + 54 * copy`` (copy 0 or 1). Physical
  ids exist so that the deck has 108 unique cards (R1, EC-48).
* A **rank** is an ``int``: ``0..12`` for ``2..A``, ``13`` small joker, ``14`` big joker.
* A **hand** inside the engine is a list of 54 per-face counts (each 0..2).

Notation: rank then suit, ``2..9 T J Q K A`` + ``S H C D``; jokers ``SJ`` and ``BJ``. Parsing
also accepts lower case and ``10`` for ``T``. Unicode display (``10♥``) is for people only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .errors import NotationError

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "SHCD"
SUIT_SYMBOLS = "♠♥♣♦"
SMALL_JOKER = 52
BIG_JOKER = 53
N_FACES = 54
N_CARDS = 108
SJ_RANK = 13
BJ_RANK = 14
HEARTS = 1

#: ``FACE_RANK[face]`` is the face's rank (0..12, 13 small joker, 14 big joker).
FACE_RANK: tuple[int, ...] = tuple(f >> 2 for f in range(52)) + (SJ_RANK, BJ_RANK)
#: ``FACE_SUIT[face]`` is the suit index, or -1 for jokers.
FACE_SUIT: tuple[int, ...] = tuple(f & 3 for f in range(52)) + (-1, -1)

_FACE_TEXT: tuple[str, ...] = tuple(
    RANK_CHARS[f >> 2] + SUIT_CHARS[f & 3] for f in range(52)
) + ("SJ", "BJ")
_TEXT_FACE: dict[str, int] = {t: f for f, t in enumerate(_FACE_TEXT)}


def rank_char(rank: int) -> str:
    """Return the notation of a rank index: ``0..12`` → ``'2'..'A'``, 13 → ``'SJ'``, 14 → ``'BJ'``."""
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise NotationError(str(rank), f"no rank with index {rank!r}")
    if 0 <= rank <= 12:
        return RANK_CHARS[rank]
    if rank == SJ_RANK:
        return "SJ"
    if rank == BJ_RANK:
        return "BJ"
    raise NotationError(str(rank), f"no rank with index {rank!r}")


def parse_rank(text: str) -> int:
    """Parse a rank (``'2'..'9'``, ``'T'``/``'10'``, ``'J' 'Q' 'K' 'A'``, ``'SJ'``, ``'BJ'``).

    Raises:
        NotationError: ``text`` is not a rank.
    """
    if not isinstance(text, str) or not text.isascii():
        raise NotationError(str(text), f"bad rank {text!r}: expected one of 2-9 T J Q K A SJ BJ")
    t = text.strip().upper()
    if t == "10":
        t = "T"
    if len(t) == 1 and t in RANK_CHARS:
        return RANK_CHARS.index(t)
    if t == "SJ":
        return SJ_RANK
    if t == "BJ":
        return BJ_RANK
    raise NotationError(text, f"bad rank {text!r}: expected one of 2-9 T J Q K A SJ BJ")


def parse_card(text: str) -> int:
    """Parse one card in rank-then-suit notation (``'TH'``, ``'10h'``, ``'SJ'``) into a face.

    Returns:
        The face index ``0..53``.
    Raises:
        NotationError: naming ``text`` when it is not a card.
    """
    if not isinstance(text, str) or not text.isascii():
        raise NotationError(
            str(text), f"bad card {text!r}: write rank then suit, e.g. TH, AS, 7D; jokers SJ and BJ"
        )
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    face = _TEXT_FACE.get(t)
    if face is None:
        raise NotationError(
            text,
            f"bad card {text!r}: write rank then suit, e.g. TH, AS, 7D; jokers SJ and BJ",
        )
    return face


def parse_cards(text: str | Iterable[str]) -> tuple[int, ...]:
    """Parse several cards, from a whitespace/comma separated string or a list of tokens.

    Returns:
        A tuple of faces, sorted ascending (the engine's canonical order).
    Raises:
        NotationError: naming the first bad token.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    faces = [parse_card(tok) for tok in tokens]
    faces.sort()
    return tuple(faces)


def card_text(face: int) -> str:
    """Notation of one face, e.g. ``'TH'``; raises :class:`NotationError` for a bad face."""
    if not isinstance(face, int) or isinstance(face, bool) or not 0 <= face < N_FACES:
        raise NotationError(str(face), f"no card face {face!r}")
    return _FACE_TEXT[face]


def cards_text(faces: Iterable[int]) -> str:
    """Space-separated notation of faces, e.g. ``'TH TD 9S'``."""
    return " ".join(card_text(f) for f in faces)


def card_unicode(face: int) -> str:
    """Human display of one face: ``'10♥'``, ``'A♠'``; jokers ``'🃟'`` (small) and ``'🃏'`` (big)."""
    if face == SMALL_JOKER:
        return "🃟"
    if face == BIG_JOKER:
        return "🃏"
    card_text(face)  # validates
    r = FACE_RANK[face]
    return ("10" if r == 8 else RANK_CHARS[r]) + SUIT_SYMBOLS[face & 3]


def wild_face(level: int) -> int:
    """The face of the wild (逢人配) at a level: the heart of the level rank (R8)."""
    return level * 4 + HEARTS


def face_of(card_id: int) -> int:
    """The face of a physical card id ``0..107``."""
    return card_id % N_FACES


def full_deck() -> list[int]:
    """The 108 physical card ids ``0..107`` (R1)."""
    return list(range(N_CARDS))


def counts_of(faces: Iterable[int]) -> list[int]:
    """Per-face counts (length 54) of an iterable of faces."""
    counts = [0] * N_FACES
    for f in faces:
        if not isinstance(f, int) or isinstance(f, bool) or not 0 <= f < N_FACES:
            raise NotationError(str(f), f"no card face {f!r}")
        counts[f] += 1
    return counts


def faces_of(counts: Sequence[int]) -> tuple[int, ...]:
    """Sorted faces (with repeats) of a per-face count vector."""
    out: list[int] = []
    for f, n in enumerate(counts):
        if n:
            out.extend((f,) * n)
    return tuple(out)
