"""Observation encoders: fixed-width ``float32`` vectors, versioned, with a field table each.

Two layouts ship (select with ``obs=`` in :func:`guandan.rl.env`):

* ``"default"`` (:class:`DefaultEncoder`, ``obs_version = "default-1"``, 774 floats);
* ``"danzero"`` (:class:`DanZeroEncoder`, ``obs_version = "danzero-1"``, 513 floats of state; with
  the 54-float action features of a candidate this is the 567-feature input of DanZero-style
  value networks).

Every field is listed in the encoder's :attr:`Encoder.fields` as ``(name, size, meaning)``;
:attr:`Encoder.offsets` maps names to ``slice`` objects and :meth:`Encoder.decode` splits a vector
back into named arrays (tests decode known positions with it). ``guandan.rl.encoders.field_table(name)``
prints the table.

Conventions shared by both layouts
----------------------------------
* **Cards** are 54 per-face counts (0, 1 or 2: the game has two decks, R1) in the engine's face
  order ``rank * 4 + suit`` (rank 0..12 = 2..A, suit S H C D; 52 = SJ, 53 = BJ).
* **Relative seats**: ``0`` = the observing seat, ``1`` = the next seat in play order (下家),
  ``2`` = the partner (对家), ``3`` = the previous seat (上家) (R2, R3).
* **Levels** are rank indices 0..12 (2..A) one-hot over 13.
* Only public information and the observing seat's own hand are read (:class:`PublicState`):
  permuting the other seats' hidden cards leaves every observation unchanged.

Default layout fields (``default-1``)
-------------------------------------
==================  =====  ==========================================================================
field               size   meaning
==================  =====  ==========================================================================
hand                54     own cards, per-face counts
hand_ranks          15     own natural cards per rank 0..14 (wilds not counted), counts
wilds               3      own wilds (♥ of the level rank, R8) one-hot: 0, 1, 2
unseen              54     cards not in own hand and not yet played: 2 - hand - played (per face)
played              216    4 × 54: cards played this deal by relative seat 0..3
n_cards             116    4 × 29: cards held by relative seat, one-hot 0..28 (all zero when the
                           count is hidden by ``card_counts = le10``, R32)
top_cards           54     the play to beat (R23), per-face counts; zeros when leading
top_type            11     its type one-hot (10 play types of R19) + [10] = "leading, nothing to beat"
top_rank            15     its key rank one-hot (zeros for a joker bomb or when leading)
top_seat            4      relative seat that made it, one-hot
trick_last          168    3 × 56 for relative seats 1..3: their latest action in this trick:
                           54 card counts, [54] passed, [55] has not acted in this trick
level               13     the deal's level, one-hot
own_level           13     own team's level, one-hot
opp_level           13     the opponents' level, one-hot
phase               3      tribute, return, play (one-hot)
finished            16     4 × 4: relative seat × finishing place (1st..4th) one-hot
return_target       4      during own return (R47): the relative seat receiving it, one-hot
a_fails             2      failed target attempts (R41): own team, opponents (counts)
==================  =====  ==========================================================================

DanZero-compatible layout (``danzero-1``)
-----------------------------------------
The segment sizes, order and meanings follow DanZero's state features (Lu et al., "DanZero:
Mastering GuanDan Game with Reinforcement Learning", 2022: 513 state + 54 action = 567 inputs of
its Deep Monte-Carlo Q-network). Provenance, honestly: we could not read the paper's feature
table itself; the segment list below (sizes and order) comes from a public third-party
re-implementation's description of that layout, and the meaning of each segment from its name
there. "Matched" below means size, position and meaning agree with that description.

==================  =====  ==========================================================================
field               size   meaning
==================  =====  ==========================================================================
hand                54     own cards, per-face counts                                 (matched)
unseen              54     cards held by the other three seats together (2 - hand - played) (matched)
last_move           54     the play to beat (the latest non-pass play of this trick); zeros when
                           leading                                                      (matched)
partner_last_move   54     the partner's latest action this deal; zeros if it passed or has not
                           acted                                                        (matched)
n_cards             84     3 × 28 for relative seats 1, 2, 3: cards held, one-hot 0..27 (28 → 27)
                           (matched in size and meaning; the one-hot form is our reading)
played              162    3 × 54 for relative seats 1, 2, 3: cards played this deal  (matched)
levels              39     3 × 13: own team's level, opponents' level, the deal's level (the
                           description says 40 here but its offsets 462..501 and 501..513 only
                           leave 39 before the last 12; we use 3 one-hots of 13)
wild_info           12     our reading of the 12 wild-card features: 4 × 3 for relative seats
                           0..3: wilds held by seat 0 / wilds played by seats 1..3, one-hot 0..2
                           (the sub-layout of this segment is not public; documented guess)
==================  =====  ==========================================================================

What is **not** pinned down by public sources, and how we chose: the order of the 54 card slots
(we use the engine's face order above; a DanZero model trained on another slot order needs a
fixed permutation of each 54-block), the exact content of the last 12 features, and whether
card slots hold counts or presence bits (we use counts 0..2). The action features of a
candidate (:meth:`DanZeroEncoder.action_features`) are its 54 card counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from guandan.core.plays import PASS_TYPE, PLAY_TYPES, RETURN_TYPE, TRIBUTE_TYPE, PlayT

from .public import PublicState

_TYPE_INDEX = {t: i for i, t in enumerate(PLAY_TYPES)}
# candidate action types: the ten play types, pass, tribute, return
_ACTION_TYPE_INDEX = dict(_TYPE_INDEX, **{PASS_TYPE: 10, TRIBUTE_TYPE: 11, RETURN_TYPE: 12})
# face -> rank index 0..14
_FACE_RANK = np.array([f >> 2 for f in range(52)] + [13, 14], dtype=np.int64)


class Encoder:
    """Base of the observation encoders.

    Attributes:
        name: ``"default"`` or ``"danzero"``; ``version``: the ``obs_version`` string.
        fields: ``(name, size, meaning)`` in layout order; ``size``: total floats.
        offsets: field name → ``slice`` into the vector.
        action_size: floats per candidate in :meth:`action_features`.
    """

    name = ""
    version = ""
    fields: tuple[tuple[str, int, str], ...] = ()
    action_size = 54

    def __init__(self) -> None:
        self.offsets: dict[str, slice] = {}
        pos = 0
        for fname, size, _ in self.fields:
            self.offsets[fname] = slice(pos, pos + size)
            pos += size
        self.size = pos

    def encode(self, pub: PublicState, seat: int, hand: Sequence[int], out: np.ndarray) -> None:
        """Write the observation of ``seat`` into ``out`` (``float32 [size]``, overwritten).

        Args:
            pub: the table's public state (synced).
            seat: the observing seat 0..3.
            hand: the seat's own per-face counts (54).
            out: destination row.
        """
        raise NotImplementedError

    def action_features(self, action: PlayT, level: int, out: np.ndarray) -> None:
        """Write the features of one candidate action into ``out`` (``float32 [action_size]``, zeroed)."""
        for f in action[2]:
            out[f] += 1.0

    def decode(self, vec: np.ndarray) -> dict[str, np.ndarray]:
        """Split an observation into its named fields (views into ``vec``).

        Raises:
            ValueError: ``vec`` does not have :attr:`size` entries.
        """
        vec = np.asarray(vec)
        if vec.shape != (self.size,):
            raise ValueError(f"{self.version} observations have {self.size} floats, not shape {vec.shape}")
        return {k: vec[s] for k, s in self.offsets.items()}

    def field_table(self) -> list[dict[str, Any]]:
        """``[{name, offset, size, meaning}]`` in layout order (the offset table)."""
        return [
            {"name": n, "offset": self.offsets[n].start, "size": s, "meaning": m} for n, s, m in self.fields
        ]


def _rel(seat: int, other: int) -> int:
    return (other - seat) & 3


class DefaultEncoder(Encoder):
    """The default layout (``default-1``); see the module docstring for the field table."""

    name = "default"
    version = "default-1"
    fields = (
        ("hand", 54, "own cards, per-face counts"),
        ("hand_ranks", 15, "own natural cards per rank 0..14 (wilds excluded)"),
        ("wilds", 3, "own wilds one-hot 0/1/2"),
        ("unseen", 54, "2 - hand - played, per face"),
        ("played", 216, "4 x 54 cards played this deal by relative seat"),
        ("n_cards", 116, "4 x 29 cards held by relative seat, one-hot 0..28 (zeros when hidden)"),
        ("top_cards", 54, "the play to beat, per-face counts"),
        ("top_type", 11, "its type one-hot (10 types) + leading flag"),
        ("top_rank", 15, "its key rank one-hot"),
        ("top_seat", 4, "relative seat of the play to beat"),
        ("trick_last", 168, "3 x 56 latest action this trick of relative seats 1..3: cards, passed, none"),
        ("level", 13, "the deal's level one-hot"),
        ("own_level", 13, "own team's level one-hot"),
        ("opp_level", 13, "opponents' level one-hot"),
        ("phase", 3, "tribute / return / play one-hot"),
        ("finished", 16, "4 x 4 relative seat x finishing place one-hot"),
        ("return_target", 4, "relative seat receiving own return, one-hot"),
        ("a_fails", 2, "failed target attempts: own team, opponents"),
    )
    action_size = 84  # 54 cards + 13 action types + 15 ranks + wilds + size

    def __init__(self) -> None:
        super().__init__()
        o = self.offsets
        self._o = {k: v.start for k, v in o.items()}
        assert o["hand"].start == 0 and o["hand_ranks"].start == 54 and o["unseen"] == slice(72, 126)
        assert o["played"] == slice(126, 342) and o["n_cards"] == slice(342, 458)
        assert o["top_cards"].start == 458 and o["top_type"].start == 512 and o["top_rank"].start == 523
        assert o["top_seat"].start == 538 and o["trick_last"] == slice(542, 710) and o["level"] == slice(710, 723)
        assert o["opp_level"].stop == 749 and o["phase"] == slice(749, 752) and o["finished"].start == 752
        assert o["return_target"].start == 768 and o["a_fails"] == slice(772, 774)
        self._dense = _hand_matrix()

    def encode(self, pub: PublicState, seat: int, hand: Sequence[int], out: np.ndarray) -> None:
        """Write the observation (see :meth:`Encoder.encode`), recomputing only what changed.

        The blocks that depend on the seat's hand alone (``hand``, ``hand_ranks``, ``wilds`` and
        ``-hand`` for ``unseen``) are cached per seat in ``pub.cache`` with the seat's
        ``pub.hand_version`` (one entry per seat, replaced when the hand changes); the blocks fixed for a deal (levels, ``a_fails``) under the deal;
        ``played`` is a row copy of the incrementally kept ``pub.played_rel``; only the per-trick
        one-hot blocks (card counts, the play to beat, the trick, finishing places) are rebuilt,
        with scalar writes. Equal, float for float, to :meth:`encode_reference` (tested at every
        step of random deals under every preset).
        """
        cache = pub.cache
        key = (self, seat)
        ver = pub.hand_version[seat]
        got = cache.get(key)
        if got is not None and got[0] == ver:
            hb = got[1]
        else:  # replaces the seat's stale block (one live entry per seat: nothing piles up per deal)
            hb = self._hand_block(hand, pub.level)
            cache[key] = (ver, hb)
        out[0:72] = hb[0]
        np.add(pub.unseen_base, hb[1], out=out[72:126])
        out[126:342] = pub.played_rel[seat]
        skey = (self, seat, pub.level, pub.levels, pub.a_fails)
        sb = cache.get(skey)
        if sb is None:
            sb = np.zeros(39, np.float32)
            team = seat & 1
            sb[pub.level] = 1.0
            sb[13 + pub.levels[team]] = 1.0
            sb[26 + pub.levels[1 - team]] = 1.0
            af = np.zeros(2, np.float32)
            af[0], af[1] = pub.a_fails[team], pub.a_fails[1 - team]
            sb = cache[skey] = (sb, af)
        out[710:749] = sb[0]
        out[772:774] = sb[1]
        out[342:710] = 0.0
        out[749:772] = 0.0
        n_cards, vis = pub.n_cards, pub.counts_visible
        for i in range(4):
            s = (seat + i) & 3
            if i == 0 or vis[s]:
                n = n_cards[s]
                out[342 + 29 * i + (n if n < 28 else 28)] = 1.0
        top = pub.top
        if top is None:
            out[522] = 1.0  # top_type [10]: leading
        else:
            for f in top[2]:
                out[458 + f] += 1.0
            out[512 + _TYPE_INDEX[top[0]]] = 1.0
            if top[1] is not None:
                out[523 + top[1]] = 1.0
            out[538 + ((pub.top_seat - seat) & 3)] = 1.0  # type: ignore[operator]
        ph = pub.phase
        if ph == "play":
            out[751] = 1.0
            latest: dict[int, PlayT] = {}
            for s, a in pub.trick:
                latest[s] = a
            for i in (1, 2, 3):
                base = 542 + 56 * (i - 1)
                a = latest.get((seat + i) & 3)
                if a is None:
                    out[base + 55] = 1.0
                elif a[0] == PASS_TYPE:
                    out[base + 54] = 1.0
                else:
                    for f in a[2]:
                        out[base + f] += 1.0
        elif ph == "tribute":
            out[749] = 1.0
        elif ph == "return":
            out[750] = 1.0
        for place, s in enumerate(pub.finished):
            out[752 + 4 * ((s - seat) & 3) + place] = 1.0
        if pub.return_target is not None and pub.to_act == seat:
            out[768 + ((pub.return_target - seat) & 3)] = 1.0

    def _hand_block(self, hand: Sequence[int], level: int) -> tuple[np.ndarray, np.ndarray]:
        """``(hand | hand_ranks | wilds one-hot  [72], -hand [54])`` for the cache."""
        h = np.asarray(hand, dtype=np.float32)
        dense = np.dot(h, self._dense[level])
        nw = hand[level * 4 + 1]
        dense[69 + nw] = 1.0
        return dense[0:72], dense[72:126]

    def encode_reference(self, pub: PublicState, seat: int, hand: Sequence[int], out: np.ndarray) -> None:
        """From-scratch encoding (no cache): the specification :meth:`encode` is tested against."""
        # Dense blocks are written with NumPy slices; every one-hot bit and every card of a
        # play goes into one index list that a single ``bincount`` adds (profiled: a Python
        # loop of scalar NumPy writes cost about three times as much).
        o = self._o
        h = np.asarray(hand, dtype=np.float32)
        level = pub.level
        nw = hand[level * 4 + 1]
        order = [seat, (seat + 1) & 3, (seat + 2) & 3, (seat + 3) & 3]
        team = seat & 1
        idx: list[int] = [
            o["wilds"] + nw,
            o["level"] + level,
            o["own_level"] + pub.levels[team],
            o["opp_level"] + pub.levels[1 - team],
        ]
        nc = o["n_cards"]
        n_cards, vis = pub.n_cards, pub.counts_visible
        for i, s in enumerate(order):
            if i == 0 or vis[s]:
                n = n_cards[s]
                idx.append(nc + 29 * i + (n if n < 28 else 28))
        top = pub.top
        if top is None:
            idx.append(o["top_type"] + 10)
        else:
            tc = o["top_cards"]
            idx += [tc + f for f in top[2]]
            idx.append(o["top_type"] + _TYPE_INDEX[top[0]])
            if top[1] is not None:
                idx.append(o["top_rank"] + top[1])
            idx.append(o["top_seat"] + ((pub.top_seat - seat) & 3))  # type: ignore[operator]
        ph = pub.phase
        if ph == "play":
            idx.append(o["phase"] + 2)
            tl = o["trick_last"]
            latest: dict[int, PlayT] = {}
            for s, a in pub.trick:
                latest[s] = a
            for i in (1, 2, 3):
                base = tl + 56 * (i - 1)
                a = latest.get(order[i])
                if a is None:
                    idx.append(base + 55)
                elif a[0] == PASS_TYPE:
                    idx.append(base + 54)
                else:
                    idx += [base + f for f in a[2]]
        elif ph == "tribute":
            idx.append(o["phase"])
        elif ph == "return":
            idx.append(o["phase"] + 1)
        fo = o["finished"]
        for place, s in enumerate(pub.finished):
            idx.append(fo + 4 * ((s - seat) & 3) + place)
        if pub.return_target is not None and pub.to_act == seat:
            idx.append(o["return_target"] + ((pub.return_target - seat) & 3))
        af = o["a_fails"]
        idx += [af] * pub.a_fails[team] + [af + 1] * pub.a_fails[1 - team]
        out[:] = np.bincount(idx, minlength=self.size)
        dense = np.dot(h, self._dense[level])
        dense[72:126] += pub.unseen_base
        out[0:126] += dense
        out[126:342] = pub.played_rel[seat]

    def action_features(self, action: PlayT, level: int, out: np.ndarray) -> None:
        """54 card counts, action type one-hot (13: ten play types, pass, tribute, return), key rank
        one-hot (15), wilds used, cards / 10."""
        cards = action[2]
        for f in cards:
            out[f] += 1.0
        out[54 + _ACTION_TYPE_INDEX[action[0]]] = 1.0
        if action[1] is not None:
            out[67 + action[1]] = 1.0
        out[82] = cards.count(level * 4 + 1)
        out[83] = len(cards) / 10.0


class DanZeroEncoder(Encoder):
    """DanZero-compatible layout (``danzero-1``, 513 floats); see the module docstring."""

    name = "danzero"
    version = "danzero-1"
    fields = (
        ("hand", 54, "own cards, per-face counts"),
        ("unseen", 54, "cards held by the other three seats together"),
        ("last_move", 54, "the play to beat; zeros when leading"),
        ("partner_last_move", 54, "partner's latest action this deal; zeros for pass/none"),
        ("n_cards", 84, "3 x 28 cards held by relative seats 1..3, one-hot 0..27"),
        ("played", 162, "3 x 54 cards played this deal by relative seats 1..3"),
        ("levels", 39, "3 x 13 own level, opponents' level, deal level"),
        ("wild_info", 12, "4 x 3 wilds held (seat 0) / played (seats 1..3), one-hot 0..2"),
    )
    action_size = 54

    def encode(self, pub: PublicState, seat: int, hand: Sequence[int], out: np.ndarray) -> None:
        out.fill(0.0)
        h = np.asarray(hand, dtype=np.float32)
        out[0:54] = h
        out[54:108] = pub.unseen_base - h
        top = pub.top
        if top is not None:
            for f in top[2]:
                out[108 + f] += 1.0
        pl = pub.last_action[(seat + 2) & 3]
        if pl is not None and pl[0] != PASS_TYPE:
            for f in pl[2]:
                out[162 + f] += 1.0
        order = [(seat + i) & 3 for i in (1, 2, 3)]
        for i, s in enumerate(order):
            if pub.counts_visible[s]:
                out[216 + 28 * i + min(pub.n_cards[s], 27)] = 1.0
        out[300:462] = pub.played_rel[seat, 54:216]
        team = seat & 1
        out[462 + pub.levels[team]] = 1.0
        out[475 + pub.levels[1 - team]] = 1.0
        out[488 + pub.level] = 1.0
        w = pub.level * 4 + 1
        out[501 + min(int(hand[w]), 2)] = 1.0
        for i, s in enumerate(order):
            out[504 + 3 * i + min(int(pub.played[s, w]), 2)] = 1.0


_HAND_MATRIX: list[np.ndarray] = []


def _hand_matrix() -> np.ndarray:
    """``float32 [13, 54, 126]``, read-only, one per process (every encoder shares it: a copy per
    table made 64 tables stepped in turn miss the CPU caches): per level, hand counts (54) ->
    ``[hand | hand_ranks without the wild | 0 (wilds) | -hand]`` (the first 126 floats of the
    default layout; ``unseen`` = that last block + 2 - played)."""
    if not _HAND_MATRIX:
        m = np.zeros((13, 54, 126), dtype=np.float32)
        for lv in range(13):
            for f in range(54):
                m[lv, f, f] = 1.0
                if f != lv * 4 + 1:
                    m[lv, f, 54 + int(_FACE_RANK[f])] = 1.0
                m[lv, f, 72 + f] = -1.0
        m.flags.writeable = False
        _HAND_MATRIX.append(m)
    return _HAND_MATRIX[0]


ENCODERS: dict[str, type[Encoder]] = {"default": DefaultEncoder, "danzero": DanZeroEncoder}


def make_encoder(name: str) -> Encoder:
    """Build an encoder by name (``default`` or ``danzero``).

    Raises:
        ValueError: unknown name, listing the valid ones.
    """
    try:
        return ENCODERS[name]()
    except KeyError:
        raise ValueError(f"unknown observation encoder {name!r}; valid: {', '.join(ENCODERS)}") from None


def field_table(name: str) -> list[dict[str, Any]]:
    """The offset table of encoder ``name`` (see :meth:`Encoder.field_table`)."""
    return make_encoder(name).field_table()
