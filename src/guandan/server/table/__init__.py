"""A room's live table as plain code: the game flow and what it shows, with no I/O of its own.

The modules here know nothing of websockets, storage or the cluster (DESIGN.md section 6, "The
table's game flow is plain code"); what stores, sends and coordinates is passed in through the
small interfaces of :mod:`guandan.server.table.ports`:

* :mod:`~guandan.server.table.flow`: :class:`~guandan.server.table.flow.Table`, the game flow (rules
  through ``Game.check``, move clocks, 托管, the pause between deals, hints, bots' turns);
* :mod:`~guandan.server.table.info`: the room as data (:class:`RoomInfo`, :class:`SeatInfo`, statuses);
* :mod:`~guandan.server.table.views`: what each seat and the spectators are shown (redaction, R32, R50);
* :mod:`~guandan.server.table.frames`: the frames' JSON (``error`` frames, frames shared by many sockets);
* :mod:`~guandan.server.table.bots`: the bot levels and the process pool of the searching bots;
* :mod:`~guandan.server.table.ports`: the interfaces (where frames go, where record lines are
  stored, who owns the table).

Implementations of those interfaces live one level up, side by side: single process
(:mod:`guandan.server.connections`, :mod:`guandan.server.record_writer`, :mod:`guandan.server.manager`)
and cluster (:mod:`guandan.server.cluster`).
"""
