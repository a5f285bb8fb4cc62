// A duplicate team match (复式, /teammatch/{id}, issue 22 item 3): both tables' seats and progress, every
// board's two results once both tables have played it, the running score on the 26-point scale, and links
// to each open board's replay and review. The server sends nothing of a board before both tables played it
// (api_teammatch.py), so this page has nothing to hide.
// API: GET /api/teammatches/{id}, POST /api/teammatches/{id}/tables/{t}/next.

import { h, link, replaceChildren, toast } from "./dom.js";
import { get, post } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";
import { difficultyName, presetName } from "./rules.js";

/** A seat's player as shown: the account's name, or "Bot (normal)" for "bot:normal". */
export function playerName(p) {
  const m = /^bot:(\w+)$/.exec(String(p));
  return m ? t("tm_bot", { level: difficultyName(m[1]) }) : String(p);
}

/** A signed result: "+2", "−1", "0", "–" when unknown. */
export function signed(n) {
  if (n === null || n === undefined) return "–";
  return n > 0 ? `+${n}` : n < 0 ? `−${Math.abs(n)}` : "0";
}

function cls(n) {
  return n > 0 ? "good" : n < 0 ? "bad" : "";
}

function tablePanel(tb, d) {
  const seats = tb.seats.map((p, s) => h("li", {}, h("span", { class: "muted" }, t(`tm_seat_${s}`)), " ",
    h("strong", {}, playerName(p)), " ", h("span", { class: "muted" }, t(s % 2 === (tb.table === 1 ? 0 : 1) ? "tm_team_a_short" : "tm_team_b_short"))));
  const state = d.status === "finished" || tb.played >= d.n_boards ? t("tm_table_done")
    : tb.board ? t("tm_table_board", { n: tb.board }) : t("tm_table_waiting");
  return h("div", { class: "tm-table", testid: "teammatch-table", dataset: { table: String(tb.table) } },
    h("h3", {}, t("tm_table_n", { n: tb.table })),
    h("p", { class: "hint" }, state, " · ", t("tm_table_played", { n: tb.played, total: d.n_boards })),
    h("ul", { class: "tm-seats" }, seats),
    tb.room ? link(`/room/${encodeURIComponent(tb.room)}`, t("tm_go_table"), { class: "btn primary small", testid: "teammatch-room-link" }) : null);
}

function resultCell(b, i) {
  const st = b.status[i];
  if (b.open) return h("td", { class: `num strong ${cls(b.results[i])}` }, signed(b.results[i]));
  return h("td", { class: "num" }, h("span", { class: `status-pill ch-${st}` }, t(`tm_status_${st}`)));
}

function boardRow(b) {
  const links = b.open ? b.games.flatMap((g) => g.game ? [
    link(g.replay_url, t("tm_replay_t", { n: g.table }), { testid: "teammatch-replay-link" }), " ",
    link(g.review_url, t("tm_review_t", { n: g.table }), { testid: "teammatch-review-link" }), " ",
  ] : []) : [h("span", { class: "muted" }, t("tm_hidden"))];
  return h("tr", { testid: "teammatch-board", dataset: { board: String(b.number), open: b.open ? "1" : "0" } },
    h("td", { class: "num" }, String(b.number)),
    resultCell(b, 0), resultCell(b, 1),
    h("td", { class: `num strong ${cls(b.score)}`, testid: "teammatch-board-score" }, b.open ? signed(b.score) : "–"),
    h("td", { class: "tm-links" }, links));
}

export function mountTeamMatch(el, params, ctx) {
  let destroyed = false;
  let d = null;
  let error = null;
  let timer = null;

  async function load() {
    if (timer) clearTimeout(timer);
    timer = null;
    try {
      d = await get(`/api/teammatches/${encodeURIComponent(params.id)}`);
      error = null;
    } catch (e) {
      error = errText(e);
    }
    render();
    if (!destroyed && d && d.status === "playing") timer = setTimeout(load, 4000);
  }

  async function next(table) {
    try {
      const r = await post(`/api/teammatches/${encodeURIComponent(params.id)}/tables/${table}/next`, {});
      ctx.navigate(`/room/${encodeURIComponent(r.room)}`);
    } catch (e) {
      toast(errText(e));
    }
  }

  function head() {
    if (error) return h("section", { class: "card-panel" }, h("h1", {}, t("tm_title")), h("p", { class: "error-text", testid: "teammatch-error" }, error));
    if (!d) return h("section", { class: "card-panel" }, h("h1", {}, t("tm_title")), h("p", { class: "muted" }, t("loading")));
    const teamA = d.teams.a.flat().map(playerName).join(" · ");
    const teamB = d.teams.b.flat().map(playerName).join(" · ");
    return h("section", { class: "card-panel tm-head", testid: "teammatch-head" },
      h("h1", { testid: "teammatch-title" }, d.name),
      h("p", { class: "hint" }, t("tm_settings", { n: d.n_boards, preset: presetName(d.preset) }),
        " · ", d.ranked ? t("tm_rated") : t("tm_practice"),
        " · ", d.status === "finished" ? t("tm_finished") : t("tm_playing")),
      h("p", { class: "hint tm-intro" }, t("tm_intro")),
      h("div", { class: "tm-score", testid: "teammatch-score" },
        h("div", { class: "tm-team" }, h("span", { class: "muted" }, t("tm_team_a")), h("strong", { class: "tm-points", testid: "teammatch-points-a" }, String(d.points[0])), h("small", {}, teamA)),
        h("div", { class: "tm-vs" }, ":"),
        h("div", { class: "tm-team" }, h("span", { class: "muted" }, t("tm_team_b")), h("strong", { class: "tm-points", testid: "teammatch-points-b" }, String(d.points[1])), h("small", {}, teamB))),
      h("p", { class: "hint" }, t("tm_scored", { n: d.boards_scored, total: d.n_boards, diff: signed(d.difference) })),
      d.tournament ? h("p", {}, link(`/tournaments/${d.tournament.id}`, t("tm_tournament", { round: d.tournament.round, table: d.tournament.table }))) : null);
  }

  function tables() {
    if (!d) return null;
    return h("section", { class: "card-panel" }, h("h2", {}, t("tm_tables")),
      h("div", { class: "tm-tables" }, d.tables.map((tb) => tablePanel(tb, d))),
      d.my_table && !d.tables[d.my_table - 1].board && d.status === "playing"
        ? h("button", { type: "button", class: "btn secondary small", testid: "teammatch-next-btn", onclick: () => next(d.my_table) }, t("tm_next"))
        : null);
  }

  function boards() {
    if (!d) return null;
    return h("section", { class: "card-panel" }, h("h2", {}, t("tm_boards")),
      h("p", { class: "hint" }, t("tm_boards_note")),
      h("div", { class: "table-fit" }, h("table", { class: "data-table tm-boards", testid: "teammatch-boards" },
        h("thead", {}, h("tr", {}, h("th", { class: "num" }, t("tm_col_board")), h("th", { class: "num" }, t("tm_col_t1")),
          h("th", { class: "num" }, t("tm_col_t2")), h("th", { class: "num" }, t("tm_col_score")), h("th", {}, t("tm_col_links")))),
        h("tbody", {}, d.boards.map(boardRow)))));
  }

  function render() {
    if (destroyed) return;
    replaceChildren(el, h("div", { class: "tour-page tm-page", testid: "teammatch-page" }, head(), tables(), boards()));
  }

  render();
  load();
  return { destroy() { destroyed = true; if (timer) clearTimeout(timer); }, onLang: render, onMe: load };
}
