// The result: the panel of a deal's result (headline in Guandan words, finish order, levels before
// and after, A-fails, the hands left, Anhui points) with the ready step between deals, the game's
// end (summary of every deal, play again, replay, lobby), and the game-over banner on the table.

import { h, link } from "../dom.js";
import { t } from "../i18n.js";
import { miniCards, rankLabel } from "../cards.js";
import { placeLabel, seatName, teamName, teamOf, teamTag } from "../table.js";
import { isOwner, mySeat, names, resultPhrase, roomSeats, SEATS, seated, targetOf } from "./model.js";
import { clockText, closeBtn, reducedMotion } from "./widgets.js";
import { anhuiTitleText } from "../pages.js";
import { gamePlayersLinks } from "../friends.js";
import { withReport } from "./phrases.js";

function levelPair(levels) {
  return Array.isArray(levels) ? `${t("team_a")} ${rankLabel(levels[0])} · ${t("team_b")} ${rankLabel(levels[1])}` : "";
}

/**
 * The heading of a finished game. At a tournament table (state frame's `competition`) it is the
 * tournament's decision once the result is in (after R54 penalties: what the standings say), "waiting
 * for the result" before; elsewhere the winner by the levels of the game.
 */
function gameOverTitle(store, g) {
  const c = store.state.competition;
  if (c) {
    const d = c.decision;
    if (!d) return t("game_over_title");
    if (d.winner === "a" || d.winner === "b") return t("match_decision_winner", { team: teamName(d.winner === "a" ? 0 : 1) });
    return t(d.outcome && d.outcome[0] === "draw" ? "match_decision_draw" : "match_decision_none");
  }
  const team = g && Number.isInteger(g.winner_team) ? g.winner_team : null;
  return team === null ? t("game_over_title") : t("game_over_winner", { team: teamName(team) });
}

/** A tournament level 2..14 as at the table: 2..10, J, Q, K, A. */
function levelText(n) {
  return { 11: "J", 12: "Q", 13: "K", 14: "A" }[n] || String(n);
}

/** The tournament's decision of a competition table in one line: field points, levels after penalties. */
function decisionLine(store) {
  const c = store.state.competition;
  if (!c) return null;
  const d = c.decision;
  if (!d) return h("p", { class: "hint", testid: "match-decision" }, t("match_decision_waiting"));
  const parts = [t("match_decision_points", { a: d.field_points[0], b: d.field_points[1] }),
    t("match_decision_levels", { a: levelText(d.levels[0]), b: levelText(d.levels[1]) })];
  const pens = d.penalty_levels || [0, 0];
  for (const [i, n] of pens.entries()) if (n) parts.push(t("match_decision_penalty", { team: teamName(i), n }));
  return h("p", { class: "match-decision", testid: "match-decision" }, parts.join(" · "));
}

/** The banner on the table once the game is over (replay link, and the way back to the summary). */
export function gameOverBanner(store) {
  const g = store.state.gameOver;
  return h(
    "div",
    { class: "game-over-banner", testid: "game-over-banner" },
    h("strong", { testid: "game-over-title" }, gameOverTitle(store, g)),
    g && g.game_id !== undefined && g.game_id !== null ? link(`/replay/${g.game_id}`, t("watch_replay"), { testid: "replay-link-banner", class: "btn small" }) : null,
    h("button", { type: "button", class: "btn small", testid: "show-result-btn", onclick: () => store.update((s) => { s.resultHidden = false; }, ["overlay", true]) }, t("show_summary")),
  );
}

/**
 * The rows of one deal's result r: {main: the essentials (who won, the result, the upgrade, the new
 * levels, A attempts), details: the finishing order, the hands left and the points}.
 */
