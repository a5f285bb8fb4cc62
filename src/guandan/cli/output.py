"""How the commands report an error: one line on stderr, ``error:`` in red, the message as written.

The message is never read as Rich markup: a name such as ``[bold]Ann`` or an install hint such as
``pip install -e '.[bots]'`` is printed exactly (Rich would take ``[bots]`` for a style and drop it).
"""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.text import Text


def error_text(message: object) -> Text:
    """``error: message`` as a Rich :class:`~rich.text.Text` (no markup is parsed in ``message``);
    line breaks in the message become spaces."""
    return Text.assemble(("error:", "red"), " ", " ".join(str(message).split()))


def print_error(message: object, console: Console | None = None) -> None:
    """Print :func:`error_text` of ``message`` on ``console`` (default: a new stderr console), unwrapped."""
    (console or Console(stderr=True)).print(error_text(message), soft_wrap=True, highlight=False)


def fail(message: object, code: int = 2) -> NoReturn:
    """Print ``error: message`` on stderr (:func:`print_error`) and exit with ``code``.

    Raises:
        typer.Exit: always, with ``code``.
    """
    print_error(message)
    raise typer.Exit(code)


__all__ = ["error_text", "fail", "print_error"]
