"""The terminal game's loop (``guandan play``): a person plays a full game (2 → past the target,
with tribute) against bots.

The person sits at seat 0 (South), a bot partner at seat 2 (North), bots at seats 1 (East) and
3 (West). :class:`PlaySession` is a driver (DESIGN.md section 1): it asks the game what is
pending, asks a bot or the person, and applies the answer with :meth:`Game.apply`, which checks
it. Drawing is :mod:`guandan.terminal.render`, reading typed input :mod:`guandan.terminal.commands`;
every text goes through :func:`guandan.terminal.i18n.tr` (``--lang en`` or ``zh``) and speaks
plain words, without rule ids. Cards may be typed in full (``QS QH``) or by rank only (``QQ``):
the suits are then picked so that no wild card is spent when natural cards do, and straight
flushes stay intact where possible; a wild that would stand in for a missing card is used only
after the person answers ``y``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .commands import (
    HELP_LINES,
    RankShortage,
    parse_command,
    rank_selections,
    reading_ranks,
    straight_flushes_left,
)
from .i18n import strip_rule_ids, tr
from .render import (
    HUMAN,
    card_label,
    card_style,
    level_text,
    place_name,
    play_line,
    play_plain,
    rank_label,
    reading_name,
    render_view,
    seat_name,
    streak_lines,
    team_name,
    typed,
    wild_substitutes,
)

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from guandan.agents.base import Agent
    from guandan.core.deal import Deal
    from guandan.core.match import Game
    from guandan.core.plays import PlayT


class QuitGame(Exception):
    """The person asked to quit (``q`` confirmed, or end of input)."""


class BotFailure(Exception):
    """A bot answered an illegal action (a bug in the bot); the game cannot go on."""


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
        ans = self.ask(tr("Quit the game? [y/N] ")).strip().lower()
        if ans in ("y", "yes", "是"):
            raise QuitGame

    def _error(self, message: str) -> None:
        from rich.text import Text

        line = " ".join(strip_rule_ids(str(message)).split())  # always one line, no rule ids
        self.console.print(Text("✗ " + line, style="red"), soft_wrap=True)

    def _illegal(self, e: Exception, faces: Sequence[int] = ()) -> None:
        """Report an :class:`IllegalAction` in plain words (by its reason code)."""
        from guandan.core.cards import cards_text

        reason = getattr(e, "reason", "")
        messages = {
            "must_lead": tr("the leader must play, not pass"),
            "does_not_beat": tr("that does not beat the play on the table"),
            "tribute_not_highest": tr("the tribute must be your highest card, not counting the wild"),
            "return_too_high": tr("the return must rank 10 or lower and not be a level card"),
        }
        if reason == "not_a_reading":
            text = tr("{cards} is not a legal play", cards=cards_text(sorted(faces))) if faces else \
                tr("those cards are not a legal play")
        else:
            text = messages.get(reason, str(e))
        self._error(text)

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
            self.console.print(tr("Bye — the game was left unfinished."))
            return 0
        except KeyboardInterrupt:
            self.console.print("\n" + tr("interrupted"))
            return 130
        except BotFailure as e:
            self._error(tr("error: {error}", error=e))
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
                raise BotFailure(
                    tr("the {name} bot at seat {seat} chose an illegal action: {error}", name=name, seat=seat, error=e)
                ) from None
        self._report_events(deal, seat, applied)

    # -- the person's turn ---------------------------------------------------------------------
    def human_turn(self) -> PlayT:
        """Show the table and read input until a legal action is typed; returns it (checked).

        Raises:
            QuitGame: the person quit (``q`` confirmed, or end of input).
        """
        from guandan.core.errors import NotationError

        self.console.print(self.render_table())
        phase = self.game.phase
        if phase == "tribute":
            prompt = tr("Tribute card (h = hint, ? = help, q = quit): ")
        elif phase == "return":
            prompt = tr("Card to return (h = hint, ? = help, q = quit): ")
        else:
            prompt = tr("Your play (cards, p = pass, h = hint, ? = help, q = quit): ")
        while True:
            text = self.ask(prompt)
            try:
                cmd = parse_command(text)
            except NotationError as e:
                self._error(tr(
                    "bad card {token!r}: write rank then suit, e.g. TH, AS, 7D; jokers SJ and BJ", token=e.token
                ) if e.token else str(e))
                continue
            if cmd.kind == "empty":
                continue
            if cmd.kind == "help":
                for line in HELP_LINES:
                    self.console.print(tr(line), markup=False)
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
            if cmd.kind == "ranks":
                action = self.resolve_ranks(cmd.faces, cmd.ranks)
                if action is not None and not self._wilds_confirmed(action, cmd.faces):
                    continue
            else:
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
                    self._error(tr("give exactly one card as your {what} (you typed {n})", what=tr(phase), n=len(faces)))
                    return None
                return game.check((phase, FACE_RANK[faces[0]], faces), HUMAN)
            # play phase: every legal reading of the cards (R17)
            legal = game.legal_readings(faces, HUMAN)
            if len(legal) == 1:
                return legal[0]
            return self._choose_reading(legal)
        except IllegalAction as e:
            self._illegal(e, faces)
            return None

    def resolve_ranks(self, faces: tuple[int, ...], ranks: tuple[int, ...]) -> PlayT | None:
        """Cards typed by rank only (``QQQ``, ``10 10``, ``55 3H``): pick the suits, then check.

        Only readings whose cards stand for exactly the typed ranks count (``KK`` is never two
        wilds read as level cards). The choice among the selections whose cards make such a legal
        play: the fewest wild cards (R8: a wild stands in only when the hand lacks natural cards of
        a rank), then a plain play rather than a straight flush (R14; type the suits to play one),
        then the most straight flushes left in the hand. When the best selections make different
        plays, or the cards have several readings (R17), the person is asked which.

        Returns:
            The checked action, or ``None`` after a one-line message (the person is asked again).
        Raises:
            QuitGame: end of input while choosing.
        """
        from guandan.core.cards import FACE_RANK
        from guandan.core.errors import IllegalAction

        game = self.game
        hand = game.deal.hands[HUMAN]
        missing = _missing_cards(hand, faces)
        if missing:
            self._error(missing)
            return None
        try:
            selections = rank_selections(hand, faces, ranks, game.deal.level)
        except RankShortage as e:
            self._error(e.message())
            return None
        phase = game.phase
        if phase in ("tribute", "return"):
            if len(faces) + len(ranks) != 1:
                self._error(tr("give exactly one card as your {what} (you typed {n})", what=tr(phase),
                               n=len(faces) + len(ranks)))
                return None
            first: IllegalAction | None = None
            for sel, _ in selections:
                try:
                    return game.check((phase, FACE_RANK[sel[0]], sel), HUMAN)
                except IllegalAction as e:
                    first = first or e
            assert first is not None
            self._illegal(first, selections[0][0])
            return None
        scored: list[tuple[tuple[int, int, int], tuple[int, ...], list[PlayT]]] = []
        first_error: IllegalAction | None = None
        want = tuple(sorted([FACE_RANK[f] for f in faces] + list(ranks)))
        level = game.deal.level
        for sel, wilds in selections:
            cards = tuple(sorted(faces + sel))
            try:
                readings = [r for r in game.legal_readings(cards, HUMAN) if reading_ranks(r, level) == want]
            except IllegalAction as e:
                first_error = first_error or e
                continue
            if not readings:  # the wilds would stand for other ranks than those typed
                first_error = first_error or IllegalAction("not_a_reading", "those cards are not a legal play")
                continue
            left = list(hand)
            for f in cards:
                left[f] -= 1
            flush = int(any(r[0] == "straight_flush" for r in readings))
            scored.append(((wilds, flush, -straight_flushes_left(left)), cards, readings))
        if not scored:
            assert first_error is not None
            if first_error.reason == "not_a_reading":
                from guandan.core.cards import card_text

                typed = " ".join([rank_label(r) for r in ranks] + [card_text(f) for f in faces])
                self._error(tr("{cards} is not a legal play", cards=typed))
            else:
                self._illegal(first_error)
            return None
        scored.sort(key=lambda x: (x[0], x[1]))
        best = [x for x in scored if x[0] == scored[0][0]]
        options: dict[tuple[Any, Any], PlayT] = {}
        for _, _, readings in best:
            for r in readings:
                options.setdefault((r[0], r[1]), r)
        if len(options) == 1:
            return next(iter(options.values()))
        if len({cards for _, cards, _ in best}) == 1:
            return self._choose_reading(best[0][2])
        return self._choose_reading(list(options.values()), by_cards=True)

    def _wilds_confirmed(self, action: PlayT, typed: tuple[int, ...]) -> bool:
        """Ask before a wild card not typed in full stands in for another rank than its own to
        complete ranks typed without suits (``33`` with one 3 in hand: the ♥ level card would be
        the second 3, R8/R12): ``y`` plays it; anything else plays nothing and the person is asked
        again. A wild played as the level card it is (R13) needs no question.

        Raises:
            QuitGame: end of input at the question.
        """
        from guandan.core.cards import FACE_RANK, wild_face
        from guandan.core.plays import as_play

        level = self.game.deal.level
        w = wild_face(level)
        spent = action[2].count(w) - typed.count(w)
        if spent <= 0 or action[0] in ("tribute", "return"):
            return True
        subs = wild_substitutes(as_play(action), level)
        if not any(FACE_RANK[f] != level for f in subs):
            return True
        ans = self.ask(tr("Play {play} using your wild card {wild}? [y/N] ",
                          play=play_plain(action, level), wild=card_label(w))).strip().lower()
        if ans in ("y", "yes", "是"):
            return True
        self.console.print(tr("(not played: type the cards with their suits to choose others)"), style="dim")
        return False

    def _choose_reading(self, readings: Sequence[PlayT], by_cards: bool = False) -> PlayT | None:
        from rich.text import Text

        level = self.game.level
        if by_cards:
            self.console.print(tr("Those ranks can be played several ways; which cards do you mean?"))
        else:
            self.console.print(tr("These cards can be read several ways; which do you mean?"))
        for i, r in enumerate(readings, 1):
            line = Text(f"  {i}) {reading_name(r)}  ")
            line.append_text(play_line(r, level))
            self.console.print(line)
        n = len(readings)
        while True:
            ans = self.ask(tr("Reading [1-{n}, Enter = cancel]: ", n=n)).strip()
            if not ans:
                return None
            if ans.isascii() and ans.isdecimal() and len(ans) < 6 and 1 <= int(ans) <= n:
                return readings[int(ans) - 1]
            self._error(tr("type a number from 1 to {n}, or just Enter to cancel", n=n))

    def _show_hint(self) -> None:
        from rich.text import Text

        from guandan.core.views import seat_view

        try:
            act = self.hint_agent.act(seat_view(self.game, HUMAN))
        except Exception as e:  # noqa: BLE001 - a failing hint bot must not end the person's game
            self._error(tr("no hint available: {error}", error=e))
            return
        line = Text(tr("hint ({name} bot): ", name=tr(self.hint_name)), style="cyan")
        line.append_text(play_line(act, self.game.level))
        line.append(tr("  → type: "), style="cyan")
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

        if act[0] in ("tribute", "return"):
            # shown when revealed (tribute_paid / returns_revealed events); while the other
            # payer or receiver has still to choose, the cards stay hidden (R50)
            if deal.phase == act[0]:
                if seat == HUMAN:
                    line = Text(tr("You chose your {what} card: ", what=tr(act[0])))
                    line.append_text(play_line(act, deal.level))
                    line.append(tr(" (shown to all once every card is in)"))
                    self.console.print(line, style="dim")
                else:
                    self.console.print(tr("{who} has chosen a {what} card.", who=seat_name(seat), what=tr(act[0])),
                                       style="dim")
            return
        line = Text(f"{seat_name(seat)}: ", style="bold" if seat == HUMAN else "")
        line.append_text(play_line(act, deal.level))
        if act[0] != "pass" and deal.n_cards[seat] == 0:
            place = place_name(deal.finished.index(seat))
            line.append(tr("   — out, {place}!", place=place), style="bold green")
        self.console.print(line)
        if (
            act[0] == "pass"
            and deal.phase == "play"
            and deal.top is None
            and deal.jiefeng_seat is None
            and deal.turn is not None
        ):
            if deal.turn == HUMAN:
                self.console.print(tr("  You win the trick and lead."), style="dim")
            else:
                self.console.print(tr("  {who} wins the trick and leads.", who=seat_name(deal.turn, False)), style="dim")
        if seat != HUMAN or self.autoplay:
            self._pause()

    def _pause(self) -> None:
        if self.delay > 0:
            self.sleep(self.delay)

    def _deal_header(self, ev: dict[str, Any]) -> None:
        from rich.rule import Rule

        from guandan.core.cards import parse_rank
        from guandan.core.deal import team_of

        level = parse_rank(ev["level"])
        self._current = (ev["game"], ev["deal"])
        lv = [level_text(parse_rank(x)) for x in ev["levels"]]
        self.console.print()
        self.console.print(
            Rule(tr("Game {game} · Deal {deal} · level {level}", game=ev["game"], deal=ev["deal"],
                    level=level_text(level)), style="cyan")
        )
        self.console.print(
            tr("Levels: {team0} {lv0} · {team1} {lv1}.  Wild cards: the two {level}♥ ({typed}).",
               team0=team_name(0), lv0=lv[0], team1=team_name(1), lv1=lv[1], level=level_text(level),
               typed=(level_text(level) if level != 8 else "T") + "H"),
            markup=False,
        )
        if "first_leader" in ev:
            fl = ev["first_leader"]
            if "turned_card" in ev:  # R51: the card turned face up names the first leader
                from guandan.core.cards import parse_card
                self.console.print(tr("The card turned face up is {card}; {who} hold{s} it.",
                                      card=card_label(parse_card(ev["turned_card"])), who=seat_name(fl), s=_s(fl)),
                                   markup=False)
            self.console.print(tr("No tribute in a game's first deal; {who} lead{s}.", who=seat_name(fl), s=_s(fl)))
        plan = self.game.deal.plan
        if plan is not None and not plan.anti_tribute:
            if plan.double:
                self.console.print(
                    tr("Double tribute (双贡): {payers} each pay their highest card to {team}; "
                       "the higher card goes to the 1st out.",
                       payers=tr(" and ").join(seat_name(s, False) for s in plan.payers), team=team_name(team_of(plan.head))),
                    markup=False,
                )
            else:
                payer = plan.payers[0]
                self.console.print(
                    tr("Tribute (进贡): {payer} pay{s} {whose} highest card to {head}, the 1st out, who returns a card.",
                       payer=seat_name(payer), s=_s(payer), whose=tr("your") if payer == HUMAN else tr("their"),
                       head=seat_name(plan.head)),
                    markup=False,
                )

    def _anti_tribute(self, ev: dict[str, Any]) -> None:
        from rich.text import Text

        from guandan.core.cards import BIG_JOKER

        deal = self.game.deal
        line = Text(tr("Anti-tribute (抗贡): "), style="bold yellow")
        shown = []
        for s in ev["seats"]:
            n = deal.hands[s][BIG_JOKER]
            shown.append(tr("{who} shows {cards}", who=seat_name(s), cards=" ".join([card_label(BIG_JOKER)] * n)))
        line.append("; ".join(shown))
        line.append(tr(" — no tribute; {who} lead{s}.", who=seat_name(ev["leader"]), s=_s(ev["leader"])))
        self.console.print(line)

    def _card_moves(self, label: str, moves: list[list[Any]]) -> None:
        """One line per tribute or return ``[giver, receiver, card]`` (R43-R47), headed ``label``."""
        from rich.text import Text

        from guandan.core.cards import parse_card

        level = self.game.deal.level
        for giver, receiver, card in moves:
            f = parse_card(card)
            line = Text(label, style="bold yellow")
            line.append(f"{seat_name(giver)} → {seat_name(receiver)}: ")
            line.append(card_label(f), style=card_style(f, level))
            self.console.print(line)

    def _tribute_paid(self, ev: dict[str, Any]) -> None:
        self._card_moves(tr("Tribute (进贡): "), ev["tributes"])

    def _returns_revealed(self, ev: dict[str, Any]) -> None:
        self._card_moves(tr("Return (还贡): "), ev["returns"])
        leader = ev["leader"]
        self.console.print(tr("{who} lead{s} the first trick.", who=seat_name(leader), s=_s(leader)))

    def _jiefeng(self, ev: dict[str, Any]) -> None:
        from guandan.core.deal import partner

        leader = ev["leader"]
        out = partner(leader)
        self.console.print(
            tr("  Partner leads: 接风 — {out} went out and nobody beat the last play, so {who} lead{s}.",
               out=seat_name(out, False), who=seat_name(leader), s=_s(leader)),
            style="bold yellow",
        )

    def _result_screen(self, ev: dict[str, Any], deal: Deal) -> None:
        from rich.panel import Panel
        from rich.table import Table

        from guandan.core.scoring import anhui_title

        game = self.game
        st = game.settlements[-1]
        order = ev["finish_order"]
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        places = ", ".join(f"{place_name(i)} {seat_name(s, False)}" for i, s in enumerate(order))
        if len(order) == 2:
            places += tr(" — {team} double down (双下)", team=team_name(1 - st.winner))
        grid.add_row(tr("Finishing order"), places)
        grid.add_row(tr("Result"), tr("{team} win {result}", team=team_name(st.winner), result=st.result))
        before = [level_text(x) for x in st.levels_before]
        after = [level_text(x) for x in st.levels_after]
        up = tr("+{n}", n=st.upgrade) + (tr(" (streak bonus {n})", n=st.streak_bonus) if st.streak_bonus else "")
        grid.add_row(tr("Upgrade"), up)
        for line in streak_lines(ev.get("streaks")):
            grid.add_row(tr("Streaks"), line)
        grid.add_row(
            tr("Levels"),
            f"{team_name(0)} {before[0]} → {after[0]} · {team_name(1)} {before[1]} → {after[1]}",
        )
        target = game.rules.target_level
        fails = ev.get("a_fails", [0, 0])
        limit = game.rules.a_fail_limit
        lim = "" if limit is None else f"/{limit}"
        notes = []
        if st.passed:
            notes.append(tr("{team} passed {target} — the game is won!", team=team_name(st.winner), target=target))
        for t in st.failed:
            if t in st.demoted:
                notes.append(tr("{team} failed at {target} again and fall back to 2", team=team_name(t), target=target))
            else:
                notes.append(tr("{team} failed an attempt at {target}", team=team_name(t), target=target))
        if st.passed or any(fails) or st.failed or target in before or target in after:
            notes.append(
                tr("failed {target} attempts: {team0} {n0}{lim}, {team1} {n1}{lim}", target=target,
                   team0=team_name(0), n0=fails[0], team1=team_name(1), n1=fails[1], lim=lim)
            )
        if notes:
            grid.add_row(tr("{target} attempts", target=target), "\n".join(notes))
        if game.rules.points and "points" in ev:
            pts = ev["points"]
            tot = ev["points_total"]
            grid.add_row(
                tr("Points (Anhui)"),
                "\n".join(
                    f"{seat_name(s, False)}: {pts[s]:+d} → {tot[s]} ({anhui_title(tot[s])})" for s in range(4)
                ),
            )
        you_won = st.winner == 0
        self.console.print(
            Panel(
                grid,
                title=tr("Game {game} · Deal {deal} result", game=self._current[0], deal=self._current[1]),
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
                "result": f"{team_name(st.winner)} {st.result}",
                "levels": f"{after[0]} / {after[1]}",
            }
        )
        if not game.over and not self.autoplay:
            ans = self.ask(tr("Press Enter for the next deal (q = quit) ")).strip().lower()
            if ans in ("q", "quit"):
                self._confirm_quit()

    def _final_screen(self) -> None:
        from rich import box
        from rich.panel import Panel
        from rich.table import Table

        from guandan.core.scoring import anhui_title

        game = self.game
        table = Table(title=tr("Deals"), expand=False, box=box.SIMPLE_HEAD)
        many = len({row["game"] for row in self._deal_rows}) > 1
        cols = (["game"] if many else []) + ["deal", "level", "finishing order", "result", "levels you/them"]
        for col in cols:
            table.add_column(tr(col), no_wrap=True)
        for row in self._deal_rows:
            cells = [str(row["deal"]), row["level"], row["order"], row["result"], row["levels"]]
            table.add_row(*(([str(row["game"])] if many else []) + cells))
        self.console.print(table)
        w = game.winner
        over = (tr("Game over: {team} win the single deal", team=team_name(w)) if game.rules.single_deal
                else tr("Game over: {team} passed {target} and win", team=team_name(w), target=game.rules.target_level))
        lines = [
            over + (tr(" — well played!") if w == 0 else tr(".")),
            tr("Final levels: {team0} {lv0} · {team1} {lv1}", team0=team_name(0),
               lv0=level_text(game.score.levels[0]), team1=team_name(1), lv1=level_text(game.score.levels[1])),
        ]
        if sum(game.games_won) > 1:
            won = game.games_won
            lines.append(tr("Games won: {team0} {n0} · {team1} {n1}", team0=team_name(0), n0=won[0],
                            team1=team_name(1), n1=won[1]))
        if game.rules.points:
            lines.append(
                tr("Points: ")
                + ", ".join(
                    f"{seat_name(s, False)} {game.score.points[s]} ({anhui_title(game.score.points[s])})"
                    for s in range(4)
                )
            )
        self.console.print(
            Panel(
                "\n".join(lines),
                title=tr("Final result"),
                border_style="green" if w == 0 else "red",
                expand=False,
            )
        )


def _missing_cards(hand: Sequence[int], faces: Sequence[int]) -> str | None:
    """A one-line reason when ``faces`` are not all in ``hand`` (per-face counts), else ``None``."""
    from guandan.core.cards import card_text

    for f in sorted(set(faces)):
        want, have = faces.count(f), hand[f]
        if have == 0:
            return tr("{card} is not in your hand", card=card_text(f))
        if have < want:
            times = tr("once") if have == 1 else tr("{n} times", n=have)
            return tr("you hold {card} only {times}, not {want} times", card=card_text(f), times=times, want=want)
    return None


def _s(seat: int) -> str:
    """Verb ending for a seat as subject: 'You lead' / 'East leads'."""
    return "" if seat == HUMAN else "s"
