"""Plays, readings (``classify``) and comparison (``beats``): docs/rules.md R9-R26.

A play is the triple ``Play(type, rank, cards)``, the same shape as the AI-competition
protocol's ``[type, rank, cards]``:

* ``type``: one of :data:`PLAY_TYPES` (or ``"pass"``, ``"tribute"``, ``"return"`` for the other
  actions, see :mod:`guandan.core.actions`);
* ``rank``: an ``int`` rank index (see :mod:`guandan.core.cards`): the top rank in sequence
  order for ``straight``/``tube``/``plate``/``straight_flush`` (A-2-3-4-5 has top ``5``), the
  triple's rank for ``full_house``, the cards' rank otherwise; ``None`` for ``joker_bomb``
  and ``pass``;
* ``cards``: the faces played in canonical order (:func:`canonical`): natural cards ascending
  by face, then the wilds; a wild appears as its own face (the heart of the level rank)
  whatever it stands for.

One set of cards can have several readings (R17): the reading is part of the action. Given
the type and rank, what each wild stands for is determined (see :func:`wild_assignment`).
"""

from __future__ import annotations

from typing import NamedTuple

from .cards import BIG_JOKER, FACE_RANK, FACE_SUIT, SMALL_JOKER, rank_char, wild_face

SINGLE = "single"
PAIR = "pair"
TRIPLE = "triple"
FULL_HOUSE = "full_house"
STRAIGHT = "straight"
TUBE = "tube"
PLATE = "plate"
BOMB = "bomb"
STRAIGHT_FLUSH = "straight_flush"
JOKER_BOMB = "joker_bomb"
PASS_TYPE = "pass"
TRIBUTE_TYPE = "tribute"
RETURN_TYPE = "return"

#: The ten combination types (R19 table), in display order.
PLAY_TYPES: tuple[str, ...] = (
    SINGLE, PAIR, TRIPLE, FULL_HOUSE, STRAIGHT, TUBE, PLATE, BOMB, STRAIGHT_FLUSH, JOKER_BOMB,
)
BOMB_TYPES = frozenset((BOMB, STRAIGHT_FLUSH, JOKER_BOMB))
SEQUENCE_TYPES = frozenset((STRAIGHT, TUBE, PLATE, STRAIGHT_FLUSH))


#: The plain-tuple form of a play, ``(type, rank, cards)``, as the move generator returns it.
PlayT = tuple[str, "int | None", tuple[int, ...]]


class Play(NamedTuple):
    """One action as ``(type, rank, cards)``; see the module docstring.

    Plain tuples ``(type, rank, cards)`` compare equal to ``Play`` values; the move generator
    returns ``Play`` instances.
    """

    type: str
    rank: int | None
    cards: tuple[int, ...]

    def __str__(self) -> str:
        from .cards import cards_text

        if self.type == PASS_TYPE:
            return "pass"
        r = "" if self.rank is None else " " + rank_char(self.rank)
        return f"{self.type}{r} [{cards_text(self.cards)}]"


PASS = Play(PASS_TYPE, None, ())
_tn = tuple.__new__


def canonical(cards: tuple[int, ...] | list[int], level: int) -> tuple[int, ...]:
    """Canonical order of played cards at ``level``: natural faces ascending, then the wilds."""
    w_face = wild_face(level)
    nat = sorted(f for f in cards if f != w_face)
    return tuple(nat) + (w_face,) * (len(cards) - len(nat))


def as_play(play: tuple[str, int | None, tuple[int, ...]]) -> Play:
    """Wrap a plain ``(type, rank, cards)`` tuple as a :class:`Play` (for attribute access)."""
    return play if isinstance(play, Play) else _tn(Play, tuple(play))



# --- per-level tables (R9) ---------------------------------------------------------------
def _strength_table(level: int) -> tuple[int, ...]:
    """Level order (R9): 2<...<A with the level rank lifted above A, then SJ, BJ."""
    out = []
    for r in range(15):
        if r < level:
            out.append(r)
        elif r == level:
            out.append(12)
        elif r <= 12:
            out.append(r - 1)
        else:
            out.append(r)
    return tuple(out)


#: ``STRENGTH[level][rank]``: position of ``rank`` in level order at ``level`` (0 lowest, 14 BJ).
STRENGTH: tuple[tuple[int, ...], ...] = tuple(_strength_table(lv) for lv in range(13))

# Sequence windows (R10): index = top rank; A is low only in the lowest window.
STRAIGHT_WINDOWS: dict[int, tuple[int, ...]] = {
    top: ((12, 0, 1, 2, 3) if top == 3 else tuple(range(top - 4, top + 1))) for top in range(3, 13)
}
TUBE_WINDOWS: dict[int, tuple[int, ...]] = {
    top: ((12, 0, 1) if top == 1 else tuple(range(top - 2, top + 1))) for top in range(1, 13)
}
PLATE_WINDOWS: dict[int, tuple[int, ...]] = {
    top: ((12, 0) if top == 0 else (top - 1, top)) for top in range(0, 13)
}

