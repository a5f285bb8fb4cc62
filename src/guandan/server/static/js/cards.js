// Cards: text notation, level order sorting, and drawing (CSS card faces with SVG suit symbols
// drawn here; no images or fonts from outside).
//
// Notation (server_contract.md): rank 2..9 T J Q K A + suit S H C D ("TH" = ten of hearts),
// jokers "SJ" (小王) and "BJ" (大王). Displayed as 10 for T and ♠♥♣♦ for the suits.

import { h } from "./dom.js";
import { t } from "./i18n.js";

export const RANKS = "23456789TJQKA";
export const SUITS = "SHCD";
const SUIT_CHAR = { S: "\u2660", H: "\u2665", C: "\u2663", D: "\u2666" };
const SVG_NS = "http://www.w3.org/2000/svg";

/** Rank index of a rank text: "2".."A" -> 0..12, "SJ" -> 13, "BJ" -> 14; -1 when unknown. */
export function rankIndex(r) {
  if (r === "SJ") return 13;
  if (r === "BJ") return 14;
  if (r === "10") return 8;
  return typeof r === "string" && r.length === 1 ? RANKS.indexOf(r) : -1;
}

/** Display text of a rank: "T" -> "10", "SJ"/"BJ" -> 小王/大王 words, others unchanged. */
export function rankLabel(r) {
  if (r === null || r === undefined) return "";
  if (r === "T") return "10";
  if (r === "SJ") return t("small_joker");
  if (r === "BJ") return t("big_joker");
  return String(r);
}

/** Parse a card text ("TH", "SJ") into {text, rank (0..14), suit ("S".."D" or null)}; null when malformed. */
export function parseCard(text) {
  if (typeof text !== "string") return null;
  if (text === "SJ") return { text, rank: 13, suit: null };
  if (text === "BJ") return { text, rank: 14, suit: null };
  if (text.length !== 2) return null;
  const rank = RANKS.indexOf(text[0]);
  const suit = text[1];
  if (rank < 0 || !SUITS.includes(suit)) return null;
  return { text, rank, suit };
}

/** True when card (text) is a wild at the level (rank text): the heart of the level rank (R8). */
export function isWild(card, level) {
  return typeof level === "string" && level.length === 1 && card === `${level}H`;
}

/** The wild cards' text at a level (rank text), e.g. "7" -> ["7H"]. */
export function wildsOf(level) {
  return typeof level === "string" && RANKS.includes(level) && level.length === 1 ? [`${level}H`] : [];
}

/**
 * Strength of a rank index in level order: 2..A with the level rank lifted above A, then SJ, BJ.
 * level: rank text of the deal's level.
 */
export function strength(rank, level) {
  const lv = rankIndex(level);
  if (rank === 13) return 14;
  if (rank === 14) return 15;
  if (rank === lv) return 13;
  return rank;
}

/** Sort key of a card: level order, then suit, wilds last within the level rank. */
function sortKey(card, level) {
  const c = parseCard(card);
  if (!c) return 1e6;
  const suitOrder = c.suit ? SUITS.indexOf(c.suit) : 0;
  return strength(c.rank, level) * 10 + (isWild(card, level) ? 9 : suitOrder);
}

