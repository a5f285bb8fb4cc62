"""HTTP answers while the cluster's Redis is out of reach (issue 26 item 13).

Logins, sign-ups and the lobby read Redis in cluster mode (the shared login and sign-up limits,
"play again" links, who is connected). When Redis cannot be reached those requests answer the
retryable ``503 temporarily_unavailable`` with ``Retry-After`` (as ``/readyz`` already says
``redis: unreachable``) instead of a ``500 internal_error``: nothing was changed, and the same
request may be sent again once Redis is back.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ..errors import error_body
from .keys import import_redis

log = logging.getLogger("guandan.server.cluster")

#: Seconds a client is told to wait before trying again (``Retry-After``, ``params.retry_s``).
RETRY_AFTER_S = 2
#: Error code of the answer (docs/table-contract.md; the UI translates it).
UNAVAILABLE = "temporarily_unavailable"


def outage_answer() -> tuple[int, dict[str, Any], dict[str, str]]:
    """``(status, body, headers)`` of a request that met a Redis outage: 503, the error
    ``temporarily_unavailable`` with ``params.retry_s``, and ``Retry-After``."""
    body = error_body("the server cannot reach its shared store right now; try again in a moment", UNAVAILABLE,
                      {"retry_s": RETRY_AFTER_S})
    return 503, body, {"Retry-After": str(RETRY_AFTER_S)}


def install_outage_handler(app: Any) -> None:
    """Answer redis-py's connection and time-out errors (Redis down, unreachable or too slow) of
    any request of ``app`` (a FastAPI app) with :func:`outage_answer`; logged as one warning line
    (at most one every 10 s), without a traceback.

    Raises:
        RuntimeError: redis-py is not installed.
    """
    from fastapi.responses import JSONResponse

    redis = import_redis()
    last = [0.0]

    async def unavailable(request: Any, exc: Exception) -> JSONResponse:
        now = time.monotonic()
        if now - last[0] >= 10.0:
            last[0] = now
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            log.warning("Redis out of reach: %s %s answered 503 (%s)", request.method, request.url.path[:200], first)
        status, body, headers = outage_answer()
        return JSONResponse(body, status_code=status, headers=headers)

    app.add_exception_handler(redis.exceptions.ConnectionError, unavailable)
    app.add_exception_handler(redis.exceptions.TimeoutError, unavailable)
