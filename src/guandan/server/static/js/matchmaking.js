// Matchmaking (issue 25 item 1): the lobby's "Find players / 匹配" panel and its ready check.
// Server: GET /api/match and POST /api/match/join|bots|leave|ready|decline
// (src/guandan/server/api_matchmaking.py; decisions in src/guandan/server/matchmaking.py).
//
// Idle: an optional partner (a friend's name), the bot-fill choice and the join button. Queued: the
// waiting time (counted here between polls), the rating range allowed now, the bot-fill choice
// (changeable while waiting) and one "Leave queue" button. A match found opens the ready check
// (a dialog: the players, who is ready, the seconds left, Ready / Decline). Seated: the page opens
// the room (once per room: the room id is remembered in sessionStorage, so a return to the lobby
// does not open it again). The panel polls every POLL_MS while queued or in a ready check, every
// IDLE_POLL_MS otherwise (a partner may have put one in the queue), never while the tab is hidden.

import { h, replaceChildren, toast } from "./dom.js";
import { get, post } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";

export const POLL_MS = 1000;
export const IDLE_POLL_MS = 10000;
const SEEN_KEY = "gd_match_room";

/** "m:ss" of a number of seconds. */
export function clockText(s) {
  const n = Math.max(0, Math.floor(s));
  return `${Math.floor(n / 60)}:${String(n % 60).padStart(2, "0")}`;
}

/** The range line of a queue entry (GET /api/match's `entry`). */
export function rangeText(entry) {
  if (entry.range === null || entry.range === undefined) return t("mm_range_any", { rating: entry.rating.toFixed(1) });
  return t("mm_range", { low: entry.range_low.toFixed(1), high: entry.range_high.toFixed(1), rating: entry.rating.toFixed(1) });
}

/**
 * The lobby's matchmaking panel. ctx: the app context ({me, navigate}). Returns {el, destroy()}.
 */
