"""``guandan review``: the review of one deal (复盘) from one seat, as a table or JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app

#: The shipped per-decision budget (guandan.review.Budget's defaults), for --help.
BUDGET_HELP = (
    "Per-decision budget, key=value pairs: worlds (sampled worlds, default 40), candidates (moves compared, "
    "default 6), seconds (time cap per decision; the review is then not reproducible), belief (weight per "
    "explained decision of the other seats, default 4; 1: uniform worlds), solver (exact solver nodes on the "
    "real hands, default 3000), solver_cards (default 40). Example: worlds=16,candidates=4."
)


@app.command("review")
def review_command(
    record: Annotated[Path, typer.Argument(metavar="RECORD", help="A game record (JSON Lines), e.g. from `guandan simulate --record DIR`, or a board play's record.")],
    deal: Annotated[int, typer.Option("--deal", "-d", min=1, help="Which deal of the record (1 = the first).")] = 1,
    seat: Annotated[int, typer.Option("--seat", "-s", min=0, max=3, help="The seat whose decisions are reviewed (0-3).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the review as JSON (one entry per decision).")] = False,
    budget: Annotated[str, typer.Option("--budget", "-b", help=BUDGET_HELP)] = "",
    workers: Annotated[int, typer.Option("--workers", "-w", min=0, help="Worker processes (0: in this process).")] = 2,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sampled worlds.")] = 0,
    cache: Annotated[Path | None, typer.Option("--cache", help="Directory of cached reviews (read and filled; created if the directory above it exists).")] = None,
) -> None:
    """Review one seat's decisions in one deal: for each, the move played and the best alternative, with the estimated chance of winning the deal and the expected levels of both, on worlds consistent with what the seat could see then (never the real hidden hands), and again on the real hands ("what would have won"). The costliest moves are marked.

    Exit status 1 when the record cannot be read or replayed or the review cannot be stored in
    the cache, 2 for bad options (a --cache that is not a directory, or cannot be created or
    written, is checked before anything is computed). Errors are one line on stderr.
    """
    import json

    from rich.console import Console
    from rich.text import Text

    from guandan.records import RecordError
    from guandan.review import Budget, ReviewCache, ReviewCacheError, review_lines

    from .record_file import read_record_or_exit

    err = Console(stderr=True, soft_wrap=True)
    try:
        the_budget = Budget.parse(budget)
    except ValueError as e:
        err.print(Text(f"error: {e}"))
        raise typer.Exit(2) from None
    store = None
    if cache is not None:
        store = ReviewCache(cache)
        try:
            store.prepare()
        except ReviewCacheError as e:
            err.print(Text(f"error: --cache {cache}: {e.strerror or e}"))
            raise typer.Exit(2) from None
    lines = read_record_or_exit(record, err)
    try:
        if as_json:
            review = review_lines(lines, seat, deal, the_budget, seed, workers, cache=store)
        else:
            review = _with_progress(err, lines, seat, deal, the_budget, seed, workers, store)
    except RecordError as e:
        err.print(Text(f"error: {record}: {e}"))
        raise typer.Exit(1) from None
    except ValueError as e:
        err.print(Text(f"error: {e}"))
        raise typer.Exit(2) from None
    except ReviewCacheError as e:
        err.print(Text(f"error: --cache {cache}: {e.strerror or e}"))
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(review, ensure_ascii=False, indent=1))
        return
    _print_table(Console(), review)


def _with_progress(err: Any, lines: list[str], seat: int, deal: int, budget: Any, seed: int, workers: int,
                   store: Any) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from guandan.review import review_lines

    with Progress(TextColumn("reviewing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("review", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return review_lines(lines, seat, deal, budget, seed, workers, progress, store)


def _pct(e: dict[str, Any] | None) -> str:
    if e is None:
        return ""
    lev = "?" if e["levels"] is None else f"{e['levels']:+.1f}"
    return f"{100 * e['win']:.0f}% {lev}"


def _print_table(out: Any, review: dict[str, Any]) -> None:
    from rich.table import Table

    d = review["deal"]
    result = "unfinished" if d["result"] is None else f"{d['result']}, team {d['winner_team']} won"
    title = (f"Review: seat {review['seat']} ({review['player']}), deal {d['number']} of {d['deals']} "
             f"(game {d['game']}, level {d['level']}; {result})")
    from rich import box

    # no vertical rules, figures never wrapped, the moves wrap: readable at 80 columns
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for col, just, wrap in (("#", "right", False), ("played", "left", True), ("win% lv", "right", False),
                            ("best alt", "left", True), ("win% lv", "right", False),
                            ("real", "right", False), ("real alt", "right", False),
                            ("mark", "left", True)):
        t.add_column(col, justify=just, no_wrap=not wrap, ratio=1 if wrap else None,  # type: ignore[arg-type]
                     min_width=8 if wrap else None)
    for e in review["decisions"]:
        if not e["evaluated"]:
            t.add_row(str(e["index"] + 1), e["played_text"], "", "", "", "", "", e["note"] or "", style="dim")
            continue
        v, r = e["view"], e["real"]
        mark = ""
        if e["severity"]:
            mark = e["severity"] + (f" #{e['costliest']}" if e["costliest"] else "")
        t.add_row(str(e["index"] + 1), e["played_text"], _pct(v["played"]), e["best_alternative_text"] or "",
                  _pct(v["best_alternative"]), _pct(r["played"]), _pct(r["best_alternative"]), mark,
                  style="bold red" if e["costliest"] else None)
    out.print(t)
    b = review["budget"]
    out.print(f"win% lv: chance to win the deal and expected levels on {b['worlds']} worlds consistent with "
              "what the seat saw; best alt: the best alternative; real, real alt: the move played and the "
              "alternative on the real hands (a rollout, or solved exactly).")
