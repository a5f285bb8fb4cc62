// The review of a deal (复盘, issue 22): /review/{game id}?deal=N&seat=S.
//
// GET /api/games/{id} gives the record (the replay's data: every hand, the game is finished and
// public); POST /api/games/{id}/deals/{n}/review?seat=S starts the review (or answers the cached
// one) and GET /api/reviews/{job} is polled for its progress, then its result: one entry per
// decision of the seat (the move played, the best alternative, the chance to win the deal and the
// expected levels of both, on worlds consistent with what the seat could see, and again on the
// real hands; costly moves marked). The four hands before the chosen decision come from the
// record (replay.js buildSteps).

import { h, link, replaceChildren } from "./dom.js";
import { get, post } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";
import { systemReducedMotion } from "./voice.js";
import { notFoundPage } from "./pages.js";
import { actionText, cardEl, groupByRank, miniCards, sortCards } from "./cards.js";
import { botName } from "./rules.js";
import { seatName, teamTag } from "./table.js";
import { buildSteps } from "./replay.js";

const SEATS = [0, 1, 2, 3];
const POLL_MS = 700;
const SEVERITIES = ["blunder", "mistake", "inaccuracy"];

/** The query of the page's address (path routing "?a=b", or a hash route "#/review/1?a=b"). */
function queryParams() {
  const hash = window.location.hash;
  const q = hash.startsWith("#/") && hash.includes("?") ? hash.slice(hash.indexOf("?")) : window.location.search;
  return new URLSearchParams(q);
}

/** The app path of a deal's review: "/review/7?deal=2&seat=0". */
export function reviewPath(gameId, deal, seat) {
  return `/review/${encodeURIComponent(gameId)}?deal=${deal}&seat=${seat}`;
}

function pct(x) {
  return Number.isFinite(x) ? `${Math.round(x * 100)}%` : "?";
}

function levelsText(x) {
  if (!Number.isFinite(x)) return "?";
  const r = Math.round(x * 10) / 10;
  return `${r > 0 ? "+" : r < 0 ? "−" : ""}${Math.abs(r).toFixed(1)}`;
}

/** The seat's name in this game: the player's name, a bot's name, or "Seat N". */
function gameNames(data) {
  const out = [null, null, null, null];
  for (const p of Array.isArray(data && data.players) ? data.players : []) {
    if (p && Number.isInteger(p.seat) && p.seat >= 0 && p.seat < 4) {
      out[p.seat] = p.name || (p.bot || p.difficulty ? `${botName(p.difficulty || p.bot)} #${p.seat + 1}` : null);
    }
  }
  return out;
}

