"""Login and rate limits shared by every process of a cluster (Redis sorted sets, one script a call)."""

from __future__ import annotations

import secrets
import time
from typing import Any

from ..auth import limiter_key
from ..errors import AuthError

#: Sliding-window limits in sorted sets (KEYS: one set per limit; ARGV[1] now (epoch s),
#: ARGV[2] window (s), ARGV[3] member, ARGV[4] mode: "attempt" (check then count), "check",
#: "count"; ARGV[5..]: the limits). Returns 0, or {index of the limit reached (1-based), oldest score}.
WINDOW_LUA = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local mode = ARGV[4]
if mode ~= 'count' then
  for i, key in ipairs(KEYS) do
    redis.call('zremrangebyscore', key, '-inf', now - window)
    if redis.call('zcard', key) >= tonumber(ARGV[4 + i]) then
      local oldest = redis.call('zrange', key, 0, 0, 'WITHSCORES')
      return {i, oldest[2]}
    end
  end
end
if mode ~= 'check' then
  for _, key in ipairs(KEYS) do
    redis.call('zadd', key, now, ARGV[3])
    redis.call('pexpire', key, math.ceil(window * 1000))
  end
end
return 0
"""


class SharedLoginLimiter:
    """:class:`guandan.server.auth.LoginLimiter` shared by every process of a cluster (Redis sorted
    sets, one atomic script per call): the same limits per (address, account), per account and per
    address, counted once over all processes, so a load balancer spreading guesses over the
    processes gives no extra tries.

    Args:
        client: a ``redis.Redis`` client; prefix: key prefix; the limits as ``LoginLimiter``'s.
    """

    def __init__(self, client: Any, prefix: str = "gd:", max_failures: int = 10, window_s: float = 300.0,
                 account_failures: int = 30, address_failures: int = 100) -> None:
        self.client = client
        self.p = prefix
        self.max_failures, self.window_s = max_failures, window_s
        self.account_failures, self.address_failures = account_failures, address_failures
        self._script = client.register_script(WINDOW_LUA)

    def _keys(self, client: str, name: str) -> tuple[list[str], list[int]]:
        account = limiter_key(name)
        return ([f"{self.p}login:{client}|{account}", f"{self.p}login:*|{account}", f"{self.p}login:{client}|*"],
                [self.max_failures, self.account_failures, self.address_failures])

    def _run(self, mode: str, client: str, name: str) -> None:
        keys, limits = self._keys(client, name)
        now = time.time()
        out = self._script(keys=keys, args=[now, self.window_s, f"{now}:{secrets.token_hex(4)}", mode, *limits])
        if out and out != 0:
            wait = int(float(out[1]) + self.window_s - now) + 1
            raise AuthError(429, f"too many failed logins; try again in {wait} s", "too_many_logins",
                            {"wait_s": wait})

    def attempt(self, client: str, name: str) -> None:
        """Check the limits and count this attempt as a failure, atomically (see ``LoginLimiter``).

        Raises:
            AuthError(429, ``too_many_logins``, params ``wait_s``): a limit is reached.
        """
        self._run("attempt", client, name)

    def check(self, client: str, name: str) -> None:
        """Refuse while a limit is reached, without counting. Raises AuthError(429)."""
        self._run("check", client, name)

    def failed(self, client: str, name: str) -> None:
        """Count one failed login of ``client`` for ``name``."""
        self._run("count", client, name)

    def succeeded(self, client: str, name: str) -> None:
        """A good login: forget the (address, account) failures and take this attempt back from
        the account and address totals."""
        keys, _ = self._keys(client, name)
        pipe = self.client.pipeline(transaction=False)
        pipe.delete(keys[0])
        pipe.zpopmax(keys[1])
        pipe.zpopmax(keys[2])
        pipe.execute()


class SharedRateLimiter:
    """:class:`guandan.server.auth.RateLimiter` shared by every process of a cluster (Redis).

    Args:
        client: ``redis.Redis``; prefix: key prefix; limit: events per window; window_s: seconds;
        what: what is limited, for the message.
    """

    def __init__(self, client: Any, prefix: str, limit: int, window_s: float, what: str) -> None:
        self.client = client
        self.key = f"{prefix}rate:{what.replace(' ', '_')}:"
        self.limit, self.window_s, self.what = limit, window_s, what
        self._script = client.register_script(WINDOW_LUA)

    def hit(self, key: str) -> None:
        """Count one event for ``key`` (a client address).

        Raises:
            AuthError(429, ``rate_limited``, params ``wait_s``): over the limit.
        """
        now = time.time()
        out = self._script(keys=[self.key + key], args=[now, self.window_s, f"{now}:{secrets.token_hex(4)}",
                                                         "attempt", self.limit])
        if out and out != 0:
            wait = int(float(out[1]) + self.window_s - now) + 1
            raise AuthError(429, f"too many {self.what} from this address; try again in {wait} s",
                            "rate_limited", {"wait_s": wait})
