"""What a review process runs (复盘, issue 22): one deal's review, with progress sent back.

Kept apart from :mod:`guandan.server.reviews` so that a worker process imports the review engine
(:mod:`guandan.review`) and nothing of the web server (no FastAPI, no SQLAlchemy).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["compute_review", "init_worker"]

_PROGRESS: Any = None


def init_worker(progress_queue: Any) -> None:
    """Pool initializer: remember the queue that progress messages go to.

    Args:
        progress_queue: a ``multiprocessing`` queue; each message is ``(job, done, total)``.
    """
    global _PROGRESS
    _PROGRESS = progress_queue


def compute_review(job: str, lines: Sequence[str], seat: int, deal: int, budget: dict[str, Any], seed: int) -> str:
    """Review ``seat``'s decisions in the ``deal``-th deal of a record, in this process
    (:func:`guandan.review.review_lines` with no further workers), putting ``(job, done, total)``
    on the initializer's queue after each decision.

    Args:
        job: the job id the progress messages carry.
        lines: the record's lines (header first).
        seat: the reviewed seat (0-3). deal: 1-based deal number in the record.
        budget: the fields of a :class:`guandan.review.Budget` (``Budget.to_json()``).
        seed: the sampled worlds' seed.
    Returns:
        The review as JSON text.
    Raises:
        ValueError: a bad seat, deal or budget. RecordError: the record does not replay.
    """
    from guandan.review import Budget, review_lines

    def progress(done: int, total: int) -> None:
        if _PROGRESS is not None:
            _PROGRESS.put((job, done, total))

    review: dict[str, Any] = review_lines(list(lines), seat, deal, Budget(**budget), seed, 0, progress)
    return json.dumps(review, ensure_ascii=False, separators=(",", ":"))
