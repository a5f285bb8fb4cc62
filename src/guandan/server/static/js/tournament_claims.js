// Results entered by the players of a physical table with their pair's code (issue 21), on the tournament
// page: the public form (no account needed; the server takes the pair from the code) and, for the
// organiser and co-directors, the printable table cards (one tear-off half per pair, with that pair's
// code), each table's claims and a "confirm" for a single claim.
// API: POST /api/tournaments/{id}/claims, GET /api/tournaments/{id}/rounds/{n}/codes,
// POST /api/tournaments/{id}/results (tournament_claims.py, api_tournaments.py).

import { h, replaceChildren, toast } from "./dom.js";
import { api, get, post } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";
import { levelName } from "./tournament_admin.js";

const LEVELS = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
/** The answer to the last claim sent from this page, per tournament: it stays when the page redraws. */
const lastAnswer = new Map();

function levelSelect(testid) {
  return h("select", { testid }, LEVELS.map((n) => h("option", { value: String(n) }, levelName(n))));
}

function field(label, input, cls = "") {
  return h("label", { class: cls }, h("span", {}, label), input);
}

function entryName(d, id) {
  const e = d.entries.find((x) => x.id === id);
  return e ? e.name : `#${id}`;
}

/** The players of an entry when the entry has a name of its own ("" when its name is its players). */
function players(d, id) {
  const e = d.entries.find((x) => x.id === id);
  const names = e ? e.players.join(" / ") : "";
  return names && names !== e.name ? names : "";
}

/** The latest round when it still has tables without a final result (else null). */
function openRound(d) {
  const last = d.rounds_list.length ? d.rounds_list[d.rounds_list.length - 1] : null;
  return last && !last.complete ? last : null;
}

/** A claimed result in words: "K : 9 · time called". */
function claimText(r) {
  if (!r) return t("tour_claim_none");
  const parts = [`${levelName(r.level_a)} : ${levelName(r.level_b)}`];
  if (r.passed_a) parts.push(t("tour_passed_a", { side: r.passed_a.toUpperCase() }));
  if (r.time_called) parts.push(t("tour_time_called"));
  return parts.join(" · ");
}

/**
 * The public form "enter your table's result" (physical tables, a round in play), or null.
 * d: the tournament (GET /api/tournaments/{id}); opts.reload(): fetch it again and redraw.
 */
export function claimForm(d, opts) {
  if (d.venue === "online") return null;
  const rnd = openRound(d);
  if (!rnd) return null;
  const tables = rnd.matches.filter((m) => m.b !== null && m.status !== "final");
  if (!tables.length) return null;
  const tableSel = h("select", { testid: "claim-table" }, tables.map((m) =>
    h("option", { value: String(m.table) }, t("tour_table_line", { round: rnd.number, table: m.table, a: entryName(d, m.a), b: entryName(d, m.b) }))));
  const code = h("input", { type: "text", maxlength: "12", autocomplete: "off", autocapitalize: "characters", spellcheck: "false",
    inputmode: "text", testid: "claim-code", required: true, placeholder: "ABC123" });
  const la = levelSelect("claim-level-a");
  const lb = levelSelect("claim-level-b");
  const passed = h("select", { testid: "claim-passed" },
    h("option", { value: "" }, t("tour_nobody")), h("option", { value: "a" }, t("tour_side_a")), h("option", { value: "b" }, t("tour_side_b")));
  const timeCalled = h("input", { type: "checkbox", testid: "claim-time", checked: true });
  const kept = lastAnswer.get(d.id);
  const status = h("p", { class: kept ? kept.cls : "hint", testid: "claim-status", role: "status" }, kept ? kept.text : "");
  const submit = async (ev) => {
    ev.preventDefault();
    const body = { round: rnd.number, table: Number(tableSel.value), code: code.value,
      level_a: Number(la.value), level_b: Number(lb.value), passed_a: passed.value || null, time_called: timeCalled.checked };
    try {
      const res = await post(`/api/tournaments/${d.id}/claims`, body);
      const m = tables.find((x) => x.table === res.table);
      const as = m ? t("tour_claim_as", { side: t(`tour_side_${res.side}`), name: entryName(d, res.side === "a" ? m.a : m.b) }) : "";
      const msg = `${t(`tour_claim_${res.status}`)} ${as}`.trim();
      status.textContent = msg;
      status.className = "hint";
      lastAnswer.set(d.id, { text: msg, cls: "hint" });
      toast(msg, "info");
      await opts.reload();
    } catch (e) {
      status.textContent = errText(e);
      status.className = "error-text";
      lastAnswer.set(d.id, { text: errText(e), cls: "error-text" });
      toast(errText(e));
    }
  };
  return h("form", { class: "card-panel claim-form no-print", testid: "claim-form", onsubmit: submit },
    h("h2", {}, t("tour_claim_title")),
    h("p", { class: "hint" }, t("tour_claim_hint")),
    field(t("tour_col_table"), tableSel, "wide"),
    h("div", { class: "form-grid" },
      field(t("tour_claim_code"), code),
      field(t("tour_level_a"), la), field(t("tour_level_b"), lb), field(t("tour_passed_who"), passed)),
    h("label", { class: "check-row" }, timeCalled, h("span", {}, t("tour_time_called_check"))),
    h("button", { type: "submit", class: "btn primary", testid: "claim-btn" }, t("tour_claim_btn")),
    status);
}

