// The daily duplicate challenge (/challenge, issue 22): today's boards (play, resume, results,
// review), one board's results once it may be shown, the day's and the week's leaderboards, and the
// signed-in player's history. Nothing about a board the player has not played comes from the server
// (api_challenge.py), so this page has nothing to hide.
// API: GET /api/challenge/today, POST /api/challenge/boards/{n}/play, GET /api/challenge/days/{day}/boards/{n},
// GET /api/challenge/leaderboard?period=day|week, GET /api/challenge/me.

import { h, link, replaceChildren, toast } from "./dom.js";
import { get, post } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";
import { difficultyName, presetName } from "./rules.js";

const LEVELS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
const RANKS = "23456789TJQKA";

/** A board's result for the player's side: "+2", "−1" (levels, or Anhui points). */
export function resultText(n) {
  if (n === null || n === undefined) return "–";
  return t("ch_result_levels", { sign: n > 0 ? "+" : n < 0 ? "−" : "", n: Math.abs(n) });
}

function pctText(p) {
  return p === null || p === undefined ? "–" : t("ch_pct", { pct: Number(p).toFixed(p % 1 === 0 ? 0 : 1) });
}

function levelText(rank) {
  const i = RANKS.indexOf(rank);
  return i >= 0 ? LEVELS[i] : String(rank);
}

function resultClass(n) {
  return n > 0 ? "good" : n < 0 ? "bad" : "";
}

function boardTile(b, day, ctx, actions) {
  const status = h("span", { class: `status-pill ch-${b.status}`, testid: "challenge-board-status" }, t(`ch_status_${b.status}`));
  const buttons = [];
  if (b.status === "open" && day && !day.closed && ctx.me) {
    buttons.push(h("button", { type: "button", class: "btn primary small", testid: "challenge-play-btn", onclick: () => actions.play(b.number) }, t("ch_play")));
  }
  if (b.status === "playing" && b.room) {
    buttons.push(link(`/room/${encodeURIComponent(b.room)}`, t("ch_resume"), { class: "btn primary small", testid: "challenge-resume-link" }));
  }
  if (b.results !== undefined) {
    buttons.push(h("button", { type: "button", class: "btn secondary small", testid: "challenge-results-btn", onclick: () => actions.board(b.number) }, t("ch_results")));
  }
  if (b.review_url) {
    buttons.push(link(b.review_url, t("ch_review"), { class: "btn secondary small", testid: "challenge-review-link" }));
  }
  const score = b.status === "played"
    ? h("div", { class: "ch-score" },
        h("span", { class: `ch-result ${resultClass(b.result)}`, testid: "challenge-board-result" }, resultText(b.result)),
        h("span", { class: "ch-pct", testid: "challenge-board-pct" }, b.pct === null || b.pct === undefined ? t("ch_unranked") : pctText(b.pct)))
    : null;
  return h("li", { class: "ch-board", testid: "challenge-board", dataset: { board: String(b.number), status: b.status } },
    h("div", { class: "ch-board-head" }, h("strong", {}, t("ch_board_n", { n: b.number })), status),
    score,
    buttons.length ? h("div", { class: "ch-board-actions" }, buttons) : null);
}

function standingsTable(rows, meName) {
  if (!rows.length) return h("p", { class: "muted", testid: "challenge-leaderboard-empty" }, t("ch_lb_empty"));
  return h("div", { class: "table-fit" },
    h("table", { class: "data-table ch-standings", testid: "challenge-leaderboard-table" },
      h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("col_rank")), h("th", {}, t("col_player")),
        h("th", { class: "num" }, t("ch_col_pct")), h("th", { class: "num" }, t("ch_col_boards")))),
      h("tbody", {}, rows.map((r) => h("tr", { testid: "challenge-leaderboard-row", class: r.name === meName ? "me" : "" },
        h("td", { class: "num" }, String(r.rank)),
        h("td", {}, link(`/profile/${encodeURIComponent(r.name)}`, r.name)),
        h("td", { class: "num strong" }, pctText(r.pct)),
        h("td", { class: "num" }, String(r.boards)))))));
}

