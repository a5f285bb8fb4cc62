// The felt in the middle of the table: the other seats' panels, each seat's last play in front of
// it (the play on top marked), and the centre: the prompt of the phase, the tribute box of the
// tribute phases and the first trick, and the table notices; plus the bomb effect.

import { h, replaceChildren } from "../dom.js";
import { t } from "../i18n.js";
import { actionText } from "../cards.js";
import { lastActions, positionOf, seatName, trickCell, tributeEventLines } from "../table.js";
import { tricksOf } from "../tracker.js";
import { bottomSeat, mySeat, myTurn, names, SEATS, seated } from "./model.js";
import { seatPanel } from "./seats.js";
import { reducedMotion } from "./widgets.js";
import { revealEl } from "./reveal.js";

/** The felt of the table view (rebuilt on each table render; new plays since the last one move in). */
export function feltEl(store) {
  const st = store.state;
  const v = st.view;
  const bottom = bottomSeat(store);
  const last = lastActions(v);
  const topSeat = Number.isInteger(v.top_seat) ? v.top_seat : null;
  const fresh = st.fresh || new Set();
  const cells = SEATS.map((s) => {
    const pos = positionOf(s, bottom);
    const isTop = s === topSeat && Array.isArray(last[s]) && last[s][0] !== "pass";
    const cell = trickCell(last[s], v.level, s, pos, isTop);
    if (isTop) cell.appendChild(h("span", { class: "top-tag", testid: "top-play" }, t("top_play")));
    if (fresh.has(s) && !reducedMotion()) cell.classList.add("fresh");
    return cell;
  });
  st.fresh = null;
  return h(
    "div",
    { class: `felt${st.between ? " paused" : ""}`, testid: "table" },
    SEATS.filter((s) => s !== bottom).map((s) => seatPanel(store, s, positionOf(s, bottom))),
    cells,
    h("div", { class: "center-info" }, promptEl(store), tributeEl(store), h("div", { class: "notices", testid: "notices", "aria-live": "polite" })),
    revealEl(store),
  );
}

function promptEl(store) {
  const st = store.state;
  const v = st.view;
  const nm = names(store);
  const mine = myTurn(store);
  let text = "";
  let cls = "prompt";
  if (st.between) {
    // the result panel was closed to look at the table: a way back to it and its Next button
    const reopen = st.resultHidden
      ? h(
          "button",
          {
            type: "button", class: "btn small primary", testid: "reopen-result-btn",
            onclick: () => store.update((s) => { s.resultHidden = false; }, ["overlay", true], "table"),
          },
          t("ready_next"),
        )
      : null;
    return h("div", { class: "prompt", testid: "phase-prompt" }, t("prompt_between"), reopen ? " " : null, reopen);
  } else if (v.phase === "tribute" || v.phase === "return") {
    text = tributePrompt(store, v.phase, mine);
    cls += " tribute";
  } else if (v.phase === "play") {
    if (mine) text = Array.isArray(v.top) ? t("prompt_follow", { play: actionText(v.top, true, v.level) }) : t("prompt_lead");
    else if (Number.isInteger(v.to_act)) text = t("waiting_for", { name: seatName(nm, v.to_act) });
  } else if (v.phase === "game_over") {
    text = t("phase_game_over");
  }
  if (mine) cls += " mine";
  return h("div", { class: cls, testid: "phase-prompt" }, mine ? h("strong", {}, `${t("your_turn")} · `) : null, text);
}

/**
 * The receiver(s) of the seat to act's tribute or return: view.owed_to from the server (R44, R46,
 * R47); without it, in the return phase, the payer whose tribute the seat to act received.
 */
function receiversOf(v) {
  const ok = (s) => Number.isInteger(s) && s >= 0 && s < 4;
  if (Array.isArray(v.owed_to) && v.owed_to.length && v.owed_to.every(ok)) return v.owed_to;
  if (v.phase !== "return" || !Array.isArray(v.tribute_events)) return [];
  const paid = v.tribute_events.filter((e) => e && e.type === "tribute_paid").flatMap((e) => e.tributes || []);
  return paid.filter((x) => Array.isArray(x) && x[1] === v.to_act && ok(x[0])).map((x) => x[0]).slice(0, 1);
}

/**
 * The prompt of the tribute and return phases, naming to whom the card goes: the seat's name, and
 * for a seated viewer "you" or whether it is the viewer's partner (对家) or an opponent (对手).
 */
function tributePrompt(store, phase, mine) {
  const v = store.state.view;
  const nm = names(store);
  const me = seated(store) ? mySeat(store) : null;
  const actor = v.to_act;
  const who = (s) => {
    if (s === me) return t("notice_you");
    const name = seatName(nm, s);
    if (me === null) return name;
    return t((s - me + 4) % 2 === 0 ? "who_partner" : "who_opponent", { name });
  };
  const to = receiversOf(v);
  const name = seatName(nm, actor);
  if (phase === "tribute") {
    if (!to.length) return mine ? t("prompt_tribute") : t("prompt_tribute_wait", { name });
    if (mine && to.length > 1) return t("prompt_tribute_double", { high: who(to[0]), low: who(to[1]) });
    if (mine) return t("prompt_tribute_to", { to: who(to[0]) });
    return to.length > 1 ? t("prompt_tribute_wait", { name }) : t("prompt_tribute_wait_to", { name, to: who(to[0]) });
  }
  if (!to.length) return mine ? t("prompt_return") : t("prompt_return_wait", { name });
  return mine ? t("prompt_return_to", { to: who(to[0]) }) : t("prompt_return_wait_to", { name, to: who(to[0]) });
}

function tributeEl(store) {
  const v = store.state.view;
  const evs = Array.isArray(v.tribute_events) ? v.tribute_events : [];
  if (!evs.length || v.phase === "game_over") return null;
  // shown during the tribute phases and the first trick of the deal
  if (v.phase === "play" && tricksOf(v.history).done.length > 0) return null; // shown until the first trick ends
  return h(
    "div",
    { class: "tribute-events", testid: "tribute-events" },
    h("div", { class: "info-label" }, t("tribute_events")),
    evs.flatMap((e) => tributeEventLines(e, names(store), v.level)),
  );
}

/** The notices still up, into the felt's notice box. */
export function renderNotices(store, tableEl) {
  const box = tableEl.querySelector(".notices");
  if (!box) return;
  const now = Date.now();
  replaceChildren(box, store.state.notices.filter((n) => n.until > now).map((n) => h("div", { class: `notice ${n.kind}`, testid: "notice" }, n.text)));
}

/** The flash and word of a bomb over the table (not with reduced motion). */
export function bombEffect(fxEl, action) {
  if (reducedMotion()) return;
  const jokers = action[0] === "joker_bomb";
  const label = t(`type_${action[0]}`);
  const fx = h("div", { class: `bomb-fx ${action[0]}`, testid: "bomb-fx" }, h("div", { class: "bomb-flash" }), h("div", { class: "bomb-word" }, label));
  fxEl.appendChild(fx);
  setTimeout(() => fx.remove(), jokers ? 1800 : 1200);
}
