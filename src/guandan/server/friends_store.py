"""Friends in the database: requests, friendships, presence and invitations (issue 25 item 2).

Each function takes a SQLAlchemy ``Session`` and the current time, reads what the rules of
:mod:`guandan.server.friends` need, calls them and writes what they decided; the caller commits.
Tables: ``friend_links`` (one row per pair of accounts), ``friend_invites``, and the column
``users.last_seen_at`` (:func:`touch`).

Nothing secret leaves here: :func:`overview` gives names, ratings, online flags and the id, name
and status of the room a friend sits at, never a card, a hand or another player's private data.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, delete, exists, func, or_, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from guandan.server import friends as rules
from guandan.server.friends import FriendError
from guandan.server.models import FriendInvite, FriendLink, Room, RoomSeat, User, UserSession, utcnow
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


def dismiss(db: Session, me: User, invite_id: int) -> int:
    """Delete invitation ``invite_id`` addressed to ``me`` (or sent by ``me``).

    Returns:
        The id of the invitation's other account (its sender, or the friend it was sent to).
    Raises:
        FriendError: 404 ``no_invitation``.
    """
    row = db.get(FriendInvite, invite_id)
    if row is None or me.id not in (row.to_id, row.from_id):
        raise FriendError(404, "no_invitation", "no such invitation", {"id": invite_id})
    other = int(row.from_id if row.to_id == me.id else row.to_id)
    db.delete(row)
    db.flush()
    return other


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
_SESSIONS = UserSession.__table__


# The panel's reads, built once (a call only binds its accounts: no statement construction per call).
# Each takes many accounts at once (``ids``), so the friends stream's sweep reads the panels of a batch
# of lobbies in one go (:func:`panels_json`); ``GET /api/friends`` reads one account the same way.
_IDS = bindparam("ids", expanding=True)
_ACCOUNTS_OF_KEYS = (select(_SESSIONS.c.token, _SESSIONS.c.expires_at, _USERS.c.id, _USERS.c.name, _USERS.c.is_guest,
                            _USERS.c.rating_mu, _USERS.c.rating_sigma, _USERS.c.games_played, _USERS.c.last_seen_at)
                     .join(_USERS, _USERS.c.id == _SESSIONS.c.user_id)
                     .where(_SESSIONS.c.token.in_(bindparam("keys", expanding=True))))
_LINKS_OF = (select(_LINKS.c.user_low, _LINKS.c.user_high, _LINKS.c.requester_id, _LINKS.c.status,
                    _LINKS.c.created_at)
             .where(or_(_LINKS.c.user_low.in_(_IDS), _LINKS.c.user_high.in_(bindparam("ids_too", expanding=True)))))
_PEOPLE = (select(_USERS.c.id, _USERS.c.name, _USERS.c.rating_mu, _USERS.c.rating_sigma, _USERS.c.games_played,
                  _USERS.c.last_seen_at).where(_USERS.c.id.in_(_IDS)))
_TABLES_OF = (select(_SEATS.c.user_id, _ROOMS.c.id, _ROOMS.c.name, _ROOMS.c.status)
              .join(_ROOMS, _ROOMS.c.id == _SEATS.c.room_id)
              .where(_SEATS.c.user_id.in_(_IDS), _ROOMS.c.status.in_(rules.TABLE_STATUSES)))
_INVITATIONS_OF = (select(_INVITES.c.to_id, _INVITES.c.id, _INVITES.c.room_id, _INVITES.c.created_at,
                          _INVITES.c.expires_at, _ROOMS.c.status, _ROOMS.c.name, _USERS.c.name,
                          exists().where(_SEATS.c.room_id == _INVITES.c.room_id, _SEATS.c.user_id == _INVITES.c.to_id))
                   .join(_ROOMS, _ROOMS.c.id == _INVITES.c.room_id)
                   .join(_USERS, _USERS.c.id == _INVITES.c.from_id)
                   .where(_INVITES.c.to_id.in_(_IDS)).order_by(_INVITES.c.created_at.desc(), _INVITES.c.id.desc()))


def _tables_of(db: Session, user_ids: list[int]) -> dict[int, list[tuple[str, str, str]]]:
    out: dict[int, list[tuple[str, str, str]]] = {}
    if not user_ids:
        return out
    for uid, rid, rname, status in db.execute(_TABLES_OF, {"ids": user_ids}):
        out.setdefault(uid, []).append((rid, rname, status))
    return out


def _live_invitations(db: Session, ids: list[int], now: datetime) -> dict[int, list[dict[str, Any]]]:
    """Invitations addressed to each of the accounts ``ids`` that are live, newest first (``{account
    id: [...]}``); dead ones (expired, room started or gone, the invited one seated there already)
    are deleted. One query (Core, no ORM objects)."""
    live: dict[int, list[dict[str, Any]]] = {}
    dead: list[int] = []
    for to_id, iid, room_id, created, expires, status, room_name, sender, seated in db.execute(
            _INVITATIONS_OF, {"ids": ids}).all():
        if rules.invitation_live(expires, status, bool(seated), now):
            live.setdefault(to_id, []).append({"id": iid, "from": sender, "room_id": room_id, "room_name": room_name,
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


def _panel(me: Any, links: list[tuple[Any, Any]], tables: dict[int, list[tuple[str, str, str]]],
           invitations: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    """One account's panel (:func:`overview`) from its link rows paired with the other side's
    account row, its friends' tables and its live invitations."""
    friends: list[dict[str, Any]] = []
    incoming: list[dict[str, Any]] = []
    outgoing: list[dict[str, Any]] = []
    blocked: list[dict[str, Any]] = []
    for ln, other in links:
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
            "invitations": invitations, "leaderboard": board}