function boardPanel(d, onClose) {
  const b = d.board || {};
  const facts = [
    t("ch_board_level", { level: levelText(b.level) }),
    t("ch_board_leader", { seat: t(`ch_seat_${b.first_leader}`) }),
    b.tribute ? t("ch_board_tribute") : t("ch_board_no_tribute"),
  ].join(" · ");
  return h("section", { class: "card-panel ch-board-panel", testid: "challenge-board-panel" },
    h("div", { class: "tour-title-row" }, h("h2", {}, t("ch_board_title", { n: d.number })),
      h("button", { type: "button", class: "btn secondary small", testid: "challenge-board-close", onclick: onClose }, "×")),
    h("p", { class: "hint" }, facts),
    h("h3", {}, t("ch_freq")),
    h("div", { class: "table-fit" }, h("table", { class: "data-table", testid: "challenge-frequencies" },
      h("thead", {}, h("tr", {}, h("th", {}, t("ch_col_result")), h("th", { class: "num" }, t("ch_col_count")), h("th", { class: "num" }, t("ch_col_pct")))),
      h("tbody", {}, d.frequencies.map((f) => h("tr", {},
        h("td", { class: resultClass(f.result) }, resultText(f.result)), h("td", { class: "num" }, String(f.count)), h("td", { class: "num" }, pctText(f.pct))))))),
    h("div", { class: "table-fit" }, h("table", { class: "data-table", testid: "challenge-results" },
      h("thead", {}, h("tr", {}, h("th", {}, t("col_player")), h("th", {}, t("ch_col_result")), h("th", { class: "num" }, t("ch_col_pct")), h("th", {}, ""))),
      h("tbody", {}, d.results.map((r) => h("tr", { testid: "challenge-result-row" },
        h("td", {}, r.name),
        h("td", { class: resultClass(r.result) }, resultText(r.result)),
        h("td", { class: "num" }, r.ranked ? pctText(r.pct) : t("ch_unranked")),
        h("td", { class: "ch-links" }, r.replay_url ? link(r.replay_url, t("ch_replay")) : null, " ", r.review_url ? link(r.review_url, t("ch_review")) : null)))))),
  );
}

