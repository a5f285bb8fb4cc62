"""The ``guandan`` command line (Typer). Each command lives in its own module and registers
itself on :data:`app`; heavy imports happen inside the command functions."""

from __future__ import annotations

# command modules register themselves on import (one line each)
from . import (
    admin_cmd,  # noqa: F401,E402
    arena_cmd,  # noqa: F401,E402
    bench_cmd,  # noqa: F401,E402
    compat_cmd,  # noqa: F401,E402
    loadtest_cmd,  # noqa: F401,E402
    play_cmd,  # noqa: F401,E402
    replay_cmd,  # noqa: F401,E402
    review_cmd,  # noqa: F401,E402
    rl_cmd,  # noqa: F401,E402
    rules_cmd,  # noqa: F401,E402
    search_bench_cmd,  # noqa: F401,E402
    serve_cmd,  # noqa: F401,E402
    simulate_cmd,  # noqa: F401,E402
    tournament_cmd,  # noqa: F401,E402
    train_cmd,  # noqa: F401,E402
    train_rl_cmd,  # noqa: F401,E402
)
from .app import app


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = ["app", "main"]
