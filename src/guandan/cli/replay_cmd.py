"""``guandan replay FILE``: verify a game record and print the game readably (DESIGN.md section 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from .app import app

_TEAM = ("team 0/2", "team 1/3")
_PLACES = ("1st", "2nd", "3rd", "4th")


class _Renderer:
    """Turns verified record events into lines of text (called from :func:`replay`'s ``on_event``)."""

    def __init__(self, unicode: bool, players: list[str]) -> None:
        self.unicode = unicode
        self.players = players
        self.lines: list[tuple[str, str]] = []  # (style, text)
        self.deal: Any = None

    def seat(self, s: int) -> str:
        name = self.players[s] if 0 <= s < len(self.players) else ""
        return f"seat {s}" + (f" ({name})" if name and name != f"seat{s}" else "")

    def card(self, text: str) -> str:
        if not self.unicode:
            return text
        from guandan.core.cards import card_unicode, parse_card

        return card_unicode(parse_card(text))

    def add(self, text: str, style: str = "") -> None:
        self.lines.append((style, text))

    def __call__(self, line_no: int, ev: dict[str, Any], game: Any) -> None:
        from guandan.core.match import action_from_json
        from guandan.core.plays import play_text

        t = ev["type"]
        if t == "deal":
            self.deal = game.deal
            lv = ev["levels"]
            self.add(
                f"game {ev['game']}, deal {ev['deal']}: level {ev['level']}"
                f" ({_TEAM[0]} at {lv[0]}, {_TEAM[1]} at {lv[1]})",
                "bold cyan",
            )
            for s, hand in enumerate(ev["hands"]):
                self.add(f"  {self.seat(s)}: " + " ".join(self.card(c) for c in hand) + f"  [{len(hand)}]")
            if ev.get("first_leader") is not None:
                self.add(f"  first leader: seat {ev['first_leader']}")
        elif t == "anti_tribute":
            seats = ", ".join(str(s) for s in ev["seats"])
            self.add(
                f"  anti-tribute: seat(s) {seats} hold both big jokers; no tribute; seat {ev['leader']} leads",
                "magenta",
            )
        elif t == "action":
            seat = ev["seat"]
            act = action_from_json(ev["action"])
            text = f"  seat {seat}: {play_text(act, self.unicode)}"
            d = self.deal
            if d is not None and act[0] not in ("pass", "tribute", "return") and d.n_cards[seat] == 0:
                place = d.finished.index(seat) if seat in d.finished else -1
                text += f"  — out ({_PLACES[place]})" if place >= 0 else "  — out"
            self.add(text, "dim" if act[0] == "pass" else "")
            if (
                d is not None
                and act[0] == "pass"
                and d.phase == "play"
                and d.top is None
                and d.jiefeng_seat is None
                and d.turn is not None
            ):
                self.add(f"  · trick over, seat {d.turn} leads", "dim")
        elif t == "tribute_paid":
            parts = [f"seat {p} → seat {r}: {self.card(c)}" for p, r, c in ev["tributes"]]
            self.add("  tribute: " + "; ".join(parts), "magenta")
        elif t == "returns_revealed":
            parts = [f"seat {p} → seat {r}: {self.card(c)}" for p, r, c in ev["returns"]]
            self.add("  returns: " + "; ".join(parts) + f"; seat {ev['leader']} leads", "magenta")
        elif t == "jiefeng":
            self.add(f"  jiefeng (接风): seat {ev['leader']} leads after its partner went out", "yellow")
        elif t == "deal_end":
            order = " ".join(str(s) for s in ev["finish_order"])
            lv = ev["levels"]
            text = (
                f"  deal over: finish order {order} · {ev['result']} · {_TEAM[ev['winner_team']]} wins,"
                f" upgrade +{ev['upgrade']} · levels: {_TEAM[0]} {lv[0]}, {_TEAM[1]} {lv[1]}"
            )
            if any(ev["a_fails"]):
                text += f" · A failures {ev['a_fails'][0]}/{ev['a_fails'][1]}"
            if ev["failed"]:
                text += " · failed attempt: " + ", ".join(_TEAM[x] for x in ev["failed"])
            if ev["demoted"]:
                text += " · back to 2: " + ", ".join(_TEAM[x] for x in ev["demoted"])
            if "points_total" in ev:
                text += " · points " + " ".join(str(p) for p in ev["points_total"])
            if ev["passed"]:
                text += " · target passed"
            self.add(text, "green")
        elif t == "time_called":
            self.add(f"time called (R58) in game {ev['game']}, deal {ev['deal']}: this deal is the last", "yellow")
        elif t == "game_over":
            if ev.get("winner_team") in (0, 1):
                self.add(f"game {ev['game']} over: {_TEAM[ev['winner_team']]} wins", "bold green")
            else:
                self.add(f"game {ev['game']} over: a draw (time called, equal levels)", "bold green")


@app.command("replay")
def replay_command(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="Game record (JSON Lines) to verify and show.")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only verify; print one summary line.")] = False,
    unicode: Annotated[
        bool, typer.Option("--unicode/--no-unicode", help="Show cards as 10♥ instead of TH.")
    ] = False,
) -> None:
    """Re-apply every action of a game record through the rules check and print the game.

    Exit status 0 when the record is valid, 1 with ``error: line N: reason`` when it is not (and
    with ``error: cannot read FILE: reason`` when the file cannot be read).
    """
    from rich.console import Console
    from rich.text import Text

    from guandan.records import RecordError, replay_lines

    from .record_file import read_record_or_exit

    out = Console(soft_wrap=True)
    err = Console(stderr=True, soft_wrap=True)
    lines = read_record_or_exit(file, err)
    renderer: _Renderer | None = None
    if not quiet:
        import json

        try:
            players = json.loads(lines[0]).get("players") if lines else None
        except (ValueError, AttributeError):
            players = None
        names = players if isinstance(players, list) and all(isinstance(p, str) for p in players) else []
        renderer = _Renderer(unicode, names)
    try:
        result = replay_lines(lines, renderer)
    except RecordError as e:
        err.print(Text(f"error: {e}"))
        raise typer.Exit(1) from None
    if renderer is not None:
        h = result.header
        out.print(
            Text(
                f"record: preset {h['preset']}, seed {h['seed']}, hands {h['hands']}, "
                f"players {', '.join(h['players'])}",
                style="bold",
            )
        )
        for style, text in renderer.lines:
            out.print(Text(text, style=style))
    g = result.game
    if not result.complete:
        status = "the game is not over"
    elif g.winner is not None:
        status = f"game over, {_TEAM[g.winner]} won"
    else:
        status = "game over, a draw (time called, equal levels)"
    out.print(
        Text(
            f"record OK: {result.n_deals} deals, {result.n_actions} actions, {result.n_lines} lines; {status}",
            style="bold green",
        )
    )
