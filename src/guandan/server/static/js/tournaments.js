// Tournaments: the list (/tournaments, with the create form for signed-in people) and the public
// standings page (/tournaments/{id}): rounds, pairings, results, standings with tie-breaks and
// penalties, prize list, exports, printable pairing sheets, the players' result form with the table's
// code (tournament_claims.js). The organiser's panel (tournament_admin.js) and the table cards are shown
// to the organiser and co-directors only.
// API: GET/POST /api/tournaments, GET /api/tournaments/{id} (api_tournaments.py).

import { fmtDate, h, keptForm, link, replaceChildren, toast } from "./dom.js";
import { get, post } from "./api.js";
import { getLang, t } from "./i18n.js";
import { errText } from "./auth.js";
import { PRESET_IDS, presetName } from "./rules.js";
import { levelName, organiserPanel } from "./tournament_admin.js";
import { claimForm, tableCardsPanel } from "./tournament_claims.js";

export const FORMATS = ["swiss", "round_robin", "groups_knockout"];
const TIEBREAK_KEYS = { net: "tb_net", cumulative: "tb_cumulative", opponents: "tb_opponents", head_to_head: "tb_head_to_head", seed: "tb_seed" };
/** Tie-breaks hidden on narrow screens (the first two small scores always show). */
const NARROW_HIDDEN = new Set(["opponents", "head_to_head", "seed"]);

function statusPill(status) {
  return h("span", { class: `status-pill t-${status}`, testid: "tournament-status" }, t(`tstatus_${status}`));
}

function formatName(fmt) {
  return FORMATS.includes(fmt) ? t(`tformat_${fmt}`) : String(fmt);
}

// --- the list -----------------------------------------------------------------------------------

function createForm(ctx) {
  const name = h("input", { type: "text", maxlength: "64", testid: "create-tournament-name", required: true });
  const preset = h("select", { testid: "create-tournament-preset" }, PRESET_IDS.map((p) => h("option", { value: p }, presetName(p))));
  const format = h("select", { testid: "create-tournament-format" }, FORMATS.map((f) => h("option", { value: f }, formatName(f))));
  const rounds = h("input", { type: "number", min: "1", max: "30", value: "5", testid: "create-tournament-rounds" });
  const minutes = h("input", { type: "number", min: "0", max: "600", value: "70", testid: "create-tournament-minutes" });
  const venue = h("select", { testid: "create-tournament-venue" }, ["tables", "online"].map((v) => h("option", { value: v }, t(`venue_${v}`))));
  const late = h("input", { type: "number", min: "0", max: "120", value: "0", testid: "create-tournament-late" });
  const submit = async (ev) => {
    ev.preventDefault();
    try {
      const d = await post("/api/tournaments", {
        name: name.value.trim(),
        preset: preset.value,
        format: format.value,
        rounds: Number(rounds.value),
        time_limit: Number(minutes.value),
        venue: venue.value,
        late_minutes: Number(late.value) || null,
      });
      ctx.navigate(`/tournaments/${d.tournament.id}`);
    } catch (e) {
      toast(errText(e));
    }
  };
  return h(
    "form",
    { class: "card-panel tour-create", testid: "create-tournament-form", onsubmit: submit },
    h("h2", {}, t("tour_create_title")),
    h("label", {}, h("span", {}, t("tour_name")), name),
    h("div", { class: "form-grid" },
      h("label", {}, h("span", {}, t("tour_format")), format),
      h("label", {}, h("span", {}, t("create_preset")), preset),
      h("label", {}, h("span", {}, t("tour_rounds")), rounds),
      h("label", {}, h("span", {}, t("tour_minutes")), minutes),
      h("label", {}, h("span", {}, t("tour_venue")), venue),
      h("label", {}, h("span", {}, t("tour_late_minutes")), late),
    ),
    h("p", { class: "hint" }, t("tour_create_hint")),
    h("button", { type: "submit", class: "btn primary", testid: "create-tournament-btn" }, t("tour_create_btn")),
  );
}

