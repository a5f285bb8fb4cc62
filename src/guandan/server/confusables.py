"""Look-alike names (issue 26 item 15: ``张三一`` with U+4E00 and ``张三ー`` with U+30FC registered
as two people, and nobody can tell them apart on a table).

:func:`name_key` folds a name to a *skeleton* in the sense of Unicode TR39 (section 4, "Confusable
Detection"): two names with the same skeleton look alike, and only one of them may be registered
(``users.name_key`` is unique; :func:`guandan.server.auth.register`). The look-alike data is the
Unicode confusables table as packaged by ``confusable-homoglyphs`` (MIT; a dependency of the
server), read once:

* the characters it lists as confusable with each other form groups (taken transitively: if ``a``
  looks like ``b`` and ``b`` like ``c``, all three are one group); each character stands for the
  group's smallest code point, its *prototype*;
* an ASCII letter and its capital are one group too (names are unique ignoring case), so case
  and look-alikes combine: ``I`` looks like ``l``, hence ``i``, ``I``, ``l``, ``L`` and ``1`` are
  one group, and ``b0b``, ``BOB`` and ``bob`` one key;
* :data:`PAIRS`: letter pairs that read as one letter (``rn`` as ``m``, ``vv`` as ``w``).

The key of a name: NFKC (full-width and half-width forms, compatibility ideographs), each
character replaced by its prototype, then the pairs. A change of the
data or of this procedure only ever merges or splits keys of *new* registrations: the keys of
existing accounts were stored when they registered (or by migration ``0009``).
"""

from __future__ import annotations

import functools
import string
import unicodedata

#: Letter pairs taken for one letter (compared as prototypes): ``rn`` -> ``m``, ``vv`` -> ``w``.
PAIRS: tuple[tuple[str, str], ...] = (("rn", "m"), ("vv", "w"))


@functools.cache
def prototypes() -> dict[str, str]:
    """Every character of the confusables data that has look-alikes -> its group's prototype
    (the smallest code point of the group). Built once (about 10,000 characters).

    Raises:
        ImportError: ``confusable-homoglyphs`` is not installed (``pip install pyguandan`` brings it).
    """
    from confusable_homoglyphs.confusables import confusables_data

    parent: dict[str, str] = {}

    def find(c: str) -> str:
        root = c
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(c, c) != root:  # path compression
            parent[c], c = root, parent[c]
        return root

    def union(x: str, y: str) -> None:
        a, b = find(x), find(y)
        if a != b:
            lo, hi = (a, b) if a < b else (b, a)
            parent[hi] = lo
            parent.setdefault(lo, lo)

    for ch, alikes in confusables_data.items():
        if len(ch) != 1:
            continue
        for entry in alikes:
            other = entry.get("c", "")
            if len(other) == 1:
                union(ch, other)
    for letter in string.ascii_lowercase:  # names are unique ignoring case: a letter and its capital are one
        union(letter, letter.upper())
    return {c: find(c) for c in parent}


def _fold(text: str) -> str:
    table = prototypes()
    return "".join(table.get(ch, ch) for ch in text)


def name_key(name: str) -> str:
    """The skeleton of ``name`` (see the module docstring): names with the same key look alike.

    Args:
        name: a user name (the caller refuses NUL and lone surrogates first).
    Returns:
        The key (at most as long as the NFKC form of ``name``).
    Raises:
        ImportError: ``confusable-homoglyphs`` is not installed.
    """
    folded = _fold(unicodedata.normalize("NFKC", name).strip())
    for pair, one in PAIRS:
        folded = folded.replace(_fold(pair), _fold(one))
    return folded


__all__ = ["PAIRS", "name_key", "prototypes"]
