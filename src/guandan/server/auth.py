"""Accounts and login sessions: argon2 password hashing, name rules, session cookies.

* Passwords are hashed with argon2id (argon2-cffi ``PasswordHasher``); only the hash is stored.
  A new password (:func:`validate_password`) has 6-128 characters, is not the name, not only
  spaces or invisible characters, and not one of the commonest breached passwords
  (:mod:`guandan.server.passwords`).
* Names (:func:`validate_name`): 3-24 characters, ASCII letters, digits, ``_``, ``-`` or CJK
  characters; unique ignoring case and look-alikes (``张三一`` with U+4E00 and ``张三ー`` with
  U+30FC are one name: :mod:`guandan.server.confusables`); the prefix ``guest-`` is reserved for
  guest accounts.
* A login creates a row in ``sessions`` whose token (``secrets.token_urlsafe(32)``) is sent in the
  HTTP-only cookie ``gd_session`` (SameSite=Lax, Path=/). Websockets authenticate with the same
  cookie through :func:`user_from_token`.
* :class:`LoginLimiter` slows down password guessing (failed logins per client and name) without
  ever refusing the owner's correct password from an address that has not failed (the policy is
  in its docstring and in README "Security"); :data:`HASH_GATE` admits the password checks
  fairly (:mod:`guandan.server.hashgate`).

Errors for bad input are :class:`AuthError` (a ``ValueError``) with an HTTP status and a one-line
message; the routers turn them into ``{"error": message}`` responses.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
import unicodedata
from collections import deque
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from fastapi import Depends, HTTPException, Request, Response
from sqlalchemy import Row, bindparam, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from starlette.requests import HTTPConnection

from guandan.server.db import DbSession
from guandan.server.confusables import name_key
from guandan.server.errors import AuthError
from guandan.server.hashgate import Caller, HashGate
from guandan.server.friends_store import touch as touch_seen
from guandan.server.models import NAME_MAX, User, UserSession, utcnow
from guandan.server.passwords import password_problem

COOKIE_NAME = "gd_session"
GUEST_PREFIX = "guest-"
NAME_MIN = 3
PASSWORD_MIN = 6
PASSWORD_MAX = 128
DEFAULT_SESSION_DAYS = 30

# ASCII letters/digits/_/- plus CJK: unified ideographs (and extension A, compatibility), kana, Hangul.
_NAME_CHAR = r"A-Za-z0-9_\-\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_NAME_RE = re.compile(f"[{_NAME_CHAR}]+")

_hasher = PasswordHasher()
# Verified against when the name is unknown, so that a login takes as long either way.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


# -- passwords and names ---------------------------------------------------------------------------


#: The process's :class:`HashGate` (every hash and password check goes through it).
HASH_GATE = HashGate()


def hash_password(password: str) -> str:
    """Argon2id hash of ``password`` (a string starting ``$argon2id$``).

    Raises:
        AuthError(503, ``server_busy``): too many hashes are running or waiting (:data:`HASH_GATE`).
    """
    with HASH_GATE:
        return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches ``password_hash`` (``False`` for ``None`` or a corrupt hash)."""
    if not password_hash:
        _safe_verify(_DUMMY_HASH, password)
        return False
    return _safe_verify(password_hash, password)


def _safe_verify(password_hash: str, password: str) -> bool:
    try:
        with HASH_GATE:
            return _hasher.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def _check_text(value: str, field: str) -> None:
    from guandan.server.hardening import check_text

    check_text(value, field)  # AuthError(400, "invalid_text"): NUL or a lone surrogate


def normalize_name(name: str) -> str:
    """The canonical form of a user name: NFKC (full-width ``Ａ`` becomes ``A``), spaces stripped."""
    return unicodedata.normalize("NFKC", name).strip()


def validate_name(name: object, *, guest: bool = False) -> str:
    """Check a user name and return its canonical form (:func:`normalize_name`).

    Rules: 3-24 characters, each an ASCII letter or digit, ``_``, ``-`` or a CJK character
    (Chinese, kana, Hangul); a name starting ``guest-`` (any case) only for guests.

    Raises:
        AuthError(400): the name breaks a rule (the message says which).
    """
    if not isinstance(name, str):
        raise AuthError(400, "the name must be a string", "name_not_string")
    if len(name) > 4 * NAME_MAX:
        raise AuthError(400, f"the name must have {NAME_MIN} to {NAME_MAX} characters", "name_length",
                        {"min": NAME_MIN, "max": NAME_MAX})
    _check_text(name, "name")
    name = normalize_name(name)
    if len(name) < NAME_MIN or len(name) > NAME_MAX:
        raise AuthError(400, f"the name must have {NAME_MIN} to {NAME_MAX} characters", "name_length",
                        {"min": NAME_MIN, "max": NAME_MAX})
    if not _NAME_RE.fullmatch(name):
        raise AuthError(400, "the name may only use letters, digits, _ and - (or CJK characters)", "name_chars")
    if not guest and name.lower().startswith(GUEST_PREFIX):
        raise AuthError(400, f"names starting with {GUEST_PREFIX!r} are reserved for guests", "name_reserved",
                        {"prefix": GUEST_PREFIX})
    return name


