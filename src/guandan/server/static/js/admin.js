// The admin pages (issue 25 item 8), /admin: the open reports with a link to each game, the actions an
// admin takes (mute an account's quick phrases or suspend it for some hours, lift either, dismiss a
// report), each with a reason, and the log of every admin action (who, what, when, why). Only admins
// see it (the server answers 403 admin_only to anyone else; the role is set by `guandan admin grant`).
// adminNavLink() is the header's link, shown to admins only.

import { h, link, replaceChildren, fmtDate, toast } from "./dom.js";
import { get, post } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";

const TIMED = ["mute_phrases", "suspend"];
const ACTIONS = ["mute_phrases", "suspend", "unmute_phrases", "unsuspend"];
let adminOf = { id: null, admin: false };

/** The header's "Admin" link: an empty span that fills in once /api/moderation/me says me is an admin. */
export function adminNavLink(me, active) {
  const span = h("span", { class: "nav-admin-slot" });
  if (!me) return span;
  const fill = () => {
    if (adminOf.id === me.id && adminOf.admin) replaceChildren(span, link("/admin", t("nav_admin"), { class: `nav-link${active ? " active" : ""}`, testid: "nav-admin" }));
  };
  if (adminOf.id === me.id) fill();
  else {
    get("/api/moderation/me").then((d) => {
      adminOf = { id: me.id, admin: Boolean(d && d.admin) };
      fill();
    }).catch(() => {});
  }
  return span;
}

function actionName(a) {
  const k = `ma_${a}`;
  return t(k) === k ? a : t(k);
}

function stateText(s) {
  if (!s) return t("adm_state_none");
  const parts = [];
  if (s.muted_until) parts.push(t("adm_muted_until", { until: fmtDate(s.muted_until) }));
  if (s.suspended_until) parts.push(t("adm_suspended_until", { until: fmtDate(s.suspended_until) }));
  return parts.length ? parts.join(" · ") : t("adm_state_none");
}

/** Controls of one action: the action, hours (for a mute or a suspension), why, apply. target: {name} | {report_id}. */
function actionControls(target, withDismiss, done) {
  const choices = withDismiss ? [...ACTIONS, "dismiss"] : ACTIONS;
  const sel = h("select", { testid: "admin-action", "aria-label": t("adm_col_action") }, choices.map((a) => h("option", { value: a }, actionName(a))));
  const hours = h("input", { type: "number", min: "1", max: "8760", value: "24", testid: "admin-hours", "aria-label": t("adm_hours"), title: t("adm_hours") });
  const why = h("input", { type: "text", maxlength: "500", testid: "admin-why", placeholder: t("adm_why"), "aria-label": t("adm_why") });
  const sync = () => {
    hours.disabled = !TIMED.includes(sel.value);
  };
  sel.addEventListener("change", sync);
  sync();
  const apply = async () => {
    const body = { action: sel.value, why: why.value, ...target };
    if (TIMED.includes(sel.value)) body.hours = Number.parseInt(hours.value, 10);
    try {
      const r = await post("/api/admin/actions", body);
      toast(t("adm_done", { action: actionName(r.entry.action), name: r.entry.target }), "info");
      done();
    } catch (e) {
      toast(errText(e));
    }
  };
  return h("div", { class: "admin-act" }, sel, hours, why, h("button", { type: "button", class: "btn primary small", testid: "admin-apply", onclick: apply }, t("adm_do")));
}