/** Mount the tournaments list (/tournaments). */
export function mountTournaments(el, _params, ctx) {
  let destroyed = false;
  let list = null;
  const form = keptForm(() => createForm(ctx), getLang); // the list arriving must not clear what is typed
  function render() {
    if (destroyed) return;
    const items = list === null
      ? h("p", { class: "muted" }, t("loading"))
      : list.length
        ? h("ul", { class: "tour-list", testid: "tournament-list" }, list.map((x) =>
            h("li", { class: "tour-item", testid: "tournament-item", dataset: { tournament: String(x.id) } },
              link(`/tournaments/${x.id}`, x.name, { class: "tour-name" }),
              h("span", { class: "tour-meta muted" },
                `${formatName(x.format)} · ${t("tour_rounds_of", { n: x.rounds_played, total: x.rounds_total })}`,
                x.organiser ? ` · ${t("tour_organiser")}: ${x.organiser}` : ""),
              statusPill(x.status))))
        : h("p", { class: "muted", testid: "tournament-list" }, t("tour_none"));
    replaceChildren(
      el,
      h("div", { class: "tour-page" },
        h("section", { class: "card-panel" }, h("h1", {}, t("tour_list_title")), items),
        ctx.me ? form() : h("p", { class: "hint" }, t("tour_sign_in_to_create"))),
    );
  }
  get("/api/tournaments")
    .then((d) => {
      list = Array.isArray(d.tournaments) ? d.tournaments : [];
      render();
    })
    .catch((e) => {
      if (!destroyed) replaceChildren(el, h("p", { class: "error-text" }, errText(e)));
    });
  render();
  return { destroy() { destroyed = true; }, onLang: render, onMe: render };
}

// --- the standings page ---------------------------------------------------------------------------

function entryName(d, id) {
  if (id === null || id === undefined) return t("tour_bye");
  const e = d.entries.find((x) => x.id === id);
  return e ? e.name : `#${id}`;
}

function entryCell(d, id) {
  const e = d.entries.find((x) => x.id === id);
  const players = e && e.players.join(" / ") !== e.name ? e.players.join(" / ") : "";
  return [
    h("span", { class: "entry-name" }, entryName(d, id), e && e.withdrawn ? h("span", { class: "badge" }, t("tour_withdrawn")) : null),
    players ? h("span", { class: "entry-players muted" }, players) : null,
  ];
}

/** The result of a table in words: "A : K", who passed A, time called, absent, penalties. */
export function resultText(m) {
  const r = m.result;
  if (!r) return t(`tmatch_${m.status}`);
  if (r.absent) return r.absent === "both" ? t("tour_both_absent") : t("tour_absent", { side: r.absent.toUpperCase() });
  const parts = [`${levelName(r.level_a)} : ${levelName(r.level_b)}`];
  if (r.passed_a) parts.push(t("tour_passed_a", { side: r.passed_a.toUpperCase() }));
  if (r.time_called) parts.push(t("tour_time_called"));
  if (r.extra_deal) parts.push(t("tour_extra_deal", { side: r.extra_deal.toUpperCase() }));
  const pens = r.penalties || [];
  if (pens.length) parts.push(t("tour_penalties_n", { n: pens.length }));
  return parts.join(" · ");
}

function pointsText(m) {
  if (!m.score) return "";
  if (m.b === null || m.b === undefined) return String(m.score.a.field_points);
  return `${m.score.a.field_points} : ${m.score.b.field_points}`;
}

/** Whether the match is being played now at an online table (its result not in yet). */
function onlineNow(d, rnd, m) {
  const x = (d.online_tables || []).find((o) => o.round === rnd.number && o.table === m.table);
  return Boolean(x) && x.state === "playing" && !m.result;
}

/** A team match's link (复式, its page), or an online table's link (issue 21): "Your table" for its players, "Go to table" for everyone else
 * (spectators see each deal once it is over), or the table's state once it needs the organiser. */
function tableLink(d, rnd, m, me) {
  const tm = (d.team_matches || []).find((o) => o.round === rnd.number && o.table === m.table);
  if (tm) return link(tm.url, t("tm_open_match"), { class: "btn small secondary no-print", testid: "teammatch-link" });
  const x = (d.online_tables || []).find((o) => o.round === rnd.number && o.table === m.table);
  if (!x) return null;
  if (x.state === "held") return h("span", { class: "badge" }, t("tour_table_held"));
  if (m.status === "final") return null;
  const mine = Boolean(me) && [m.a, m.b].some((id) => {
    const e = d.entries.find((y) => y.id === id);
    return e && e.players.includes(me.name);
  });
  return link(`/room/${x.room}`, t(mine ? "tour_your_table" : "tour_go_to_table"),
    { class: `btn small ${mine ? "primary" : "secondary"} no-print`, testid: "table-link" });
}

