"""Redis key and channel names of a cluster, the lease scripts, and Redis URLs (redis-py loaded lazily)."""

from __future__ import annotations

from typing import Any

#: Channel key of the spectators' frames (seats use "0".."3").
SPEC = "spec"

#: Renew the lease only while it is still ours (KEYS[1] lease key, ARGV[1] token, ARGV[2] ms).
RENEW_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
#: Delete the lease only while it is still ours (KEYS[1] lease key, ARGV[1] token).
RELEASE_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def import_redis() -> Any:
    """The ``redis`` package (redis-py).

    Raises:
        RuntimeError: redis-py is not installed (one line telling how to install it).
    """
    try:
        import redis
    except ImportError:
        raise RuntimeError("cluster mode needs redis-py: pip install -e '.[cluster]' in the pyguandan checkout") from None
    return redis


class Keys:
    """Redis key and channel names of one cluster (``prefix`` separates clusters on one Redis)."""

    def __init__(self, prefix: str = "gd:") -> None:
        self.p = prefix

    def lease(self, room: str) -> str:
        """The ownership lease of ``room`` (value: the owner's token)."""
        return f"{self.p}lease:{room}"

    def inbox(self, room: str) -> str:
        """Channel of the messages to ``room``'s owner."""
        return f"{self.p}in:{room}"

    def out(self, room: str, key: str) -> str:
        """Channel of ``room``'s frames for seat ``key`` ("0".."3") or spectators (``spec``)."""
        return f"{self.p}out:{room}:{key}"

    def presence(self, room: str) -> str:
        """Hash ``member -> [n0, n1, n2, n3, n_spec]``: connections each process (``member``: its name
        and a token of this run, :attr:`ClusterNode.member`) holds for ``room``."""
        return f"{self.p}pres:{room}"

    def snapshot(self, room: str) -> str:
        """The owner's last table snapshot of ``room`` (clocks, 托管, pause) for a takeover."""
        return f"{self.p}snap:{room}"

    def alive(self, member: str) -> str:
        """Key that exists while the process run ``member`` (:attr:`ClusterNode.member`) lives (its
        presence counts are believed only then)."""
        return f"{self.p}alive:{member}"

    def reply(self, node: str) -> str:
        """Channel of the owners' answers to the process run ``node`` (:attr:`ClusterNode.member`)."""
        return f"{self.p}reply:{node}"

    def next_room(self, room: str) -> str:
        """The room "play again" made of ``room``."""
        return f"{self.p}next:{room}"

    @property
    def ctl(self) -> str:
        """Channel every process listens to (rooms changed or freed, sessions revoked)."""
        return f"{self.p}ctl"


#: Longest key prefix accepted (``guandan serve --redis-prefix``).
MAX_PREFIX_LEN = 64


def prefix_problem(prefix: str) -> str | None:
    """What is wrong with the key prefix ``prefix`` (``--redis-prefix``), or ``None``.

    A prefix is 1 to :data:`MAX_PREFIX_LEN` printable ASCII characters without spaces or the
    glob characters ``* ? [ ] \\`` (the prefix is matched literally, never as a pattern).
    """
    if not prefix or len(prefix) > MAX_PREFIX_LEN:
        return f"the Redis key prefix must be 1-{MAX_PREFIX_LEN} characters (like gd: or shop1:gd:)"
    if not prefix.isascii() or not prefix.isprintable() or any(c.isspace() or c in "*?[]\\" for c in prefix):
        return (f"the Redis key prefix {prefix!r} must be printable ASCII without spaces or * ? [ ] \\ "
                "(like gd: or shop1:gd:)")
    return None


def without_credentials(url: str) -> str:
    """The Redis URL ``url`` with its user name and password removed (from the address and from
    ``username=``/``password=`` query parameters): what a client with no credentials would use."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if k not in ("username", "password")])
    out = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    if not netloc and parts.scheme == "unix":  # urlunsplit writes unix:/path; keep unix:///path
        out = "unix://" + out[len("unix:"):]
    return out


def _shown(url: str) -> str:
    """A Redis URL without its password (for logs and messages)."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
    return url


def redis_url_problem(url: str) -> str | None:
    """What is wrong with the Redis URL ``url`` that redis-py would not say, or ``None``.

    redis-py ignores a database number it cannot read (``redis://host:6379/abc``, ``?db=x``) and
    silently uses database 0, which may be another cluster's or another program's.

    Returns:
        A one-line problem (the URL shown without its password), or ``None`` when the scheme is
        ``redis``, ``rediss`` or ``unix`` and the database number (path or ``db=``), if any, is an
        integer of 0 or more.
    """
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        return f"{_shown(url)!r} is not a Redis URL (redis://host:6379/0, rediss://..., unix:///path.sock)"
    dbs = parse_qs(parts.query).get("db", [])
    if parts.scheme != "unix" and unquote(parts.path).strip("/"):
        dbs.append(unquote(parts.path).strip("/"))
    for db in dbs:
        if not db.isascii() or not db.isdigit():
            return f"the database number {db!r} of {_shown(url)!r} is not a number (redis://host:6379/0)"
    return None
