"""Friends: the deciding rules, plain code with no I/O (issue 25 item 2).

:mod:`guandan.server.friends_store` reads the database, calls these functions and stores what they
decide; :mod:`guandan.server.api_friends` answers HTTP. Nothing here touches a database or a socket.

The rules
---------

* **Who may have friends**: registered accounts only. A guest account (``guest-xxxxxx``) can neither
  ask nor be asked (``guest_no_friends``, ``guest_target``): a guest's name is not kept by anyone.
* **A request** goes from one account to another by name. Refused: to oneself (``friend_self``), to
  a name with no account (``no_user``), when a request of mine to the same account is pending
  (``request_pending``), when we are already friends (``already_friends``). A request to someone who
  has already asked me is their request **accepted at once** (outcome ``"accepted"``).
* **Accept / decline** act on a pending request addressed to me (``no_request`` otherwise);
  declining deletes it, and the other may ask again later. **Remove** ends a friendship or takes
  back my own pending request (``not_friends`` when there is neither).
* **Block**: I may block any registered account but myself; it ends a friendship or a request
  between us and the invitations between us. While the block stands, no request goes either way:
  mine is refused with ``you_blocked`` (unblock first), theirs with ``request_blocked``. Only the
  blocker sees the block (in the ``blocked`` list) and may lift it (``unblock``; ``not_blocked``
  otherwise). Both may block each other (``BOTH_BLOCKED``): each block stands until its own blocker
  lifts it, so one side's unblock leaves the other's block in place; ``already_blocked`` answers a
  second block of mine.
* **Presence** is shown to accepted friends only, never to strangers or to a pending request's
  other side. A friend is *online* when the account was seen in the last :data:`ONLINE_WINDOW_S`
  seconds: "seen" is an authenticated HTTP request or a message on an open table websocket (the
  client pings every few seconds), written to ``users.last_seen_at`` at most every
  :data:`TOUCH_EVERY_S` seconds per account (the write is conditional in the database, so it holds
  across the processes of a cluster); a refresh of an account that is online anyway waits in memory
  for the next batched write, at most :data:`PRESENCE_FLUSH_S` seconds (:func:`touch_at_once`). An online friend is *at table X* when seated in room X whose
  status is ``waiting`` or ``playing``; an offline friend shows no table. Only the room's id, name
  and status are given: never a card, a hand or a score.
* **Invitations**: I may invite an accepted friend to a room in which I sit and which is still
  ``waiting`` (``invite_not_seated``, ``room_not_waiting``, ``not_friends``); the friend must not already
  sit in it (``already_seated``). One live invitation per friend per room (``already_invited``).
  An invitation lives :data:`INVITE_TTL_S` seconds; it disappears when it expires, when the room
  starts or is deleted, when the friend sits down in the room or dismisses it, or when the
  friendship ends.
* **Friends leaderboard**: me and my accepted friends, by display rating (mu - 3 sigma, one decimal)
  best first, then by games played (more first), then by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

#: An account seen within this many seconds is online.
ONLINE_WINDOW_S = 120
#: ``users.last_seen_at`` is written at most this often per account (seconds).
TOUCH_EVERY_S = 30
#: Seconds between two writes of the presence batch (:func:`touch_at_once`): a refresh of an online
#: account waits at most this long in memory before its one transaction.
PRESENCE_FLUSH_S = 5.0
#: A due touch is written at once (not batched) when the stored ``last_seen_at`` is this old or
#: older (or unset): the account shows offline or soon would, so its friends must see the write now.
TOUCH_AT_ONCE_S = ONLINE_WINDOW_S - 4 * PRESENCE_FLUSH_S
#: An invitation expires this many seconds after it was sent.
INVITE_TTL_S = 30 * 60
#: Statuses of a room in which a seated friend is shown "at table".
TABLE_STATUSES = ("waiting", "playing")
#: Most friends (accepted plus pending, both ways) one account may have.
MAX_FRIENDS = 200

#: Relation of two accounts as seen from "me": no link, friends, a request I sent, a request I received.
NONE, FRIENDS, I_ASKED, THEY_ASKED = "none", "friends", "i_asked", "they_asked"
#: ... I blocked the other; the other blocked me.
I_BLOCKED, BLOCKED_ME = "i_blocked", "blocked_me"
#: ... each blocked the other (two blocks, each lifted only by its own blocker).
BOTH_BLOCKED = "both_blocked"


class FriendError(Exception):
    """A refused friends action: HTTP ``status``, stable ``code``, English ``message`` and ``params``.

    The UI shows the ``code``'s words (``err_<code>`` in ``static/js/i18n_friends.js``) in the
    player's language.
    """

    def __init__(self, status: int, code: str, message: str, params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.params = params or {}


@dataclass(frozen=True)
class Account:
    """The facts about an account that the rules look at.

    Attributes:
        id: the account id.
        name: its name.
        is_guest: a guest account (no friends).
    """

    id: int
    name: str
    is_guest: bool


def check_may_have_friends(me: Account) -> None:
    """Raise unless ``me`` may use friends.

    Raises:
        FriendError: 403 ``guest_no_friends`` for a guest account.
    """
    if me.is_guest:
        raise FriendError(403, "guest_no_friends", "guest accounts cannot have friends: register an account first")


def _check_target(me: Account, target: Account | None, wanted: str, self_message: str) -> Account:
    """The checks shared by a request and a block: I may have friends, ``target`` exists, is not me
    and is not a guest.

    Raises:
        FriendError: ``guest_no_friends`` (403), ``no_user`` (404), ``friend_self`` (400, with
            ``self_message``), ``guest_target`` (400).
    """
    check_may_have_friends(me)
    if target is None:
        raise FriendError(404, "no_user", f"no account is named {wanted!r}", {"name": wanted[:40]})
    if target.id == me.id:
        raise FriendError(400, "friend_self", self_message)
    if target.is_guest:
        raise FriendError(400, "guest_target", f"{target.name} is a guest account: guests cannot have friends",
                          {"name": target.name})
    return target


def decide_request(me: Account, target: Account | None, relation: str, count: int, wanted: str = "") -> str:
    """What a friend request from ``me`` to ``target`` does.

    Args:
        me: the asking account.
        target: the account named, or ``None`` when no account has that name.
        relation: :data:`NONE`, :data:`FRIENDS`, :data:`I_ASKED` or :data:`THEY_ASKED` (from ``me``'s side).
        count: how many links (friends and pending requests) ``me`` has already.
        wanted: the name as typed (for the error's ``params``).
    Returns:
        ``"requested"`` (a new pending request) or ``"accepted"`` (``target`` had asked ``me``: the
        two are friends now).
    Raises:
        FriendError: ``guest_no_friends`` (403), ``no_user`` (404), ``friend_self`` (400),
            ``guest_target`` (400), ``already_friends`` (409), ``request_pending`` (409),
            ``you_blocked`` (409), ``request_blocked`` (403), ``too_many_friends`` (409, more than
            :data:`MAX_FRIENDS`).
    """
    target = _check_target(me, target, wanted, "you cannot add yourself as a friend")
    if relation == FRIENDS:
        raise FriendError(409, "already_friends", f"you and {target.name} are already friends", {"name": target.name})
    if relation == I_ASKED:
        raise FriendError(409, "request_pending", f"your request to {target.name} is waiting for an answer",
                          {"name": target.name})
    if relation == THEY_ASKED:
        return "accepted"
    if relation in (I_BLOCKED, BOTH_BLOCKED):
        raise FriendError(409, "you_blocked", f"you blocked {target.name}: unblock them first", {"name": target.name})
    if relation == BLOCKED_ME:
        raise FriendError(403, "request_blocked", f"{target.name} does not accept friend requests from you",
                          {"name": target.name})
    if count >= MAX_FRIENDS:
        raise FriendError(409, "too_many_friends", f"at most {MAX_FRIENDS} friends and requests",
                          {"max": MAX_FRIENDS})
    return "requested"


def check_answer(relation: str, name: str) -> None:
    """Raise unless there is a pending request from ``name`` to me (accept or decline).

    Raises:
        FriendError: 404 ``no_request``.
    """
    if relation != THEY_ASKED:
        raise FriendError(404, "no_request", f"there is no friend request from {name}", {"name": name[:40]})


def check_remove(relation: str, name: str) -> None:
    """Raise unless there is a friendship with ``name`` or my own pending request to them.

    Raises:
        FriendError: 404 ``not_friends``.
    """
    if relation not in (FRIENDS, I_ASKED):
        raise FriendError(404, "not_friends", f"{name} is not your friend", {"name": name[:40]})


def check_block(me: Account, target: Account | None, relation: str, wanted: str = "") -> bool:
    """Check that I may block ``target`` (always ``True`` when allowed: a block of mine is written
    even when the other has blocked me already, and then both blocks stand).

    Raises:
        FriendError: ``guest_no_friends`` (403), ``no_user`` (404), ``friend_self`` (400),
            ``guest_target`` (400), ``already_blocked`` (409).
    """
    target = _check_target(me, target, wanted, "you cannot block yourself")
    if relation in (I_BLOCKED, BOTH_BLOCKED):
        raise FriendError(409, "already_blocked", f"you have already blocked {target.name}", {"name": target.name})
    return True


def check_unblock(relation: str, name: str) -> None:
    """Raise unless I have blocked ``name``.

    Raises:
        FriendError: 404 ``not_blocked``.
    """
    if relation not in (I_BLOCKED, BOTH_BLOCKED):
        raise FriendError(404, "not_blocked", f"you have not blocked {name}", {"name": name[:40]})


def is_online(last_seen: datetime | None, now: datetime) -> bool:
    """Whether an account seen last at ``last_seen`` is online at ``now`` (aware UTC datetimes):
    seen within :data:`ONLINE_WINDOW_S` seconds (a clock running a little ahead counts as seen now)."""
    return last_seen is not None and now - last_seen <= timedelta(seconds=ONLINE_WINDOW_S)


def touch_due(last_seen: datetime | None, now: datetime) -> bool:
    """Whether ``users.last_seen_at`` should be written again at ``now``: never written, or written
    :data:`TOUCH_EVERY_S` seconds ago or more."""
    return last_seen is None or now - last_seen >= timedelta(seconds=TOUCH_EVERY_S)


def touch_at_once(last_seen: datetime | None, now: datetime) -> bool:
    """Whether a due touch (:func:`touch_due`) is written at once rather than batched.

    Rule: at once when ``last_seen`` (the stored value, aware UTC) is unset or at least
    :data:`TOUCH_AT_ONCE_S` (100) seconds before ``now``: the account is offline to its friends, or
    would be before the batch is written (every :data:`PRESENCE_FLUSH_S` seconds), so coming online
    shows at the friends' next poll. A refresh of an account seen more recently waits for the batch:
    it stays online meanwhile, since ``TOUCH_AT_ONCE_S + PRESENCE_FLUSH_S < ONLINE_WINDOW_S``.
    """
    return last_seen is None or now - last_seen >= timedelta(seconds=TOUCH_AT_ONCE_S)


def visible_table(online: bool, seats: list[tuple[str, str, str]]) -> dict[str, str] | None:
    """The table a friend is shown at.

    Args:
        online: whether the friend is online (:func:`is_online`).
        seats: ``(room id, room name, room status)`` of the rooms the friend sits in.
    Returns:
        ``{"room_id", "room_name", "status"}`` of a room ``playing`` (preferred) or ``waiting``, or
        ``None`` when the friend is offline or sits in no such room.
    """
    if not online:
        return None
    live = [s for s in seats if s[2] in TABLE_STATUSES]
    if not live:
        return None
    live.sort(key=lambda s: (s[2] != "playing", s[0]))
    room_id, room_name, status = live[0]
    return {"room_id": room_id, "room_name": room_name, "status": status}


def check_invite(relation: str, friend_name: str, room_status: str | None, i_sit: bool, friend_sits: bool,
                 pending: bool, room_id: str = "") -> None:
    """Raise unless I may invite ``friend_name`` to the room.

    Args:
        relation: my relation to the friend.
        friend_name: the invited account's name.
        room_status: the room's status, ``None`` when there is no such room.
        i_sit: whether I sit in the room.
        friend_sits: whether the friend already sits in it.
        pending: whether a live invitation of the friend to this room exists.
        room_id: the room's id (for the error's ``params``).
    Raises:
        FriendError: ``not_friends`` (404), ``no_room`` (404), ``invite_not_seated`` (403),
            ``room_not_waiting`` (409), ``already_seated`` (409), ``already_invited`` (409).
    """
    if relation != FRIENDS:
        raise FriendError(404, "not_friends", f"{friend_name} is not your friend", {"name": friend_name[:40]})
    if room_status is None:
        raise FriendError(404, "no_room", f"no room {room_id!r}", {"room": room_id[:16]})
    if not i_sit:
        raise FriendError(403, "invite_not_seated", "invite friends to a room you sit in", {"room": room_id})
    if room_status != "waiting":
        raise FriendError(409, "room_not_waiting", "the game in this room has started: no more invitations",
                          {"room": room_id})
    if friend_sits:
        raise FriendError(409, "already_seated", f"{friend_name} already sits in this room", {"name": friend_name})
    if pending:
        raise FriendError(409, "already_invited", f"{friend_name} is already invited to this room",
                          {"name": friend_name})


def invite_expiry(sent_at: datetime) -> datetime:
    """When an invitation sent at ``sent_at`` expires (:data:`INVITE_TTL_S` later)."""
    return sent_at + timedelta(seconds=INVITE_TTL_S)


def invitation_live(expires_at: datetime, room_status: str | None, friend_sits: bool, now: datetime) -> bool:
    """Whether an invitation is still shown: not expired at ``now``, the room exists and is
    ``waiting``, and the invited friend does not sit in it yet."""
    return now < expires_at and room_status == "waiting" and not friend_sits


def leaderboard(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The friends leaderboard: ``entries`` (``{name, rating, games_played, ...}``) sorted by
    ``rating`` best first, then ``games_played`` more first, then ``name``; each given its 1-based
    ``rank`` (equal ratings and games share a rank)."""
    ordered = sorted(entries, key=lambda e: (-e["rating"], -e["games_played"], e["name"].lower()))
    out: list[dict[str, Any]] = []
    for i, e in enumerate(ordered):
        prev = out[-1] if out else None
        same = prev is not None and prev["rating"] == e["rating"] and prev["games_played"] == e["games_played"]
        out.append({**e, "rank": prev["rank"] if same and prev is not None else i + 1})
    return out


__all__ = ["BLOCKED_ME", "BOTH_BLOCKED", "FRIENDS", "INVITE_TTL_S", "I_ASKED", "I_BLOCKED", "MAX_FRIENDS", "NONE", "ONLINE_WINDOW_S",
           "PRESENCE_FLUSH_S", "TABLE_STATUSES", "TOUCH_AT_ONCE_S",
           "THEY_ASKED", "TOUCH_EVERY_S", "Account", "FriendError", "check_answer", "check_block", "check_invite",
           "check_may_have_friends", "check_remove", "check_unblock", "decide_request", "invitation_live", "invite_expiry",
           "is_online", "leaderboard", "touch_at_once", "touch_due", "visible_table"]