/** One pair's tear-off half of a table card: event, round and table, the pair, its own code, where to send. */
function cardHalf(d, rnd, x, side, url) {
  const id = side === "a" ? x.a : x.b;
  return h("div", { class: "tc-half", testid: "table-card-half", dataset: { side } },
    h("header", {}, h("span", { class: "tc-event" }, d.name), h("span", { class: "tc-where" }, t("tour_card_where", { round: rnd, table: x.table }))),
    h("p", { class: "tc-pair" }, h("strong", {}, `${t(`tour_side_${side}`)}: `), entryName(d, id),
      players(d, id) ? h("span", { class: "muted" }, ` (${players(d, id)})`) : null),
    h("p", { class: "tc-code-line" }, h("span", {}, t("tour_card_code")),
      h("code", { class: "tc-code", testid: "table-card-code", dataset: { side } }, x.codes[side])),
    h("p", { class: "tc-how" }, t("tour_card_how", { url })));
}

/** One printable table card: two tear-off halves, one per pair, each with that pair's own code. */
function tableCard(d, rnd, x) {
  const url = `${location.origin}/tournaments/${d.id}`;
  return h("article", { class: "table-card", testid: "table-card", dataset: { table: String(x.table) } },
    cardHalf(d, rnd, x, "a", url),
    h("p", { class: "tc-cut", "aria-hidden": "true" }, t("tour_card_cut")),
    cardHalf(d, rnd, x, "b", url),
    h("div", { class: "tc-claims no-print" },
      h("span", { class: `badge t-${x.status}` }, t(`tmatch_${x.status}`)), " ",
      x.status === "claimed" || x.status === "disputed"
        ? h("span", { class: "muted" }, `A: ${claimText(x.claims.a)} · B: ${claimText(x.claims.b)}`)
        : null));
}

/**
 * The directors' table cards of the round in play (physical tables), with the codes, each table's
 * claims and "confirm" for a single claim; "print table cards" prints the cards only. Or null.
 */
export function tableCardsPanel(d, opts) {
  if (d.venue === "online" || !d.can_direct) return null;
  const rnd = openRound(d) || (d.rounds_list.length ? d.rounds_list[d.rounds_list.length - 1] : null);
  if (!rnd || !rnd.matches.some((m) => m.b !== null)) return null;
  const grid = h("div", { class: "table-cards", testid: "table-cards" }, h("p", { class: "muted" }, t("loading")));
  const confirms = h("div", { class: "tc-confirms no-print" });

  async function confirm(x, r) {
    try {
      await api("POST", `/api/tournaments/${d.id}/results`, { ...r, round: rnd.number, table: x.table, version: d.version });
      toast(t("tour_ok_result"), "info");
    } catch (e) {
      toast(errText(e));
    }
    await opts.reload();
  }

  get(`/api/tournaments/${d.id}/rounds/${rnd.number}/codes`).then((res) => {
    replaceChildren(grid, res.tables.map((x) => tableCard(d, rnd.number, x)));
    replaceChildren(confirms, res.tables.filter((x) => x.status === "claimed").map((x) => {
      const r = x.claims.a || x.claims.b;
      return h("p", { class: "inline-form" },
        h("span", {}, t("tour_confirm_line", { table: x.table, result: claimText(r) })), " ",
        h("button", { type: "button", class: "btn small primary", testid: "claim-confirm", onclick: () => confirm(x, r) }, t("tour_confirm_btn")));
    }));
  }).catch((e) => replaceChildren(grid, h("p", { class: "error-text" }, errText(e))));

  function printCards() {
    document.body.classList.add("print-cards");
    window.print();
    setTimeout(() => document.body.classList.remove("print-cards"), 500);
  }

  return h("section", { class: "card-panel table-cards-panel", testid: "table-cards-panel" },
    h("div", { class: "round-head no-print" },
      h("h2", {}, t("tour_cards_title", { n: rnd.number })),
      h("button", { type: "button", class: "btn small secondary", testid: "print-cards-btn", onclick: printCards }, t("tour_print_cards"))),
    h("p", { class: "hint no-print" }, t("tour_cards_hint")),
    confirms,
    grid);
}
