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


#: The login policy of :class:`guandan.server.auth.LoginLimiter` on Redis, one atomic call.
#: KEYS: [1] the (address, account) failures, [2] the account's, [3] the address's (sorted sets
#: scored by time), [4] the (address, account) "logged in since" marker. ARGV: [1] now (epoch s),
#: [2] window (s), [3] member, [4] mode ("attempt": check then count, "check", "count"),
#: [5] max_failures, [6] address_failures, [7] account_failures, [8] backoff_max_s.
#: Returns 0, or the seconds to wait (a string, rounded up by the caller).
LOGIN_LUA = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local mode = ARGV[4]
if mode ~= 'count' then
  for i, k in ipairs({1, 3}) do
    local key = KEYS[k]
    redis.call('zremrangebyscore', key, '-inf', now - window)
    local limit = (k == 1) and tonumber(ARGV[5]) or tonumber(ARGV[6])
    if redis.call('zcard', key) >= limit then
      local oldest = redis.call('zrange', key, 0, 0, 'WITHSCORES')
      return tostring(tonumber(oldest[2]) + window - now)
    end
  end
  local mine = redis.call('zrange', KEYS[1], -1, -1, 'WITHSCORES')
  if #mine > 0 and redis.call('exists', KEYS[4]) == 0 then
    redis.call('zremrangebyscore', KEYS[2], '-inf', now - window)
    local total = redis.call('zcard', KEYS[2])
    local over = total - tonumber(ARGV[7])
    if over >= 0 then
      local delay = math.min(tonumber(ARGV[8]), 2 ^ over)
      local last = tonumber(mine[2])
      if now < last + delay then
        return tostring(last + delay - now)
      end
    end
  end
end
if mode ~= 'check' then
  for i = 1, 3 do
    redis.call('zadd', KEYS[i], now, ARGV[3])
    redis.call('pexpire', KEYS[i], math.ceil(window * 1000))
  end
end
return 0
"""


class SharedLoginLimiter:
    """:class:`guandan.server.auth.LoginLimiter` shared by every process of a cluster (Redis sorted
    sets, one atomic script per call): the same policy, counted once over all processes, so a
    load balancer spreading guesses over the processes gives no extra tries.

    The policy (issue 26 item 4; ``LoginLimiter`` says it in full): ``max_failures`` per (address,
    account) and ``address_failures`` per address give 429; the account's own count never refuses
    an address that has not failed on it, and slows an address that has with a backoff of
    ``2 ** (account failures - account_failures)`` seconds (at most ``backoff_max_s``) after its
    last failure. An address that logged in successfully is *trusted* for ``trusted_s`` (first in
    the hash gate while it has fewer than ``trusted_max_failures`` failures, never slowed on that
    account).

    Args:
        client: a ``redis.Redis`` client; prefix: key prefix; the limits as ``LoginLimiter``'s.
    """

    def __init__(self, client: Any, prefix: str = "gd:", max_failures: int = 10, window_s: float = 300.0,
                 account_failures: int = 10, address_failures: int = 100, backoff_max_s: float = 60.0,
                 trusted_s: float = 30 * 86400.0, trusted_max_failures: int = 3) -> None:
        self.client = client
        self.p = prefix
        self.max_failures, self.window_s = max_failures, window_s
        self.account_failures, self.address_failures = account_failures, address_failures
        self.backoff_max_s, self.trusted_s, self.trusted_max_failures = backoff_max_s, trusted_s, trusted_max_failures
        self._script = client.register_script(LOGIN_LUA)

    def _keys(self, client: str, name: str) -> list[str]:
        account = limiter_key(name)
        return [f"{self.p}login:{client}|{account}", f"{self.p}login:*|{account}", f"{self.p}login:{client}|*",
                f"{self.p}login-ok:{client}|{account}"]

    def _run(self, mode: str, client: str, name: str) -> None:
        now = time.time()
        out = self._script(keys=self._keys(client, name),
                           args=[now, self.window_s, f"{now}:{secrets.token_hex(4)}", mode, self.max_failures,
                                 self.address_failures, self.account_failures, self.backoff_max_s])
        if out and out != 0:
            wait = max(1, int(float(out)) + 1)
            raise AuthError(429, f"too many failed logins; try again in {wait} s", "too_many_logins",
                            {"wait_s": wait})

    def attempt(self, client: str, name: str) -> None:
        """Check the limits and count this attempt as a failure, atomically (see ``LoginLimiter``).

        Raises:
            AuthError(429, ``too_many_logins``, params ``wait_s``): a limit is reached, or this
                address must wait out the account's backoff.
        """
        self._run("attempt", client, name)

    def check(self, client: str, name: str) -> None:
        """Refuse while a limit is reached, without counting. Raises AuthError(429)."""
        self._run("check", client, name)

    def failed(self, client: str, name: str) -> None:
        """Count one failed login of ``client`` for ``name``."""
        self._run("count", client, name)

    def succeeded(self, client: str, name: str) -> None:
        """A good login: forget the (address, account) failures, take this attempt back from the
        account and address totals, and trust the address (for this account and in the hash
        gate) for ``trusted_s`` seconds."""
        keys = self._keys(client, name)
        ttl = max(1, int(self.trusted_s))
        pipe = self.client.pipeline(transaction=False)
        pipe.delete(keys[0])
        pipe.zpopmax(keys[1])
        pipe.zpopmax(keys[2])
        pipe.set(keys[3], 1, ex=ttl)
        pipe.set(f"{self.p}login-ok:{client}|*", 1, ex=ttl)
        pipe.execute()

    def caller(self, client: str, name: str) -> Any:
        """Who a password check of ``client`` for ``name`` is, for the hash gate (as
        ``LoginLimiter.caller``): the address's failures over the window, and whether it logged
        in successfully within ``trusted_s``."""
        from ..hashgate import Caller

        addr = f"{self.p}login:{client}|*"
        pipe = self.client.pipeline(transaction=False)
        pipe.zcount(addr, time.time() - self.window_s, "+inf")
        pipe.exists(f"{self.p}login-ok:{client}|*")
        failures, ok = pipe.execute()
        failures = int(failures)
        return Caller(client=client, account=limiter_key(name), failures=failures,
                      trusted=bool(ok) and failures < self.trusted_max_failures)


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