def overviews(db: Session, accounts: list[Any], now: datetime) -> dict[int, dict[str, Any]]:
    """The friends panels of several accounts at once (:func:`overview` of each), in five reads
    whatever their number: the links of all of them, the other sides' accounts, the friends'
    tables, the invitations (dead ones are deleted: the caller commits).

    Args:
        accounts: registered accounts (``User`` objects or rows with ``id``, ``name``, ``is_guest``,
            ``rating_mu``, ``rating_sigma``, ``games_played``); the same account twice counts once.
        now: the time of the presence test (aware UTC).
    Returns:
        ``{account id: panel}``, each as :func:`overview` returns it.
    Raises:
        FriendError: 403 ``guest_no_friends`` when one of ``accounts`` is a guest (nothing read).
    """
    for me in accounts:
        rules.check_may_have_friends(_account(me))
    mine = {me.id: me for me in accounts}
    if not mine:
        return {}
    ids = list(mine)
    link_rows = db.execute(_LINKS_OF, {"ids": ids, "ids_too": ids}).all()
    others = {ln.user_high for ln in link_rows if ln.user_low in mine} | {ln.user_low for ln in link_rows
                                                                           if ln.user_high in mine}
    people = {p.id: p for p in db.execute(_PEOPLE, {"ids": sorted(others)}).all()} if others else {}
    per: dict[int, list[tuple[Any, Any]]] = {uid: [] for uid in ids}
    friend_ids: set[int] = set()
    for ln in link_rows:  # a link between two of ``accounts`` belongs to both panels
        for me_id, other_id in ((ln.user_low, ln.user_high), (ln.user_high, ln.user_low)):
            if me_id in mine and other_id in people:
                per[me_id].append((ln, people[other_id]))
                if ln.status == "accepted":
                    friend_ids.add(other_id)
    tables = _tables_of(db, sorted(friend_ids))
    invitations = _live_invitations(db, ids, now)
    return {uid: _panel(mine[uid], per[uid], tables, invitations.get(uid, []), now) for uid in ids}


def overview(db: Session, me: Any, now: datetime) -> dict[str, Any]:
    """Everything of the friends panel for ``me`` (a ``User``, or a row with ``id``, ``name``,
    ``is_guest``, ``rating_mu``, ``rating_sigma``, ``games_played``).

    Reads with Core (no ORM objects, :func:`overviews`): my links, the other sides' accounts, my
    friends' tables, my invitations (dead ones are deleted: the caller commits).

    Returns:
        ``{friends: [{name, rating, games_played, online, table}], incoming: [{name, rating, sent_at}],
        outgoing: [{name, sent_at}], blocked: [{name}] (blocked by me), invitations: [{id, from, room_id, room_name, sent_at, expires_at}],
        leaderboard: [{rank, name, rating, games_played, me}]}``; ``table`` is ``{room_id, room_name,
        status}`` or ``null`` (:func:`~guandan.server.friends.visible_table`); friends sorted online
        first, then by name.
    Raises:
        FriendError: 403 ``guest_no_friends``.
    """
    return overviews(db, [me], now)[me.id]


def panel_text(panel: dict[str, Any]) -> bytes:
    """A panel (:func:`overview`) as the compact JSON (UTF-8) that ``GET /api/friends`` and the
    friends stream send."""
    return json.dumps(panel, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def panels_json(db: Session, keys: list[str], now: datetime,
                batch: PresenceBatch | None = None) -> tuple[dict[str, int | None], dict[int, bytes]]:
    """The work of one sweep of the friends stream (:mod:`guandan.server.friends_push`): for the
    login sessions ``keys`` (``auth.token_key`` of their tokens) of open lobbies, check each session,
    mark its account seen (presence, as an authenticated request does: :func:`touch` with
    ``batch``), and read the panels of their accounts at once (:func:`overviews`); commits.

    Returns:
        ``(accounts, texts)``: ``accounts`` maps every key to its account id, or to ``None`` when
        the session is gone (logged out, expired, suspended: its stream is to be closed) or is a
        guest's; ``texts`` maps each live account id to its panel's JSON (:func:`panel_text`).
    Raises:
        sqlalchemy.exc.SQLAlchemyError: a read failed (rolled back; the sweep tries again later).
    """
    accounts: dict[str, int | None] = dict.fromkeys(keys)
    if not keys:
        return accounts, {}
    try:
        rows = db.execute(_ACCOUNTS_OF_KEYS, {"keys": sorted(set(keys))}).all()
        live = {r.token: r for r in rows if r.expires_at > now and not r.is_guest}
        wrote = False
        seen: set[int] = set()
        for key, row in live.items():
            accounts[key] = row.id
            if row.id not in seen:
                seen.add(row.id)
                wrote = touch(db, row, now, batch) or wrote
        if wrote:
            db.commit()
        unique = {r.id: r for r in live.values()}
        panels = overviews(db, list(unique.values()), now)
        db.commit()  # dead invitations deleted
    except BaseException:
        db.rollback()
        raise
    return accounts, {uid: panel_text(p) for uid, p in panels.items()}


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


__all__ = ["SocketSeen", "answer_request", "block", "dismiss", "invite", "mark_seen", "overview", "overviews", "panel_text",
           "panels_json", "purge_invitations",
           "relation_of", "remove_friend", "send_request", "touch", "touch_id", "unblock", "user_by_name",
           "write_seen", "write_seen_with"]