def validate_password(password: object, name: str | None = None) -> str:
    """Check a new password (for the account ``name``) and return it.

    Raises:
        AuthError(400): ``password_not_string``; ``invalid_text`` (a NUL or a lone surrogate);
            ``password_short`` / ``password_long`` (fewer than 6 or more than 128 characters);
            ``password_invisible`` (only spaces or invisible characters such as zero-width
            spaces); ``password_is_name`` (the name, ignoring case); ``password_common`` (one of
            the commonest breached passwords, :data:`guandan.server.passwords.COMMON_PASSWORDS`).
    """
    if not isinstance(password, str):
        raise AuthError(400, "the password must be a string", "password_not_string")
    _check_text(password, "password")
    if len(password) < PASSWORD_MIN:
        raise AuthError(400, f"the password must have at least {PASSWORD_MIN} characters", "password_short",
                        {"min": PASSWORD_MIN})
    if len(password) > PASSWORD_MAX:
        raise AuthError(400, f"the password must have at most {PASSWORD_MAX} characters", "password_long",
                        {"max": PASSWORD_MAX})
    problem = password_problem(password, name)
    if problem is not None:
        raise AuthError(400, problem[1], problem[0])
    return password


# -- accounts --------------------------------------------------------------------------------------


def find_user(db: Session, name: str) -> User | None:
    """The user called ``name`` (compared after :func:`normalize_name`, ignoring ASCII case), or ``None``."""
    key = normalize_name(name).lower()
    return db.scalars(select(User).where(func.lower(User.name) == key)).first()


def register(db: Session, name: object, password: object) -> User:
    """Create a registered account (flushed, not committed).

    Raises:
        AuthError(400): a bad name or password. AuthError(409): the name is taken (``name_taken``)
            or looks like a taken one (``name_look_alike``).
    """
    name = validate_name(name)
    password = validate_password(password, name)
    password_hash = hash_password(password)  # before any query: no connection is held while hashing
    if find_user(db, name) is not None:
        raise AuthError(409, f"the name {name!r} is already taken", "name_taken", {"name": name})
    key = name_key(name)
    _check_look_alike(db, name, key)
    user = User(name=name, name_key=key, password_hash=password_hash, is_guest=False)
    db.add(user)
    try:
        with db.begin_nested():
            db.flush()
    except IntegrityError:  # lost a race with another registration of the same (or a look-alike) name
        if user in db:
            db.expunge(user)
        _check_look_alike(db, name, key)
        raise AuthError(409, f"the name {name!r} is already taken", "name_taken", {"name": name}) from None
    return user


def _check_look_alike(db: Session, name: str, key: str) -> None:
    """Refuse ``name`` when an account's name looks like it (the same :func:`name_key`).

    Raises:
        AuthError(409, ``name_look_alike``, params ``name`` and ``taken``): the look-alike exists.
    """
    other = db.scalars(select(User.name).where(User.name_key == key)).first()
    if other is not None and other.lower() != name.lower():
        raise AuthError(409, f"the name {name!r} looks too much like {other!r}, which is taken", "name_look_alike",
                        {"name": name, "taken": other})
    if other is not None:
        raise AuthError(409, f"the name {name!r} is already taken", "name_taken", {"name": name})


def authenticate(db: Session, name: object, password: object) -> User:
    """The registered user whose name and password match.

    Raises:
        AuthError(400): name or password missing or not strings.
        AuthError(401): unknown name, a guest account, or a wrong password (the message does not say which).
    """
    if not isinstance(name, str) or not isinstance(password, str) or not name or not password:
        raise AuthError(400, "give a name and a password", "credentials_missing")
    if len(name) > 4 * NAME_MAX or len(password) > PASSWORD_MAX:
        raise AuthError(401, "wrong name or password", "wrong_credentials")
    _check_text(name, "name")
    _check_text(password, "password")
    user = find_user(db, name)
    hashed = user.password_hash if user is not None and not user.is_guest else None
    db.commit()  # ends the read: the connection goes back to the pool before the slow check
    if not verify_password(hashed, password) or user is None:
        raise AuthError(401, "wrong name or password", "wrong_credentials")
    if _hasher.check_needs_rehash(user.password_hash or ""):
        user.password_hash = hash_password(password)
    return user