/** Mount the review page into el. params: {id}; the deal and seat come from the query. */
export function mountReview(el, params, ctx) {
  let destroyed = false;
  let data = null;
  let steps = [];
  let dealStarts = [];
  let names = [null, null, null, null];
  const q = queryParams();
  let deal = Math.max(1, parseInt(q.get("deal") || "1", 10) || 1);
  let seat = parseInt(q.get("seat") || "", 10);
  let state = { phase: "loading" }; // loading | progress | done | failed | error
  let job = null;
  let pollTimer = null;
  let view = "seat"; // "seat" | "real"
  let selected = null; // index of the decision whose position is shown
  let runId = 0;

  replaceChildren(el, h("p", { class: "muted" }, t("loading")));

  function stopPolling() {
    clearTimeout(pollTimer);
    pollTimer = null;
  }

  function setUrl() {
    const path = reviewPath(params.id, deal, seat);
    if (window.location.hash.startsWith("#/")) window.history.replaceState({}, "", `#${path}`);
    else window.history.replaceState({}, "", path);
  }

  function accept(body, run) {
    if (destroyed || run !== runId) return;
    job = body;
    if (body.status === "done") {
      state = { phase: "done" };
      const r = body.result || {};
      const marked = Array.isArray(r.marked) ? r.marked : [];
      const firstEval = (r.decisions || []).find((e) => e.evaluated);
      selected = marked.length ? marked[0] : firstEval ? firstEval.index : (r.decisions || []).length ? 0 : null;
    } else if (body.status === "failed") {
      state = { phase: "failed" };
    } else {
      state = { phase: "progress" };
      pollTimer = setTimeout(() => poll(run), POLL_MS);
    }
    render();
  }

  function fail(e, run) {
    if (destroyed || run !== runId) return;
    state = { phase: "error", error: e };
    render();
  }

  function poll(run) {
    if (destroyed || run !== runId || !job) return;
    get(`/api/reviews/${encodeURIComponent(job.job)}`).then((b) => accept(b, run), (e) => fail(e, run));
  }

  function start() {
    stopPolling();
    runId += 1;
    const run = runId;
    job = null;
    selected = null;
    state = { phase: "progress" };
    setUrl();
    render();
    post(`/api/games/${encodeURIComponent(params.id)}/deals/${deal}/review?seat=${seat}`)
      .then((b) => accept(b, run), (e) => fail(e, run));
  }

  /** The step of the record just before the seat's decision (turn = its index among the deal's actions). */
  function stepBefore(turn) {
    const begin = dealStarts[deal - 1];
    if (begin === undefined) return null;
    let n = -1;
    for (let i = begin + 1; i < steps.length; i += 1) {
      const ev = steps[i].event || {};
      if (ev.type === "deal") break;
      if (ev.type === "action") {
        n += 1;
        if (n === turn) return { before: steps[i - 1], at: steps[i] };
      }
    }
    return null;
  }

  function moveEl(action, level) {
    if (!Array.isArray(action)) return h("span", { class: "muted" }, "—");
    if (action[0] === "pass") return h("span", { class: "review-move pass" }, actionText(action));
    return h("span", { class: "review-move" }, miniCards(action[2], level), h("span", { class: "review-move-name" }, actionText(action, false)));
  }

  function estimateEl(e, testid) {
    if (!e) return h("span", { class: "review-est muted", testid }, "");
    return h(
      "span",
      { class: "review-est", testid },
      h("b", {}, t("review_win", { p: pct(e.win) })),
      " · ",
      e.levels === null || e.levels === undefined ? t("review_levels_unknown") : t("review_levels", { n: levelsText(e.levels) }),
    );
  }

  function noteText(e) {
    if (e.phase !== "play") return t("review_note_tribute");
    if (e.legal_actions <= 1) return t("review_note_forced");
    return t("review_note_single");
  }

  function rowEl(e, level) {
    const sev = e.severity && SEVERITIES.includes(e.severity) ? e.severity : null;
    const cls = ["review-row", sev ? `costly sev-${sev}` : "", selected === e.index ? "selected" : "", e.evaluated ? "" : "dim"].join(" ");
    const pick = () => {
      selected = e.index;
      render();
      const b = document.querySelector("[data-testid='review-board']");
      if (b && b.scrollIntoView) b.scrollIntoView({ block: "nearest", behavior: systemReducedMotion() ? "auto" : "smooth" });
    };
    const head = h(
      "div",
      { class: "review-row-head" },
      h("span", { class: "review-no" }, `#${e.index + 1}`),
      sev ? h("span", { class: `badge sev sev-${sev}`, testid: "review-mark" }, t(`review_sev_${sev}`)) : null,
      e.costliest ? h("span", { class: "badge sev-rank" }, t("review_costliest", { n: e.costliest })) : null,
      e.evaluated && e.cost && sev ? h("span", { class: "review-cost" }, t("review_cost", { p: pct(e.cost.win) })) : null,
    );
    if (!e.evaluated || !e.view) {
      return h("li", { class: cls, testid: "review-row", dataset: { index: String(e.index) }, onclick: pick },
        head,
        h("div", { class: "review-line" }, h("span", { class: "review-k" }, t("review_played")), moveEl(e.played, level)),
        h("div", { class: "review-note muted" }, noteText(e)));
    }
    const v = view === "real" ? e.real : e.view;
    const lines = [
      h("div", { class: "review-line", testid: "review-played" }, h("span", { class: "review-k" }, t("review_played")), moveEl(e.played, level), estimateEl(v && v.played, "review-est-played")),
    ];
    if (e.best_alternative) {
      lines.push(h("div", { class: `review-line${sev ? " better" : ""}`, testid: "review-best" }, h("span", { class: "review-k" }, t("review_best")), moveEl(e.best_alternative, level), estimateEl(v && v.best_alternative, "review-est-best")));
    } else {
      lines.push(h("div", { class: "review-note muted" }, noteText(e)));
    }
    if (view === "real" && e.real && e.real.best) {
      const rb = e.real.best;
      const same = JSON.stringify(rb.action) === JSON.stringify(e.played);
      lines.push(same
        ? h("div", { class: "review-note good", testid: "review-real-best" }, t("review_real_played_best"))
        : h("div", { class: "review-line winner", testid: "review-real-best" }, h("span", { class: "review-k" }, t("review_real_best")), moveEl(rb.action, level), estimateEl(rb, "review-est-real-best")));
    }
    return h("li", { class: cls, testid: "review-row", dataset: { index: String(e.index), severity: sev || "" }, onclick: pick }, head, lines);
  }

  function handRow(s, x, actor) {
    const sorted = sortCards(s.hands[x], s.level);
    return h(
      "div",
      { class: `review-hand-row${x === actor ? " actor" : ""}`, testid: `review-hand-${x}` },
      h("div", { class: "review-hand-name" }, teamTag(x), h("span", { class: "nm" }, seatName(names, x)), h("span", { class: "count" }, t("cards_left", { n: sorted.length }))),
      h("div", { class: "review-hand-cards" }, groupByRank(sorted).map((g) => h("div", { class: "rank-group" }, g.cards.map(({ card }) => cardEl(card, { level: s.level, size: "mini" }))))),
    );
  }

  function boardEl(decisions) {
    const e = decisions.find((d) => d.index === selected);
    if (!e) return null;
    const pos = stepBefore(e.turn);
    if (!pos) return null;
    const s = pos.before;
    const top = Number.isInteger(s.topSeat) && Array.isArray(s.trick[s.topSeat]) && s.trick[s.topSeat][0] !== "pass" ? s.topSeat : null;
    return h(
      "div",
      { class: "card-panel review-board", testid: "review-board" },
      h("div", { class: "review-board-desc", testid: "review-board-desc" },
        h("b", {}, t("review_step", { i: e.index + 1, name: seatName(names, seat) })),
        h("div", { class: "review-board-table" }, top === null ? t("review_leading") : [t("review_on_table", { name: seatName(names, top) }), " ", moveEl(s.trick[top], s.level)])),
      SEATS.map((x) => handRow(s, x, seat)),
    );
  }

  function controls() {
    const total = dealStarts.length;
    const seatBtns = SEATS.map((x) =>
      h("button", {
        type: "button", class: `btn small${x === seat ? " primary" : ""}`, testid: `review-seat-${x}`, "aria-pressed": x === seat ? "true" : "false",
        onclick: () => { if (x !== seat) { seat = x; start(); } },
      }, teamTag(x), " ", seatName(names, x)));
    const dealNav = h(
      "div",
      { class: "review-deal-nav" },
      h("button", { type: "button", class: "btn small", testid: "review-deal-prev", disabled: deal <= 1, title: t("replay_prev_deal"), "aria-label": t("replay_prev_deal"), onclick: () => { deal -= 1; start(); } }, "◀"),
      h("span", { class: "review-deal", testid: "review-deal" }, t("review_deal_of", { n: deal, total })),
      h("button", { type: "button", class: "btn small", testid: "review-deal-next", disabled: deal >= total, title: t("replay_next_deal"), "aria-label": t("replay_next_deal"), onclick: () => { deal += 1; start(); } }, "▶"),
    );
    return h("div", { class: "review-controls" }, dealNav, h("div", { class: "review-seats" }, h("span", { class: "muted" }, t("review_seat_label")), seatBtns));
  }

  function progressEl() {
    const done = job && Number.isInteger(job.done) ? job.done : 0;
    const total = job && Number.isInteger(job.total) ? job.total : null;
    const frac = total ? Math.min(1, done / total) : 0;
    const text = !job ? t("review_starting") : job.status === "queued" || total === null ? t("review_queued") : t("review_progress", { done, total });
    return h(
      "div",
      { class: "card-panel review-progress", testid: "review-progress" },
      h("div", { class: "review-bar", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": String(total || 0), "aria-valuenow": String(done) },
        h("div", { class: "review-bar-fill", testid: "review-progress-bar", style: { width: `${Math.round(frac * 100)}%` } })),
      h("div", { class: "muted" }, text),
    );
  }

  function resultEl() {
    const r = (job && job.result) || {};
    const decisions = Array.isArray(r.decisions) ? r.decisions : [];
    const level = r.deal && r.deal.level;
    const marked = Array.isArray(r.marked) ? r.marked : [];
    const worlds = r.budget && Number.isInteger(r.budget.worlds) ? r.budget.worlds : "?";
    const toggle = h(
      "div",
      { class: "review-toggle", role: "group" },
      h("button", { type: "button", class: `btn small${view === "seat" ? " primary" : ""}`, testid: "review-view-seat", "aria-pressed": view === "seat" ? "true" : "false", onclick: () => { view = "seat"; render(); } }, t("review_view_seat")),
      h("button", { type: "button", class: `btn small${view === "real" ? " primary" : ""}`, testid: "review-view-real", "aria-pressed": view === "real" ? "true" : "false", onclick: () => { view = "real"; render(); } }, t("review_view_real")),
    );
    const help = view === "seat" ? t("review_view_seat_help", { n: worlds, name: seatName(names, seat) }) : t("review_view_real_help");
    return [
      h("div", { class: "card-panel review-summary", testid: "review-summary" },
        toggle,
        h("p", { class: "hint" }, help),
        h("p", {}, marked.length ? t("review_marked", { n: marked.length }) : t("review_none_marked"))),
      boardEl(decisions),
      decisions.length
        ? h("ol", { class: "review-list", testid: "review-list" }, decisions.map((e) => rowEl(e, level)))
        : h("p", { class: "muted" }, t("review_no_decisions")),
    ];
  }

  function render() {
    if (destroyed || !data) return;
    names = gameNames(data);
    let body;
    if (state.phase === "progress") body = progressEl();
    else if (state.phase === "done") body = resultEl();
    else if (state.phase === "failed") {
      body = h("div", { class: "card-panel", testid: "review-error" }, h("p", { class: "error-text" }, t("review_failed")),
        h("button", { type: "button", class: "btn", onclick: start }, t("review_retry")));
    } else if (state.phase === "error") {
      const e = state.error;
      body = h("div", { class: "card-panel", testid: "review-error" }, h("p", { class: "error-text" }, errText(e)),
        e && e.status === 401 ? link(`/login?next=${encodeURIComponent(reviewPath(params.id, deal, seat))}`, t("nav_login"), { class: "btn primary" }) : null,
        e && e.status === 429 ? h("button", { type: "button", class: "btn", onclick: start }, t("review_retry")) : null);
    } else body = h("p", { class: "muted" }, t("loading"));
    replaceChildren(
      el,
      h(
        "div",
        { class: "review-page", testid: "review-page" },
        h("div", { class: "room-title-row" },
          h("h1", { testid: "review-title" }, t("review_title", { id: data.id ?? params.id, deal })),
          link(`/replay/${encodeURIComponent(data.id ?? params.id)}`, t("review_back"), { class: "btn small", testid: "review-back" })),
        controls(),
        body,
      ),
    );
  }

  get(`/api/games/${encodeURIComponent(params.id)}`)
    .then((d) => {
      if (destroyed) return;
      data = d && typeof d === "object" ? d : {};
      const record = Array.isArray(data.record) ? data.record : [];
      steps = buildSteps(record.filter((e) => !(e && e.format)));
      dealStarts = steps.map((s, i) => (s.event && s.event.type === "deal" ? i : -1)).filter((i) => i >= 0);
      deal = Math.min(deal, Math.max(1, dealStarts.length));
      if (!(seat >= 0 && seat <= 3)) {
        const me = ctx && ctx.me ? ctx.me.name : null;
        const mine = (data.players || []).find((p) => p && me && p.name === me);
        seat = mine && Number.isInteger(mine.seat) ? mine.seat : 0;
      }
      start();
    })
    .catch((e) => {
      if (destroyed) return;
      if (e.status === 404) {
        replaceChildren(el, notFoundPage(window.location.pathname + window.location.hash));
        return;
      }
      replaceChildren(el, h("div", { class: "card-panel" }, h("p", { class: "error-text" }, errText(e)), link("/", t("back_to_lobby"))));
    });

  return {
    destroy() {
      destroyed = true;
      stopPolling();
    },
    onLang: render,
    onMe() {
      if (state.phase === "error" && state.error && state.error.status === 401) start();
    },
  };
}
