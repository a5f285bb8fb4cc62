// Quick phrases and emotes at the table (issue 25 item 3), and the seat menu (mute a player's phrases,
// report the player; issue 25 item 8).
//
// The server (guandan.server.table.phrases, phrase_relay) accepts a phrase only as an id from its
// preset list and sends {type: "phrase", seat, id} to the room; the words are ours (i18n_phrases.js:
// ph_<id>), so nobody can type a card into a phrase. It refuses phrases at rated, tournament and
// daily-challenge tables (no signalling between partners): the state frame's `phrases` says so, and the
// bar then shows a crossed-out chip that says why instead of the phrase button. Each phrase shows as a
// bubble by the sender's seat for BUBBLE_MS; a player can mute every phrase or one player's (kept in
// localStorage). Too fast, muted by an admin, unknown: the server's error code is worded by messages.js.

import { h, replaceChildren, toast } from "../dom.js";
import { post } from "../api.js";
import { t } from "../i18n.js";
import { errText } from "../auth.js";
import { mySeat, names } from "./model.js";

/** How long a bubble stays up, ms. */
export const BUBBLE_MS = 4000;
/** The preset phrases and emotes (the server's ids, in the order shown). */
export const PHRASE_IDS = ["hello", "good_luck", "hurry", "nice_play", "well_played", "thanks", "sorry", "again", "brb", "bye"];
export const EMOTE_IDS = ["smile", "laugh", "love", "wow", "cry", "angry", "cool", "sleepy"];
/** Reasons of a report (guandan.server.moderation.REPORT_REASONS). */
export const REPORT_REASONS = ["abusive_phrases", "signalling", "stalling", "abandoning", "cheating", "name"];

const MUTE_KEY = "guandan.phrases.mute";

/** The player's mutes: {all: bool, names: [player names]} (localStorage; a broken value reads as none). */
export function loadMutes() {
  try {
    const v = JSON.parse(window.localStorage.getItem(MUTE_KEY) || "{}");
    return { all: Boolean(v && v.all), names: Array.isArray(v && v.names) ? v.names.filter((n) => typeof n === "string").slice(0, 200) : [] };
  } catch (_e) {
    return { all: false, names: [] };
  }
}

function saveMutes(m) {
  try {
    window.localStorage.setItem(MUTE_KEY, JSON.stringify(m));
  } catch (_e) {
    /* private mode: the mutes last for this page only */
  }
}

/** Words of a phrase or emote id, or null for an id this page does not know. */
export function phraseText(id) {
  const key = `ph_${id}`;
  const s = t(key);
  return s === key ? null : s;
}

function personName(store, seat) {
  const room = store.state.room;
  const s = room && Array.isArray(room.seats) ? room.seats.find((x) => x && x.seat === seat) : null;
  return s && s.user ? s.user : null;
}

/** What the bar and its popovers show of the phrases (a key for keyed(): rebuilt when it changes). */
export function phraseKey(st) {
  const p = st.phrasePolicy;
  return `${p ? (p.on ? "on" : p.off_reason) : "-"}:${st.phrasePanel ? 1 : 0}`;
}

/** The phrase icon: a speech bubble drawn as SVG (no emoji font needed). */
function bubbleIcon(crossed) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "line-icon");
  svg.setAttribute("aria-hidden", "true");
  const paths = ["M4 5h16v10H10l-4 4v-4H4z", "M8 9h8", "M8 12h5"];
  if (crossed) paths.push("M3 21L21 3");
  for (const d of paths) {
    const p = document.createElementNS(ns, "path");
    p.setAttribute("d", d);
    p.setAttribute("fill", "none");
    p.setAttribute("stroke", "currentColor");
    p.setAttribute("stroke-width", "2");
    p.setAttribute("stroke-linejoin", "round");
    p.setAttribute("stroke-linecap", "round");
    svg.append(p);
  }
  return svg;
}

