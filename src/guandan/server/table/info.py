"""A room as the live table sees it: plain data read from the ``rooms`` / ``room_seats`` tables
(server contract) by the room store (:mod:`guandan.server.roomstore`)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from guandan.core.rules import RuleSet
from guandan.core.scoring import anhui_title

from .bots import bot_difficulty

#: Room statuses (server contract, table ``rooms``).
WAITING, PLAYING, FINISHED = "waiting", "playing", "finished"
#: Status of a room whose stored game cannot be restored (a record that is not UTF-8 or does not
#: replay): listed and shown, never played; the other rooms restore normally.
DAMAGED = "damaged"


@functools.lru_cache(maxsize=64)
def _preset_options(preset: str) -> dict[str, Any]:
    """The options of ``preset`` (``RuleSet()`` for an unknown preset name); shared, read-only."""
    try:
        return RuleSet.preset(preset).to_dict()
    except Exception:  # noqa: BLE001 - a custom or unknown preset name
        return RuleSet().to_dict()


@dataclass
class SeatInfo:
    """One seat of a room: ``seat`` 0-3, the person (``user_id``, ``name``) or ``bot`` name, or empty.
    ``points``: the person's accumulated Anhui points (``users.anhui_points``) when the room was
    last loaded, ``None`` for a bot, an empty seat or unknown."""

    seat: int
    user_id: int | None = None
    name: str | None = None
    bot: str | None = None
    points: int | None = None

    @property
    def filled(self) -> bool:
        """True when a person or a bot holds the seat."""
        return self.user_id is not None or self.bot is not None


@dataclass
class RoomInfo:
    """A room as stored in the ``rooms`` / ``room_seats`` tables (server contract).

    Attributes:
        id: 8-character room id; ``name``, ``preset``: as created; ``options``: ``RuleSet.to_dict()``.
        status: ``waiting``, ``playing`` or ``finished``; ``owner``/``owner_id``: the creator.
        seed: unused (``0``) unless ``settings.seeded_deals`` (tests); ``seats``: four :class:`SeatInfo`.
        record: the JSON Lines record text so far (``""`` before the game starts).
    """

    id: str
    name: str
    preset: str
    options: dict[str, Any]
    status: str
    owner: str | None
    owner_id: int | None
    seed: int
    seats: list[SeatInfo]
    record: str = ""
    #: lines of ``record`` already stored as ``game_events`` rows (the next index to append)
    stored_lines: int = 0
    #: the R53 default clocks apply when the game starts with more than one person (set at creation)
    default_clocks: bool = False
    #: ``Settings.public_url`` (for the UI's invite link), set by the server
    public_url: str | None = None
    #: the room created by "play again", once there is one
    next_room: str | None = None
    #: a board room (the daily challenge): the board's JSON (``Board.to_json``); its game is that
    #: board's one deal, its record a board record, and nobody but its seats may watch it
    board: dict[str, Any] | None = None
    #: the room's games move no rating and no Anhui points (``rooms.unrated``: a matched room with bots)
    unrated: bool = False

    @property
    def rules(self) -> RuleSet:
        """The room's rule set (raises ``RuleConfigError`` if the stored options are invalid)."""
        return RuleSet.from_dict(self.options)

    @property
    def clocks(self) -> tuple[float | None, float | None]:
        """``(lead_s, follow_s)`` move clocks in seconds, ``None`` = no clock (R53)."""
        return self.options.get("clock_lead_s"), self.options.get("clock_follow_s")

    def with_board(self, header: dict[str, Any]) -> dict[str, Any]:
        """A record header of this room: a board room's gets the board (``"board"``, a board record
        of :mod:`guandan.duplicate.board_records`, which a restart replays from the board); the
        header is returned (changed in place)."""
        if self.board is not None:
            header["board"] = self.board
        return header

    def seat_of(self, user_id: int | None) -> int | None:
        """The seat held by ``user_id``, or ``None``."""
        if user_id is None:
            return None
        for s in self.seats:
            if s.user_id == user_id:
                return s.seat
        return None

    def player_names(self) -> list[str]:
        """Four names for a game record: the person's name, ``bot:<difficulty>``, or ``seatN``."""
        return [s.name or (f"bot:{bot_difficulty(s.bot)}" if s.bot else f"seat{s.seat}") for s in self.seats]

    def overrides(self) -> dict[str, Any]:
        """The rule options that differ from the room's preset (docs/rules.md section P), clocks excluded:
        what the UI spells out ("打到 8"). Unknown presets compare with ``official``."""
        base = _preset_options(self.preset)
        return {
            k: v for k, v in self.options.items()
            if k not in ("clock_lead_s", "clock_follow_s") and base.get(k, object()) != v
        }

    def awards_points(self) -> bool:
        """True when the room's rules award Anhui points (option ``points``, docs/rules.md 2.1)."""
        return bool(self.options.get("points"))

    def base_points(self) -> list[int | None]:
        """Per seat, the account's Anhui points before this game (``None``: bot, empty, unknown)."""
        return [s.points if s.user_id is not None else None for s in self.seats]

    def summary(self, connected: Iterable[bool] = (False,) * 4) -> dict[str, Any]:
        """The contract's ``room`` object (docs/table-contract.md section 1): id, name, preset,
        options, ``overrides``, status, owner, seats (``{seat, kind, user, bot, difficulty,
        connected, title}``, ``bot`` being the difficulty, ``title`` the person's account title on
        the Anhui points ladder in a room whose rules award points, else ``null``; issue 21 item 7),
        ``invite_url`` (a path), ``public_url``, ``clocks`` (seconds or null, and ``default``),
        ``next_room``, ``board_room`` and ``unrated`` (its games move no rating: 不计分)."""
        conn = list(connected)
        lead, follow = self.clocks
        ladder = self.awards_points()
        seats = []
        for s in self.seats:
            diff = bot_difficulty(s.bot)
            kind = "person" if s.user_id is not None else "bot" if s.bot is not None else "empty"
            title = anhui_title(s.points) if ladder and kind == "person" and s.points is not None else None
            seats.append({"seat": s.seat, "kind": kind, "user": s.name, "bot": diff, "difficulty": diff,
                          "connected": bool(conn[s.seat]), "title": title})
        return {
            "id": self.id,
            "name": self.name,
            "preset": self.preset,
            "options": self.options,
            "overrides": self.overrides(),
            "status": self.status,
            "owner": self.owner,
            "seats": seats,
            "invite_url": f"/room/{self.id}",
            "public_url": self.public_url,
            "clocks": {"lead_s": lead, "follow_s": follow, "default": bool(self.default_clocks)},
            "next_room": self.next_room,
            "board_room": self.board is not None,
            "unrated": bool(self.unrated),
        }
