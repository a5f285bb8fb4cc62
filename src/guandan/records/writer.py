"""The record format (version 1) and writing records: header, event lines, files (the format is
described in :mod:`guandan.records`; reading and replaying are :mod:`guandan.records.reader`)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import IO, Any

from guandan.core.errors import GuandanError
from guandan.core.match import Game

FORMAT = "pyguandan-record"
VERSION = 1
HANDS_KINDS = ("shuffled", "explicit")

#: Required fields of each event type (besides ``type``); optional ones in :data:`_OPTIONAL_FIELDS`.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "deal": ("game", "deal", "level", "levels", "hands"),
    "anti_tribute": ("seats", "leader"),
    "action": ("seat", "action"),
    "tribute_paid": ("tributes",),
    "returns_revealed": ("returns", "leader"),
    "jiefeng": ("leader",),
    "deal_end": (
        "finish_order", "result", "winner_team", "upgrade", "levels", "passed", "failed", "demoted", "a_fails",
    ),
    "game_over": ("game", "winner_team"),
    "time_called": ("game", "deal"),
}
_OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "deal": ("first_leader", "turned_card"),
    "deal_end": ("points", "points_total", "streaks"),
    "time_called": ("play_deal",),
}


#: Fields the engine added to events after records were first written: a record without one of them
#: was written before it existed and still replays (the replayed game's value is not compared).
#: ``turned_card``: the R51 card of a game's first deal; ``streaks``: the Yangzhou runs (AMB-17).
ADDED_FIELDS: dict[str, tuple[str, ...]] = {
    "deal": ("turned_card",),
    "deal_end": ("streaks",),
}


class RecordError(GuandanError):
    """A record that cannot be replayed: corrupt line, illegal action or mismatch.

    ``line`` is the 1-based line number (``len(lines) + 1`` when the record ends too early);
    ``reason`` the explanation; ``str(error)`` is ``"line N: reason"``. A ``ValueError``.
    """

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def dumps(obj: Any) -> str:
    """The record's canonical JSON text of one line (no spaces, UTF-8 kept, key order kept)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _canon(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# -- writing ---------------------------------------------------------------------------------------


def record_header(
    game: Game,
    preset: str | None = None,
    players: Sequence[str] | None = None,
    *,
    seed: int | None | str = "game",
    hands: str | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """The header object of ``game``'s record (see the module docstring).

    Args:
        game: the game.
        preset: preset name to store (default: the preset equal to ``game.rules``, else ``None``).
        players: four seat names (default ``["seat0", ...]``).
        seed: the seed to store (an int or ``None``); the default ``"game"`` means ``game.seed``.
        hands: ``"shuffled"`` or ``"explicit"``; default ``"explicit"`` when the game was given
            hands or has no seed, else ``"shuffled"``.
        created: optional ISO time stamp to include (omitted by default: byte-for-byte determinism).
    Raises:
        ValueError: not four player names, a seed that is not an int, or a bad ``hands`` value.
    """
    names = list(players) if players is not None else [f"seat{s}" for s in range(4)]
    if len(names) != 4 or not all(isinstance(n, str) for n in names):
        raise ValueError("a record needs four player names")
    the_seed = game.seed if seed == "game" else seed
    if the_seed is not None and not _is_int(the_seed):
        raise ValueError(f"the seed must be an integer or None, not {the_seed!r}")
    if hands is None:
        given = game.hands_given
        # a no-shuffle game's later deals come from the secure source, not the seed (core/gather.py)
        hands = "explicit" if given or the_seed is None or game.rules.no_shuffle else "shuffled"
    if hands not in HANDS_KINDS:
        raise ValueError(f"hands must be one of {', '.join(HANDS_KINDS)}, not {hands!r}")
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "preset": preset if preset is not None else game.rules.preset_name(),
        "options": game.rules.to_dict(),
        "seed": the_seed,
        "hands": hands,
        "first_leader": game.fixed_first_leader,
        "max_games": game.max_games,
        "players": names,
    }
    if created is not None:
        header["created"] = created
    return header


def record_lines(
    game: Game,
    preset: str | None = None,
    players: Sequence[str] | None = None,
    *,
    seed: int | None | str = "game",
    hands: str | None = None,
    created: str | None = None,
) -> list[str]:
    """The record of ``game`` so far as lines without line ends: the header then every event.

    Arguments as :func:`record_header`. Deterministic: the same seed and actions give the same lines.
    """
    header = record_header(game, preset, players, seed=seed, hands=hands, created=created)
    return [dumps(header)] + [dumps(ev) for ev in game.events]


def write_record(
    path_or_file: str | os.PathLike[str] | IO[str],
    game: Game,
    preset: str | None = None,
    players: Sequence[str] | None = None,
    *,
    seed: int | None | str = "game",
    hands: str | None = None,
    created: str | None = None,
) -> int:
    """Write ``game``'s record (UTF-8, one ``\\n`` after every line) to a path or a text file.

    Arguments as :func:`record_header`. Returns the number of lines written.
    Raises:
        OSError: the file cannot be written.
    """
    lines = record_lines(game, preset, players, seed=seed, hands=hands, created=created)
    text = "".join(line + "\n" for line in lines)
    if hasattr(path_or_file, "write"):
        path_or_file.write(text)
    else:
        with open(path_or_file, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return len(lines)
