"""The websocket caps of a cluster, counted over every process (issue 26 item 3).

``--max-ws-per-room`` (spectator sockets per room) and ``--max-ws-per-address`` (sockets per client
address, all rooms) used to be counted by each process alone: a load balancer spreading 55 sockets
of one address over two processes let 100 of them open against a cap of 50. In a cluster the
counts live in Redis, one hash per room (``{prefix}wsroom:ROOM``: spectator sockets) and one per
address (``{prefix}wsaddr:ADDRESS``: sockets of any kind), a field per process run
(:attr:`ClusterNode.member`). One script checks and counts a new socket atomically; a closed socket
is taken back. The fields of a process that died (its ``alive`` key expired, three leases after
its last renewal) are dropped by the next check, so a dead process's sockets stop counting.

A socket of an account that holds a seat in the room is never refused (it is counted against its
address all the same, so that the spectators of that address see it); each seated account keeps at
most ``ws.MAX_TABS_PER_SEAT`` tabs per room and process instead.
"""

from __future__ import annotations

from typing import Any

#: Check and count a new socket. KEYS[1] the room's hash, KEYS[2] the address's hash. ARGV[1]
#: this process run (member), ARGV[2] the prefix of the ``alive`` keys, ARGV[3] spectator sockets
#: allowed in the room (0: no limit), ARGV[4] sockets allowed per address (0: no limit), ARGV[5]
#: "1" when the socket is a spectator's, ARGV[6] "1" when it may not be refused (a seated
#: account), ARGV[7] expiry of the hashes (ms). Returns 0 (counted), 1 (room full), 2 (address full).
ADMIT_LUA = """
local function live_total(key)
  local total = 0
  local fields = redis.call('hgetall', key)
  for i = 1, #fields, 2 do
    local member, n = fields[i], tonumber(fields[i + 1])
    if member == ARGV[1] or redis.call('exists', ARGV[2] .. member) == 1 then
      total = total + n
    else
      redis.call('hdel', key, member)
    end
  end
  return total
end
local spectator = ARGV[5] == '1'
local must = ARGV[6] == '1'
local room_cap, addr_cap = tonumber(ARGV[3]), tonumber(ARGV[4])
local in_room = live_total(KEYS[1])
local at_addr = live_total(KEYS[2])
if not must then
  if spectator and room_cap > 0 and in_room >= room_cap then return 1 end
  if addr_cap > 0 and at_addr >= addr_cap then return 2 end
end
if spectator then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[7])
end
redis.call('hincrby', KEYS[2], ARGV[1], 1)
redis.call('pexpire', KEYS[2], ARGV[7])
return 0
"""

#: Take a closed socket back (KEYS as ADMIT_LUA; ARGV[1] member, ARGV[2] "1" for a spectator).
RELEASE_LUA = """
local keys = {KEYS[2]}
if ARGV[2] == '1' then keys[2] = KEYS[1] end
for _, key in ipairs(keys) do
  if redis.call('hincrby', key, ARGV[1], -1) <= 0 then
    redis.call('hdel', key, ARGV[1])
  end
end
return 0
"""

#: Expiry of the count hashes (ms): renewed by every new socket; a day covers any real socket.
COUNTS_TTL_MS = 24 * 3600 * 1000


class SocketCaps:
    """The cluster-wide websocket caps of one process (see the module's docstring).

    Args:
        client: a ``redis.asyncio.Redis`` client; prefix: the cluster's key prefix; member: this
        process run (:attr:`ClusterNode.member`).
    """

    def __init__(self, client: Any, prefix: str, member: str) -> None:
        self.prefix = prefix
        self.member = member
        self._admit = client.register_script(ADMIT_LUA)
        self._release = client.register_script(RELEASE_LUA)

    def _keys(self, room: str, address: str) -> list[str]:
        return [f"{self.prefix}wsroom:{room}", f"{self.prefix}wsaddr:{address}"]

    async def admit(self, room: str, address: str, *, spectator: bool, seated: bool, per_room: int,
                    per_address: int) -> str | None:
        """Check and count a new socket of ``address`` in ``room``.

        Args:
            spectator: the socket counts against the room's cap; seated: never refused.
            per_room, per_address: the caps (0: no limit).
        Returns:
            ``None`` (counted: call :meth:`release` when it closes), ``"room"`` (the room has
            ``per_room`` spectator sockets on the whole cluster) or ``"address"`` (the address has
            ``per_address`` sockets on the whole cluster).
        Raises:
            redis.exceptions.RedisError: Redis cannot be reached (nothing was counted).
        """
        out = await self._admit(keys=self._keys(room, address),
                                args=[self.member, f"{self.prefix}alive:", int(per_room), int(per_address),
                                      "1" if spectator else "0", "1" if seated else "0", COUNTS_TTL_MS])
        return {0: None, 1: "room", 2: "address"}[int(out)]

    async def release(self, room: str, address: str, *, spectator: bool) -> None:
        """Take back a socket counted by :meth:`admit`. Raises redis.exceptions.RedisError."""
        await self._release(keys=self._keys(room, address), args=[self.member, "1" if spectator else "0"])