function dealRows(store, r, kv) {
  const nm = names(store);
  const rows = [];
  const details = [];
  const order = Array.isArray(r.finish_order) ? r.finish_order : [];
  if (Number.isInteger(r.winner_team)) {
    rows.push(
      h(
        "div",
        { class: `result-headline team-${r.winner_team}`, testid: "result-winner" },
        t("result_headline", { team: teamName(r.winner_team), result: resultPhrase(r), n: r.upgrade ?? 0 }),
      ),
    );
  }
  details.push(
    h(
      "ol",
      { class: "finish-list", testid: "result-finish-order" },
      order.map((s, i) => h("li", { class: `team-${teamOf(s)}` }, h("span", { class: `badge place place-${i + 1}` }, placeLabel(i)), " ", teamTag(s), " ", seatName(nm, s))),
    ),
  );
  if (r.result) {
    const phrase = resultPhrase(r);
    rows.push(kv(t("result_code"), phrase.includes(r.result) ? phrase : `${phrase} (${r.result})`, "result-code"));
  }
  if (r.upgrade !== undefined && r.upgrade !== null) rows.push(kv(t("result_upgrade"), t(r.upgrade === 1 ? "result_upgrade_one" : "result_upgrade_n", { n: r.upgrade }), "result-upgrade"));
  for (const line of streakLines(r, nm)) rows.push(line);
  if (Array.isArray(r.levels)) {
    const before = Array.isArray(r.levels_before) ? `${levelPair(r.levels_before)} → ` : "";
    rows.push(kv(t("result_new_levels"), `${before}${levelPair(r.levels)}`, "result-levels"));
  }
  if (Array.isArray(r.a_fails) && (r.a_fails[0] || r.a_fails[1] || (r.failed && r.failed.length))) {
    rows.push(kv(t("a_fails_at", { target: targetOf(store.state.view, store.state.room) }), `${t("team_a")} ${r.a_fails[0]} · ${t("team_b")} ${r.a_fails[1]}`, "result-a-fails"));
  }
  if (r.passed && Number.isInteger(r.winner_team)) rows.push(h("div", { class: "note good" }, t("result_passed", { team: teamName(r.winner_team) })));
  for (const team of Array.isArray(r.failed) ? r.failed : []) rows.push(h("div", { class: "note bad" }, t("result_failed", { team: teamName(team) })));
  for (const team of Array.isArray(r.demoted) ? r.demoted : []) rows.push(h("div", { class: "note bad" }, t("result_demoted", { team: teamName(team) })));
  if (Array.isArray(r.hands_left)) {
    details.push(
      h(
        "div",
        { class: "hands-left", testid: "result-hands" },
        h("div", { class: "info-label" }, t("result_hands")),
        SEATS.map((s) =>
          h(
            "div",
            { class: `hand-left team-${teamOf(s)}`, testid: `result-hand-${s}`, dataset: { count: String((r.hands_left[s] || []).length) } },
            h("span", { class: "hl-name" }, teamTag(s), " ", seatName(nm, s)),
            (r.hands_left[s] || []).length ? miniCards(r.hands_left[s], r.level) : h("span", { class: "muted" }, t("result_hand_empty")),
          ),
        ),
      ),
    );
  }
  if (Array.isArray(r.points) || Array.isArray(r.points_total)) details.push(pointsTable(nm, r));
  return { main: rows, details };
}

/**
 * The scrolling part of the result (finishing order, hands left, points) with a cue at its foot
 * while more lies below ("more ↓" over a fade; a tap scrolls on), so that on a phone held sideways
 * the essentials and the ready step stay in view and nothing is hidden without a sign.
 */
function detailsBox(children) {
  const scroller = h("div", { class: "result-details", testid: "result-details", tabindex: "0" }, children);
  const cue = h(
    "button",
    { type: "button", class: "more-cue", testid: "result-more", "aria-hidden": "true", tabindex: "-1", onclick: () => scroller.scrollBy({ top: scroller.clientHeight * 0.8, behavior: reducedMotion() ? "auto" : "smooth" }) },
    t("result_more"),
  );
  const box = h("div", { class: "result-details-box" }, scroller, cue);
  const update = () => box.classList.toggle("has-more", scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight > 4);
  scroller.addEventListener("scroll", update, { passive: true });
  if (typeof ResizeObserver === "function") new ResizeObserver(update).observe(scroller);
  requestAnimationFrame(update);
  return box;
}