/** Mount the admin page on el. Returns {destroy(), onLang(), onMe()}. */
export function mountAdmin(el, _params, ctx) {
  let closed = false;
  let data = null; // {reports, log} | {error}

  async function load() {
    try {
      const [r, l] = await Promise.all([get("/api/admin/reports"), get("/api/admin/log")]);
      data = { reports: r.reports || [], log: l.log || [] };
    } catch (e) {
      data = { error: e };
    }
    if (!closed) render();
  }

  function reportRow(r) {
    const table = r.game_id !== null && r.game_id !== undefined
      ? link(`/replay/${r.game_id}`, t("adm_open_game", { id: r.game_id }), { testid: "admin-report-link" })
      : r.room_id ? link(`/room/${r.room_id}`, t("adm_open_room", { id: r.room_id }), { testid: "admin-report-link" }) : "";
    return h(
      "tr",
      { testid: "admin-report", dataset: { id: String(r.id), target: r.target } },
      h("td", {}, fmtDate(r.created_at)),
      h("td", { "data-label": t("adm_col_reporter") }, r.reporter),
      h("td", { "data-label": t("adm_col_target") }, link(`/profile/${encodeURIComponent(r.target)}`, r.target)),
      h("td", { "data-label": t("adm_col_reason") }, t(`rr_${r.reason}`)),
      h("td", { "data-label": t("adm_col_table") }, table, r.deal ? ` · ${t("adm_deal", { n: r.deal })}` : ""),
      h("td", { testid: "admin-target-state", "data-label": t("adm_col_state") }, stateText(r.target_state)),
      h("td", {}, actionControls({ report_id: r.id }, true, load)),
    );
  }

  function logRow(e) {
    const what = [actionName(e.action), e.target, e.until ? t("adm_until", { until: fmtDate(e.until) }) : null,
      e.report_id ? t("adm_report_no", { id: e.report_id }) : null].filter(Boolean).join(" · ");
    return h("tr", { testid: "admin-log-row", dataset: { action: e.action } }, h("td", {}, fmtDate(e.at)), h("td", { "data-label": t("adm_col_admin") }, e.cli ? t("adm_cli") : e.admin),
      h("td", {}, what), h("td", { "data-label": t("adm_col_why") }, e.why || (e.cli ? t("adm_cli_why") : "")));
  }

  function render() {
    if (!ctx.me) {
      replaceChildren(el, h("section", { class: "card-panel admin-page", testid: "admin-page" }, h("p", { testid: "admin-only" }, t("adm_only"))));
      return;
    }
    if (data === null) {
      replaceChildren(el, h("p", { class: "muted" }, t("loading")));
      return;
    }
    if (data.error) {
      const msg = data.error.code === "admin_only" ? t("adm_only") : errText(data.error);
      replaceChildren(el, h("section", { class: "card-panel admin-page", testid: "admin-page" }, h("h1", {}, t("adm_title")), h("p", { testid: "admin-only" }, msg)));
      return;
    }
    const nameIn = h("input", { type: "text", maxlength: "24", testid: "admin-name", placeholder: t("adm_name"), "aria-label": t("adm_name") });
    const formTarget = {};
    Object.defineProperty(formTarget, "name", { enumerable: true, get: () => nameIn.value });
    replaceChildren(
      el,
      h(
        "section",
        { class: "admin-page", testid: "admin-page" },
        h("h1", {}, t("adm_title")),
        h("div", { class: "card-panel" },
          h("h2", {}, t("adm_reports")),
          data.reports.length
            ? h("div", { class: "admin-scroll" }, h("table", { testid: "admin-reports" },
                h("thead", {}, h("tr", {}, ["adm_col_when", "adm_col_reporter", "adm_col_target", "adm_col_reason", "adm_col_table", "adm_col_state", "adm_col_action"].map((k) => h("th", {}, t(k))))),
                h("tbody", {}, data.reports.map(reportRow))))
            : h("p", { class: "muted", testid: "admin-no-reports" }, t("adm_no_reports"))),
        h("div", { class: "card-panel" },
          h("h2", {}, t("adm_account")),
          h("div", { class: "admin-form", testid: "admin-action-form" }, nameIn, actionControls(formTarget, false, load))),
        h("div", { class: "card-panel" },
          h("h2", {}, t("adm_log")),
          data.log.length
            ? h("div", { class: "admin-scroll" }, h("table", { testid: "admin-log" },
                h("thead", {}, h("tr", {}, ["adm_col_when", "adm_col_admin", "adm_col_what", "adm_col_why"].map((k) => h("th", {}, t(k))))),
                h("tbody", {}, data.log.map(logRow))))
            : h("p", { class: "muted", testid: "admin-no-log" }, t("adm_no_log"))),
      ),
    );
  }

  render();
  if (ctx.me) load();
  return {
    destroy() {
      closed = true;
    },
    onLang: render,
    onMe() {
      data = null;
      render();
      if (ctx.me) load();
    },
  };
}