/** A new array of the card texts sorted by level order (see strength()). Unknown texts go last. */
export function sortCards(cards, level) {
  return [...(cards || [])].sort((a, b) => sortKey(a, level) - sortKey(b, level) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Group sorted cards by rank: returns [{rank, cards: [{card, index}]}] where index is the
 * position in the sorted array.
 */
export function groupByRank(sorted) {
  const groups = [];
  sorted.forEach((card, index) => {
    const c = parseCard(card);
    const rank = c ? c.rank : -1;
    const last = groups[groups.length - 1];
    if (last && last.rank === rank) last.cards.push({ card, index });
    else groups.push({ rank, cards: [{ card, index }] });
  });
  return groups;
}

/** True when the two card lists hold the same multiset of card texts. */
export function sameCards(a, b) {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((v, i) => v === y[i]);
}

/** Unicode text of one card: "TH" -> "10♥", "SJ" -> 小王 / small joker. */
export function cardUnicode(card) {
  const c = parseCard(card);
  if (!c) return String(card);
  if (c.rank >= 13) return rankLabel(card);
  return `${rankLabel(card[0])}${SUIT_CHAR[c.suit]}`;
}

/** Cards per rank of each sequence type (R10): straight and straight flush 1, tube 2, plate 3. */
const SEQUENCE_WIDTH = { straight: 1, straight_flush: 1, tube: 2, plate: 3 };
/** How many ranks each sequence type spans: 5, 3 or 2 (the R19 table). */
const SEQUENCE_LENGTH = { straight: 5, straight_flush: 5, tube: 3, plate: 2 };

/**
 * The ranks (indexes 0..12, "2".."A") of a sequence in sequence order (R10), from its type and its
 * top rank text: the Ace sits low when the sequence ends at 5 (straight), 3 (tube) or 2 (plate),
 * else the ranks run up to the top. null when the type is not a sequence or the top is impossible.
 */
export function sequenceRanks(type, top) {
  const len = SEQUENCE_LENGTH[type];
  const hi = rankIndex(top);
  if (!len || hi < 0 || hi > 12) return null;
  const first = hi - len + 1;
  if (first === -1) return [12, ...Array.from({ length: len - 1 }, (_, i) => i)]; // A low: A-2-3-4-5, AA2233, AAA222
  if (first < 0) return null;
  return Array.from({ length: len }, (_, i) => first + i);
}

/**
 * The cards of a play in the order to draw them, with what each wild stands for: a sequence
 * (straight, tube, plate, straight flush) in sequence order (R10, so at level 2 A-2-3-4-5 reads
 * A 2 3 4 5, not 3 4 5 A 2), each wild (R8, R12) in the slot of the card it completes; every other
 * play in level order (sortCards). Returns [{card, as}] where `as` is the rank text a wild stands
 * for in a sequence (null for every other card, and for a wild played as itself, R13).
 * action: [type, rank, cards]; level: rank text of the deal's level.
 */
export function playOrder(action, level) {
  const [type, top, cards] = Array.isArray(action) ? action : [null, null, []];
  const list = Array.isArray(cards) ? cards : [];
  const plain = () => sortCards(list, level).map((card) => ({ card, as: null }));
  const ranks = sequenceRanks(type, top);
  if (!ranks) return plain();
  const width = SEQUENCE_WIDTH[type];
  const slots = ranks.map((r) => ({ rank: r, cards: [] }));
  const wilds = [];
  for (const card of sortCards(list, level)) {
    const c = parseCard(card);
    const slot = c ? slots.find((s) => s.rank === c.rank) : null;
    if (isWild(card, level)) wilds.push(card);
    else if (slot && slot.cards.length < width) slot.cards.push({ card, as: null });
    else return plain(); // not this sequence: draw it as it came
  }
  // a wild first fills a missing card of its own rank (played as itself, R13), then the gaps in order
  for (const slot of slots) {
    while (wilds.length && slot.cards.length < width && parseCard(wilds[0]).rank === slot.rank) slot.cards.push({ card: wilds.shift(), as: null });
  }
  for (const slot of slots) {
    while (wilds.length && slot.cards.length < width) slot.cards.push({ card: wilds.shift(), as: RANKS[slot.rank] });
  }
  if (wilds.length) return plain();
  return slots.flatMap((s) => s.cards);
}

/**
 * Text of an action [type, rank, cards]: "pair 10: 10♠ 10♥", "pass". With the deal's level (rank
 * text) a sequence's cards read in sequence order, each wild with the rank it stands for ("2♥→3").
 */
export function actionText(action, withCards = true, level = null) {
  if (!Array.isArray(action)) return "";
  const [type, rank, cards] = action;
  if (type === "pass") return t("pass_word");
  const name = t(`type_${type}`);
  const rk = type === "joker_bomb" || rank === null || rank === undefined ? "" : ` ${rankLabel(rank)}`;
  const ordered = SEQUENCE_WIDTH[type] && level ? playOrder(action, level) : (Array.isArray(cards) ? cards : []).map((card) => ({ card, as: null }));
  const words = ordered.map(({ card, as }) => `${cardUnicode(card)}${as ? `→${rankLabel(as)}` : ""}`);
  const list = withCards && words.length ? `: ${words.join(" ")}` : "";
  return `${name}${rk}${list}`;
}

// --- drawing -----------------------------------------------------------------------------

const SUIT_PATHS = {
  H: "M12 21.5C5.2 15.6 1.5 12.1 1.5 7.9 1.5 4.8 3.9 2.5 6.9 2.5c2.1 0 3.9 1.1 5.1 2.9 1.2-1.8 3-2.9 5.1-2.9 3 0 5.4 2.3 5.4 5.4 0 4.2-3.7 7.7-10.5 13.6z",
  D: "M12 1.5 20.5 12 12 22.5 3.5 12z",
  S: "M12 1.5C9.2 5.6 2 9.6 2 14.4c0 3 2.3 5.1 4.9 5.1 1.6 0 3-.7 3.9-1.8L9.4 22.5h5.2l-1.4-4.8c.9 1.1 2.3 1.8 3.9 1.8 2.6 0 4.9-2.1 4.9-5.1C22 9.6 14.8 5.6 12 1.5z",
  C: [
    "M7.5 7a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0 -9 0z",
    "M2.3 13.6a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0 -9 0z",
    "M12.7 13.6a4.5 4.5 0 1 0 9 0a4.5 4.5 0 1 0 -9 0z",
    "M9.8 9.5h4.4v5h-4.4z",
    "M11.1 13h1.8l2.1 9.5H9z",
  ],
};
const STAR_PATH = "M12 1.8l2.9 6.6 7.2.7-5.4 4.8 1.6 7.1L12 17.3 5.7 21l1.6-7.1L1.9 9.1l7.2-.7z";

function svgIcon(path, cls) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", cls);
  svg.setAttribute("aria-hidden", "true");
  for (const d of Array.isArray(path) ? path : [path]) {
    const p = document.createElementNS(SVG_NS, "path");
    p.setAttribute("d", d);
    p.setAttribute("fill", "currentColor");
    svg.appendChild(p);
  }
  return svg;
}

/** An SVG suit symbol ("S", "H", "C", "D") sized by CSS class cls. */
export function suitIcon(suit, cls = "suit") {
  return svgIcon(SUIT_PATHS[suit] || STAR_PATH, cls);
}

/**
 * Draw one card as an element. opts: {level (rank text, to mark wilds), size: "hand" | "small" |
 * "mini", testid, index, played (a card on the table: no wild marker, issue 25 item 6 — once played
 * the wild is what its play reads)}. The element carries data-card="TH".
 */
export function cardEl(card, opts = {}) {
  const c = parseCard(card);
  const size = opts.size || "hand";
  const classes = ["card", size];
  const attrs = { dataset: { card: String(card) } };
  if (opts.testid) attrs.testid = opts.testid;
  if (opts.index !== undefined) attrs.dataset.index = String(opts.index);
  if (!c) {
    attrs.class = `${classes.join(" ")} unknown`;
    return h("div", attrs, h("span", { class: "rk" }, String(card)));
  }
  const children = [];
  if (c.rank >= 13) {
    const big = c.rank === 14;
    classes.push("joker", big ? "big-joker" : "small-joker", big ? "red" : "black");
    attrs.title = big ? t("big_joker") : t("small_joker");
    // the corner word: 大王 / 小王 in Chinese, BJ / SJ in English (the notation's names, as the tracker)
    const word = t(big ? "card_big_joker" : "card_small_joker");
    children.push(h("div", { class: `corner joker-label${word.length > 2 ? " long" : ""}` }, word));
    if (size !== "mini") children.push(h("div", { class: "pip" }, svgIcon(STAR_PATH, "star")));
    else children.push(svgIcon(STAR_PATH, "star mini-star"));
  } else {
    classes.push(c.suit === "H" || c.suit === "D" ? "red" : "black");
    attrs.title = cardUnicode(card);
    children.push(h("div", { class: "corner" }, h("span", { class: "rk" }, rankLabel(card[0])), suitIcon(c.suit, "suit")));
    if (size !== "mini") children.push(h("div", { class: "pip" }, suitIcon(c.suit, "suit big")));
  }
  if (opts.level && !opts.played && isWild(card, opts.level)) {
    classes.push("wild");
    attrs.title = `${attrs.title} — ${t("wild_card")}`;
    children.push(h("span", { class: "wild-badge", "aria-hidden": "true" }, "★"));
  }
  attrs.class = classes.join(" ");
  return h("div", attrs, ...children);
}

/** A row of small cards (a hand left, a choice of readings), sorted by level order. */
export function miniCards(cards, level, attrs = {}) {
  const sorted = sortCards(cards || [], level);
  return h("div", { class: "mini-cards", ...attrs }, sorted.map((c) => cardEl(c, { level, size: "mini" })));
}

/**
 * A play drawn in small cards (the trick, the last trick, the replay): a sequence in sequence order
 * with each wild where it stands (playOrder); the wild's title, data-as and a small "=6" at its foot
 * name the rank it stands for.
 */
export function playMini(action, level, attrs = {}) {
  const cards = playOrder(action, level).map(({ card, as }) => {
    const el = cardEl(card, { level, size: "mini", played: true });
    if (as) {
      el.dataset.as = as;
      el.title = `${el.title} = ${rankLabel(as)}`;
      el.appendChild(h("span", { class: "as-badge", "aria-hidden": "true" }, `=${rankLabel(as)}`));
    }
    return el;
  });
  return h("div", { class: "mini-cards", ...attrs }, cards);
}