/**
 * The Yangzhou streak words of a deal result (AMB-17; the deal_end event's `streaks`, issue 25 item
 * 6): one line per run of three or more that changed levels this deal, e.g. "东家已连续 3 局头游：
 * 乙队多升 1 级。"; none without the field or when no run reached three.
 */
function streakLines(r, nm) {
  const sk = r && r.streaks && typeof r.streaks === "object" ? r.streaks : null;
  if (!sk) return [];
  const out = [];
  const line = (good, key, s, n) => {
    const k = n - 2;
    out.push(h("div", { class: `note ${good ? "good" : "bad"} streak`, testid: "result-streak" },
      t(`${key}_${k === 1 ? "one" : "n"}`, { name: seatName(nm, s), n, k, team: teamName(teamOf(s)) })));
  };
  const first = Array.isArray(sk.first_run) ? sk.first_run : [];
  if (sk.bonus > 0 && Number.isInteger(first[0]) && first[1] >= 3) line(true, "sd_streak_bonus", first[0], first[1]);
  for (const run of Array.isArray(sk.last_runs) ? sk.last_runs : []) {
    if (Array.isArray(run) && Number.isInteger(run[0]) && run[1] >= 3) line(false, "sd_streak_penalty", run[0], run[1]);
  }
  return out;
}

/** Anhui points of the deal and in total per seat, with the titles (and their change). */
function pointsTable(nm, r) {
  const pts = Array.isArray(r.points) ? r.points : [];
  const tot = Array.isArray(r.points_total) ? r.points_total : [];
  const titles = Array.isArray(r.titles) ? r.titles : [];
  const titlesBefore = Array.isArray(r.titles_before) ? r.titles_before : [];
  const signed = (p) => (typeof p === "number" && p > 0 ? `+${p}` : p === undefined || p === null ? "" : String(p));
  return h(
    "table",
    { class: "points-table", testid: "result-points" },
    h("thead", {}, h("tr", {}, h("th", {}, t("points")), h("th", {}, t("result_points")), h("th", {}, t("result_points_total")), titles.length ? h("th", {}, t("anhui_title")) : null)),
    h(
      "tbody",
      {},
      SEATS.map((s) =>
        h(
          "tr",
          {},
          h("td", {}, teamTag(s), " ", seatName(nm, s)),
          h("td", {}, signed(pts[s])),
          h("td", {}, tot[s] === undefined ? "" : String(tot[s])),
          titles.length ? h("td", { testid: `result-title-${s}` }, titlesBefore[s] && titlesBefore[s] !== titles[s] ? `${anhuiTitleText(titlesBefore[s])} → ${anhuiTitleText(titles[s])}` : titles[s] ? anhuiTitleText(titles[s]) : "") : null,
        ),
      ),
    ),
  );
}

/** The ready step between deals: who is ready, the deadline, and one's own Next button. */
function readyFoot(store, actions, b) {
  const st = store.state;
  const nm = names(store);
  const me = mySeat(store);
  const foot = [];
  // the next deal starts when everyone pressed "next" or at the deadline
  const ready = Array.isArray(b.ready) ? b.ready : [];
  const iAmReady = (me !== null && ready[me]) || st.readySent === b.deal;
  foot.push(
    h(
      "div",
      { class: "ready-row", testid: "ready-state" },
      SEATS.map((s) => h("span", { class: `ready-seat${ready[s] ? " ready" : ""}`, testid: `ready-state-${s}` }, teamTag(s), " ", seatName(nm, s), " ", ready[s] ? "✓" : "…")),
      b.deadline_ms ? h("span", { class: "clock", testid: "ready-clock", dataset: { deadline: String(b.deadline_ms) } }, clockText(b.deadline_ms)) : null,
    ),
  );
  if (seated(store)) {
    foot.push(
      h(
        "button",
        { type: "button", class: "btn primary wide big", testid: "ready-btn", disabled: iAmReady, onclick: actions.onReady },
        iAmReady ? t("ready_waiting") : t("ready_next"),
      ),
    );
  }
  return foot;
}

