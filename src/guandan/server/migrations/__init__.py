"""Alembic migrations of the server database, run in code by :func:`guandan.server.db.migrate`."""
