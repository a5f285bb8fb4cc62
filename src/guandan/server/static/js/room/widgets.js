// Small pieces of the room page shared by its components: the clock ring and line icons (SVG), the
// close button, the connection dot, the invite link with its copy button, the clocks' ticking, and
// keyed(), which rebuilds a node's children only when what they show changed.

import { h, replaceChildren, toast } from "../dom.js";
import { inviteLink } from "../api.js";
import { t } from "../i18n.js";
import { effectsOn, systemReducedMotion } from "../voice.js";

const SVG_NS = "http://www.w3.org/2000/svg";

/** Whether to animate nothing: the system asks for less motion, or the effects switch is off (voice.js; CSS honours both). */
export function reducedMotion() {
  return systemReducedMotion() || !effectsOn();
}

/** The countdown ring around an avatar (an SVG circle whose dash shrinks with the time left). */
export function clockRing() {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 48 48");
  svg.setAttribute("class", "ring");
  svg.setAttribute("aria-hidden", "true");
  const bg = document.createElementNS(SVG_NS, "circle");
  bg.setAttribute("cx", "24");
  bg.setAttribute("cy", "24");
  bg.setAttribute("r", "22");
  bg.setAttribute("class", "ring-bg");
  const fg = document.createElementNS(SVG_NS, "circle");
  fg.setAttribute("cx", "24");
  fg.setAttribute("cy", "24");
  fg.setAttribute("r", "22");
  fg.setAttribute("class", "ring-fg");
  fg.setAttribute("pathLength", "100");
  svg.append(bg, fg);
  return svg;
}

export function icon(kind) {
  // small line icons drawn here (no icon fonts): menu, speaker on/off
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const paths = {
    menu: ["M3 6h18", "M3 12h18", "M3 18h18"],
    sound: ["M4 9h4l5-4v14l-5-4H4z", "M16 8.5a5 5 0 0 1 0 7", "M18.5 6a8.5 8.5 0 0 1 0 12"],
    muted: ["M4 9h4l5-4v14l-5-4H4z", "M16 9l6 6", "M22 9l-6 6"],
  }[kind];
  for (const d of paths) {
    const p = document.createElementNS(SVG_NS, "path");
    p.setAttribute("d", d);
    svg.appendChild(p);
  }
  return svg;
}

export function closeBtn(fn, testid = "popover-close") {
  return h("button", { type: "button", class: "btn small secondary close-x", testid, "aria-label": t("close"), onclick: fn }, "×");
}

/** Rebuild node's children with build() only when key (any JSON value) changed since last time. */
export function keyed(node, key, build) {
  const k = JSON.stringify(key);
  if (node.dataset.k === k) return;
  node.dataset.k = k;
  replaceChildren(node, build());
}

/** The connection dot (with its word while not connected). */
export function connEl(store) {
  const conn = store.state.conn;
  const connKey = conn === "open" ? "connected" : conn === "reconnecting" ? "reconnecting" : "connecting";
  return h("span", { class: `conn conn-${conn}`, testid: "conn-status", title: t(connKey) }, conn === "open" ? "●" : `● ${t(connKey)}`);
}

function inviteUrl(store) {
  const roomId = store.roomId;
  const room = store.state.room || { id: roomId };
  return { path: room.invite_url || `/room/${roomId}`, url: inviteLink({ id: roomId, ...room }) };
}

/** The invite link and its copy button. */
export function inviteEl(store) {
  const { path, url } = inviteUrl(store);
  return h(
    "span",
    { class: "invite" },
    h("span", { class: "muted" }, `${t("invite")}: `),
    h("a", { href: path, "data-link": "", testid: "invite-link", class: "invite-link" }, url),
    h("button", { type: "button", class: "btn small", testid: "copy-invite", onclick: () => copyText(url) }, t("copy")),
  );
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast(t("copied"), "info");
    return;
  } catch (_e) {
    // no clipboard API outside secure contexts (plain http on a LAN address): fall back below
  }
  const area = h("textarea", { class: "copy-buffer", readonly: true }, text);
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch (_e) {
    ok = false;
  }
  area.remove();
  toast(ok ? t("copied") : t("copy_failed"), ok ? "info" : "error");
}

export function clockText(deadline) {
  const s = Math.max(0, Math.ceil((Number(deadline) - Date.now()) / 1000));
  return t("clock_left", { s });
}

/** Minutes and seconds left on a tournament match clock (R58): "42:07". */
export function matchClockText(deadline) {
  const s = Math.max(0, Math.ceil((Number(deadline) - Date.now()) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * A tournament table's match line (state frame's `competition`): round and table, and the match clock
 * (R58) counting down, "time called" once it ran out, or "no time limit". null at other tables.
 */
export function matchClockEl(store) {
  const c = store.state.competition;
  if (!c) return null;
  let clock;
  if (c.time_called) clock = h("strong", { class: "match-called" }, t("match_time_called"));
  else if (c.deadline_ms) clock = h("strong", { class: "match-clock-time", dataset: { matchDeadline: String(c.deadline_ms) } }, matchClockText(c.deadline_ms));
  else clock = h("span", {}, t("match_untimed"));
  return h("span", { class: "match-clock", testid: "match-clock", title: t("match_clock_help") },
    h("span", { class: "lbl" }, `${t("match_round_table", { round: c.round, table: c.table })} · ${t("match_clock")}`),
    h("span", { class: "lbl-short" }, t("match_short")), clock);
}

/** Bring every clock under el up to date: the seconds left and the acting seat's ring. */
export function tickClocks(store, el) {
  const st = store.state;
  const now = Date.now();
  for (const c of el.querySelectorAll(".clock[data-deadline]")) {
    const dl = Number(c.dataset.deadline);
    c.textContent = clockText(dl);
    c.classList.toggle("urgent", dl - now < 5000);
  }
  for (const c of el.querySelectorAll(".match-clock-time[data-match-deadline]")) {
    c.textContent = matchClockText(Number(c.dataset.matchDeadline));
  }
  // the countdown ring of the acting seat
  const dl = st.clock && st.clock.deadline_ms ? Number(st.clock.deadline_ms) : null;
  for (const ring of el.querySelectorAll(".seat-panel.turn .ring-fg")) {
    let frac = 1;
    if (dl) {
      if (!st.clockStart.has(dl)) st.clockStart.set(dl, now);
      const total = Math.max(1000, dl - st.clockStart.get(dl));
      frac = Math.max(0, Math.min(1, (dl - now) / total));
    }
    ring.style.strokeDashoffset = String(100 - frac * 100);
    ring.classList.toggle("urgent", Boolean(dl) && dl - now < 5000);
    ring.classList.toggle("no-clock", !dl);
  }
}
