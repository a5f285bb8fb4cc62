"""Browser test of the issue's "done when": a newcomer registers, plays a whole game against bots,
opens the replay and sees their rating.

A server of its own (``guandan.server.app.create_app`` under uvicorn, fresh SQLite file, bots
acting at once: ``bot_delay_s=0``) and the machine's Chromium through Playwright, reusing
``tests/browser_helpers.py``. Every step goes through the page:

1. register ``newcomer`` in the sign-in form, create a room with the ``official`` preset, fill
   the three other seats with heuristic bots, start;
2. make the first decisions of seat 0 by Hint + Play / Pass (each one applied by the server);
3. hand the seat to the bot (托管) with the table's 托管 button (``auto-btn``); the page then shows
   the ``auto-badge-0`` badge (a seat in 托管 is always ready between deals);
4. wait (at most 150 s) for the game-over panel; the game is whole: it ends with a ``game_over``
   event after several deals, the winner being the team that passed level A (R6, R36-R37);
5. click the replay link: the viewer shows the four hands (``replay-hand-0..3``) with the 27 cards
   of each seat dealt (R4) exactly as the record's ``deal`` event gives them; one step forward
   removes exactly the cards of the first lead from its player's hand and leaves the other hands
   as they were; "next deal" goes to each deal start in turn (27 cards each again) and reaches the
   last step, the ``game_over`` event;
6. the profile (``nav-profile``): 1 game played, games won and win rate as the winner team gives
   them (seat 0 is team 0, R2), and the rating ``mu - 3*sigma`` of one openskill Plackett-Luce
   update from the new player's prior (25, 25/3) with the bots' fixed stand-in ratings (server
   contract; server/ratings.py); the leaderboard lists the player with the same rating.

Uncaught page errors and unexpected console errors fail the test (``PageGuard``). Screenshots:
``test-artifacts/game-over.png``, ``replay.png``, ``profile.png``, ``leaderboard.png``.

Without Chromium the module is skipped, or fails when ``CI=true`` (as ``test_browser.py``).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

try:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - playwright is a test dependency
    sync_playwright = None
    PlaywrightError = Exception

from browser_helpers import (
    ARTIFACTS,
    WAIT_MS,
    LiveServer,
    PageGuard,
    TableWatcher,
    act,
    create_room,
    fill_bots,
    is_my_turn,
    register,
    start_game,
    tid,
    wait_until,
)

#: Game seed fixed in the database before the start (the API draws a secret one). With it and
#: heuristic play on every seat the game is short (5 deals, about 350 actions).
SEED_GAME = 42
#: Decisions seat 0 makes through the UI before handing the seat to the bot.
UI_DECISIONS = 3
#: Bound on the wait for the end of the game (seconds).
GAME_WAIT_S = 150
#: Rating prior of a new player and the heuristic bot's fixed stand-in (server contract, ratings).
NEW_PLAYER = (25.0, 25.0 / 3.0)
HEURISTIC_BOT = (25.0, 3.0)
USER = "newcomer"
PASSWORD = "newcomer-password-1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[LiveServer]:
    """A live server of its own: fresh SQLite file, bots act without delay (``bot_delay_s=0``)."""
    srv = LiveServer(tmp_path_factory.mktemp("browser-game") / "guandan.db", bot_delay_s=0)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def page_and_watcher(browser: Any, server: LiveServer) -> Iterator[tuple[Any, TableWatcher]]:
    """One browser context (its own cookies, locale zh-CN) with one page, a frame recorder and an
    error guard; at teardown the test fails on any uncaught page error or unexpected console error."""
    ARTIFACTS.mkdir(exist_ok=True)
    ctx = browser.new_context(base_url=server.base, locale="zh-CN", viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    guard = PageGuard(page, "newcomer")
    try:
        yield page, TableWatcher(page)
    finally:
        problems = guard.problems()
        try:
            ctx.close()
        except PlaywrightError:
            pass
    assert not problems, "\n".join(problems)


# -- helpers ---------------------------------------------------------------------------------------

def replay_counts(page: Any) -> list[int]:
    """Number of cards shown in each replay hand."""
    return [tid(page, f"replay-hand-{s}").locator("[data-card]").count() for s in range(4)]


def replay_hands(page: Any) -> list[Counter[str]]:
    """The cards of each replay hand, as multisets of card texts."""
    return [
        Counter(
            tid(page, f"replay-hand-{s}")
            .locator("[data-card]")
            .evaluate_all("els => els.map(e => e.dataset.card)")
        )
        for s in range(4)
    ]


def replay_index(page: Any) -> tuple[int, int]:
    """(step shown, number of steps) from the ``replay-step`` line (1-based step)."""
    nums = re.findall(r"\d+", tid(page, "replay-step").inner_text())
    return int(nums[0]), int(nums[1])


def click_replay(page: Any, testid: str, to_step: int) -> None:
    """Click a replay control and wait until the viewer shows step ``to_step`` (1-based)."""
    tid(page, testid).click()
    wait_until(page, lambda: replay_index(page)[0] == to_step, f"replay step {to_step} after {testid}")


def expected_rating(won: bool) -> float:
    """Display rating (``mu - 3*sigma``, one decimal) of a new player at seat 0 after one game
    with a heuristic bot partner against two heuristic bots (openskill Plackett-Luce, winners
    ranked first)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(mu=NEW_PLAYER[0], sigma=NEW_PLAYER[1])
    me = model.rating(mu=NEW_PLAYER[0], sigma=NEW_PLAYER[1])
    bots = [model.rating(mu=HEURISTIC_BOT[0], sigma=HEURISTIC_BOT[1]) for _ in range(3)]
    mine, theirs = [me, bots[0]], [bots[1], bots[2]]
    rated = model.rate([mine, theirs] if won else [theirs, mine])
    new = rated[0][0] if won else rated[1][0]
    return round(new.mu - 3 * new.sigma, 1)


