// The organiser's panel of a tournament page, shown to the organiser and co-directors only (the server
// refuses everyone else: 403). Add entries (one by one or a CSV), pair the next round, pair the latest
// round again, enter and correct results, penalties, withdrawals, co-directors, the audit log.
// Every change sends the version the page last read; "the tournament changed" (409 stale_version)
// reloads the page's data. API: api_tournaments.py.

import { fmtDate, h, toast } from "./dom.js";
import { api, get, post } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";
const LEVELS = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];

/** A level 2..14 as shown at the table: 2..10, J, Q, K, A. */
export function levelName(n) {
  return { 11: "J", 12: "Q", 13: "K", 14: "A" }[n] || String(n);
}

function levelSelect(testid, value) {
  return h("select", { testid }, LEVELS.map((n) => h("option", { value: String(n), selected: n === value }, levelName(n))));
}

function field(label, input, cls = "") {
  return h("label", { class: cls }, h("span", {}, label), input);
}

/**
 * The organiser's panel element. d: the tournament (GET /api/tournaments/{id}); opts.reload(): fetch
 * it again and redraw the page.
 */
export function organiserPanel(d, opts) {
  const base = `/api/tournaments/${d.id}`;
  const names = Object.fromEntries(d.entries.map((e) => [e.id, e.name]));

  async function act(method, path, body, okKey) {
    try {
      const res = await api(method, `${base}${path}`, { ...(body || {}), version: d.version });
      toast(res && res.unchanged ? t("tour_unchanged") : t(okKey), "info");
    } catch (e) {
      toast(errText(e));
    }
    await opts.reload();
  }

  // --- entries ---
  const p1 = h("input", { type: "text", maxlength: "64", testid: "org-player1" });
  const p2 = h("input", { type: "text", maxlength: "64", testid: "org-player2" });
  const club = h("input", { type: "text", maxlength: "64", testid: "org-club" });
  const rating = h("input", { type: "number", step: "any", testid: "org-rating" });
  const entryForm = h("form", {
    class: "org-block", testid: "org-entry-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      const entry = { players: [p1.value.trim(), p2.value.trim()], club: club.value.trim() || null };
      if (rating.value !== "") entry.rating = Number(rating.value);
      act("POST", "/entries", { entries: [entry] }, "tour_ok_entries");
    },
  },
  h("h3", {}, t("tour_add_entry")),
  h("div", { class: "form-grid" }, field(t("tour_player1"), p1), field(t("tour_player2"), p2), field(t("tour_col_club"), club), field(t("tour_rating"), rating)),
  h("button", { type: "submit", class: "btn primary small", testid: "org-entry-add" }, t("tour_add_entry_btn")));

  const csv = h("textarea", { rows: "4", testid: "org-csv", placeholder: "name,partner,club,rating\n张伟,李娜,东城,1800" });
  const csvForm = h("form", {
    class: "org-block", onsubmit: (ev) => {
      ev.preventDefault();
      act("POST", "/entries", { csv: csv.value }, "tour_ok_entries");
    },
  },
  h("h3", {}, t("tour_import_csv")),
  h("p", { class: "hint" }, t("tour_csv_hint")),
  csv,
  h("button", { type: "submit", class: "btn small", testid: "org-csv-btn" }, t("tour_import_btn")));

  // --- rounds ---
  const last = d.rounds_list.length ? d.rounds_list[d.rounds_list.length - 1] : null;
  const allPaired = d.rounds_total > 0 && d.rounds_played >= d.rounds_total;
  const waiting = last && !last.complete;
  const roundsBlock = h("div", { class: "org-block" },
    h("h3", {}, t("tour_rounds_title")),
    allPaired ? h("p", { class: "hint" }, t("tour_all_paired")) : waiting ? h("p", { class: "hint" }, t("tour_wait_results", { n: last.number })) : null,
    h("div", { class: "btn-row" },
      allPaired ? null : h("button", { type: "button", class: "btn primary", testid: "org-pair-btn", disabled: Boolean(waiting),
        onclick: () => act("POST", "/rounds", {}, "tour_ok_paired") },
        t("tour_pair_next", { n: d.rounds_played + 1 })),
      last && !last.has_results
        ? h("button", { type: "button", class: "btn secondary", testid: "org-repair-btn",
          onclick: () => act("DELETE", `/rounds/${last.number}?version=${d.version}`, {}, "tour_ok_paired") }, t("tour_repair", { n: last.number }))
        : null));

  // --- results ---
  const open = [];
  for (const r of d.rounds_list) for (const m of r.matches) if (m.b !== null) open.push({ r: r.number, m });
  const pending = open.filter((x) => x.m.status !== "final");
  const tableSel = h("select", { testid: "org-result-table" },
    (pending.length ? pending : open).map(({ r, m }) => h("option", { value: `${r}:${m.table}` },
      t("tour_table_line", { round: r, table: m.table, a: names[m.a], b: names[m.b] }))));
  const la = levelSelect("org-level-a", 2);
  const lb = levelSelect("org-level-b", 2);
  const passed = h("select", { testid: "org-passed" },
    h("option", { value: "" }, t("tour_nobody")), h("option", { value: "a" }, t("tour_side_a")), h("option", { value: "b" }, t("tour_side_b")));
  const absent = h("select", { testid: "org-absent" },
    h("option", { value: "" }, t("tour_nobody")), h("option", { value: "a" }, t("tour_side_a")), h("option", { value: "b" }, t("tour_side_b")),
    h("option", { value: "both" }, t("tour_both")));
  const extra = h("select", { testid: "org-extra" },
    h("option", { value: "" }, t("tour_nobody")), h("option", { value: "a" }, t("tour_side_a")), h("option", { value: "b" }, t("tour_side_b")));
  const knockout = d.rounds_list.some((r) => r.kind === "knockout");
  const timeCalled = h("input", { type: "checkbox", testid: "org-time", checked: true });
  const correct = h("input", { type: "checkbox", testid: "org-correct" });
  const override = h("input", { type: "checkbox", testid: "org-override" });
  const reason = h("input", { type: "text", maxlength: "64", testid: "org-reason" });
  const resultForm = h("form", {
    class: "org-block", testid: "org-result-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      if (!tableSel.value) return;
      const [round, table] = tableSel.value.split(":").map(Number);
      const body = { round, table, level_a: Number(la.value), level_b: Number(lb.value), passed_a: passed.value || null,
        time_called: timeCalled.checked, absent: absent.value || null, extra_deal: extra.value || null,
        correct: correct.checked, reason: reason.value.trim() || null };
      if (override.checked) body.override = true;
      if (body.absent) {
        body.level_a = 2;
        body.level_b = 2;
      }
      act("POST", "/results", body, "tour_ok_result");
    },
  },
  h("h3", {}, t("tour_enter_result")),
  open.length ? null : h("p", { class: "hint" }, t("tour_not_paired")),
  field(t("tour_col_table"), tableSel, "wide"),
  h("div", { class: "form-grid" },
    field(t("tour_level_a"), la), field(t("tour_level_b"), lb), field(t("tour_passed_who"), passed), field(t("tour_absent_who"), absent),
    knockout ? field(t("tour_extra_who"), extra) : null),
  h("label", { class: "check-row" }, timeCalled, h("span", {}, t("tour_time_called_check"))),
  h("label", { class: "check-row" }, correct, h("span", {}, t("tour_correct_check"))),
  d.venue === "online" ? h("label", { class: "check-row" }, override, h("span", {}, t("tour_override_check"))) : null,
  field(t("tour_reason"), reason),
  h("button", { type: "submit", class: "btn primary small", testid: "org-result-btn", disabled: !open.length }, t("tour_enter_btn")));

  // --- penalties ---
  const finals = open.filter((x) => x.m.status === "final");
  const penTable = h("select", { testid: "org-penalty-table" },
    finals.map(({ r, m }) => h("option", { value: `${r}:${m.table}` }, t("tour_table_line", { round: r, table: m.table, a: names[m.a], b: names[m.b] }))));
  const penSide = h("select", { testid: "org-penalty-side" }, h("option", { value: "a" }, t("tour_side_a")), h("option", { value: "b" }, t("tour_side_b")));
  const penLevels = h("input", { type: "number", min: "0", max: "13", value: "1", testid: "org-penalty-levels" });
  const penReason = h("input", { type: "text", maxlength: "64", testid: "org-penalty-reason" });
  const penLoses = h("input", { type: "checkbox", testid: "org-penalty-loses" });
  const penaltyForm = h("form", {
    class: "org-block", testid: "org-penalty-form",
    onsubmit: (ev) => {
      ev.preventDefault();
      if (!penTable.value) return;
      const [round, table] = penTable.value.split(":").map(Number);
      act("POST", "/penalties", { round, table, side: penSide.value, levels: Number(penLevels.value), reason: penReason.value.trim(), loses_match: penLoses.checked }, "tour_ok_penalty");
    },
  },
  h("h3", {}, t("tour_penalty_title")),
  finals.length ? null : h("p", { class: "hint" }, t("tour_penalty_needs_result")),
  field(t("tour_col_table"), penTable, "wide"),
  h("div", { class: "form-grid" }, field(t("tour_penalised_side"), penSide), field(t("tour_penalty_levels"), penLevels)),
  field(t("tour_reason"), penReason),
  h("label", { class: "check-row" }, penLoses, h("span", {}, t("tour_loses_match"))),
  h("button", { type: "submit", class: "btn small", testid: "org-penalty-btn", disabled: !finals.length }, t("tour_penalty_btn")));

  // --- withdrawals, co-directors ---
  const active = d.entries.filter((e) => !e.withdrawn);
  const wEntry = h("select", { testid: "org-withdraw-entry" }, active.map((e) => h("option", { value: String(e.id) }, e.name)));
  const coName = h("input", { type: "text", maxlength: "24", testid: "org-codirector-name" });
  const people = h("div", { class: "org-block" },
    h("h3", {}, t("tour_people_title")),
    h("div", { class: "inline-form" }, field(t("tour_withdraw_entry"), wEntry),
      h("button", { type: "button", class: "btn small", testid: "org-withdraw-btn", disabled: !active.length,
        onclick: () => act("POST", `/entries/${wEntry.value}/withdraw`, {}, "tour_ok_withdrawn") }, t("tour_withdraw_btn"))),
    h("div", { class: "inline-form" }, field(t("tour_codirector_name"), coName),
      h("button", { type: "button", class: "btn small", testid: "org-codirector-btn",
        onclick: () => act("POST", "/codirectors", { name: coName.value.trim() }, "tour_ok_codirector") }, t("tour_codirector_btn"))),
    d.codirectors.length ? h("ul", { class: "codirector-list", testid: "org-codirectors" }, d.codirectors.map((n) =>
      h("li", {}, h("span", {}, n), " ",
        h("button", { type: "button", class: "btn small secondary", testid: "org-codirector-remove", "aria-label": t("tour_codirector_remove_named", { name: n }),
          onclick: () => act("DELETE", `/codirectors/${encodeURIComponent(n)}?version=${d.version}`, {}, "tour_ok_codirector_removed") },
        t("tour_codirector_remove"))))) : null);

  // --- audit log ---
  const logBox = h("div", { class: "audit-log", testid: "org-audit-log" });
  const logDetails = h("details", {
    class: "org-block",
    ontoggle: async (ev) => {
      if (!ev.target.open) return;
      try {
        const res = await get(`${base}/log`);
        logBox.replaceChildren(h("ol", {}, res.log.slice().reverse().map((a) =>
          h("li", { testid: "org-audit-row" }, h("span", { class: "muted" }, fmtDate(a.at)), " ", h("strong", {}, a.by || (a.after && a.after.reason === "online" ? t("tour_by_table") : "–")), " ",
            t(`tour_op_${a.operation}`), " ", h("code", { class: "audit-json" }, JSON.stringify(a.after))))));
      } catch (e) {
        toast(errText(e));
      }
    },
  }, h("summary", {}, t("tour_audit_title")), logBox);

  return h("section", { class: "card-panel organiser-panel no-print", testid: "organiser-panel" },
    h("h2", {}, t("tour_organiser_panel")),
    h("p", { class: "hint" }, t("tour_version_hint", { v: d.version })),
    h("div", { class: "org-grid" }, roundsBlock, resultForm, entryForm, csvForm, penaltyForm, people),
    logDetails);
}
