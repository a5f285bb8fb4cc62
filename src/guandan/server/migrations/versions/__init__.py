"""Alembic revision scripts (``NNNN_description.py``), applied in order by ``db.migrate``."""