function roundSection(d, rnd, onPrint, me) {
  return h(
    "section",
    { class: "card-panel round-section", testid: "round-section", dataset: { round: String(rnd.number) } },
    h("div", { class: "round-head" },
      h("h2", {}, t("tour_round_n", { n: rnd.number }), rnd.complete ? null : h("span", { class: "badge" }, t("tour_in_play"))),
      h("button", { type: "button", class: "btn small secondary no-print", testid: "print-round-btn", onclick: () => onPrint(rnd.number) }, t("tour_print_round"))),
    h("p", { class: "print-only print-title" }, `${d.name} · ${t("tour_round_n", { n: rnd.number })}`),
    h("table", { class: "data-table pairings" },
      h("thead", {}, h("tr", {},
        h("th", { class: "num" }, t("tour_col_table")),
        h("th", {}, t("tour_side_a")),
        h("th", {}, t("tour_side_b")),
        h("th", {}, t("tour_col_result")),
        h("th", { class: "num" }, t("tour_col_points")))),
      h("tbody", {}, rnd.matches.map((m) =>
        h("tr", { testid: "pairing-row", dataset: { table: String(m.table), status: m.status } },
          h("td", { class: "num" }, String(m.table)),
          h("td", {}, entryCell(d, m.a)),
          h("td", {}, m.b === null ? h("em", {}, t("tour_bye")) : entryCell(d, m.b)),
          h("td", { class: "result-cell" }, m.b === null ? "" : onlineNow(d, rnd, m) ? t("tmatch_playing") : resultText(m), m.b === null ? null : tableLink(d, rnd, m, me)),
          h("td", { class: "num" }, pointsText(m)))))),
  );
}

function standingsTable(d) {
  const tbs = d.tiebreaks.filter((x) => TIEBREAK_KEYS[x]);
  const tbClass = (x) => (NARROW_HIDDEN.has(x) ? "num opt" : "num");
  return h(
    "table",
    { class: "data-table standings", testid: "standings-table" },
    h("thead", {}, h("tr", {},
      h("th", { class: "num" }, t("col_rank")),
      h("th", {}, t("tour_col_entry")),
      h("th", { class: "opt" }, t("tour_col_club")),
      h("th", { class: "num" }, t("tour_field_points")),
      tbs.map((x) => h("th", { class: tbClass(x), title: t(`${TIEBREAK_KEYS[x]}_help`) }, t(TIEBREAK_KEYS[x]))),
      h("th", { class: "num opt" }, t("tour_col_wdl")),
      h("th", { class: "num" }, t("tour_col_penalties")))),
    h("tbody", {}, d.standings.map((s) => {
      const e = d.entries.find((x) => x.id === s.id) || {};
      const pens = (s.penalties || []).map((p) => t("tour_penalty_line", { round: p.round, table: p.table, levels: p.levels, reason: p.reason || "" }));
      return h("tr", { testid: "standings-row", dataset: { entry: String(s.id) }, class: s.withdrawn ? "withdrawn" : "" },
        h("td", { class: "num" }, String(s.place)),
        h("td", {}, entryCell(d, s.id)),
        h("td", { class: "opt" }, e.club || ""),
        h("td", { class: "num strong", testid: "standings-fp" }, String(s.field_points)),
        tbs.map((x, i) => h("td", { class: tbClass(x) }, s.tiebreaks[i] === null || s.tiebreaks[i] === undefined ? "–" : String(s.tiebreaks[i]))),
        h("td", { class: "num opt" }, `${s.wins}-${s.draws}-${s.losses}${s.byes ? ` (+${s.byes})` : ""}`),
        h("td", { class: "num", title: pens.join("\n") }, s.penalty_levels ? `−${s.penalty_levels}` : ""));
    })),
  );
}