function setPanel(store, on) {
  store.update((s) => {
    s.phrasePanel = on;
  }, "table");
}

/** The bar's phrase button (seated players) or, where phrases are off, a chip that says why. */
export function phraseButton(store) {
  const p = store.state.phrasePolicy;
  if (!p) return null;
  if (!p.on) {
    const why = t(`ph_off_${p.off_reason}`) === `ph_off_${p.off_reason}` ? t("err_phrases_off") : t(`ph_off_${p.off_reason}`);
    return h("button", { type: "button", class: "btn icon-btn phrase-off", testid: "phrase-off", title: why, "aria-label": why, onclick: () => toast(why, "info") }, bubbleIcon(true));
  }
  const open = Boolean(store.state.phrasePanel);
  return h(
    "button",
    { type: "button", class: `btn icon-btn phrase-btn${open ? " on" : ""}`, testid: "phrase-btn", "aria-pressed": String(open), "aria-label": t("ph_button"), title: t("ph_button"), onclick: () => setPanel(store, !open) },
    bubbleIcon(false),
  );
}

/** The phrase panel (a popover under the bar): phrases, emotes, "mute all". */
export function phrasePanel(store) {
  const st = store.state;
  if (!st.phrasePanel || !st.phrasePolicy || !st.phrasePolicy.on) return null;
  const send = (id) => {
    if (store.phraseSend) store.phraseSend({ type: "phrase", id });
    setPanel(store, false);
  };
  const mutes = loadMutes();
  return h(
    "div",
    { class: "popover phrase-pop", testid: "phrase-panel", role: "dialog", "aria-label": t("ph_title") },
    h("div", { class: "phrase-head" }, h("strong", {}, t("ph_title")),
      h("button", { type: "button", class: "btn small", testid: "phrase-close", onclick: () => setPanel(store, false) }, t("ph_close"))),
    h("div", { class: "phrase-list" }, PHRASE_IDS.map((id) => h("button", { type: "button", class: "btn phrase-item", testid: "phrase-item", dataset: { id }, onclick: () => send(id) }, phraseText(id)))),
    h("div", { class: "phrase-emotes", "aria-label": t("ph_emotes"), role: "group" },
      EMOTE_IDS.map((id) => h("button", { type: "button", class: "btn emote-item", testid: "emote-item", dataset: { id }, "aria-label": t(`phl_${id}`), title: t(`phl_${id}`), onclick: () => send(id) }, phraseText(id)))),
    h("label", { class: "phrase-mute" },
      h("input", { type: "checkbox", testid: "phrase-mute-all", checked: mutes.all, onchange: (ev) => { saveMutes({ ...loadMutes(), all: ev.target.checked }); store.notify("table"); } }),
      " ", t("ph_mute_all")),
    mutes.names.length ? h("p", { class: "muted small" }, t("ph_muted_seats", { names: mutes.names.join(t("list_sep")) })) : null,
  );
}

/**
 * The game-over panel's players line (friends.js gamePlayersLinks: null with nobody else) with a "Report"
 * button at its end (signed-in players; opens the choice of whom to report). Returns the line.
 */
export function withReport(line, store) {
  if (!line || !store.ctx || !store.ctx.me || !store.openReportChooser) return line;
  line.append(" ", h("button", { type: "button", class: "btn small link-btn", testid: "game-over-report", onclick: () => store.openReportChooser() }, t("rep_button")));
  return line;
}

/**
 * Mount the phrase layer of a room page on hostEl (the page): bubbles by the seats, the seat menu and the
 * report form. send(obj) sends on the room's socket. Returns {onMessage(msg), destroy()}; onMessage sees
 * every socket message (state frames for the policy, phrase frames for bubbles).
 */
