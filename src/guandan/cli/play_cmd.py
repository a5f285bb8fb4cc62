"""``guandan play``: a person plays a full game (2 → past the target, with tribute) in the terminal.

The person sits at seat 0 (South), a bot partner at seat 2 (North), bots at seats 1 (East) and
3 (West). The command is a driver (DESIGN.md section 1): it asks the game what is pending,
asks a bot or the person, and applies the answer with :meth:`Game.apply`, which checks it.
Rendering helpers live in :mod:`guandan.tui`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import typer

from .app import AGENT_HELP, PRESET_HELP, RULE_HELP, app, load_rules

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from guandan.agents.base import Agent
    from guandan.core.deal import Deal
    from guandan.core.match import Game
    from guandan.core.plays import PlayT
    from guandan.core.views import SeatView

HUMAN = 0


class QuitGame(Exception):
    """The person asked to quit (``q`` confirmed, or end of input)."""


class BotFailure(Exception):
    """A bot answered an illegal action (a bug in the bot); the game cannot go on."""


def build_agent(name: str, seed: int) -> tuple[Agent, str | None]:
    """A bot by name, falling back to the random bot when ``heuristic`` cannot be imported.

    Returns:
        ``(agent, note)``: ``note`` is a one-line explanation when a fallback happened, else ``None``.
    Raises:
        ValueError: unknown agent name (from :func:`guandan.agents.make_agent`).
    """
    from guandan.agents import make_agent
    from guandan.agents.base import RandomAgent

    try:
        return make_agent(name, seed), None
    except ImportError as e:
        return RandomAgent(seed), f"the {name} bot is not available ({e}); using the random bot"


class PlaySession:
    """One terminal game: prints the table, bots' moves, tribute and results; reads the person's input.

    Args:
        game: the game to play (mutated).
        bots: four agents indexed by seat; ``bots[0]`` plays the person's seat only in autoplay.
        hint_agent: the agent whose choice for seat 0 is shown by ``h`` (the heuristic bot).
        console: where everything is printed.
        ask: reads one line after printing a prompt (default: ``console.input``); raising
            ``EOFError`` quits cleanly.
        delay: seconds to pause after each bot move (0: none).
        autoplay: seat 0 is played by ``bots[0]`` too, with no prompts (demo mode).
        hint_name: the hint bot's name, for display.
        sleep: the pause function (tests pass a no-op).
    """

    def __init__(
        self,
        game: Game,
        bots: Sequence[Agent],
        hint_agent: Agent,
        console: Console,
        *,
        ask: Callable[[str], str] | None = None,
        delay: float = 0.0,
        autoplay: bool = False,
        hint_name: str = "heuristic",
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        import time

        self.game = game
        self.bots = list(bots)
        self.hint_agent = hint_agent
        self.console = console
        self._ask = ask if ask is not None else self._console_input
        self.delay = delay
        self.autoplay = autoplay
        self.hint_name = hint_name
        self.sleep = sleep if sleep is not None else time.sleep
        self._seen = 0  # events already reported
        self._deal_rows: list[dict[str, Any]] = []
        self._current = (1, 1)  # (game, deal) numbers of the deal being reported

    # -- input ---------------------------------------------------------------------------------
    def _console_input(self, prompt: str) -> str:
        from rich.text import Text

        return self.console.input(Text(prompt, style="bold"))  # Text: no markup in prompts

    def ask(self, prompt: str) -> str:
        """One line of input; ``EOFError`` (Ctrl-D) becomes :class:`QuitGame`."""
        try:
            return self._ask(prompt)
        except EOFError:
            self.console.print()
            raise QuitGame from None

    def _confirm_quit(self) -> None:
        ans = self.ask("Quit the game? [y/N] ").strip().lower()
        if ans in ("y", "yes"):
            raise QuitGame

    def _error(self, message: str) -> None:
        from rich.text import Text

        line = " ".join(str(message).split())  # always one line
        self.console.print(Text("✗ " + line, style="red"), soft_wrap=True)

    # -- main loop -----------------------------------------------------------------------------
    def run(self) -> int:
        """Play until the game is over or the person quits.

        Returns:
            The exit status: 0 (game over or quit), 1 (a bot chose an illegal action),
            130 (interrupted with Ctrl-C).
        """
        try:
            self._report_events(None, None, None)
            while not self.game.over:
                self._step()
            self._final_screen()
            return 0
        except QuitGame:
            self.console.print("Bye — the game was left unfinished.")
            return 0
        except KeyboardInterrupt:
            self.console.print("\ninterrupted")
            return 130
        except BotFailure as e:
            self._error(f"error: {e}")
            return 1

    def _step(self) -> None:
        from guandan.core.errors import GuandanError
        from guandan.core.views import seat_view

        game = self.game
        seat = game.to_act()
        assert seat is not None
        deal = game.deal
        if seat == HUMAN and not self.autoplay:
            act = self.human_turn()
            applied = game.apply(act, HUMAN)
        else:
            bot = self.bots[seat]
            act = bot.act(seat_view(game, seat))
            try:
                applied = game.apply(act, seat)
            except GuandanError as e:  # a bot bug: say so in one line and stop
                name = getattr(bot, "name", "bot")
                raise BotFailure(f"the {name} bot at seat {seat} chose an illegal action: {e}") from None
        self._report_events(deal, seat, applied)

    # -- the person's turn ---------------------------------------------------------------------
    def human_turn(self) -> PlayT:
        """Show the table and read input until a legal action is typed; returns it (checked).

        Raises:
            QuitGame: the person quit (``q`` confirmed, or end of input).
        """
        from guandan.core.errors import NotationError
        from guandan.tui import HELP_LINES, parse_command

        self.console.print(self.render_table())
        phase = self.game.phase
        if phase == "tribute":
            prompt = "Tribute card (h = hint, ? = help, q = quit): "
        elif phase == "return":
            prompt = "Card to return (h = hint, ? = help, q = quit): "
        else:
            prompt = "Your play (cards, p = pass, h = hint, ? = help, q = quit): "
        while True:
            text = self.ask(prompt)
            try:
                cmd = parse_command(text)
            except NotationError as e:
                self._error(str(e))
                continue
            if cmd.kind == "empty":
                continue
            if cmd.kind == "help":
                for line in HELP_LINES:
                    self.console.print(line, markup=False)
                continue
            if cmd.kind == "table":
                self.console.print(self.render_table())
                continue
            if cmd.kind == "quit":
                self._confirm_quit()
                continue
            if cmd.kind == "hint":
                self._show_hint()
                continue
            action = self.resolve(cmd.kind, cmd.faces)
            if action is not None:
                return action

    def resolve(self, kind: str, faces: tuple[int, ...]) -> PlayT | None:
        """Turn a pass or typed cards into a checked action for seat 0, asking for the reading
        when the cards have several legal readings (R17).

        Returns:
            The normalised legal action, or ``None`` after printing a one-line reason (the
            person is asked again).
        Raises:
            QuitGame: end of input while choosing a reading.
        """
        from guandan.core.cards import FACE_RANK
        from guandan.core.errors import IllegalAction
        from guandan.core.plays import PASS

        game = self.game
        phase = game.phase
        try:
            if kind == "pass":
                return game.check(PASS, HUMAN)
            missing = _missing_cards(game.deal.hands[HUMAN], faces)
            if missing:
                self._error(missing)
                return None
            if phase in ("tribute", "return"):
                if len(faces) != 1:
                    self._error(f"give exactly one card as your {phase} (you typed {len(faces)})")
                    return None
                return game.check((phase, FACE_RANK[faces[0]], faces), HUMAN)
            # play phase: every legal reading of the cards (R17)
            legal = game.legal_readings(faces, HUMAN)
            if len(legal) == 1:
                return legal[0]
            return self._choose_reading(legal)
        except IllegalAction as e:
            self._error(str(e))
            return None

    def _choose_reading(self, readings: Sequence[PlayT]) -> PlayT | None:
        from rich.text import Text

        from guandan.tui import play_line, reading_name

        level = self.game.level
        self.console.print("These cards can be read several ways (R17); which do you mean?")
        for i, r in enumerate(readings, 1):
            line = Text(f"  {i}) {reading_name(r)}  ")
            line.append_text(play_line(r, level))
            self.console.print(line)
        n = len(readings)
        while True:
            ans = self.ask(f"Reading [1-{n}, Enter = cancel]: ").strip()
            if not ans:
                return None
            if ans.isascii() and ans.isdecimal() and len(ans) < 6 and 1 <= int(ans) <= n:
                return readings[int(ans) - 1]
            self._error(f"type a number from 1 to {n}, or just Enter to cancel")

    def _show_hint(self) -> None:
        from rich.text import Text

        from guandan.core.views import seat_view
        from guandan.tui import play_line, typed

        try:
            act = self.hint_agent.act(seat_view(self.game, HUMAN))
        except Exception as e:  # noqa: BLE001 - a failing hint bot must not end the person's game
            self._error(f"no hint available: {e}")
            return
        line = Text(f"hint ({self.hint_name} bot): ", style="cyan")
        line.append_text(play_line(act, self.game.level))
        line.append("  → type: ", style="cyan")
        line.append(typed(act), style="bold")
        self.console.print(line, soft_wrap=True)

    # -- rendering -----------------------------------------------------------------------------
    def render_table(self) -> Any:
        """The Rich renderable shown when the person must act (levels, seats, trick, hand)."""
        from guandan.core.views import seat_view

        return render_view(self.game, seat_view(self.game, HUMAN), self.console.width)

    # -- reporting events ----------------------------------------------------------------------
    def _report_events(self, deal: Deal | None, seat: int | None, act: PlayT | None) -> None:
        events = self.game.events[self._seen :]
        self._seen = len(self.game.events)
        for ev in events:
            t = ev["type"]
            if t == "action":
                if deal is not None and seat is not None and act is not None:
                    self._report_action(deal, seat, act)
            elif t == "deal":
                self._deal_header(ev)
            elif t == "anti_tribute":
                self._anti_tribute(ev)
            elif t == "tribute_paid":
                self._tribute_paid(ev)
            elif t == "returns_revealed":
                self._returns_revealed(ev)
            elif t == "jiefeng":
                self._jiefeng(ev)
            elif t == "deal_end":
                assert deal is not None
                self._result_screen(ev, deal)

    def _report_action(self, deal: Deal, seat: int, act: PlayT) -> None:
        from rich.text import Text

        from guandan.tui import place_name, play_line, seat_name

        if act[0] in ("tribute", "return"):
            # shown when revealed (tribute_paid / returns_revealed events); while the other
            # payer or receiver has still to choose, the cards stay hidden (R50)
            if deal.phase == act[0]:
                if seat == HUMAN:
                    line = Text(f"You chose your {act[0]} card: ")
                    line.append_text(play_line(act, deal.level))
                    line.append(" (shown to all once every card is in)")
                    self.console.print(line, style="dim")
                else:
                    self.console.print(f"{seat_name(seat)} has chosen a {act[0]} card.", style="dim")
            return
        line = Text(f"{seat_name(seat)}: ", style="bold" if seat == HUMAN else "")
        line.append_text(play_line(act, deal.level))
        if act[0] != "pass" and deal.n_cards[seat] == 0:
            place = place_name(deal.finished.index(seat))
            line.append(f"   — out, {place}!", style="bold green")
        self.console.print(line)
        if (
            act[0] == "pass"
            and deal.phase == "play"
            and deal.top is None
            and deal.jiefeng_seat is None
            and deal.turn is not None
        ):
            who = "You win" if deal.turn == HUMAN else f"{seat_name(deal.turn, False)} wins"
            self.console.print(f"  {who} the trick and lead{_s(deal.turn)}.", style="dim")
        if seat != HUMAN or self.autoplay:
            self._pause()

    def _pause(self) -> None:
        if self.delay > 0:
            self.sleep(self.delay)

    def _deal_header(self, ev: dict[str, Any]) -> None:
        from rich.rule import Rule

        from guandan.core.cards import parse_rank
        from guandan.core.deal import team_of
        from guandan.tui import TEAM_NAMES, level_text, seat_name

        level = parse_rank(ev["level"])
        self._current = (ev["game"], ev["deal"])
        lv = [level_text(parse_rank(x)) for x in ev["levels"]]
        self.console.print()
        self.console.print(
            Rule(f"Game {ev['game']} · Deal {ev['deal']} · level {level_text(level)}", style="cyan")
        )
        self.console.print(
            f"Levels: {TEAM_NAMES[0]} {lv[0]} · {TEAM_NAMES[1]} {lv[1]}.  "
            f"Wild cards: the two {level_text(level)}♥ ({level_text(level) if level != 8 else 'T'}H).",
            markup=False,
        )
        if "first_leader" in ev:
            fl = ev["first_leader"]
            self.console.print(f"No tribute in a game's first deal; {seat_name(fl)} lead{_s(fl)} (R51).")
        plan = self.game.deal.plan
        if plan is not None and not plan.anti_tribute:
            if plan.double:
                self.console.print(
                    f"Double tribute (双贡): {' and '.join(seat_name(s, False) for s in plan.payers)} "
                    f"each pay their highest card to {TEAM_NAMES[team_of(plan.head)]}; "
                    "the higher card goes to the 1st out (R46).",
                    markup=False,
                )
            else:
                payer = plan.payers[0]
                self.console.print(
                    f"Tribute (进贡): {seat_name(payer)} pay{_s(payer)} "
                    f"{'your' if payer == HUMAN else 'their'} highest card to {seat_name(plan.head)}, "
                    "the 1st out, who returns a card (R44-R47).",
                    markup=False,
                )

    def _anti_tribute(self, ev: dict[str, Any]) -> None:
        from rich.text import Text

        from guandan.core.cards import BIG_JOKER
        from guandan.tui import card_label, seat_name

        deal = self.game.deal
        line = Text("Anti-tribute (抗贡): ", style="bold yellow")
        shown = []
        for s in ev["seats"]:
            n = deal.hands[s][BIG_JOKER]
            shown.append(f"{seat_name(s)} shows " + " ".join([card_label(BIG_JOKER)] * n))
        line.append("; ".join(shown))
        line.append(f" — no tribute; {seat_name(ev['leader'])} lead{_s(ev['leader'])} (R48, R49).")
        self.console.print(line)

    def _tribute_paid(self, ev: dict[str, Any]) -> None:
        from rich.text import Text

        from guandan.core.cards import parse_card
        from guandan.tui import card_label, card_style, seat_name

        level = self.game.deal.level
        for giver, receiver, card in ev["tributes"]:
            f = parse_card(card)
            line = Text("Tribute (进贡): ", style="bold yellow")
            line.append(f"{seat_name(giver)} → {seat_name(receiver)}: ")
            line.append(card_label(f), style=card_style(f, level))
            self.console.print(line)

    def _returns_revealed(self, ev: dict[str, Any]) -> None:
        from rich.text import Text

        from guandan.core.cards import parse_card
        from guandan.tui import card_label, card_style, seat_name

        level = self.game.deal.level
        for giver, receiver, card in ev["returns"]:
            f = parse_card(card)
            line = Text("Return (还贡): ", style="bold yellow")
            line.append(f"{seat_name(giver)} → {seat_name(receiver)}: ")
            line.append(card_label(f), style=card_style(f, level))
            self.console.print(line)
        leader = ev["leader"]
        self.console.print(f"{seat_name(leader)} lead{_s(leader)} the first trick (R49).")

    def _jiefeng(self, ev: dict[str, Any]) -> None:
        from guandan.core.deal import partner
        from guandan.tui import seat_name

        leader = ev["leader"]
        out = partner(leader)
        self.console.print(
            f"  Partner leads: 接风 — {seat_name(out, False)} went out and nobody beat the last play, "
            f"so {seat_name(leader)} lead{_s(leader)} (R30).",
            style="bold yellow",
        )

    def _result_screen(self, ev: dict[str, Any], deal: Deal) -> None:
        from rich.panel import Panel
        from rich.table import Table

        from guandan.core.scoring import anhui_title
        from guandan.tui import TEAM_NAMES, level_text, place_name, seat_name

        game = self.game
        st = game.settlements[-1]
        order = ev["finish_order"]
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        places = ", ".join(f"{place_name(i)} {seat_name(s, False)}" for i, s in enumerate(order))
        if len(order) == 2:
            places += f" — {TEAM_NAMES[1 - st.winner]} double down (双下)"
        grid.add_row("Finishing order", places)
        grid.add_row("Result", f"{TEAM_NAMES[st.winner]} win {st.result}")
        before = [level_text(x) for x in st.levels_before]
        after = [level_text(x) for x in st.levels_after]
        up = f"+{st.upgrade}" + (f" (streak bonus {st.streak_bonus})" if st.streak_bonus else "")
        grid.add_row("Upgrade", up)
        grid.add_row(
            "Levels",
            f"{TEAM_NAMES[0]} {before[0]} → {after[0]} · {TEAM_NAMES[1]} {before[1]} → {after[1]}",
        )
        target = game.rules.target_level
        fails = ev.get("a_fails", [0, 0])
        limit = game.rules.a_fail_limit
        lim = "" if limit is None else f"/{limit}"
        notes = []
        if st.passed:
            notes.append(f"{TEAM_NAMES[st.winner]} passed {target} — the game is won!")
        for t in st.failed:
            if t in st.demoted:
                notes.append(f"{TEAM_NAMES[t]} failed at {target} again and fall back to 2 (R41)")
            else:
                notes.append(f"{TEAM_NAMES[t]} failed an attempt at {target} (R38/R39)")
        if st.passed or any(fails) or st.failed or target in before or target in after:
            notes.append(
                f"failed {target} attempts: {TEAM_NAMES[0]} {fails[0]}{lim}, {TEAM_NAMES[1]} {fails[1]}{lim}"
            )
        if notes:
            grid.add_row(f"{target} attempts", "\n".join(notes))
        if game.rules.points and "points" in ev:
            pts = ev["points"]
            tot = ev["points_total"]
            grid.add_row(
                "Points (Anhui)",
                "\n".join(
                    f"{seat_name(s, False)}: {pts[s]:+d} → {tot[s]} ({anhui_title(tot[s])})" for s in range(4)
                ),
            )
        you_won = st.winner == 0
        self.console.print(
            Panel(
                grid,
                title=f"Game {self._current[0]} · Deal {self._current[1]} result",
                border_style="green" if you_won else "red",
                expand=False,
            )
        )
        self._deal_rows.append(
            {
                "game": self._current[0],
                "deal": self._current[1],
                "level": level_text(deal.level),
                "order": ", ".join(seat_name(s, False) for s in order),
                "result": f"{TEAM_NAMES[st.winner]} {st.result}",
                "levels": f"{after[0]} / {after[1]}",
            }
        )
        if not game.over and not self.autoplay:
            ans = self.ask("Press Enter for the next deal (q = quit) ").strip().lower()
            if ans in ("q", "quit"):
                self._confirm_quit()

    def _final_screen(self) -> None:
        from rich import box
        from rich.panel import Panel
        from rich.table import Table

        from guandan.core.scoring import anhui_title
        from guandan.tui import TEAM_NAMES, level_text, seat_name

        game = self.game
        table = Table(title="Deals", expand=False, box=box.SIMPLE_HEAD)
        many = len({row["game"] for row in self._deal_rows}) > 1
        cols = (["game"] if many else []) + ["deal", "level", "finishing order", "result", "levels you/them"]
        for col in cols:
            table.add_column(col, no_wrap=True)
        for row in self._deal_rows:
            cells = [str(row["deal"]), row["level"], row["order"], row["result"], row["levels"]]
            table.add_row(*(([str(row["game"])] if many else []) + cells))
        self.console.print(table)
        w = game.winner
        lines = [
            f"Game over: {TEAM_NAMES[w]} passed {game.rules.target_level} and win"
            + (" — well played!" if w == 0 else "."),
            (
                f"Final levels: {TEAM_NAMES[0]} {level_text(game.score.levels[0])} · "
                f"{TEAM_NAMES[1]} {level_text(game.score.levels[1])}"
            ),
        ]
        if sum(game.games_won) > 1:
            won = game.games_won
            lines.append(f"Games won: {TEAM_NAMES[0]} {won[0]} · {TEAM_NAMES[1]} {won[1]}")
        if game.rules.points:
            lines.append(
                "Points: "
                + ", ".join(
                    f"{seat_name(s, False)} {game.score.points[s]} ({anhui_title(game.score.points[s])})"
                    for s in range(4)
                )
            )
        self.console.print(
            Panel(
                "\n".join(lines),
                title="Final result",
                border_style="green" if w == 0 else "red",
                expand=False,
            )
        )


def render_view(game: Game, view: SeatView, width: int = 100) -> Any:
    """The table for seat 0's decision: header, levels, seats (cards, this trick, place), the
    play to beat and the hand. Hidden card counts (``card_counts=le10``, R32) show as ``?``.

    Args:
        game: the game (for rules and the deal's tribute plan; nothing hidden is shown).
        view: ``seat_view(game, 0)``.
        width: console width in cells.
    Returns:
        A Rich ``Group``.
    """
    from rich import box
    from rich.console import Group
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    from guandan.core.deal import partner
    from guandan.core.scoring import anhui_title
    from guandan.tui import (
        TEAM_NAMES,
        TRIBUTE_RULE,
        card_label,
        counts_cell,
        level_text,
        place_name,
        play_line,
        render_hand,
        return_rule_text,
        seat_name,
    )

    level = view.level
    lv = level_text(level)
    parts: list[Any] = []
    parts.append(
        Rule(
            f"Game {view.game_number} · Deal {view.deal_number} · level {lv} · wilds {lv}♥ (shown *)",
            style="cyan",
        )
    )
    own = "yours" if view.levels[0] == level else ("theirs" if view.levels[1] == level else "")
    if view.levels[0] == level and view.levels[1] == level:
        own = "both teams'"
    head = Text("Levels: ")
    head.append(f"{TEAM_NAMES[0]} {level_text(view.levels[0])}", style="bold green")
    head.append(" · ")
    head.append(f"{TEAM_NAMES[1]} {level_text(view.levels[1])}", style="bold red")
    head.append(f"   deal level {lv}" + (f" ({own})" if own else ""))
    if any(view.a_fails):
        head.append(
            f"   failed {game.rules.target_level} attempts: you {view.a_fails[0]}, them {view.a_fails[1]}"
        )
    if game.rules.points:
        head.append(f"   points {view.points[0]} ({anhui_title(view.points[0])})")
    parts.append(head)

    last: dict[int, Any] = {}
    for s, a in view.trick:
        last[s] = a
    tbl = Table(box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False, pad_edge=False)
    tbl.add_column(" ", width=1)
    tbl.add_column("seat")
    tbl.add_column("cards", justify="right")
    tbl.add_column("this trick")
    tbl.add_column("")
    for s in range(4):
        mark = "▶" if view.to_act == s else ""
        name = seat_name(s) + (" partner" if s == partner(HUMAN) else "")
        played = play_line(last[s], level) if s in last else Text("")
        note = ""
        if s in view.finished:
            note = "out " + place_name(view.finished.index(s))
        elif view.phase == "play" and view.top_seat == s and view.top is not None:
            note = "top"
        style = "bold" if s == HUMAN else ""
        tbl.add_row(mark, name, counts_cell(view.card_counts[s]), played, note, style=style)
    parts.append(tbl)
    if view.finished:
        parts.append(
            Text(
                "Out so far: "
                + ", ".join(f"{place_name(i)} {seat_name(s, False)}" for i, s in enumerate(view.finished))
            )
        )
    turn = Text()
    if view.phase == "play":
        if view.top is None:
            turn.append("Your turn: you lead — play any combination.", style="bold")
        else:
            turn.append("Your turn: beat ", style="bold")
            turn.append_text(play_line(view.top, level))
            top = view.top_seat or 0
            who = seat_name(top, False) + (", your partner" if top == partner(HUMAN) else "")
            turn.append(f" ({who}) or pass.", style="bold")
    elif view.phase == "tribute":
        plan = game.deal.plan
        to = "the winners"
        if plan is not None and not plan.double:
            to = seat_name(plan.head)
        turn.append(f"Your turn: pay tribute (进贡) to {to} — " + TRIBUTE_RULE + ".\n", style="bold")
        turn.append("Allowed: " + ", ".join(_both(a[2][0]) for a in view.legal_actions))
    elif view.phase == "return":
        plan = game.deal.plan
        target = dict(plan.returns_due)[HUMAN] if plan is not None else 1
        got = ""
        if plan is not None:
            got = ", ".join(
                f"{card_label(plan.paid[p])} from {seat_name(p, False)}"
                for p, r in plan.to.items()
                if r == HUMAN
            )
        turn.append(f"Your turn: return a card (还贡) to {seat_name(target)}", style="bold")
        turn.append(f" — you received {got}.\n" if got else ".\n", style="bold")
        turn.append("Rule: " + return_rule_text(game.rules.return_rule, target == partner(HUMAN)) + ".\n")
        turn.append("Allowed: " + " ".join(_txt(a[2][0]) for a in view.legal_actions))
    parts.append(turn)
    parts.append(Text(f"Your hand ({len(view.hand)} cards):", style="bold"))
    parts.append(render_hand(view.hand, level, width))
    return Group(*parts)


def _missing_cards(hand: Sequence[int], faces: Sequence[int]) -> str | None:
    """A one-line reason when ``faces`` are not all in ``hand`` (per-face counts), else ``None``."""
    from guandan.core.cards import card_text

    for f in sorted(set(faces)):
        want, have = faces.count(f), hand[f]
        if have == 0:
            return f"{card_text(f)} is not in your hand"
        if have < want:
            times = "once" if have == 1 else f"{have} times"
            return f"you hold {card_text(f)} only {times}, not {want} times"
    return None


def _s(seat: int) -> str:
    """Verb ending for a seat as subject: 'You lead' / 'East leads'."""
    return "" if seat == HUMAN else "s"


def _both(face: int) -> str:
    """``'A♠ (AS)'``: display label and typed notation (just ``'BJ'`` for jokers)."""
    from guandan.tui import card_label

    label, txt = card_label(face), _txt(face)
    return txt if label == txt else f"{label} ({txt})"


def _txt(face: int) -> str:
    from guandan.core.cards import card_text

    return card_text(face)


@app.command("play")
def play_command(
    preset: str = typer.Option("official", "--preset", "-p", help=PRESET_HELP),
    rule: list[str] = typer.Option(None, "--rule", "-r", help=RULE_HELP),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed of the game (shuffles, bots); random when omitted."
    ),
    bot: str = typer.Option("heuristic", "--bot", help="Bot for the other three seats: " + AGENT_HELP),
    lang: str = typer.Option("en", "--lang", help="Language of the screens (only en for now)."),
    delay: float | None = typer.Option(
        None,
        "--delay",
        min=0.0,
        max=60.0,
        help="Seconds to pause after each bot move, up to 60 (default: 0.4 in a terminal, else 0).",
    ),
    autoplay: bool = typer.Option(
        False, "--autoplay", help="Demo mode: the heuristic bot plays your seat too; no prompts."
    ),
) -> None:
    """Play a full game in the terminal: you are South (seat 0), a bot partner is North (seat 2),
    bots East (1) and West (3). From level 2 until a team passes the target, with tribute.

    Type cards as rank then suit (TH TD, 10h), p to pass, h for a hint, ? for help, q to quit.
    """
    import random
    import sys

    from rich.console import Console

    from guandan.core.match import Game

    err = Console(stderr=True)
    rules = load_rules(preset, rule)
    if lang != "en":
        err.print(f"[red]error:[/red] --lang {lang!r} is not available; valid: en", highlight=False)
        raise typer.Exit(2)
    try:
        from guandan.agents import make_agent

        make_agent(bot, 0)  # validates the name and its options
    except ValueError as e:
        msg = str(e).replace("unknown agent", "unknown bot").replace("valid agents", "valid bots")
        err.print(f"[red]error:[/red] {msg}", highlight=False, markup=True)
        raise typer.Exit(2) from None
    if seed is None:
        seed = random.SystemRandom().randrange(1, 1_000_000)
    console = Console(highlight=False)
    notes: list[str] = []
    bots = []
    for s in range(4):
        name = "heuristic" if s == HUMAN else bot  # seat 0's bot plays only in --autoplay
        agent, note = build_agent(name, seed * 10 + s)
        if note and note not in notes:
            notes.append(note)
        bots.append(agent)
    hint_agent, hint_note = build_agent("heuristic", seed * 10 + 7)
    hint_name = "heuristic" if hint_note is None else "random"
    if hint_note:
        hint_note = "hints come from the random bot: the heuristic bot is not available"
        if hint_note not in notes:
            notes.append(hint_note)
    if delay is None:
        delay = 0.4 if sys.stdout.isatty() else 0.0
    game = Game(rules, seed=seed)
    console.print(
        f"[bold]pyguandan[/bold] — you are [bold]South (seat 0)[/bold]; your partner is North (seat 2); "
        f"East (seat 1) and West (seat 3) play against you.\n"
        f"preset {preset} · seed {seed} · bots {bot}"
        + (" · autoplay (demo)" if autoplay else "")
        + ". Type ? for help.",
        highlight=False,
    )
    for note in notes:
        console.print(f"[yellow]note:[/yellow] {note}", highlight=False)
    session = PlaySession(
        game, bots, hint_agent, console, delay=delay, autoplay=autoplay, hint_name=hint_name
    )
    raise typer.Exit(session.run())