# -- the test --------------------------------------------------------------------------------------


def test_newcomer_plays_a_whole_game_and_sees_replay_and_rating(
    page_and_watcher: tuple[Any, TableWatcher], server: LiveServer
) -> None:
    page, watcher = page_and_watcher
    t0 = time.monotonic()

    # 1. register, create an official room, fill bots, start
    page.goto("/")
    tid(page, "login-form").wait_for()
    register(page, USER, PASSWORD)
    room_id = create_room(page, "Newcomer game")
    server.set_seed(room_id, SEED_GAME)
    fill_bots(page)
    view = start_game(page, watcher)
    assert (
        view["seat"] == 0 and view["level"] == "2" and view["levels"] == ["2", "2"]
    )  # R6: both teams start at 2
    assert len(view["hand"]) == 27  # R4

    # 2. the first decisions through the UI: Hint, then Play or Pass
    taken = []
    while len(taken) < UI_DECISIONS:
        wait_until(page, lambda: is_my_turn(page), "seat 0's turn")
        taken.append(act(page, watcher))
    mine = [a for s, a in watcher.view["history"] if s == 0] if watcher.view["deal"] == 1 else None
    if mine is not None:
        assert mine == taken[: len(mine)], (mine, taken)

    # 3. 托管: the bot plays seat 0 from here on
    tid(page, "auto-btn").click()  # the table's 托管 button
    watcher.wait(lambda: watcher.state and watcher.state["auto"][0], "a state with seat 0 handed to the bot")
    tid(page, "auto-badge-0").wait_for()

    # 4. the whole game, to the game-over panel
    def progress() -> str:
        v = watcher.view or {}
        auto = (watcher.state or {}).get("auto")
        return (
            f"; last state: game {v.get('game')} deal {v.get('deal')} levels {v.get('levels')}"
            f" to_act {v.get('to_act')} auto {auto} seq {watcher.seq}"
        )

    wait_until(
        page,
        lambda: watcher.game_overs and tid(page, "game-over-panel").count(),
        "the game-over panel",
        timeout_ms=GAME_WAIT_S * 1000,
        detail=progress,
    )
    t_game = time.monotonic() - t0
    over = watcher.game_overs[-1]
    game_id, winner = over["game_id"], over["winner_team"]
    assert winner in (0, 1) and game_id is not None
    assert len(watcher.deal_results) >= 2
    last = watcher.deal_results[-1]
    assert last["winner_team"] == winner and last["passed"], last  # the winner passed level A (R37)
    page.screenshot(path=str(ARTIFACTS / "game-over.png"), full_page=True)

    record = page.request.get(f"/api/games/{game_id}").json()
    events = [e for e in record["record"] if not e.get("format")]
    assert record["winner_team"] == winner
    assert events[-1] == {"type": "game_over", "game": 1, "winner_team": winner}, events[-1]
    deal_steps = [i for i, e in enumerate(events) if e["type"] == "deal"]
    assert len(deal_steps) == len(watcher.deal_results) >= 2
    players = sorted(record["players"], key=lambda p: p["seat"])
    assert [(p["name"], p["bot"]) for p in players] == [(USER, None)] + [(None, "heuristic")] * 3, players

    # 5. the replay
    link = tid(page, "replay-link")
    assert link.get_attribute("href") == f"/replay/{game_id}"
    link.click()
    page.wait_for_url(f"{server.base}/replay/{game_id}")
    tid(page, "replay-table").wait_for()
    for s in range(4):
        assert tid(page, f"replay-hand-{s}").is_visible(), s
    assert replay_index(page) == (1, len(events))
    dealt = [Counter(h) for h in events[0]["hands"]]
    assert replay_counts(page) == [27, 27, 27, 27]  # R4
    assert replay_hands(page) == dealt
    # one step: the first lead leaves its player's hand, the other hands stay
    first = events[1]
    assert first["type"] == "action" and first["action"][0] != "pass", first
    seat, cards = first["seat"], first["action"][2]
    before = replay_counts(page)
    click_replay(page, "replay-next", 2)
    after = replay_counts(page)
    assert after[seat] == before[seat] - len(cards) and len(cards) >= 1
    assert [after[s] for s in range(4) if s != seat] == [before[s] for s in range(4) if s != seat]
    expect = list(dealt)
    expect[seat] = dealt[seat] - Counter(cards)
    assert replay_hands(page) == expect
    page.screenshot(path=str(ARTIFACTS / "replay.png"), full_page=True)
    # next deal, deal by deal, to the end (the game_over step)
    for start in deal_steps[1:]:
        click_replay(page, "replay-next-deal", start + 1)
        assert replay_counts(page) == [27, 27, 27, 27]
        assert replay_hands(page) == [Counter(h) for h in events[start]["hands"]]
    click_replay(page, "replay-next-deal", len(events))
    assert tid(page, "replay-next").is_disabled() and tid(page, "replay-next-deal").is_disabled()

    # 6. the profile: one game, win rate, rating
    won = winner == 0  # seat 0 is on team 0 (R2)
    rating = expected_rating(won)
    tid(page, "nav-profile").click()
    page.wait_for_url(f"{server.base}/profile/{USER}")
    tid(page, "profile").wait_for()
    assert tid(page, "profile-games").locator(".stat-v").inner_text().strip() == "1"
    assert tid(page, "profile-won").locator(".stat-v").inner_text().strip() == ("1" if won else "0")
    assert tid(page, "profile-win-rate").locator(".stat-v").inner_text().strip() == (
        "100.0%" if won else "0.0%"
    )
    shown = float(tid(page, "profile-rating").locator(".stat-v").inner_text().strip())
    assert shown == rating, (shown, rating)
    if won:
        assert shown > 0  # a new player's displayed rating starts at 25 - 3 * 25/3 = 0
    assert tid(page, "recent-games").locator(f'[data-testid=game-row][data-game="{game_id}"]').count() == 1
    page.screenshot(path=str(ARTIFACTS / "profile.png"), full_page=True)

    # the leaderboard lists the player with that rating
    tid(page, "nav-leaderboard").click()
    page.wait_for_url(f"{server.base}/leaderboard")
    tid(page, "leaderboard").wait_for()
    # the panel is drawn ("loading…") before GET /api/leaderboard answers: wait for its rows
    rows = tid(page, "leaderboard-row").filter(has_text=USER)
    rows.first.wait_for()
    assert rows.count() == 1
    cells = rows.first.locator("td").all_inner_texts()
    assert cells[1].strip() == USER and float(cells[2]) == rating and cells[3].strip() == "1", cells
    page.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)
    print(
        f"game over after {t_game:.1f} s ({len(deal_steps)} deals, {len(events)} events, "
        f"winner team {winner}); whole test {time.monotonic() - t0:.1f} s"
    )
