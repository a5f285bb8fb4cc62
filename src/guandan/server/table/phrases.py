"""Quick phrases and emotes at the table (issue 25 item 3): which ones exist, where they may be sent,
and how fast. Plain code with no I/O: the caller (:mod:`guandan.server.phrase_relay`) passes the
clock and the table's facts in and sends what this module allows.

R55 (docs/rules.md, RULES.md R55: no signalling between partners) decides the shape:

* **Fixed texts only.** A phrase is sent as an id from :data:`PHRASES` or :data:`EMOTES`, never as
  text; the browser shows its own words for the id, in its own language (``static/js/i18n_phrases.js``).
  No phrase names a card, a rank, a combination, a count of cards, or asks for a play (no "bomb it",
  "pass", "lead small"): nothing in the list can carry what a hand holds.
* **Off where results count.** Even a fixed text can become a code by *when* it is sent, so phrases
  are refused at tournament tables (reason ``tournament``), at a daily-challenge board
  (``board``: one person plays it alone) and at rated tables (``rated``: four people and no bot,
  the tables whose result moves the ratings under issue 25 item 1's rule that games with bot seats
  are not rated). What remains are tables with at least one bot seat.
* **Slow.** One person may send one phrase every :data:`MIN_GAP_S` seconds and at most
  :data:`BURST` in any :data:`WINDOW_S` seconds (:class:`PhraseLimiter`).
* Only a seated person sends (a spectator could otherwise prompt a player); everyone in the room sees
  the bubble.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["BURST", "EMOTES", "MIN_GAP_S", "PHRASES", "PHRASE_IDS", "PhraseLimiter", "WINDOW_S",
           "is_rated_table", "phrase_policy", "policy_frame", "table_off_reason"]

#: Preset phrases (ids; the words are the UI's, in Chinese and English). None speaks of cards or plays.
PHRASES: tuple[str, ...] = (
    "hello",        # 大家好 / Hello, everyone!
    "good_luck",    # 祝大家好运 / Good luck, everyone!
    "hurry",        # 快点吧，我等得花儿都谢了 / Hurry up, the flowers are wilting!
    "nice_play",    # 打得漂亮！ / Nice play!
    "well_played",  # 合作愉快 / Great teamwork!
    "thanks",       # 谢谢 / Thank you!
    "sorry",        # 不好意思 / Sorry!
    "again",        # 再来一局！ / One more game!
    "brb",          # 我马上回来 / Be right back
    "bye",          # 再见，下次再玩 / Bye, see you next time!
)
#: Emotes (ids; shown as a picture with a label for screen readers).
EMOTES: tuple[str, ...] = ("smile", "laugh", "love", "wow", "cry", "angry", "cool", "sleepy")
#: Every id a ``phrase`` message may carry.
PHRASE_IDS: frozenset[str] = frozenset(PHRASES + EMOTES)

#: Seconds between two phrases of one person.
MIN_GAP_S = 3.0
#: At most this many phrases of one person in any :data:`WINDOW_S` seconds.
BURST = 5
#: Window of :data:`BURST`, seconds.
WINDOW_S = 60.0


def is_rated_table(seat_kinds: Iterable[str]) -> bool:
    """Whether a table is rated for the phrase rule: all four seats hold people (``"person"``).

    Args:
        seat_kinds: each seat's kind, ``"person"``, ``"bot"`` or ``"empty"`` (the room summary's).
    Returns:
        True when there are four seats and every one is a person (issue 25 item 1: a game with a
        bot seat does not move ratings).
    """
    kinds = list(seat_kinds)
    return len(kinds) == 4 and all(k == "person" for k in kinds)


def phrase_policy(*, tournament: bool, board: bool, rated: bool) -> str | None:
    """Why phrases are off at a table, or ``None`` when they are on (R55).

    Args:
        tournament: the table plays a tournament match. board: a daily-challenge board room.
        rated: :func:`is_rated_table`.
    Returns:
        ``"tournament"``, ``"board"``, ``"rated"`` (first that applies) or ``None``.
    """
    if tournament:
        return "tournament"
    if board:
        return "board"
    if rated:
        return "rated"
    return None


def table_off_reason(info: object, tournament: bool) -> str | None:
    """:func:`phrase_policy` of a room: ``info`` is the table's
    :class:`~guandan.server.table.info.RoomInfo` (its ``seats`` and ``board`` are read).

    Args:
        info: the room. tournament: the table plays a tournament match (the host's competitions).
    Returns:
        The reason phrases are off, or ``None``.
    """
    seats = getattr(info, "seats", ())
    kinds = ["person" if s.user_id is not None else "bot" if s.bot is not None else "empty" for s in seats]
    return phrase_policy(tournament=tournament, board=getattr(info, "board", None) is not None,
                         rated=is_rated_table(kinds))


def policy_frame(off: str | None) -> dict[str, object]:
    """The ``phrases`` object of the state frame: ``{"on": bool, "off_reason": str | None}`` (the UI
    hides its button when ``on`` is false and says why from ``off_reason``; it knows the ids itself)."""
    return {"on": off is None, "off_reason": off}


@dataclass
class PhraseLimiter:
    """Per-person rate of phrases (R55: slow enough to be table manners, not a channel).

    Keys are whatever identifies a person (the account id). Times are seconds on any monotonic clock.
    Memory: at most :data:`BURST` times per key; :meth:`forget_before` drops idle keys.
    """

    min_gap_s: float = MIN_GAP_S
    burst: int = BURST
    window_s: float = WINDOW_S
    _sent: dict[object, deque[float]] = field(default_factory=dict)

    def wait(self, key: object, now: float) -> float:
        """Seconds ``key`` must still wait before its next phrase (0.0: it may send now).

        Both limits apply: :attr:`min_gap_s` after the last phrase, and the oldest of the last
        :attr:`burst` phrases must be :attr:`window_s` old.
        """
        sent = self._sent.get(key)
        if not sent:
            return 0.0
        wait = sent[-1] + self.min_gap_s - now
        if len(sent) >= self.burst:
            wait = max(wait, sent[0] + self.window_s - now)
        return max(0.0, wait)

    def take(self, key: object, now: float) -> float:
        """Count a phrase of ``key`` at ``now`` if allowed.

        Returns:
            0.0 when the phrase is allowed (and counted), else the seconds to wait (nothing counted).
        """
        wait = self.wait(key, now)
        if wait > 0.0:
            return wait
        sent = self._sent.setdefault(key, deque(maxlen=self.burst))
        sent.append(now)
        return 0.0

    def forget_before(self, now: float) -> None:
        """Drop the keys whose last phrase is older than :attr:`window_s` (they may send again anyway)."""
        for key in [k for k, q in self._sent.items() if not q or q[-1] + self.window_s <= now]:
            del self._sent[key]