def create_guest(db: Session) -> User:
    """Create a guest account named ``guest-`` plus 6 random letters/digits (flushed, not committed).

    Raises:
        RuntimeError: no free name after several tries (practically impossible).
    """
    alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
    for _ in range(20):
        name = GUEST_PREFIX + "".join(secrets.choice(alphabet) for _ in range(6))
        if find_user(db, name) is not None:
            continue
        user = User(name=name, name_key=name_key(name), password_hash=None, is_guest=True)
        db.add(user)
        try:
            with db.begin_nested():
                db.flush()
        except IntegrityError:
            continue
        return user
    raise RuntimeError("could not find a free guest name")


# -- sessions --------------------------------------------------------------------------------------


def token_key(token: str) -> str:
    """What the ``sessions`` table stores for a session token: its SHA-256, 64 hex digits (a
    stolen copy of the table opens no session)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def create_session(db: Session, user: User, days: int = DEFAULT_SESSION_DAYS) -> UserSession:
    """Create a login session for ``user`` valid ``days`` days (flushed, not committed).

    Returns:
        The row, whose ``token`` column holds :func:`token_key` of the token; the token itself
        (for the cookie) is the attribute ``cookie_token`` of the returned object, never stored.
    """
    now = utcnow()
    raw = secrets.token_urlsafe(32)
    sess = UserSession(token=token_key(raw), user_id=user.id, created_at=now, expires_at=now + timedelta(days=days))
    db.add(sess)
    db.flush()
    sess.cookie_token = raw  # type: ignore[attr-defined]
    return sess


def user_from_token(db: Session, token: str | None) -> User | None:
    """The user of a live session token (for HTTP requests and websockets), or ``None``.

    An expired session is deleted (the caller commits). A missing, malformed or unknown token gives ``None``.
    """
    if not token or not isinstance(token, str) or len(token) > 64:
        return None
    sess = db.get(UserSession, token_key(token))
    if sess is None:
        return None
    if sess.expires_at <= utcnow():
        db.delete(sess)
        db.flush()
        return None
    return sess.user


_SESSIONS, _USERS = UserSession.__table__, User.__table__
_ACCOUNT_OF_TOKEN = (select(_SESSIONS.c.expires_at, _USERS.c.id, _USERS.c.name, _USERS.c.is_guest, _USERS.c.rating_mu,
                            _USERS.c.rating_sigma, _USERS.c.games_played, _USERS.c.last_seen_at)
                     .join(_USERS, _USERS.c.id == _SESSIONS.c.user_id).where(_SESSIONS.c.token == bindparam("key")))


def account_of_token(db: Session, token: str | None) -> Row[Any] | None:
    """The account of a live session token as one row (Core, one query joining ``sessions`` and
    ``users``; no ORM objects), or ``None``: the cheap form of :func:`user_from_token` for a page
    that polls (the friends panel). The session is checked exactly as there: a missing, malformed,
    unknown or expired token gives ``None``, and an expired session is deleted (the caller commits).

    Returns:
        A row with ``id``, ``name``, ``is_guest``, ``rating_mu``, ``rating_sigma``, ``games_played``,
        ``last_seen_at`` (aware UTC or ``None``), or ``None``.
    """
    if not token or not isinstance(token, str) or len(token) > 64:
        return None
    key = token_key(token)
    row = db.execute(_ACCOUNT_OF_TOKEN, {"key": key}).first()
    if row is None:
        return None
    if row.expires_at <= utcnow():
        db.execute(delete(_SESSIONS).where(_SESSIONS.c.token == key))
        return None
    return row


def end_session(db: Session, token: str | None) -> None:
    """Delete the session ``token`` if it exists (logout; the caller commits)."""
    if token and isinstance(token, str) and len(token) <= 64:
        db.execute(delete(UserSession).where(UserSession.token == token_key(token)))


def purge_expired_sessions(db: Session) -> int:
    """Delete every expired session; returns how many (the caller commits)."""
    result = db.execute(delete(UserSession).where(UserSession.expires_at <= utcnow()))
    return int(getattr(result, "rowcount", 0) or 0)


def set_session_cookie(response: Response, request: HTTPConnection, token: str, days: int) -> None:
    """Send the ``gd_session`` cookie: HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS, ``days`` long."""
    response.set_cookie(
        COOKIE_NAME,
        token,
        max_age=days * 86400,
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme in ("https", "wss"),
    )


def clear_session_cookie(response: Response) -> None:
    """Tell the browser to drop the ``gd_session`` cookie."""
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="lax")


# -- FastAPI dependencies --------------------------------------------------------------------------


def current_user(request: Request, db: DbSession) -> User | None:
    """FastAPI dependency: the logged-in user of the request's ``gd_session`` cookie, or ``None``.

    A logged-in request marks the account seen (friends' presence, at most every 30 s:
    :func:`guandan.server.friends_store.touch`; a refresh of an online account goes through the
    app's ``state.presence`` batch when it has one)."""
    token = request.cookies.get(COOKIE_NAME)
    user = user_from_token(db, token)
    if user is None and token:
        db.commit()  # keeps the removal of an expired session
    elif user is not None and touch_seen(db, user, batch=getattr(request.app.state, "presence", None)):
        db.commit()
    return user


def require_user(user: Annotated[User | None, Depends(current_user)]) -> User:
    """FastAPI dependency: the logged-in user.

    Raises:
        HTTPException(401): no valid session (the error handler answers ``{"error": "log in first"}``).
    """
    if user is None:
        raise login_required()
    return user


def login_required() -> HTTPException:
    """The 401 ``login_required`` answer of a request with no live session."""
    return HTTPException(status_code=401, detail={"message": "log in first", "code": "login_required", "params": {}})


#: Handler parameter types: ``def handler(user: CurrentUser)`` (``User | None``) and
#: ``def handler(user: RequiredUser)`` (``User``, or a 401 answer).
CurrentUser = Annotated[User | None, Depends(current_user)]
RequiredUser = Annotated[User, Depends(require_user)]


# -- login rate limiting ---------------------------------------------------------------------------


def limiter_key(name: str) -> str:
    """The account a login attempt is for, as the limiter counts it: :func:`normalize_name`, lower
    case (every spelling that :func:`find_user` treats as one account is one key)."""
    try:
        return normalize_name(name[: 4 * NAME_MAX]).lower()
    except (TypeError, ValueError):
        return ""


@dataclass
class LoginLimiter:
    """In-memory limits on failed logins over the last ``window_s`` seconds, per process (issue
    26 item 4: 30 wrong passwords from 3 addresses used to refuse the owner's correct password
    from any other address for 5 minutes, and names are public). The policy:

    * ``max_failures`` per (client address, account): that address gets 429 for that account;
    * ``address_failures`` per client address, over every account (one address trying many
      names; higher, so that people sharing a proxy or a NAT are not locked out by one another);
    * per account, a **backoff, never a lock-out**: once the account has ``account_failures``
      failures in the window (from any addresses), an address that has itself failed on it (and
      has not logged in to it since) must wait ``2 ** (failures of the account - account_failures)``
      seconds, at most ``backoff_max_s``, after its own last failure before its next try (429
      ``too_many_logins`` with ``wait_s``). An address that has not failed on the account is
      never refused by the account's count: the owner's correct password from a new address
      always gets checked. A botnet gets one guess per fresh address, then the backoff.
    * an address that logged in successfully (to any account) within ``trusted_s`` seconds is
      *trusted*: its checks run first in the hash gate (:mod:`guandan.server.hashgate`) while it
      has fewer than ``trusted_max_failures`` failures in the window (an attacker who logs in to
      an account of their own does not jump the queue with a flood), and it is not slowed on the
      account it logged in to.

    The account is :func:`limiter_key` of the name (the normalised name, lower case), so the
    spellings of one name share their tries. :meth:`attempt` checks the limits and counts the
    attempt in one step under a lock, so concurrent guesses cannot pass the limit; a good login
    takes its attempt back (:meth:`succeeded`). The client address is the TCP peer, or the
    ``X-Forwarded-For`` address only from proxies named by ``--forwarded-allow-ips``.
    """

    max_failures: int = 10
    window_s: float = 300.0
    account_failures: int = 10
    address_failures: int = 100
    backoff_max_s: float = 60.0
    trusted_s: float = 30 * 86400.0
    trusted_max_failures: int = 3

    def __post_init__(self) -> None:
        self._fails: dict[tuple[str, str], deque[float]] = {}
        self._ok: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        q = self._fails.get(key)
        if q is None:
            return deque()
        while q and q[0] <= now - self.window_s:
            q.popleft()
        if not q:
            del self._fails[key]
        return q

    def _keys(self, client: str, name: str) -> list[tuple[tuple[str, str], int]]:
        account = limiter_key(name)
        return [((client, account), self.max_failures), (("*", account), 10**9),
                ((client, "*"), self.address_failures)]

    def _trusted(self, key: tuple[str, str], now: float) -> bool:
        t = self._ok.get(key)
        return t is not None and now - t < self.trusted_s

    def _refuse(self, wait: float) -> AuthError:
        wait_s = max(1, int(wait) + 1)
        return AuthError(429, f"too many failed logins; try again in {wait_s} s", "too_many_logins",
                         {"wait_s": wait_s})

    def _check(self, client: str, name: str, now: float) -> None:
        keys = self._keys(client, name)
        for key, limit in (keys[0], keys[2]):
            q = self._recent(key, now)
            if len(q) >= limit:
                raise self._refuse(q[0] + self.window_s - now)
        mine = self._recent(keys[0][0], now)
        if not mine or self._trusted(keys[0][0], now):
            return  # an address that has not failed on this account is never slowed by its count
        total = len(self._recent(keys[1][0], now))
        if total >= self.account_failures:
            delay = min(self.backoff_max_s, 2.0 ** (total - self.account_failures))
            if now < mine[-1] + delay:
                raise self._refuse(mine[-1] + delay - now)

    def _count(self, client: str, name: str, now: float) -> None:
        if len(self._fails) > 100_000:  # bound memory under a flood of distinct keys
            self._fails.clear()
        for key, _ in self._keys(client, name):
            self._fails.setdefault(key, deque()).append(now)

    def attempt(self, client: str, name: str, now: float | None = None) -> None:
        """Check the limits and count this attempt as a failure, atomically (call before checking
        the password; :meth:`succeeded` takes it back after a good password).

        Raises:
            AuthError(429, code ``too_many_logins``, params ``wait_s``): a limit is reached, or
                this address must wait out the account's backoff.
        """
        now = time.monotonic() if now is None else now
        with self._lock:
            self._check(client, name, now)
            self._count(client, name, now)

    def check(self, client: str, name: str, now: float | None = None) -> None:
        """Refuse a login attempt while a limit is reached (does not count it; see :meth:`attempt`).

        Raises:
            AuthError(429): too many recent failures; the message gives the seconds to wait.
        """
        now = time.monotonic() if now is None else now
        with self._lock:
            self._check(client, name, now)

    def failed(self, client: str, name: str, now: float | None = None) -> None:
        """Count one failed login of ``client`` for ``name``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._count(client, name, now)

    def succeeded(self, client: str, name: str, now: float | None = None) -> None:
        """A good login: forget the failures of ``client`` for this account, take back the
        attempt counted by :meth:`attempt` from the account and address totals, and trust
        ``client`` (for this account and in the hash gate) for ``trusted_s`` seconds."""
        now = time.monotonic() if now is None else now
        with self._lock:
            keys = self._keys(client, name)
            self._fails.pop(keys[0][0], None)
            for key, _ in keys[1:]:
                q = self._fails.get(key)
                if q:
                    q.pop()
            if len(self._ok) > 100_000:
                self._ok.clear()
            self._ok[keys[0][0]] = now
            self._ok[(client, "*")] = now

    def caller(self, client: str, name: str, now: float | None = None) -> Caller:
        """Who a password check of ``client`` for ``name`` is, for the hash gate: the account,
        the address's failures over the window (before this attempt is counted) and whether
        the address logged in successfully within ``trusted_s``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            failures = len(self._recent((client, "*"), now))
            return Caller(client=client, account=limiter_key(name), failures=failures,
                          trusted=self._trusted((client, "*"), now) and failures < self.trusted_max_failures)


class RateLimiter:
    """At most ``limit`` events per ``window_s`` seconds per key (a client address), in memory,
    thread-safe; used for registrations and guest accounts.

    Args:
        limit: events allowed per window; window_s: the window in seconds.
        what: what is limited, for the message (``"registrations"``).
    """

    def __init__(self, limit: int, window_s: float, what: str) -> None:
        self.limit = limit
        self.window_s = window_s
        self.what = what
        self._events: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, key: str, now: float | None = None) -> None:
        """Count one event for ``key``.

        Raises:
            AuthError(429, code ``rate_limited``, params ``wait_s``): over the limit.
        """
        now = time.monotonic() if now is None else now
        with self._lock:
            if len(self._events) > 100_000:
                self._events.clear()
            q = self._events.setdefault(key, deque())
            while q and q[0] <= now - self.window_s:
                q.popleft()
            if len(q) >= self.limit:
                wait = int(q[0] + self.window_s - now) + 1
                raise AuthError(429, f"too many {self.what} from this address; try again in {wait} s",
                                "rate_limited", {"wait_s": wait})
            q.append(now)