export function matchPanel(ctx) {
  const el = h("section", { class: "card-panel match-panel", testid: "match-panel" });
  const dialogHost = h("div", { class: "match-dialog-host" });
  let data = null;
  let fetchedAt = 0;
  let timer = null;
  let ticker = null;
  let destroyed = false;
  let busy = false;
  let inGame = null; // the room of a live game the caller sits in (join answered 409 seated_in_game)
  let levels = ["easy", "normal", "hard"];
  const partnerInput = h("input", { type: "text", maxlength: "24", placeholder: t("mm_partner_placeholder"),
    "aria-label": t("mm_partner"), testid: "match-partner" });
  const guest = !ctx.me || ctx.me.is_guest;

  function schedule() {
    clearTimeout(timer);
    if (destroyed) return;
    const active = data && (data.status === "queued" || data.status === "ready_check");
    timer = setTimeout(load, active ? POLL_MS : IDLE_POLL_MS);
  }

  async function load() {
    if (destroyed) return;
    if (document.hidden) return schedule();
    try {
      const d = await get("/api/match");
      if (destroyed) return;
      show(d);
    } catch (_e) {
      schedule();
    }
  }

  function show(d) {
    data = d;
    fetchedAt = performance.now();
    if (Array.isArray(d.levels) && d.levels.length) levels = d.levels;
    if (d.status === "seated" && d.room && sessionStorage.getItem(SEEN_KEY) !== d.room) {
      sessionStorage.setItem(SEEN_KEY, d.room);
      toast(t("mm_seated"), "info");
      ctx.navigate(`/room/${encodeURIComponent(d.room)}`);
      return;
    }
    draw();
    schedule();
  }

  async function act(path, body) {
    if (busy) return;
    busy = true;
    try {
      const d = await post(path, body);
      if (destroyed) return;
      if (d && d.status) show(d);
      else load();
    } catch (e) {
      if (e && e.code === "seated_in_game" && e.params && e.params.room) {
        inGame = String(e.params.room);
        draw();
      } else toast(errText(e));
    } finally {
      busy = false;
    }
  }

  const elapsed = () => (performance.now() - fetchedAt) / 1000;

  function levelSelect(current, onchange) {
    const sel = h("select", { testid: "match-bots", "aria-label": t("mm_bots", { s: botAfter() }), onchange },
      h("option", { value: "" }, t("mm_bots_none")),
      levels.map((l) => h("option", { value: l, selected: l === current }, t(`difficulty_${l}`))));
    if (!current) sel.value = "";
    return sel;
  }

  const botAfter = () => Math.round((data && data.bot_fill_after_s) || 60);

  function inGameNotice() {
    if (!inGame) return null;
    const href = `/room/${encodeURIComponent(inGame)}`;
    return h("div", { class: "match-notice", testid: "match-in-game", role: "status" },
      h("p", {}, t("mm_in_game")),
      h("a", { class: "btn primary", href, testid: "match-goto-room", onclick: (ev) => { ev.preventDefault(); ctx.navigate(href); } },
        t("mm_goto_room")));
  }

  function idleView() {
    const bots = levelSelect(null, null);
    return [
      inGameNotice(),
      h("p", { class: "muted" }, t("mm_text")),
      guest ? null : h("label", { class: "field" }, h("span", { class: "field-title" }, t("mm_partner")), partnerInput),
      h("label", { class: "field" }, h("span", { class: "field-title" }, t("mm_bots", { s: botAfter() })), bots),
      h("button", { type: "button", class: "btn primary", testid: "match-join", onclick: () => {
        const body = { bot_level: bots.value || null };
        const partner = partnerInput.value.trim();
        if (partner) body.partner = partner;
        inGame = null;
        act("/api/match/join", body);
      } }, t("mm_join")),
    ];
  }

  const waitLine = h("p", { class: "match-wait", testid: "match-wait", "aria-live": "polite" });
  const botsLine = h("p", { class: "muted small", testid: "match-bots-in" });

  function tick() {
    if (!data || !data.entry) return;
    const e = data.entry;
    waitLine.textContent = t("mm_waiting", { time: clockText(e.waited_s + elapsed()) });
    if (e.bot_fill_in_s === null || e.bot_fill_in_s === undefined) botsLine.textContent = "";
    else {
      const left = Math.ceil(e.bot_fill_in_s - elapsed());
      botsLine.textContent = left > 0 ? t("mm_bots_in", { s: left }) : t("mm_bots_now");
    }
    const secs = el.querySelector("[data-testid=match-ready-left]");
    if (secs && data.ready_check) secs.textContent = t("mm_found_text", { s: Math.max(0, Math.ceil(data.ready_check.seconds_left - elapsed())) });
  }

  function queuedView() {
    const e = data.entry;
    const bots = levelSelect(e.bot_level, () => act("/api/match/bots", { bot_level: bots.value || null }));
    return [
      waitLine,
      e.partner ? h("p", { class: "small", testid: "match-partner-name" }, t("mm_with_partner", { name: e.partner })) : null,
      h("p", { class: "small match-range", testid: "match-range" }, rangeText(e)),
      h("label", { class: "field" }, h("span", { class: "field-title" }, t("mm_bots", { s: botAfter() })), bots),
      botsLine,
      h("button", { type: "button", class: "btn", testid: "match-leave", onclick: () => act("/api/match/leave", {}) }, t("mm_leave")),
    ];
  }

  function readyDialog() {
    const rc = data.ready_check;
    const players = h("ul", { class: "match-players", testid: "match-players" },
      rc.players.map((p) => h("li", { class: p.ready ? "ready" : "", dataset: { name: p.name } },
        h("span", { class: "match-player-name" }, p.name),
        h("span", { class: "match-player-state" }, p.ready ? `✓ ${t("mm_player_ready")}` : t("mm_player_waiting")))));
    return h("div", { class: "overlay match-overlay" },
      h("div", { class: "modal match-modal", role: "alertdialog", "aria-modal": "true", "aria-labelledby": "match-found-title", testid: "match-ready-check" },
        h("h2", { id: "match-found-title" }, t("mm_found")),
        h("p", { class: "small", testid: "match-ready-left" }, t("mm_found_text", { s: Math.ceil(rc.seconds_left) })),
        players,
        rc.bot_seats ? h("p", { class: "small muted" }, t("mm_found_bots", { n: rc.bot_seats, level: t(`difficulty_${rc.bot_level || "normal"}`) })) : null,
        rc.me_ready
          ? h("p", { class: "muted", testid: "match-waiting-others" }, t("mm_waiting_others"))
          : h("div", { class: "match-actions" },
            h("button", { type: "button", class: "btn primary", testid: "match-ready", onclick: () => act("/api/match/ready", {}) }, t("mm_ready")),
            h("button", { type: "button", class: "btn", testid: "match-decline", onclick: () => act("/api/match/decline", {}).then(() => toast(t("mm_declined"), "info")) }, t("mm_decline")))));
  }

  function draw() {
    const head = h("h2", {}, t("mm_title"));
    let body = [];
    if (!data || data.status === "idle" || data.status === "seated") body = idleView();
    else body = queuedView();
    replaceChildren(el, head, body, dialogHost);
    replaceChildren(dialogHost, data && data.status === "ready_check" && data.ready_check ? readyDialog() : null);
    const focus = dialogHost.querySelector("[data-testid=match-ready]");
    if (focus) focus.focus();
    tick();
  }

  draw();
  load();
  ticker = setInterval(tick, 1000);
  const onVisible = () => { if (!document.hidden) load(); };
  document.addEventListener("visibilitychange", onVisible);
  return {
    el,
    destroy() {
      destroyed = true;
      clearTimeout(timer);
      clearInterval(ticker);
      document.removeEventListener("visibilitychange", onVisible);
    },
  };
}
