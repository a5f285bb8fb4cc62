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

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from guandan.server import friends as rules
from guandan.server.friends import FriendError
from guandan.server.models import FriendInvite, FriendLink, Room, RoomSeat, User, utcnow
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


def _links_of(db: Session, me_id: int) -> list[FriendLink]:
    return list(db.scalars(select(FriendLink).where(or_(FriendLink.user_low == me_id, FriendLink.user_high == me_id))))


def _other(link: FriendLink, me_id: int) -> int:
    return link.user_high if link.user_low == me_id else link.user_low


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


def touch(db: Session, user: User, now: datetime | None = None) -> bool:
    """Record that ``user`` was seen at ``now`` (presence), at most every
    :data:`~guandan.server.friends.TOUCH_EVERY_S` seconds: the ``UPDATE`` only writes when the stored
    ``last_seen_at`` is older, so concurrent processes write once. The caller commits.

    Presence is best effort: a database error of the write (a busy SQLite file, a lock timeout) is
    logged and rolled back, and the request goes on.

    Returns:
        Whether a write was issued (and is to be committed).
    """
    now = now or utcnow()
    if not rules.touch_due(user.last_seen_at, now):
        return False
    limit = now - timedelta(seconds=rules.TOUCH_EVERY_S)
    try:
        db.execute(update(User).where(User.id == user.id, or_(User.last_seen_at.is_(None), User.last_seen_at <= limit))
                   .values(last_seen_at=now).execution_options(synchronize_session=False))
    except SQLAlchemyError:
        logging.getLogger(__name__).warning("presence: marking account %s seen failed", user.id, exc_info=True)
        db.rollback()
        return False
    user.last_seen_at = now
    return True


def touch_id(db: Session, user_id: int, now: datetime | None = None) -> None:
    """:func:`touch` by account id (an open table socket's account), committing."""
    now = now or utcnow()
    limit = now - timedelta(seconds=rules.TOUCH_EVERY_S)
    db.execute(update(User).where(User.id == user_id, or_(User.last_seen_at.is_(None), User.last_seen_at <= limit))
               .values(last_seen_at=now).execution_options(synchronize_session=False))
    db.commit()


def _tables_of(db: Session, user_ids: list[int]) -> dict[int, list[tuple[str, str, str]]]:
    out: dict[int, list[tuple[str, str, str]]] = {}
    if not user_ids:
        return out
    rows = db.execute(select(RoomSeat.user_id, Room.id, Room.name, Room.status).join(Room, Room.id == RoomSeat.room_id)
                      .where(RoomSeat.user_id.in_(user_ids), Room.status.in_(rules.TABLE_STATUSES)))
    for uid, rid, rname, status in rows:
        out.setdefault(uid, []).append((rid, rname, status))
    return out


def _live_invitations(db: Session, me: User, now: datetime) -> list[dict[str, Any]]:
    """Invitations addressed to ``me`` that are live; dead ones (expired, room started or gone, me
    seated there already) are deleted."""
    rows = db.execute(select(FriendInvite, Room.status, Room.name, User.name)
                      .join(Room, Room.id == FriendInvite.room_id)
                      .join(User, User.id == FriendInvite.from_id)
                      .where(FriendInvite.to_id == me.id).order_by(FriendInvite.created_at.desc())).all()
    live: list[dict[str, Any]] = []
    for row, status, room_name, sender in rows:
        if rules.invitation_live(row.expires_at, status, _seated(db, row.room_id, me.id), now):
            live.append({"id": row.id, "from": sender, "room_id": row.room_id, "room_name": room_name,
                         "sent_at": _iso(row.created_at), "expires_at": _iso(row.expires_at)})
        else:
            db.delete(row)
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


def overview(db: Session, me: User, now: datetime) -> dict[str, Any]:
    """Everything of the friends panel for ``me``.

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
    links = _links_of(db, me.id)
    others = {u.id: u for u in db.scalars(select(User).where(User.id.in_([_other(ln, me.id) for ln in links])))}
    friend_ids = [_other(ln, me.id) for ln in links if ln.status == "accepted"]
    tables = _tables_of(db, friend_ids)
    friends: list[dict[str, Any]] = []
    incoming: list[dict[str, Any]] = []
    outgoing: list[dict[str, Any]] = []
    blocked: list[dict[str, Any]] = []
    for ln in links:
        other = others[_other(ln, me.id)]
        rating = display_rating(other.rating_mu, other.rating_sigma)
        if ln.status in ("blocked", "blocked_both"):
            if ln.status == "blocked_both" or ln.requester_id == me.id:  # the other's block is not shown to me
                blocked.append({"name": other.name})
        elif ln.status == "accepted":
            online = rules.is_online(other.last_seen_at, now)
            friends.append({"name": other.name, "rating": rating, "games_played": other.games_played,
                            "online": online, "table": rules.visible_table(online, tables.get(other.id, []))})
        elif ln.requester_id == me.id:
            outgoing.append({"name": other.name, "sent_at": _iso(ln.created_at)})
        else:
            incoming.append({"name": other.name, "rating": rating, "sent_at": _iso(ln.created_at)})
    friends.sort(key=lambda f: (not f["online"], f["name"].lower()))
    incoming.sort(key=lambda f: f["sent_at"], reverse=True)
    outgoing.sort(key=lambda f: f["name"].lower())
    blocked.sort(key=lambda f: f["name"].lower())
    board = rules.leaderboard(
        [{"name": me.name, "rating": display_rating(me.rating_mu, me.rating_sigma), "games_played": me.games_played,
          "me": True}]
        + [{"name": f["name"], "rating": f["rating"], "games_played": f["games_played"], "me": False} for f in friends])
    return {"friends": friends, "incoming": incoming, "outgoing": outgoing, "blocked": blocked,
            "invitations": _live_invitations(db, me, now), "leaderboard": board}




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
        self.tasks: set[Any] = set()

    def due(self, now: float | None = None) -> bool:
        """Whether to write now (``now``: monotonic seconds); a ``True`` answer starts the next wait."""
        import time

        t = time.monotonic() if now is None else now
        if self.last is not None and t - self.last < rules.TOUCH_EVERY_S:
            return False
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
           "relation_of", "remove_friend", "send_request", "touch", "touch_id", "unblock", "user_by_name"]
