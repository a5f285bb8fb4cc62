// What the seeds' platforms show for a moment at the start of a deal (issue 25 item 6): the big
// jokers of an anti-tribute (抗贡, R48) drawn as cards for 3 seconds (seed 000), and the card turned
// face up whose holder leads the first deal of a game (R51; seeds 001 and 003). The overlay sits in
// the middle of the felt and lets taps through: it never covers the action bar.

import { h } from "../dom.js";
import { getLang, t } from "../i18n.js";
import { cardEl } from "../cards.js";
import { cardName } from "../callout.js";
import { seatName } from "../table.js";
import { tricksOf } from "../tracker.js";
import { mySeat, names, seated } from "./model.js";

/** How long the anti-tribute jokers stay up (ms; seed 000: three seconds). */
export const JOKERS_MS = 3000;
/** How long the turned card stays up at the start of a game's first deal (ms). */
export const TURNED_MS = 4000;

/**
 * On each state: start the reveal of a deal the first time its view shows one (an `anti_tribute`
 * event, or `view.turned_card`), once play is on (not during the pause between deals, when the view
 * is already the next deal's) and only before its first trick is over (a reload later in the deal
 * does not show it again).
 */
export function noteReveal(store) {
  const st = store.state;
  const v = st.view;
  if (!v || st.between || v.phase !== "play") return;
  const key = `${v.game}-${v.deal}`;
  if (st.revealKey === key || tricksOf(v.history).done.length > 0) return;
  const anti = (Array.isArray(v.tribute_events) ? v.tribute_events : []).find((e) => e && e.type === "anti_tribute");
  const turned = v.turned_card && typeof v.turned_card === "object" && typeof v.turned_card.card === "string" ? v.turned_card : null;
  if (!anti && !turned) return;
  st.revealKey = key;
  const ms = anti ? JOKERS_MS : TURNED_MS;
  // the time runs from when the overlay is first drawn (revealEl), not from when the state came:
  // on a busy phone the drawing can come a good part of a second later
  st.reveal = anti
    ? { kind: "jokers", seats: Array.isArray(anti.seats) ? anti.seats : [], ms, until: null, timing: false }
    : { kind: "turned", seat: turned.seat, card: turned.card, ms, until: null, timing: false };
}

/** The reveal overlay while it is up, else null; its time starts at the animation frame after the
 * first call that draws it. */
export function revealEl(store) {
  const st = store.state;
  const r = st.reveal;
  if (!r || !st.view) return null;
  if (r.until === null && !r.timing) {
    // the time runs from the frame after the overlay is first put in the page (it is on the screen
    // then), not from building it: on a loaded machine the two were measured 180 ms apart
    r.timing = true;
    requestAnimationFrame(() => {
      r.until = Date.now() + r.ms;
      setTimeout(() => store.notify("table"), r.ms + 50);
    });
  }
  if (r.until !== null && Date.now() >= r.until) return null;
  const nm = names(store);
  const level = st.view.level;
  if (r.kind === "jokers") {
    // both big jokers are on the paying side: one seat holding both, or one each (R48)
    const per = r.seats.length === 1 ? 2 : 1;
    return h(
      "div",
      { class: "reveal jokers", testid: "joker-reveal", role: "status" },
      h("div", { class: "reveal-title" }, t("sd_jokers_title")),
      h("div", { class: "reveal-cards" }, r.seats.map((s) =>
        h("div", { class: "reveal-seat", testid: `joker-reveal-seat-${s}` },
          h("div", { class: "reveal-hand" }, Array.from({ length: per }, () => cardEl("BJ", { size: "small", testid: "joker-card" }))),
          h("div", { class: "reveal-name" }, seatName(nm, s))))),
      h("div", { class: "reveal-text" }, t("sd_jokers_text", { seats: r.seats.map((s) => seatName(nm, s)).join(t("sd_and")) })),
    );
  }
  const mine = seated(store) && mySeat(store) === r.seat;
  const card = cardName(r.card, level, getLang());
  return h(
    "div",
    { class: "reveal turned", testid: "turned-card", role: "status", dataset: { card: r.card, seat: String(r.seat) } },
    h("div", { class: "reveal-title" }, t("sd_turned_title")),
    h("div", { class: "reveal-cards" }, cardEl(r.card, { size: "small", level })),
    h("div", { class: "reveal-text" }, mine ? t("sd_turned_you", { card }) : t("sd_turned_text", { card, name: seatName(nm, r.seat) })),
  );
}
