"""Formatting shared by the match commands (``guandan arena``, ``guandan compat arena``): win rates
with their 95% confidence intervals in a three-column Rich table."""

from __future__ import annotations

from typing import Any


def pct(x: float) -> str:
    """A share ``x`` in [0, 1] as a percentage with one decimal, e.g. ``0.5 -> "50.0%"``."""
    return f"{100 * x:.1f}%"


def ci(c: tuple[float, float]) -> str:
    """A confidence interval ``(low, high)`` of shares as ``"40.0% – 60.0%"``."""
    return f"{pct(c[0])} – {pct(c[1])}"


def rate_table(title: str) -> Any:
    """An empty :class:`rich.table.Table` titled ``title`` with the columns ``measure``,
    ``value`` and ``95% CI`` (values right-aligned); rows are added by the caller."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    return table
