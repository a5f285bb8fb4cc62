"""The owner's snapshot of a live table in a cluster (clocks, 托管, the pause between deals), which
the next owner restores after a failover (:meth:`~guandan.server.cluster.node.ClusterNode.take`).

The record restores the game itself; what the record does not hold is here:

* 托管 (``auto``, its reason ``player``/``timeouts``/``away``, the consecutive timeouts and the
  bot's moves for each seat, shown as ``bot_played`` when the person takes the seat back): restored
  whenever a snapshot exists, also when it was written a few events before or after the stored
  record (the owner writes it with the frames it publishes and, for tables that nobody watches,
  every ``lease_s / 3`` seconds), so that a seat the bot covered while its person was away is still
  covered after the failover (issue 26 item 2: it used to wait out the 25 s restart grace);
* the move clock's deadline and the pause between deals: restored only when the snapshot was
  written at the stored record's position (a deadline belongs to one position);
* which seats had a connected person: the restart grace (a person's page reconnecting, up to
  ``restart_grace_s``) is given only when a person who was connected at the old owner is not
  connected now (their socket may have been on the dead process); otherwise nobody is coming back
  and the usual ``away`` grace applies.

Plain code over the table's attributes; the node reads and writes the snapshot in Redis.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

log = logging.getLogger("guandan.server.cluster")


def table_snapshot(table: Any) -> str | None:
    """The JSON snapshot of ``table`` (a :class:`~guandan.server.table.flow.Table`), or ``None``
    before its game starts.

    Returns:
        ``{"events", "auto", "auto_reason", "timeouts", "bot_moves", "bot_deals", "connected",
        "deadline", "between"}`` as JSON text (``deadline``: ``[seat, epoch s]`` or ``null``;
        ``between``: ``{"deal", "pressed", "deadline"}`` or ``null``).
    """
    if table.game is None:
        return None
    b = table.between
    return json.dumps({
        "events": len(table.game.events),
        "auto": table.auto, "auto_reason": table.auto_reason, "timeouts": table.timeouts,
        "bot_moves": table.bot_moves, "bot_deals": [sorted(list(d) for d in deals) for deals in table.bot_deals],
        "connected": table.connected(),
        "deadline": list(table.deadline) if table.deadline is not None else None,
        "between": None if b is None else {"deal": b["deal"], "pressed": b["pressed"], "deadline": b["deadline"]},
    })


def restore_snapshot(table: Any, raw: str | bytes | None, restart_grace_s: float) -> bool:
    """Restore ``table`` (just rebuilt from its stored record, before it is scheduled) from the
    snapshot text ``raw`` of the previous owner (see the module's docstring for what is restored
    when).

    Args:
        table: the :class:`~guandan.server.table.flow.Table`; raw: the snapshot (``None``: none was
            written); restart_grace_s: seconds an absent person may take to reconnect.
    Returns:
        Whether a snapshot was restored (``False``: none, malformed — logged — or no game).
    """
    now = time.monotonic()
    table.restored_grace_until = now + restart_grace_s
    if raw is None or table.game is None:
        return False
    try:
        snap = json.loads(raw)
        auto = [bool(x) for x in snap["auto"]]
        reason = [None if r is None else str(r) for r in snap["auto_reason"]]
        timeouts = [int(x) for x in snap["timeouts"]]
        bot_moves = [int(x) for x in snap.get("bot_moves") or [0] * 4]
        bot_deals = [{(int(g), int(d)) for g, d in deals} for deals in snap.get("bot_deals") or [[]] * 4]
        if not len(auto) == len(reason) == len(timeouts) == len(bot_moves) == len(bot_deals) == 4:
            raise ValueError("not four seats")
        table.auto, table.auto_reason, table.timeouts = auto, reason, timeouts
        table.bot_moves, table.bot_deals = bot_moves, bot_deals
        was = snap.get("connected")
        if isinstance(was, list) and len(was) == 4:
            now_connected = table.connected()
            if not any(bool(w) and not c for w, c in zip(was, now_connected, strict=True)):
                table.restored_grace_until = 0.0  # nobody's socket was lost with the old owner
        if snap.get("events") != len(table.game.events):
            return True
        if snap.get("deadline") is not None:
            seat, when = snap["deadline"]
            table.resume_deadline = (int(seat), float(when))
        b = snap.get("between")
        if b is None:
            table.between = None  # the pause had ended (the record alone cannot tell)
        elif table.between is not None and table.between["deal"] == b["deal"]:
            table.between["pressed"] = [bool(x) for x in b["pressed"]]
            table.between["deadline"] = float(b["deadline"])
    except (ValueError, KeyError, TypeError):
        log.warning("room %s: ignoring a malformed snapshot", table.id, extra={"room": table.id})
        return False
    return True