/** The end of the game: the winner, the summary of every deal, play again, replay, lobby. */
function gameOverPart(store, actions, g, kv) {
  const st = store.state;
  const sum = g.summary && typeof g.summary === "object" ? g.summary : null;
  const next = g.next_room || (st.room && st.room.next_room);
  return h(
    "div",
    { class: "game-over", testid: "game-over-panel" },
    h("h3", { testid: "game-over-heading" }, gameOverTitle(store, g)),
    decisionLine(store),
    withReport(gamePlayersLinks(roomSeats(store), store.ctx && store.ctx.me && store.ctx.me.name), store), // report: issue 25 item 8
    sum
      ? h(
          "div",
          { class: "game-summary", testid: "game-summary" },
          kv(t("summary_deals"), String(sum.deals ?? (Array.isArray(sum.results) ? sum.results.length : "")), "summary-deals"),
          Array.isArray(sum.levels) ? kv(t("summary_levels"), levelPair(sum.levels), "summary-levels") : null,
          Array.isArray(sum.results) && sum.results.length
            ? h(
                "ol",
                { class: "summary-results" },
                sum.results.map((x) =>
                  h("li", {}, t("summary_deal_line", {
                    deal: x.deal, level: rankLabel(x.level), team: teamName(x.winner_team), result: resultPhrase(x), n: x.upgrade ?? 0,
                  })),
                ),
              )
            : null,
        )
      : null,
    h(
      "div",
      { class: "btn-row" },
      st.room && st.room.board_room ? link("/challenge", t("ch_back"), { class: "btn primary", testid: "challenge-back" }) : null,
      isOwner(store) && !next && !(st.room && st.room.board_room)
        ? h("button", { type: "button", class: "btn primary", testid: "again-btn", onclick: actions.onPlayAgain }, t("play_again"))
        : null,
      next ? h("button", { type: "button", class: "btn primary", testid: "again-follow", onclick: () => actions.followTo(next) }, t("play_again_join")) : null,
      g.game_id !== undefined && g.game_id !== null ? link(`/replay/${g.game_id}`, t("watch_replay"), { testid: "replay-link", class: "btn" }) : null,
      g.game_id !== undefined && g.game_id !== null
        ? link(`/review/${g.game_id}?deal=1&seat=${Number.isInteger(mySeat(store)) ? mySeat(store) : 0}`, t("review_button"), { testid: "review-link", class: "btn", title: t("review_button_title") })
        : null,
      link("/", t("back_to_lobby"), { class: "btn secondary", testid: "result-lobby" }),
    ),
  );
}

/** The result panel (a modal dialog of the overlay). */
export function resultPanel(store, actions) {
  const st = store.state;
  const r = st.dealResult;
  const g = st.gameOver;
  const b = st.between;
  const close = () => {
    store.update((s) => {
      s.resultHidden = true;
      if (!b) s.dealResult = null;
    }, "overlay", ...(b ? ["table"] : []));
  };
  const kv = (k, val, testid) => h("div", { class: "kv", testid }, h("span", { class: "k" }, k), h("span", { class: "v" }, val));
  const rows = r && !(g && !b && r === null) ? dealRows(store, r, kv) : { main: [], details: [] };
  const foot = b && !g ? readyFoot(store, actions, b) : [];
  const over = g ? gameOverPart(store, actions, g, kv) : null;
  const title = r && !g ? t("result_title_n", { deal: r.deal ?? "" }) : g ? t("game_over_title") : t("result_title");
  return h(
    "div",
    { class: "modal result", testid: "result-panel", role: "dialog", "aria-modal": "true" },
    h("div", { class: "pop-head" }, h("h3", {}, title), closeBtn(close, "result-x")),
    h("div", { class: "result-main", testid: "result-main" }, rows.main, over),
    rows.details.length ? detailsBox(rows.details) : null,
    h(
      "div",
      { class: "result-foot" },
      foot,
      h("button", { type: "button", class: "btn wide secondary", testid: "result-close", onclick: close }, g ? t("close") : b ? t("result_view_table") : t("continue")),
    ),
  );
}