# Bomb ladder (R24): 4 < 5 < straight flush < 6 < 7 < 8 < 9 < 10 < four jokers.
_BOMB_BASE = {4: 0, 5: 100, 6: 300, 7: 400, 8: 500, 9: 600, 10: 700}
SF_BASE = 200
JOKER_BOMB_POWER = 1000


def bomb_power(ptype: str, rank: int | None, size: int, level: int) -> int:
    """Position of a bomb on the ladder (R24); higher beats lower, equal never beats (R26)."""
    if ptype == JOKER_BOMB:
        return JOKER_BOMB_POWER
    if ptype == STRAIGHT_FLUSH:
        assert rank is not None
        return SF_BASE + rank
    assert rank is not None
    return _BOMB_BASE[size] + STRENGTH[level][rank]


def play_key(play: tuple[str, int | None, tuple[int, ...]], level: int) -> int:
    """Comparison key of a play within its comparison class (see :func:`beats`)."""
    ptype, rank, cards = play
    if ptype in BOMB_TYPES:
        return bomb_power(ptype, rank, len(cards), level)
    assert rank is not None
    if ptype in SEQUENCE_TYPES:
        return rank
    return STRENGTH[level][rank]


def beats(
    a: tuple[str, int | None, tuple[int, ...]],
    b: tuple[str, int | None, tuple[int, ...]],
    level: int,
) -> bool:
    """Whether play ``a`` may be played over play ``b`` at ``level`` (R23-R26).

    Any bomb beats any non-bomb (R25); bombs follow the ladder (R24); otherwise the same type
    and card count with a strictly higher key (R23); equal never beats (R26). Passes never
    beat and are never beaten.
    """
    at, bt = a[0], b[0]
    if at == PASS_TYPE or bt == PASS_TYPE:
        return False
    a_bomb, b_bomb = at in BOMB_TYPES, bt in BOMB_TYPES
    if a_bomb:
        if not b_bomb:
            return True
        return play_key(a, level) > play_key(b, level)
    if b_bomb or at != bt or len(a[2]) != len(b[2]):
        return False
    return play_key(a, level) > play_key(b, level)


# --- classify ----------------------------------------------------------------------------
def classify(
    cards: tuple[int, ...] | list[int], level: int, full_house_joker_pair: bool = True
) -> list[Play]:
    """Every legal reading of a set of cards at ``level`` (R9-R22, R17).

    Args:
        cards: faces (any order, repeats allowed).
        level: the deal's level rank index ``0..12``; the wilds are its two hearts (R8).
        full_house_joker_pair: whether SJ SJ / BJ BJ may be a full house's pair (R21).
    Raises:
        NotationError: a card is not a face 0..53.
    Returns:
        The distinct readings as :class:`Play` values with sorted cards; empty when the cards
        are no legal play. A straight flush reading excludes the plain straight (AMB-27).
    """
    n = len(cards)
    for f in cards:
        if not isinstance(f, int) or isinstance(f, bool) or not 0 <= f < 54:
            from .errors import NotationError

            raise NotationError(str(f), f"no card face {f!r}")
    if n == 0 or n > 10:
        return []
    w_face = wild_face(level)
    cs = canonical(cards, level)
    w = cs.count(w_face)
    nat = list(cs[: n - w])
    jokers = sum(1 for f in nat if f >= SMALL_JOKER)
    out: list[Play] = []
    # rank histogram of natural (non-wild) cards
    hist: dict[int, int] = {}
    for f in nat:
        r = FACE_RANK[f]
        hist[r] = hist.get(r, 0) + 1

    if n == 1:
        f = cs[0]
        return [Play(SINGLE, level if f == w_face else FACE_RANK[f], cs)]
    if cs == (SMALL_JOKER, SMALL_JOKER, BIG_JOKER, BIG_JOKER):
        return [Play(JOKER_BOMB, None, cs)]

    # same-rank groups: pair (2), triple (3), bomb (4..10)
    if len(hist) <= 1:
        if not hist:  # only wilds: a pair of level cards (R15)
            if n == 2:
                out.append(Play(PAIR, level, cs))
        else:
            (r, k), = hist.items()
            if r >= 13:  # jokers: only natural pairs SJ SJ / BJ BJ (R19)
                if n == 2 and w == 0:
                    out.append(Play(PAIR, r, cs))
            elif n == 2:
                out.append(Play(PAIR, r, cs))
            elif n == 3:
                out.append(Play(TRIPLE, r, cs))
            elif n >= 4 and (r != level or n <= 8):
                out.append(Play(BOMB, r, cs))
    if n == 5:
        _classify_full_house(cs, hist, w, level, full_house_joker_pair, out)
        if jokers == 0:
            _classify_sequences(cs, nat, hist, w, 1, STRAIGHT_WINDOWS, out)
    elif n == 6 and jokers == 0:
        _classify_sequences(cs, nat, hist, w, 2, TUBE_WINDOWS, out)
        _classify_sequences(cs, nat, hist, w, 3, PLATE_WINDOWS, out)
    return out


