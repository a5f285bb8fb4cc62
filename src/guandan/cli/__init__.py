"""The ``guandan`` command line (Typer). Each command lives in its own module and registers
itself on :data:`app`; heavy imports happen inside the command functions."""

from __future__ import annotations

from .app import app

# command modules register themselves on import (one line each)
from . import rules_cmd  # noqa: F401,E402
from . import bench_cmd  # noqa: F401,E402
from . import arena_cmd  # noqa: F401,E402
from . import play_cmd  # noqa: F401,E402
from . import replay_cmd  # noqa: F401,E402
from . import simulate_cmd  # noqa: F401,E402
from . import compat_cmd  # noqa: F401,E402
from . import serve_cmd  # noqa: F401,E402
from . import loadtest_cmd  # noqa: F401,E402
from . import search_bench_cmd  # noqa: F401,E402
from . import train_cmd  # noqa: F401,E402
from . import train_rl_cmd  # noqa: F401,E402
from . import rl_cmd  # noqa: F401,E402
from . import tournament_cmd  # noqa: F401,E402
from . import review_cmd  # noqa: F401,E402


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = ["app", "main"]