function prizeList(d) {
  // no prizes before the first result
  if (!d.prizes.length || !d.standings.some((s) => s.played || s.byes)) return null;
  return h("section", { class: "card-panel prizes" },
    h("h2", {}, t("tour_prizes")),
    h("ol", { class: "prize-list", testid: "prize-list" }, d.prizes.map((p) =>
      h("li", { dataset: { entry: String(p.id) } },
        h("span", { class: `badge place place-${p.place}` }, t("tour_place_n", { n: p.place })), " ",
        h("strong", {}, p.name), " ",
        h("span", { class: "muted" }, t("tour_fp_n", { n: p.field_points }))))));
}

/** Mount a tournament's public page (/tournaments/{id}); the organiser's panel for its directors. */
export function mountTournament(el, params, ctx) {
  let destroyed = false;
  let data = null;
  let failure = null;

  function printRound(n) {
    document.body.classList.add("print-one-round");
    for (const s of el.querySelectorAll(".round-section")) s.classList.toggle("print-this", s.dataset.round === String(n));
    window.print();
    setTimeout(() => document.body.classList.remove("print-one-round"), 500);
  }

  function render() {
    if (destroyed) return;
    if (failure) {
      replaceChildren(el, h("p", { class: "error-text", testid: "tournament-error" }, errText(failure)));
      return;
    }
    if (!data) {
      replaceChildren(el, h("p", { class: "muted" }, t("loading")));
      return;
    }
    const d = data;
    const base = `/api/tournaments/${d.id}`;
    const rounds = [...d.rounds_list].reverse();
    replaceChildren(
      el,
      h("div", { class: "tour-page" },
        h("section", { class: "card-panel tour-head" },
          h("div", { class: "tour-title-row" }, h("h1", { testid: "tournament-title" }, d.name), statusPill(d.status)),
          h("p", { class: "muted" },
            [formatName(d.format), presetName(d.preset), t("tour_rounds_of", { n: d.rounds_played, total: d.rounds_total }),
              d.match_minutes ? t("tour_minutes_n", { n: d.match_minutes }) : t("tour_untimed"),
              d.venue === "online" ? t("tour_online_badge") : null,
              t("tour_entries_n", { n: d.entries.length })].filter(Boolean).join(" · ")),
          h("p", { class: "muted small" }, `${t("tour_organiser")}: ${d.organiser || "–"}`,
            d.codirectors.length ? ` · ${t("tour_codirectors")}: ${d.codirectors.join(", ")}` : ""),
          h("div", { class: "btn-row no-print" },
            h("a", { class: "btn small secondary", href: `${base}/export.csv`, download: "", testid: "export-csv" }, t("tour_export_csv")),
            h("a", { class: "btn small secondary", href: `${base}/export.json`, download: "", testid: "export-json" }, t("tour_export_json")),
            h("button", { type: "button", class: "btn small secondary", testid: "print-btn", onclick: () => window.print() }, t("tour_print")),
            link("/tournaments", t("tour_all"), { class: "btn small secondary" }))),
        claimForm(d, { reload: load }),
        d.can_direct ? organiserPanel(d, { reload: load, me: ctx.me }) : null,
        tableCardsPanel(d, { reload: load }),
        h("section", { class: "card-panel standings-panel" },
          h("h2", {}, t("tour_standings")),
          d.standings.length ? h("div", { class: "table-fit" }, standingsTable(d)) : h("p", { class: "muted" }, t("tour_no_entries")),
          h("p", { class: "hint" }, t("tour_scoring_hint"))),
        prizeList(d),
        rounds.length ? rounds.map((r) => roundSection(d, r, printRound, ctx.me)) : h("p", { class: "muted card-panel" }, t("tour_not_paired")),
        h("p", { class: "muted small print-only" }, `${d.name} · ${fmtDate(new Date().toISOString())}`)),
    );
  }

  function load() {
    return get(`/api/tournaments/${encodeURIComponent(params.id)}`)
      .then((d) => {
        data = d;
        failure = null;
        render();
      })
      .catch((e) => {
        failure = e;
        render();
      });
  }
  load();
  render();
  return { destroy() { destroyed = true; }, onLang: render, onMe: load };
}
