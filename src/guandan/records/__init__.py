"""Game records: JSON Lines files that replay a game exactly (DESIGN.md section 3, docs/rules.md section P).

The format and writing are :mod:`.writer`; reading and replaying :mod:`.reader`.

Format (version 1), one JSON object per line, UTF-8, ``\\n`` line ends:

* line 1, the header::

    {"format":"pyguandan-record","version":1,"preset":"official","options":{...every RuleSet option...},
     "seed":7,"hands":"shuffled","first_leader":null,"max_games":1,"players":["heuristic",...]}

  ``preset`` is informational (the preset the options started from, or ``null``); ``options`` is
  authoritative (:meth:`RuleSet.to_dict`). ``seed`` seeds the game's ``random.Random`` (``null``:
  unknown). ``hands`` is ``"shuffled"`` (every deal was shuffled from the seed) or ``"explicit"``
  (some deals were supplied; their hands are taken from the ``deal`` events). ``first_leader`` and
  ``max_games`` are the :class:`~guandan.core.match.Game` arguments. ``players`` names the four
  seats. An optional ``created`` field (ISO time) is written only when asked for, so that by
  default the same seed gives byte-identical files; replay ignores it and any unknown header key.

* then one line per entry of :attr:`Game.events`, in order, exactly as the game produced them:
  ``deal``, ``anti_tribute``, ``action``, ``tribute_paid``, ``returns_revealed``, ``jiefeng``,
  ``deal_end``, ``game_over``, and ``time_called`` (R58: a timed match's clock ran out; the deal in
  progress is finished and the game ends there, ``game_over`` with the team ahead on levels or null).

  A game's first ``deal`` event carries ``turned_card`` (R51: the card turned face up, in the hands of
  ``first_leader``) under ``first_leader = turned_card``; under the Yangzhou ``streaks`` option every
  ``deal_end`` carries ``streaks`` (``bonus``, ``penalty`` per team, ``first_run`` ``[seat, run]``,
  ``last_runs`` ``[[seat, run], ...]``; AMB-17). Records written before these fields existed replay
  unchanged (:data:`~guandan.records.writer.ADDED_FIELDS`). A ``no_shuffle`` game's later deals are
  drawn from the secure source, so its header says ``"hands": "explicit"``.

Every line is ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``; events carry no
timestamps. :func:`replay` rebuilds the game from the header, re-applies every ``action`` event
through :meth:`Game.check` / :meth:`Game.apply` with the recorded seat, and requires every other
event the replayed game produces to equal the recorded one (compared as canonical JSON with sorted
keys), in the same place; ``action`` events are verified by the legality check itself.
"""

from __future__ import annotations

from .writer import (
    EVENT_FIELDS,
    FORMAT,
    VERSION,
    RecordError,
    dumps,
    record_header,
    record_lines,
    write_record,
)
from .reader import RecordedDraws, ReplayResult, iter_records, parse_header, read_lines, replay, replay_lines

__all__ = [
    "RecordedDraws",
    "EVENT_FIELDS",
    "FORMAT",
    "VERSION",
    "RecordError",
    "ReplayResult",
    "dumps",
    "iter_records",
    "parse_header",
    "read_lines",
    "record_header",
    "record_lines",
    "replay",
    "replay_lines",
    "write_record",
]