/** Mount the challenge page (/challenge). */
export function mountChallenge(el, _params, ctx) {
  let destroyed = false;
  let day = null;
  let error = null;
  let period = "day";
  let standings = null;
  let history = null;
  let board = null;
  let busy = false;

  async function load() {
    try {
      day = await get("/api/challenge/today");
      error = null;
    } catch (e) {
      error = errText(e);
    }
    await loadStandings();
    history = null;
    if (ctx.me) {
      try {
        history = await get("/api/challenge/me");
      } catch (e) {
        history = null;
      }
    }
    render();
  }

  async function loadStandings() {
    try {
      standings = await get(`/api/challenge/leaderboard?period=${period}`);
    } catch (e) {
      standings = { standings: [], error: errText(e) };
    }
  }

  const actions = {
    async play(n) {
      if (busy) return;
      if (!window.confirm(t("ch_play_confirm", { n }))) return;
      busy = true;
      try {
        const d = await post(`/api/challenge/boards/${n}/play`, {});
        ctx.navigate(`/room/${encodeURIComponent(d.room)}`);
      } catch (e) {
        toast(errText(e));
        load();
      } finally {
        busy = false;
      }
    },
    async board(n) {
      try {
        board = await get(`/api/challenge/days/${day.day}/boards/${n}`);
        render();
        const panel = el.querySelector("[data-testid=challenge-board-panel]");
        if (panel && panel.scrollIntoView) panel.scrollIntoView({ block: "nearest" });
      } catch (e) {
        toast(errText(e));
      }
    },
  };

  function header() {
    if (error) return h("section", { class: "card-panel" }, h("h1", {}, t("ch_title")), h("p", { class: "error-text", testid: "challenge-error" }, error));
    if (!day) return h("section", { class: "card-panel" }, h("h1", {}, t("ch_title")), h("p", { class: "muted" }, t("loading")));
    const closes = new Date(day.closes_at);
    const me = day.me;
    return h("section", { class: "card-panel ch-head", testid: "challenge-head" },
      h("h1", { testid: "challenge-title" }, t("ch_title")),
      h("p", { class: "ch-day" }, t("ch_day", { day: day.day })),
      h("p", { class: "hint" }, t("ch_settings", { n: day.n_boards, preset: presetName(day.preset), bots: difficultyName(day.bots) })),
      h("p", { class: "hint" }, day.closed ? t("ch_closed") : t("ch_closes", { time: closes.toLocaleString() })),
      h("p", { class: "hint ch-intro" }, t("ch_intro")),
      !ctx.me ? h("p", { class: "ch-note", testid: "challenge-sign-in" }, link(`/login?next=${encodeURIComponent("/challenge")}`, t("ch_sign_in"))) : null,
      ctx.me && ctx.me.is_guest ? h("p", { class: "ch-note", testid: "challenge-guest-note" }, t("ch_guest_note")) : null,
      me && me.ranked
        ? h("p", { class: "ch-me", testid: "challenge-me" }, me.rank ? t(me.boards === 1 ? "ch_my_standing_1" : "ch_my_standing", { pct: pctText(me.pct).replace("%", ""), boards: me.boards, rank: me.rank }) : t("ch_my_none"))
        : null,
      h("p", { class: "hint" }, t(day.field === 1 ? "ch_field_1" : "ch_field", { n: day.field })));
  }

  function boardsList() {
    if (!day) return null;
    return h("section", { class: "card-panel" },
      h("ul", { class: "ch-boards", testid: "challenge-boards" }, day.boards.map((b) => boardTile(b, day, ctx, actions))));
  }

  function leaderboard() {
    const tab = (p, key, testid) => h("button", {
      type: "button", class: `btn small ${period === p ? "primary" : "secondary"}`, testid,
      "aria-pressed": period === p ? "true" : "false",
      onclick: async () => { period = p; await loadStandings(); render(); },
    }, t(key));
    const rows = standings && Array.isArray(standings.standings) ? standings.standings : [];
    return h("section", { class: "card-panel", testid: "challenge-leaderboard" },
      h("div", { class: "tour-title-row" }, h("h2", {}, t("ch_lb_title")), h("div", { class: "btn-row" }, tab("day", "ch_lb_day", "challenge-lb-day"), tab("week", "ch_lb_week", "challenge-lb-week"))),
      h("p", { class: "hint" }, t("ch_lb_note")),
      standings === null ? h("p", { class: "muted" }, t("loading")) : standingsTable(rows, ctx.me ? ctx.me.name : null));
  }

  function historyPanel() {
    if (!ctx.me || !history) return null;
    return h("section", { class: "card-panel", testid: "challenge-history" },
      h("h2", {}, t("ch_history_title")),
      history.boards ? h("p", { class: "ch-me" }, t(history.boards === 1 ? "ch_history_avg_1" : "ch_history_avg", { pct: pctText(history.average).replace("%", ""), boards: history.boards })) : null,
      history.days.length
        ? h("div", { class: "table-fit" }, h("table", { class: "data-table" },
            h("thead", {}, h("tr", {}, h("th", {}, t("ch_col_day")), h("th", { class: "num" }, t("ch_col_pct")), h("th", { class: "num" }, t("ch_col_boards")), h("th", { class: "num" }, t("col_rank")))),
            h("tbody", {}, history.days.map((d) => h("tr", { testid: "challenge-history-row" },
              h("td", {}, d.day), h("td", { class: "num strong" }, pctText(d.pct)), h("td", { class: "num" }, String(d.boards)),
              h("td", { class: "num" }, d.rank ? `${d.rank} / ${d.field}` : "–"))))))
        : h("p", { class: "muted" }, t("ch_history_empty")));
  }

  function render() {
    if (destroyed) return;
    replaceChildren(el, h("div", { class: "tour-page ch-page", testid: "challenge-page" },
      header(),
      boardsList(),
      board ? boardPanel(board, () => { board = null; render(); }) : null,
      leaderboard(),
      historyPanel()));
  }

  render();
  load();
  return { destroy() { destroyed = true; }, onLang: render, onMe: load };
}