export function mountPhrases(store, send, hostEl) {
  const layer = h("div", { class: "phrase-layer", testid: "phrase-layer" });
  const menuHost = h("div", { class: "seat-menu-host" });
  hostEl.append(layer, menuHost);
  store.phraseSend = send;
  const timers = new Set();

  function bubble(seat, id) {
    const text = phraseText(id);
    if (text === null || !Number.isInteger(seat) || seat < 0 || seat > 3) return;
    const mutes = loadMutes();
    const mine = seat === mySeat(store);
    const who = personName(store, seat);
    if (!mine && (mutes.all || (who && mutes.names.includes(who)))) return;
    const panel = hostEl.querySelector(`[data-testid=seat-panel-${seat}]`);
    const name = names(store)[seat] || who || "";
    const el = h("div", { class: `phrase-bubble${EMOTE_IDS.includes(id) ? " emote" : ""}`, testid: "phrase-bubble", dataset: { seat: String(seat), id }, role: "status", "aria-label": t("ph_said", { name, text: EMOTE_IDS.includes(id) ? t(`phl_${id}`) : text }) }, text);
    for (const old of layer.querySelectorAll(`[data-seat="${seat}"]`)) old.remove(); // one bubble per seat
    layer.append(el);
    place(el, panel);
    const timer = setTimeout(() => {
      el.remove();
      timers.delete(timer);
    }, BUBBLE_MS);
    timers.add(timer);
  }

  /** Put the bubble beside the seat's panel, inside the viewport (above it for the bottom seat). */
  function place(el, panel) {
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    if (!panel) {
      Object.assign(el.style, { left: "50%", top: "30%", transform: "translateX(-50%)" });
      return;
    }
    const r = panel.getBoundingClientRect();
    const b = el.getBoundingClientRect();
    let left = r.left + r.width / 2 - b.width / 2;
    let top = panel.classList.contains("pos-bottom") ? r.top - b.height - 6 : r.bottom + 6;
    if (panel.classList.contains("pos-left")) { left = r.right + 6; top = r.top; }
    if (panel.classList.contains("pos-right")) { left = r.left - b.width - 6; top = r.top; }
    left = Math.max(4, Math.min(vw - b.width - 4, left));
    top = Math.max(4, Math.min(vh - b.height - 4, top));
    Object.assign(el.style, { left: `${left}px`, top: `${top}px` });
  }

  // --- the seat menu: click another person's seat panel -----------------------------------------
  let menuSeat = null;
  let reporting = false;

  function closeMenu() {
    menuSeat = null;
    reporting = false;
    replaceChildren(menuHost);
  }

  function onClick(ev) {
    const panel = ev.target && ev.target.closest ? ev.target.closest("[data-testid^=seat-panel-]") : null;
    if (!panel || !hostEl.contains(panel)) return;
    const seat = Number(panel.getAttribute("data-testid").slice("seat-panel-".length));
    if (!Number.isInteger(seat) || seat === mySeat(store) || !personName(store, seat) || !store.ctx.me) return;
    menuSeat = seat;
    reporting = false;
    renderMenu();
  }
  hostEl.addEventListener("click", onClick);

  function renderMenu() {
    if (menuSeat === null) return;
    const who = personName(store, menuSeat);
    if (!who) return closeMenu();
    const mutes = loadMutes();
    const muted = mutes.names.includes(who);
    const body = reporting
      ? reportForm(who)
      : [
          h("label", { class: "phrase-mute" },
            h("input", { type: "checkbox", testid: "seat-mute", checked: muted, onchange: (ev) => {
              const m = loadMutes();
              m.names = ev.target.checked ? [...new Set([...m.names, who])] : m.names.filter((n) => n !== who);
              saveMutes(m);
            } }),
            " ", t("ph_mute_seat", { name: who })),
          h("button", { type: "button", class: "btn danger", testid: "seat-report", onclick: () => { reporting = true; renderMenu(); } }, t("rep_button")),
        ];
    replaceChildren(
      menuHost,
      h("div", { class: "seat-menu-backdrop", onclick: (e) => { if (e.target === e.currentTarget) closeMenu(); } },
        h("div", { class: "seat-menu", testid: "seat-menu", role: "dialog", "aria-label": t("ph_seat_menu", { name: who }), dataset: { seat: String(menuSeat) } },
          h("div", { class: "phrase-head" }, h("strong", {}, reporting ? t("rep_title", { name: who }) : who),
            h("button", { type: "button", class: "btn small", testid: "seat-menu-close", onclick: closeMenu }, t("ph_close"))),
          body)),
    );
  }

  function reportForm(who) {
    const st = store.state;
    const deal = st.view && Number.isInteger(st.view.deal) ? st.view.deal : null;
    const gameId = st.final && Number.isInteger(st.final.game_id) ? st.final.game_id : null;
    const sel = h("select", { testid: "report-reason", "aria-label": t("rep_reason") }, REPORT_REASONS.map((r) => h("option", { value: r }, t(`rr_${r}`))));
    const submit = async () => {
      try {
        await post("/api/reports", { name: who, reason: sel.value, room_id: store.roomId, game_id: gameId, deal });
        toast(t("rep_sent"), "info");
        closeMenu();
      } catch (e) {
        toast(errText(e));
      }
    };
    return [
      h("label", { class: "report-row" }, t("rep_reason"), " ", sel),
      h("p", { class: "muted small", testid: "report-where" },
        [gameId !== null ? t("rep_game", { id: gameId }) : null, deal !== null ? t("rep_deal", { n: deal }) : null].filter(Boolean).join(" · ")),
      h("p", { class: "muted small" }, t("rep_note")),
      h("div", { class: "report-actions" },
        h("button", { type: "button", class: "btn", testid: "report-cancel", onclick: closeMenu }, t("rep_cancel")),
        h("button", { type: "button", class: "btn primary", testid: "report-submit", onclick: submit }, t("rep_send"))),
    ];
  }

  /** The game-over panel's "Report": choose one of the game's other people, then the report form. */
  function openReportChooser() {
    const me = mySeat(store);
    const people = [0, 1, 2, 3].filter((s) => s !== me && personName(store, s));
    if (people.length === 1) {
      menuSeat = people[0];
      reporting = true;
      renderMenu();
      return;
    }
    menuSeat = null;
    replaceChildren(
      menuHost,
      h("div", { class: "seat-menu-backdrop", onclick: (e) => { if (e.target === e.currentTarget) closeMenu(); } },
        h("div", { class: "seat-menu", testid: "seat-menu", role: "dialog", "aria-label": t("rep_button") },
          h("div", { class: "phrase-head" }, h("strong", {}, t("rep_button")),
            h("button", { type: "button", class: "btn small", testid: "seat-menu-close", onclick: closeMenu }, t("ph_close"))),
          h("div", { class: "report-actions" }, people.map((s) => h("button", { type: "button", class: "btn", testid: "report-pick", dataset: { name: personName(store, s) },
            onclick: () => { menuSeat = s; reporting = true; renderMenu(); } }, personName(store, s)))))),
    );
  }
  store.openReportChooser = openReportChooser;

  function onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "state") {
      const p = msg.phrases && typeof msg.phrases === "object" ? msg.phrases : null;
      const st = store.state;
      const before = JSON.stringify(st.phrasePolicy || null);
      st.phrasePolicy = Number.isInteger(msg.seat) ? p : null; // spectators send none
      if (st.phrasePolicy && !st.phrasePolicy.on) st.phrasePanel = false;
      if (before !== JSON.stringify(st.phrasePolicy)) store.notify("table");
    } else if (msg.type === "phrase") {
      bubble(msg.seat, msg.id);
    }
  }

  return {
    onMessage,
    onLang() {
      if (menuSeat !== null) renderMenu();
    },
    destroy() {
      for (const x of timers) clearTimeout(x);
      hostEl.removeEventListener("click", onClick);
      layer.remove();
      menuHost.remove();
      delete store.phraseSend;
      delete store.openReportChooser;
    },
  };
}
