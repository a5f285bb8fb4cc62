"""Friends in the database: requests, friendships, presence and invitations (issue 25 item 2).

Each function takes a SQLAlchemy ``Session`` and the current time, reads what the rules of
:mod:`guandan.server.friends` need, calls them and writes what they decided; the caller commits.
Tables: ``friend_links`` (one row per pair of accounts), ``friend_invites``, and the column
``users.last_seen_at`` (:func:`touch`).

Nothing secret leaves here: :func:`overview` gives names, ratings, online flags and the id, name
and status of the room a friend sits at, never a card, a hand or another player's private data.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, case, delete, exists, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from guandan.server import friends as rules
from guandan.server.friends import FriendError
from guandan.server.models import FriendInvite, FriendLink, Room, RoomSeat, User, utcnow
from guandan.server.presence import PresenceBatch
from guandan.server.ratings import display_rating


def _account(user: User) -> rules.Account:
    return rules.Account(user.id, user.name, bool(user.is_guest))


def user_by_name(db: Session, name: str) -> User | None:
    """The account whose name is ``name`` ignoring ASCII case and surrounding spaces, or ``None``."""
    wanted = name.strip()
    if not wanted or len(wanted) > 64:
        return None
    return db.scalars(select(User).where(func.lower(User.name) == wanted.lower())).first()


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def _link(db: Session, a: int, b: int) -> FriendLink | None:
    low, high = _pair(a, b)
    return db.get(FriendLink, (low, high))


def relation_of(link: FriendLink | None, me_id: int) -> str:
    """My relation to the other side of ``link``: :data:`~guandan.server.friends.NONE`, ``FRIENDS``,
    ``I_ASKED``, ``THEY_ASKED``, ``I_BLOCKED``, ``BLOCKED_ME`` or ``BOTH_BLOCKED``."""
    if link is None:
        return rules.NONE
    if link.status == "accepted":
        return rules.FRIENDS
    if link.status == "blocked_both":
        return rules.BOTH_BLOCKED
    if link.status == "blocked":
        return rules.I_BLOCKED if link.requester_id == me_id else rules.BLOCKED_ME
    return rules.I_ASKED if link.requester_id == me_id else rules.THEY_ASKED


def _named(db: Session, me: User, name: object) -> tuple[str, User | None, FriendLink | None]:
    """``(the name asked for, its account or None, the link between me and it or None)``; a name
    that is not a string is asked for as ``""`` (no account)."""
    wanted = name if isinstance(name, str) else ""
    other = user_by_name(db, wanted)
    link = _link(db, me.id, other.id) if other is not None and other.id != me.id else None
    return wanted, other, link


def send_request(db: Session, me: User, name: object) -> tuple[str, User]:
    """A friend request from ``me`` to the account named ``name`` (rules: :func:`~guandan.server.friends.decide_request`).

    Returns:
        ``("requested" | "accepted", the other account)``.
    Raises:
        FriendError: see :func:`~guandan.server.friends.decide_request`; ``no_user`` for a name
            that is not a string.
    """
    wanted, target, link = _named(db, me, name)
    # the cap counts my friends and my own pending requests only: rows others made (their blocks
    # of me, their requests to me) must not lock me out of asking anyone
    count = db.scalar(select(func.count()).select_from(FriendLink).where(
        or_(FriendLink.user_low == me.id, FriendLink.user_high == me.id),
        or_(FriendLink.status == "accepted",
            and_(FriendLink.status == "pending", FriendLink.requester_id == me.id)))) or 0
    outcome = rules.decide_request(_account(me), _account(target) if target is not None else None,
                                   relation_of(link, me.id), count, wanted)
    assert target is not None
    if outcome == "accepted":
        assert link is not None
        link.status = "accepted"
    else:
        low, high = _pair(me.id, target.id)
        db.add(FriendLink(user_low=low, user_high=high, requester_id=me.id, status="pending"))
    db.flush()
    return outcome, target


def answer_request(db: Session, me: User, name: object, accept: bool) -> User:
    """Accept or decline the pending request from the account named ``name``.

    Returns:
        The other account.
    Raises:
        FriendError: ``guest_no_friends`` (403), ``no_request`` (404).
    """
    rules.check_may_have_friends(_account(me))
    wanted, other, link = _named(db, me, name)
    rules.check_answer(relation_of(link, me.id), wanted)
    assert link is not None and other is not None
    if accept:
        link.status = "accepted"
    else:
        db.delete(link)
    db.flush()
    return other


def remove_friend(db: Session, me: User, name: object) -> User:
    """End the friendship with (or take back my pending request to) the account named ``name``;
    the invitations between the two go too.

    Raises:
        FriendError: ``guest_no_friends`` (403), ``not_friends`` (404).
    """
    rules.check_may_have_friends(_account(me))
    wanted, other, link = _named(db, me, name)
    rules.check_remove(relation_of(link, me.id), wanted)
    assert link is not None and other is not None
    db.delete(link)
    _drop_invitations(db, me.id, other.id)
    db.flush()
    return other


def _drop_invitations(db: Session, a: int, b: int) -> None:
    db.execute(delete(FriendInvite).where(or_(and_(FriendInvite.from_id == a, FriendInvite.to_id == b),
                                              and_(FriendInvite.from_id == b, FriendInvite.to_id == a))))


def block(db: Session, me: User, name: object) -> User:
    """Block the account named ``name`` (rules: :func:`~guandan.server.friends.check_block`): a
    friendship or request between us ends, and the invitations between us go.

    Returns:
        The other account.
    Raises:
        FriendError: see :func:`~guandan.server.friends.check_block`.
    """
    wanted, other, link = _named(db, me, name)
    relation = relation_of(link, me.id)
    rules.check_block(_account(me), _account(other) if other is not None else None, relation, wanted)
    assert other is not None
    if link is None:
        low, high = _pair(me.id, other.id)
        db.add(FriendLink(user_low=low, user_high=high, requester_id=me.id, status="blocked"))
    elif relation == rules.BLOCKED_ME:  # the other's block stands beside mine
        link.status = "blocked_both"
    else:
        link.requester_id = me.id
        link.status = "blocked"
    _drop_invitations(db, me.id, other.id)
    db.flush()
    return other


def unblock(db: Session, me: User, name: object) -> User:
    """Lift my block of the account named ``name``.

    Raises:
        FriendError: ``guest_no_friends`` (403), ``not_blocked`` (404).
    """
    rules.check_may_have_friends(_account(me))
    wanted, other, link = _named(db, me, name)
    relation = relation_of(link, me.id)
    rules.check_unblock(relation, wanted)
    assert link is not None and other is not None
    if relation == rules.BOTH_BLOCKED:  # the other's block stays
        link.status = "blocked"
        link.requester_id = other.id
    else:
        db.delete(link)
    db.flush()
    return other


def _seated(db: Session, room_id: str, user_id: int) -> bool:
    return db.scalar(select(func.count()).select_from(RoomSeat).where(
        RoomSeat.room_id == room_id, RoomSeat.user_id == user_id)) != 0


def invite(db: Session, me: User, name: object, room_id: object, now: datetime) -> FriendInvite:
    """Invite the friend named ``name`` to room ``room_id`` (rules: :func:`~guandan.server.friends.check_invite`).

    An expired or dead invitation of the friend to the room is replaced.

    Raises:
        FriendError: ``guest_no_friends`` (403), ``not_friends``/``no_room`` (404), ``invite_not_seated``
            (403), ``room_not_waiting``/``already_seated``/``already_invited`` (409).
    """
    rules.check_may_have_friends(_account(me))
    wanted = name if isinstance(name, str) else ""
    rid = room_id if isinstance(room_id, str) else ""
    friend = user_by_name(db, wanted)
    link = _link(db, me.id, friend.id) if friend is not None and friend.id != me.id else None
    room = db.get(Room, rid[:16]) if rid else None
    relation = relation_of(link, me.id)
    existing = None
    friend_sits = False
    if friend is not None and room is not None:
        existing = db.scalars(select(FriendInvite).where(FriendInvite.room_id == room.id,
                                                         FriendInvite.to_id == friend.id)).first()
        friend_sits = _seated(db, room.id, friend.id)
    pending = existing is not None and rules.invitation_live(existing.expires_at, room.status if room else None,
                                                             friend_sits, now)
    rules.check_invite(relation, wanted, room.status if room is not None else None,
                       room is not None and _seated(db, room.id, me.id), friend_sits, pending, rid[:16])
    assert friend is not None and room is not None
    if existing is not None:
        db.delete(existing)
        db.flush()
    row = FriendInvite(room_id=room.id, from_id=me.id, to_id=friend.id, created_at=now,
                       expires_at=rules.invite_expiry(now))
    db.add(row)
    db.flush()
    return row


def dismiss(db: Session, me: User, invite_id: int) -> None:
    """Delete invitation ``invite_id`` addressed to ``me`` (or sent by ``me``).

    Raises:
        FriendError: 404 ``no_invitation``.
    """
    row = db.get(FriendInvite, invite_id)
    if row is None or me.id not in (row.to_id, row.from_id):
        raise FriendError(404, "no_invitation", "no such invitation", {"id": invite_id})
    db.delete(row)
    db.flush()


def touch(db: Session, user: Any, now: datetime | None = None, batch: PresenceBatch | None = None) -> bool:
    """Record that ``user`` (a ``User`` or a row with ``id`` and ``last_seen_at``) was seen at
    ``now`` (presence), at most every :data:`~guandan.server.friends.TOUCH_EVERY_S` seconds.

    Rule: nothing when the stored ``last_seen_at`` is younger than ``TOUCH_EVERY_S``
    (:func:`~guandan.server.friends.touch_due`). Otherwise, with a ``batch`` and an account that is
    online anyway (:func:`~guandan.server.friends.touch_at_once` false), the time is only noted in
    ``batch`` (written with the others by :func:`write_seen`). Else an ``UPDATE`` now, conditional
    in the database (written only when the stored value is ``TOUCH_EVERY_S`` old or older), so
    concurrent processes write once; the caller commits.

    Presence is best effort: a database error of the write (a busy SQLite file, a lock timeout) is
    logged and rolled back, and the request goes on.

    Returns:
        Whether a write was issued (and is to be committed); ``False`` when noted in ``batch``.
    """
    now = now or utcnow()
    if not rules.touch_due(user.last_seen_at, now):
        return False
    if batch is not None and not rules.touch_at_once(user.last_seen_at, now):
        batch.note(user.id, now)
        return False
    limit = now - timedelta(seconds=rules.TOUCH_EVERY_S)
    try:
        db.execute(update(User).where(User.id == user.id, or_(User.last_seen_at.is_(None), User.last_seen_at <= limit))
                   .values(last_seen_at=now).execution_options(synchronize_session=False))
    except SQLAlchemyError:
        logging.getLogger(__name__).warning("presence: marking account %s seen failed", user.id, exc_info=True)
        db.rollback()
        return False
    if isinstance(user, User):
        user.last_seen_at = now
    return True


def write_seen(db: Session, seen: dict[int, datetime]) -> None:
    """Store a batch of presence times (:class:`~guandan.server.presence.PresenceBatch`) in one
    transaction: ``last_seen_at = t`` for each ``{account id: t}``, only where the stored value is
    unset or older than ``t`` (never moved back, e.g. by a slower process of a cluster); commits.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: the database refused the write (rolled back).
    """
    if not seen:
        return
    users = User.__table__
    stmt = (update(users).where(users.c.id == bindparam("b_id"),
                                or_(users.c.last_seen_at.is_(None), users.c.last_seen_at < bindparam("b_t")))
            .values(last_seen_at=bindparam("b_t")))
    try:
        db.execute(stmt, [{"b_id": uid, "b_t": t} for uid, t in sorted(seen.items())])
        db.commit()
    except BaseException:
        db.rollback()
        raise


def write_seen_with(session_factory: Any, seen: dict[int, datetime]) -> None:
    """:func:`write_seen` in a session of its own (blocking: run in a database thread pool)."""
    with session_factory() as db:
        write_seen(db, seen)


def touch_id(db: Session, user_id: int, now: datetime | None = None) -> None:
    """:func:`touch` by account id (an open table socket's account), committing."""
    now = now or utcnow()
    limit = now - timedelta(seconds=rules.TOUCH_EVERY_S)
    db.execute(update(User).where(User.id == user_id, or_(User.last_seen_at.is_(None), User.last_seen_at <= limit))
               .values(last_seen_at=now).execution_options(synchronize_session=False))
    db.commit()


_USERS = User.__table__
_LINKS = FriendLink.__table__
_INVITES = FriendInvite.__table__
_ROOMS = Room.__table__
_SEATS = RoomSeat.__table__


# The panel's reads, built once (a poll only binds its account: no statement construction per request)
_ME = bindparam("me")
_TABLES_OF = (select(_SEATS.c.user_id, _ROOMS.c.id, _ROOMS.c.name, _ROOMS.c.status)
              .join(_ROOMS, _ROOMS.c.id == _SEATS.c.room_id)
              .where(_SEATS.c.user_id.in_(bindparam("ids", expanding=True)),
                     _ROOMS.c.status.in_(rules.TABLE_STATUSES)))
_INVITATIONS_OF = (select(_INVITES.c.id, _INVITES.c.room_id, _INVITES.c.created_at, _INVITES.c.expires_at,
                          _ROOMS.c.status, _ROOMS.c.name, _USERS.c.name,
                          exists().where(_SEATS.c.room_id == _INVITES.c.room_id, _SEATS.c.user_id == _ME))
                   .join(_ROOMS, _ROOMS.c.id == _INVITES.c.room_id)
                   .join(_USERS, _USERS.c.id == _INVITES.c.from_id)
                   .where(_INVITES.c.to_id == _ME).order_by(_INVITES.c.created_at.desc()))
_LINKS_OF = (select(_LINKS.c.requester_id, _LINKS.c.status, _LINKS.c.created_at, _USERS.c.id, _USERS.c.name,
                    _USERS.c.rating_mu, _USERS.c.rating_sigma, _USERS.c.games_played, _USERS.c.last_seen_at)
             .join(_USERS, _USERS.c.id == case((_LINKS.c.user_low == _ME, _LINKS.c.user_high), else_=_LINKS.c.user_low))
             .where(or_(_LINKS.c.user_low == _ME, _LINKS.c.user_high == _ME)))


def _tables_of(db: Session, user_ids: list[int]) -> dict[int, list[tuple[str, str, str]]]:
    out: dict[int, list[tuple[str, str, str]]] = {}
    if not user_ids:
        return out
    for uid, rid, rname, status in db.execute(_TABLES_OF, {"ids": user_ids}):
        out.setdefault(uid, []).append((rid, rname, status))
    return out


def _live_invitations(db: Session, me_id: int, now: datetime) -> list[dict[str, Any]]:
    """Invitations addressed to ``me_id`` that are live, newest first; dead ones (expired, room
    started or gone, me seated there already) are deleted. One query (Core, no ORM objects)."""
    live: list[dict[str, Any]] = []
    dead: list[int] = []
    for iid, room_id, created, expires, status, room_name, sender, me_seated in db.execute(_INVITATIONS_OF,
                                                                                          {"me": me_id}).all():
        if rules.invitation_live(expires, status, bool(me_seated), now):
            live.append({"id": iid, "from": sender, "room_id": room_id, "room_name": room_name,
                         "sent_at": _iso(created), "expires_at": _iso(expires)})
        else:
            dead.append(iid)
    if dead:
        db.execute(delete(_INVITES).where(_INVITES.c.id.in_(dead)))
    return live


def purge_invitations(db: Session, now: datetime) -> int:
    """Delete every expired invitation and every invitation to a room that is no longer waiting.

    Returns:
        How many rows were deleted.
    """
    waiting = select(Room.id).where(Room.status == "waiting")
    result = db.execute(delete(FriendInvite).where(or_(FriendInvite.expires_at <= now,
                                                       FriendInvite.room_id.not_in(waiting))))
    return int(getattr(result, "rowcount", 0) or 0)


def _iso(ts: datetime) -> str:
    return ts.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def overview(db: Session, me: Any, now: datetime) -> dict[str, Any]:
    """Everything of the friends panel for ``me`` (a ``User``, or a row with ``id``, ``name``,
    ``is_guest``, ``rating_mu``, ``rating_sigma``, ``games_played``).

    Three reads with Core (no ORM objects): my links with the other side's account, my friends'
    tables, my invitations (dead ones are deleted: the caller commits).

    Returns:
        ``{friends: [{name, rating, games_played, online, table}], incoming: [{name, rating, sent_at}],
        outgoing: [{name, sent_at}], blocked: [{name}] (blocked by me), invitations: [{id, from, room_id, room_name, sent_at, expires_at}],
        leaderboard: [{rank, name, rating, games_played, me}]}``; ``table`` is ``{room_id, room_name,
        status}`` or ``null`` (:func:`~guandan.server.friends.visible_table`); friends sorted online
        first, then by name.
    Raises:
        FriendError: 403 ``guest_no_friends``.
    """
    rules.check_may_have_friends(_account(me))
    links = db.execute(_LINKS_OF, {"me": me.id}).all()
    tables = _tables_of(db, [ln.id for ln in links if ln.status == "accepted"])
    friends: list[dict[str, Any]] = []
    incoming: list[dict[str, Any]] = []
    outgoing: list[dict[str, Any]] = []
    blocked: list[dict[str, Any]] = []
    for ln in links:
        rating = display_rating(ln.rating_mu, ln.rating_sigma)
        if ln.status in ("blocked", "blocked_both"):
            if ln.status == "blocked_both" or ln.requester_id == me.id:  # the other's block is not shown to me
                blocked.append({"name": ln.name})
        elif ln.status == "accepted":
            online = rules.is_online(ln.last_seen_at, now)
            friends.append({"name": ln.name, "rating": rating, "games_played": ln.games_played,
                            "online": online, "table": rules.visible_table(online, tables.get(ln.id, []))})
        elif ln.requester_id == me.id:
            outgoing.append({"name": ln.name, "sent_at": _iso(ln.created_at)})
        else:
            incoming.append({"name": ln.name, "rating": rating, "sent_at": _iso(ln.created_at)})
    friends.sort(key=lambda f: (not f["online"], f["name"].lower()))
    incoming.sort(key=lambda f: f["sent_at"], reverse=True)
    outgoing.sort(key=lambda f: f["name"].lower())
    blocked.sort(key=lambda f: f["name"].lower())
    board = rules.leaderboard(
        [{"name": me.name, "rating": display_rating(me.rating_mu, me.rating_sigma), "games_played": me.games_played,
          "me": True}]
        + [{"name": f["name"], "rating": f["rating"], "games_played": f["games_played"], "me": False} for f in friends])
    return {"friends": friends, "incoming": incoming, "outgoing": outgoing, "blocked": blocked,
            "invitations": _live_invitations(db, me.id, now), "leaderboard": board}


def mark_seen(session_factory: Any, user_id: int) -> None:
    """:func:`touch_id` in a session of its own (blocking: an open table socket's account, run in
    the manager's database thread pool)."""
    with session_factory() as db:
        touch_id(db, user_id)


class SocketSeen:
    """Presence of one open table websocket: :meth:`due` says when its account should be marked
    seen again (at connect, then at most every :data:`~guandan.server.friends.TOUCH_EVERY_S`
    seconds of messages; the client pings every few seconds), :meth:`spawn` runs the write in the
    background and logs a failure (presence is best effort: the socket and its game go on)."""

    def __init__(self) -> None:
        self.last: float | None = None
        #: whether the last ``True`` of :meth:`due` is to be written at once: the socket's first, or
        #: one :data:`~guandan.server.friends.TOUCH_AT_ONCE_S` or more after the socket's previous one
        #: (a socket silent that long may show offline before the batch is written:
        #: :func:`~guandan.server.friends.touch_at_once`); else a refresh of an online account, for
        #: the presence batch
        self.first = False
        self.tasks: set[Any] = set()

    def due(self, now: float | None = None) -> bool:
        """Whether to write now (``now``: monotonic seconds); a ``True`` answer starts the next wait
        and sets :attr:`first`."""
        import time

        t = time.monotonic() if now is None else now
        if self.last is not None and t - self.last < rules.TOUCH_EVERY_S:
            return False
        self.first = self.last is None or t - self.last >= rules.TOUCH_AT_ONCE_S
        self.last = t
        return True

    def spawn(self, work: Any) -> None:
        """Run the awaitable ``work`` as a task kept until it ends; its exception is swallowed."""
        import asyncio

        async def guarded() -> None:
            try:
                await work
            except Exception:  # noqa: BLE001 - presence must never break a table socket
                logging.getLogger(__name__).warning("presence: marking an account seen failed", exc_info=True)

        task = asyncio.get_running_loop().create_task(guarded())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


__all__ = ["SocketSeen", "answer_request", "block", "dismiss", "invite", "mark_seen", "overview", "purge_invitations",
           "relation_of", "remove_friend", "send_request", "touch", "touch_id", "unblock", "user_by_name",
           "write_seen", "write_seen_with"]
