"""Non-play actions and helpers to build actions (tribute, return, pass).

Every action is a ``(type, rank, cards)`` triple like a play (the competition protocol's shape):

* ``PASS``: ``("pass", None, ())``;
* a tribute: ``("tribute", rank, (face,))`` (R45);
* a return: ``("return", rank, (face,))`` (R47).
"""

from __future__ import annotations

from .cards import FACE_RANK
from .plays import PASS, RETURN_TYPE, TRIBUTE_TYPE, Play, PlayT


def tribute(face: int) -> PlayT:
    """The action of paying ``face`` as tribute (R45)."""
    return (TRIBUTE_TYPE, FACE_RANK[face], (face,))


def return_card(face: int) -> PlayT:
    """The action of returning ``face`` (R47)."""
    return (RETURN_TYPE, FACE_RANK[face], (face,))


__all__ = ["PASS", "Play", "PlayT", "tribute", "return_card"]
