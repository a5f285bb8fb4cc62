// What a seat can work out from its own view (issue 7, items 4 and 10): the card tracker (记牌器)
// and the last completed trick (上一轮). Pure functions of the view sent by the server (the seat's
// hand and the public history of the deal); nothing here sees other hands.

import { h } from "./dom.js";
import { t } from "./i18n.js";
import { RANKS, parseCard, rankLabel, strength } from "./cards.js";

/** Copies of each rank 2…A in the two packs (R1: 8 per rank), and of each joker (2). */
export const COPIES_PER_RANK = 8;
export const COPIES_PER_JOKER = 2;

/** Cards of the play-phase actions in a history ([[seat, [type, rank, cards]], ...]); tribute and return moves are not plays. */
function playedCards(history) {
  const out = [];
  for (const entry of Array.isArray(history) ? history : []) {
    const a = Array.isArray(entry) ? entry[1] : null;
    if (!Array.isArray(a) || a[0] === "pass" || a[0] === "tribute" || a[0] === "return") continue;
    for (const c of Array.isArray(a[2]) ? a[2] : []) out.push(c);
  }
  return out;
}

/**
 * The card tracker of a seat view: for every rank in level order (R9: 2 … A with the level rank
 * above A) and both jokers, how many copies are neither in the seat's hand nor played yet this
 * deal. view: {hand, history, level}. Returns {ranks: [{rank, left, total, level}], wild: {card,
 * left, total}} where rank is "2".."A", "SJ" or "BJ"; level marks the deal's level rank; wild counts
 * the level rank's hearts (the wilds, R8) among the left copies of the level rank.
 */
export function unseenCounts(view) {
  const level = view && typeof view.level === "string" ? view.level : "2";
  const seen = new Map();
  const add = (c) => seen.set(c, (seen.get(c) || 0) + 1);
  for (const c of Array.isArray(view && view.hand) ? view.hand : []) add(c);
  for (const c of playedCards(view && view.history)) add(c);
  const byRank = new Map();
  for (const [card, n] of seen) {
    const p = parseCard(card);
    if (!p) continue;
    const key = p.rank === 13 ? "SJ" : p.rank === 14 ? "BJ" : card[0];
    byRank.set(key, (byRank.get(key) || 0) + n);
  }
  const ranks = [...RANKS].map((r) => ({ rank: r, total: COPIES_PER_RANK }));
  ranks.sort((a, b) => strength(RANKS.indexOf(a.rank), level) - strength(RANKS.indexOf(b.rank), level));
  ranks.push({ rank: "SJ", total: COPIES_PER_JOKER }, { rank: "BJ", total: COPIES_PER_JOKER });
  for (const r of ranks) {
    r.left = Math.max(0, r.total - (byRank.get(r.rank) || 0));
    r.level = r.rank === level;
  }
  const wildCard = `${level}H`;
  const wild = { card: wildCard, total: 2, left: Math.max(0, 2 - (seen.get(wildCard) || 0)) };
  return { ranks, wild };
}

/**
 * The tricks of the deal so far, rebuilt from the public history (R29: a trick ends when every
 * other player still holding cards has passed in a row after the top play; R30: after a player
 * goes out the trick still ends that way and the partner leads the next one). Everyone starts the
 * play phase with 27 cards (R4; a tribute and its return leave the counts unchanged).
 * Returns {done: [[[seat, action], ...], ...], current: [[seat, action], ...]}.
 */
export function tricksOf(history) {
  const counts = [27, 27, 27, 27];
  const done = [];
  let current = [];
  let top = null;
  let passes = 0;
  for (const entry of Array.isArray(history) ? history : []) {
    if (!Array.isArray(entry)) continue;
    const [seat, a] = entry;
    if (!Array.isArray(a) || a[0] === "tribute" || a[0] === "return") continue;
    current.push([seat, a]);
    if (a[0] === "pass") passes += 1;
    else {
      top = seat;
      passes = 0;
      counts[seat] -= Array.isArray(a[2]) ? a[2].length : 0;
    }
    const others = [0, 1, 2, 3].filter((s) => s !== top && counts[s] > 0).length;
    if (top !== null && passes >= others) {
      done.push(current);
      current = [];
      top = null;
      passes = 0;
    }
  }
  return { done, current };
}

/** The last completed trick of the deal (list of [seat, action]), or null before the first one ends. */
export function previousTrick(view) {
  const { done } = tricksOf(view && view.history);
  return done.length ? done[done.length - 1] : null;
}

/** The tracker panel (testid tracker-panel; one cell per rank: tracker-cell, data-rank, data-left). */
export function trackerPanel(view) {
  const { ranks, wild } = unseenCounts(view);
  return h(
    "div",
    { class: "tracker-panel", testid: "tracker-panel", role: "region", "aria-label": t("tracker_title") },
    h("div", { class: "tracker-head" }, h("strong", {}, t("tracker_title")), h("span", { class: "muted" }, t("tracker_hint"))),
    h(
      "div",
      { class: "tracker-grid" },
      ranks.map((r) =>
        h(
          "div",
          {
            class: `tracker-cell${r.level ? " level" : ""}${r.left === 0 ? " gone" : ""}${r.rank === "SJ" || r.rank === "BJ" ? " joker" : ""}`,
            testid: "tracker-cell",
            dataset: { rank: r.rank, left: String(r.left) },
            title: r.level ? t("tracker_level_rank") : "",
          },
          h("span", { class: "tr-rank" }, r.rank === "SJ" ? t("tracker_sj") : r.rank === "BJ" ? t("tracker_bj") : rankLabel(r.rank)),
          h("span", { class: "tr-left" }, String(r.left)),
        ),
      ),
      h(
        "div",
        { class: "tracker-cell wild", testid: "tracker-wild", dataset: { left: String(wild.left) }, title: t("wild_card") },
        h("span", { class: "tr-rank" }, `${rankLabel(wild.card[0])}♥★`),
        h("span", { class: "tr-left" }, String(wild.left)),
      ),
    ),
  );
}