def _classify_full_house(
    cs: tuple[int, ...],
    hist: dict[int, int],
    w: int,
    level: int,
    joker_pair: bool,
    out: list[Play],
) -> None:
    if len(hist) > 2:
        return
    ranks = list(hist)
    for t in range(13):
        nt = hist.get(t, 0)
        if nt == 0 or nt > 3:  # a triple needs a natural card (w <= 2)
            continue
        need_t = 3 - nt
        others = [r for r in ranks if r != t]
        if len(others) == 1:
            p = others[0]
            np_ = hist[p]
            if np_ > 2:
                continue
            if p >= 13:
                if not (joker_pair and np_ == 2):
                    continue
            if need_t + (2 - np_) == w:
                out.append(Play(FULL_HOUSE, t, cs))
        elif not others:
            # the pair is wilds only: allowed only as a pair of level cards (R15), t != level
            if need_t + 2 == w and t != level:
                out.append(Play(FULL_HOUSE, t, cs))


def _classify_sequences(
    cs: tuple[int, ...],
    nat: list[int],
    hist: dict[int, int],
    w: int,
    width: int,
    windows: dict[int, tuple[int, ...]],
    out: list[Play],
) -> None:
    for top, ranks in windows.items():
        missing = 0
        ok = True
        for r in ranks:
            k = hist.get(r, 0)
            if k > width:
                ok = False
                break
            missing += width - k
        if not ok or missing != w:
            continue
        if sum(hist.get(r, 0) for r in ranks) != len(nat):
            continue  # a natural card outside the window
        if width == 1:
            suits = {FACE_SUIT[f] for f in nat}
            out.append(Play(STRAIGHT_FLUSH if len(suits) == 1 else STRAIGHT, top, cs))
        else:
            out.append(Play(TUBE if width == 2 else PLATE, top, cs))


def reading_key(play: tuple[str, int | None, tuple[int, ...]]) -> tuple[str, int | None, int]:
    """``(type, rank, size)``: what identifies a reading of given cards (R17)."""
    return (play[0], play[1], len(play[2]))


def wild_assignment(play: Play, level: int) -> list[int]:
    """What each wild in ``play`` stands for, as faces, in order of the wilds in ``play.cards``.

    A wild standing for the level rank in a same-rank group is reported as itself. Used for
    display and the competition protocol; raises ``ValueError`` when ``play`` is not a valid
    reading of its cards.
    """
    w_face = wild_face(level)
    nw = play.cards.count(w_face)
    if nw == 0:
        return []
    nat = [f for f in play.cards if f != w_face]
    t, rank = play.type, play.rank
    if t in (SINGLE, PAIR, TRIPLE, BOMB):
        assert rank is not None
        return [rank * 4 + (FACE_SUIT[nat[0]] if nat and rank < 13 else 1)] * nw
    if t in (STRAIGHT, STRAIGHT_FLUSH, TUBE, PLATE):
        assert rank is not None
        width = {STRAIGHT: 1, STRAIGHT_FLUSH: 1, TUBE: 2, PLATE: 3}[t]
        windows = {1: STRAIGHT_WINDOWS, 2: TUBE_WINDOWS, 3: PLATE_WINDOWS}[width]
        suit = FACE_SUIT[nat[0]] if t == STRAIGHT_FLUSH else 0
        out: list[int] = []
        for r in windows[rank]:
            have = sum(1 for f in nat if FACE_RANK[f] == r)
            out.extend([r * 4 + suit] * (width - have))
        if len(out) != nw:
            raise ValueError(f"{play} is not a valid reading")
        return out
    if t == FULL_HOUSE:
        assert rank is not None
        have_t = sum(1 for f in nat if FACE_RANK[f] == rank)
        pair_nat = [f for f in nat if FACE_RANK[f] != rank]
        out = [rank * 4] * (3 - have_t)
        p = FACE_RANK[pair_nat[0]] if pair_nat else level
        out += [p * 4 + 1 if p == level else p * 4] * (2 - len(pair_nat))
        return out
    raise ValueError(f"{play} has no wilds to assign")


_TYPE_NAMES = {
    SINGLE: "single", PAIR: "pair", TRIPLE: "triple", FULL_HOUSE: "full house",
    STRAIGHT: "straight", TUBE: "tube", PLATE: "plate", BOMB: "bomb",
    STRAIGHT_FLUSH: "straight flush", JOKER_BOMB: "four-joker bomb", PASS_TYPE: "pass",
    TRIBUTE_TYPE: "tribute", RETURN_TYPE: "return",
}


def play_text(play: tuple[str, int | None, tuple[int, ...]], unicode: bool = False) -> str:
    """Readable one-line text of an action, e.g. ``'pair T: TH TD'`` or ``'bomb 6x9: ...'``.

    Args:
        play: ``(type, rank, cards)``.
        unicode: show cards as ``10♥`` instead of ``TH``.
    """
    from .cards import card_text, card_unicode

    t, r, cards = play
    if t == PASS_TYPE:
        return "pass"
    name = _TYPE_NAMES.get(t, t)
    if t == BOMB:
        name = f"{len(cards)}-card bomb"
    show = card_unicode if unicode else card_text
    rank = "" if r is None or t == JOKER_BOMB else " " + ("10" if unicode and r == 8 else rank_char(r))
    return f"{name}{rank}: " + " ".join(show(f) for f in cards)
