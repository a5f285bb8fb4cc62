// The own hand at the table: arranging it (理牌) and laying it out as an overlapping fan.
//
// Arrangement (issue 7, item 9): three modes, cycled by the 理牌 button —
//   "level":  level order (docs/rules.md R9: 2 … A, the level rank above A, then the jokers), grouped by rank;
//   "suit":   by suit (♠ ♥ ♣ ♦), each suit in level order, jokers last;
//   "combos": level order, with the bombs (four or more of a rank), straight flushes (five
//             consecutive ranks of one suit, R10; natural cards only) and the joker bomb pulled out
//             to the right, weakest first by the bomb ladder (R24); bombs and the joker bomb stand
//             in columns (the cards of a bomb stacked top to bottom, as the apps draw them).
// On top of any mode the player may put selected cards into groups of their own (kept at the right
// end). The arrangement is saved in sessionStorage under the room, game and deal, so it survives
// state updates, reloads and reconnects within the deal and starts afresh with the next deal.
//
// Layout: one row while every card keeps a visible strip of at least MIN_STRIP_FRACTION of its
// width (27 cards fit on a laptop), else two overlapping rows (phones). Each card's hit target is
// the slot element covering exactly its visible part, so a tap lands on the card it shows.

import { parseCard, strength, SUITS } from "./cards.js";

/** Arrangement modes in the order the 理牌 button cycles through them. */
export const SORT_MODES = ["level", "suit", "combos"];

const STORAGE_PREFIX = "guandan.hand.";

/** sessionStorage key of a deal's arrangement. */
export function arrangementKey(roomId, game, deal) {
  return `${STORAGE_PREFIX}${roomId}.${game}.${deal}`;
}

/** The saved arrangement {mode, custom: [[card, ...], ...]} of a deal; the default when none is saved. */
export function loadArrangement(key) {
  try {
    const raw = window.sessionStorage.getItem(key);
    if (raw) {
      const obj = JSON.parse(raw);
      if (obj && SORT_MODES.includes(obj.mode)) {
        const custom = Array.isArray(obj.custom) ? obj.custom.filter((g) => Array.isArray(g) && g.every((c) => typeof c === "string")) : [];
        return { mode: obj.mode, custom };
      }
    }
  } catch (_e) {
    // storage unavailable or corrupt: the default arrangement
  }
  return { mode: "level", custom: [] };
}

/** Save a deal's arrangement (silently skipped when sessionStorage is unavailable). */
export function saveArrangement(key, arr) {
  try {
    window.sessionStorage.setItem(key, JSON.stringify({ mode: arr.mode, custom: arr.custom }));
  } catch (_e) {
    // not persisted; the arrangement still applies on this page
  }
}

function levelKey(card, level) {
  const c = parseCard(card);
  if (!c) return 1e6;
  const wild = typeof level === "string" && card === `${level}H`;
  return strength(c.rank, level) * 10 + (wild ? 9 : SUITS.indexOf(c.suit || "S"));
}

function byLevel(cards, level) {
  return [...cards].sort((a, b) => levelKey(a, level) - levelKey(b, level) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Remove one copy of each card of `take` from the multiset `pool` (array, changed in place). */
function removeCards(pool, take) {
  for (const c of take) {
    const i = pool.indexOf(c);
    if (i >= 0) pool.splice(i, 1);
  }
}

/**
 * Bombs, straight flushes and the joker bomb found in `cards` (natural cards only: wilds stay with
 * the other cards). Returns {combos: [{kind: "bomb"|"straight_flush"|"joker_bomb", cards}], rest}.
 * Bombs are taken first, then straight flushes among the remaining cards (five consecutive ranks
 * of one suit in sequence order, R10: A counts low in A-2-3-4-5 and high in 10-J-Q-K-A). Sorted
 * weakest first by the bomb ladder (R24).
 */
export function findCombos(cards, level) {
  const rest = [...cards];
  const combos = [];
  const jokers = rest.filter((c) => c === "SJ" || c === "BJ");
  if (jokers.length === 4) {
    combos.push({ kind: "joker_bomb", cards: jokers });
    removeCards(rest, jokers);
  }
  const wild = typeof level === "string" ? `${level}H` : null;
  const byRank = new Map();
  for (const c of rest) {
    if (c === wild) continue;
    const p = parseCard(c);
    if (!p || p.rank >= 13) continue;
    if (!byRank.has(p.rank)) byRank.set(p.rank, []);
    byRank.get(p.rank).push(c);
  }
  for (const group of byRank.values()) {
    if (group.length >= 4) {
      combos.push({ kind: "bomb", cards: byLevel(group, level) });
      removeCards(rest, group);
    }
  }
  // straight flushes: for each suit, runs of five consecutive ranks (A low = rank index -1)
  for (const suit of SUITS) {
    for (let start = 12; start >= -1; start--) {
      // start = rank index of the lowest card (-1 stands for A as the low end)
      const want = [];
      for (let k = 0; k < 5; k++) {
        const r = start + k;
        const rk = r === -1 ? 12 : r;
        if (r > 12) break;
        want.push(`${"23456789TJQKA"[rk]}${suit}`);
      }
      if (want.length !== 5 || want.includes(wild)) continue;
      const pool = [...rest];
      if (want.every((c) => { const i = pool.indexOf(c); if (i < 0) return false; pool.splice(i, 1); return true; })) {
        combos.push({ kind: "straight_flush", cards: want });
        removeCards(rest, want);
      }
    }
  }
  const order = { straight_flush: 0, bomb: 1, joker_bomb: 2 };
  combos.sort((a, b) => {
    if (a.kind === "joker_bomb" || b.kind === "joker_bomb") return order[a.kind] - order[b.kind];
    // R24: 4- and 5-card bombs < straight flushes < 6-, 7-, 8-card bombs < joker bomb; then by rank
    const sa = a.kind === "straight_flush" ? 5.5 : a.cards.length;
    const sb = b.kind === "straight_flush" ? 5.5 : b.cards.length;
    if (sa !== sb) return sa - sb;
    const ra = strength(parseCard(a.cards[a.cards.length - 1]).rank, level);
    const rb = strength(parseCard(b.cards[b.cards.length - 1]).rank, level);
    return ra - rb;
  });
  return { combos, rest };
}

/**
 * Arrange a hand. hand: card texts (any order); level: the deal's level rank text; arr: {mode,
 * custom}. Returns groups [{kind, cards: [card...]}] in display order, kind one of "rank", "suit",
 * "jokers", "bomb", "straight_flush", "joker_bomb", "custom". Custom groups that no longer fit the
 * hand lose the cards that left it (played ones).
 */
export function arrangeHand(hand, level, arr) {
  const pool = [...(hand || [])];
  const custom = [];
  for (const g of (arr && arr.custom) || []) {
    const kept = [];
    for (const c of g) {
      const i = pool.indexOf(c);
      if (i >= 0) {
        pool.splice(i, 1);
        kept.push(c);
      }
    }
    if (kept.length) custom.push({ kind: "custom", cards: byLevel(kept, level) });
  }
  const mode = arr && arr.mode;
  const groups = [];
  let rest = pool;
  let combos = [];
  if (mode === "combos") {
    const found = findCombos(pool, level);
    rest = found.rest;
    combos = found.combos;
  }
  if (mode === "suit") {
    const jokers = byLevel(rest.filter((c) => c === "SJ" || c === "BJ"), level);
    for (const s of SUITS) {
      const cards = byLevel(rest.filter((c) => c.length === 2 && c[1] === s && c !== "SJ" && c !== "BJ"), level);
      if (cards.length) groups.push({ kind: "suit", cards });
    }
    if (jokers.length) groups.push({ kind: "jokers", cards: jokers });
  } else {
    let cur = null;
    for (const c of byLevel(rest, level)) {
      const p = parseCard(c);
      const r = p ? p.rank : -1;
      if (cur && cur.rank === r) cur.cards.push(c);
      else {
        cur = { kind: "rank", rank: r, cards: [c] };
        groups.push(cur);
      }
    }
    for (const g of groups) delete g.rank;
  }
  return [...groups, ...combos, ...custom];
}

/** The display order (flat card list) of arranged groups. */
export function flatten(groups) {
  return groups.flatMap((g) => g.cards);
}

/**
 * Where each card of the fan goes. n: cards; groupEnds: display indices where a group ends (a small
 * gap follows when there is room); width: px available; cw, ch: card size px; opts: {minStrip,
 * maxStrip, gap, rowStep, rise, stacks}. stacks: [[first, end), ...] display index ranges drawn as
 * one column (a bomb, 理牌 "combos": the cards of one rank stacked top to bottom, each showing its
 * corner, the last one whole); a column takes one place in the row. Returns {rows, positions:
 * [{left, top, width, row}], width, height}. A slot's width is the visible part of its card (the
 * last place of a row shows whole); cards drawn later (higher index) lie on top.
 */
export function layoutFan(n, groupEnds, width, cw, ch, opts = {}) {
  const minStrip = opts.minStrip ?? Math.max(20, cw * 0.42);
  const maxStrip = opts.maxStrip ?? cw * 0.62;
  const gapMax = opts.gap ?? Math.round(cw * 0.18);
  const rowStep = opts.rowStep ?? Math.round(ch * 0.58);
  const rise = opts.rise ?? Math.round(ch * 0.16);
  // places: a single card, or a column of cards [first, end)
  const stackAt = new Map();
  for (const [a, b] of opts.stacks || []) if (Number.isInteger(a) && b - a > 1 && a >= 0 && b <= n) stackAt.set(a, b);
  const places = [];
  for (let i = 0; i < n;) {
    const b = stackAt.get(i) || i + 1;
    places.push([i, b]);
    i = b;
  }
  const m = places.length;
  const cardEnds = new Set(groupEnds || []);
  const ends = new Set(); // places after which a group gap follows
  places.forEach(([, b], u) => { if (cardEnds.has(b - 1)) ends.add(u); });
  // a column's cards step down by at most a quarter card, the column at most 3/4 card taller than a card
  const vstep = (k) => (k > 1 ? Math.min(ch * 0.25, (ch * 0.75) / (k - 1)) : 0);
  const stripFor = (count, gaps, gap) => (count <= 1 ? maxStrip : Math.min(maxStrip, (width - cw - gaps * gap) / (count - 1)));
  const gapsIn = (a, b) => { let k = 0; for (let i = a; i < b - 1; i++) if (ends.has(i)) k++; return k; };
  let rows = [[0, m]];
  let gap = gapMax;
  let strip = stripFor(m, gapsIn(0, m), gap);
  if (strip < minStrip) {
    gap = Math.min(gapMax, 3);
    strip = stripFor(m, gapsIn(0, m), gap);
  }
  if (strip < minStrip && m > 1) {
    // two rows, split at the group boundary nearest the middle
    let split = Math.ceil(m / 2);
    let best = null;
    for (let i = 0; i < m - 1; i++) {
      if (!ends.has(i)) continue;
      const at = i + 1;
      if (Math.abs(at - m / 2) <= 3 && (best === null || Math.abs(at - m / 2) < Math.abs(best - m / 2))) best = at;
    }
    if (best !== null) split = best;
    rows = [[0, split], [split, m]];
    const rowStrip = (g) => Math.min(maxStrip, ...rows.map(([a, b]) => (b - a <= 1 ? maxStrip : (width - cw - gapsIn(a, b) * g) / (b - a - 1))));
    gap = rowStrip(gapMax) >= minStrip ? gapMax : Math.min(gapMax, 3);
    strip = rowStrip(gap);
  }
  strip = Math.max(6, Math.floor(strip * 10) / 10);
  const positions = new Array(n);
  let maxRight = 0;
  let top = rise;
  let bottom = 0;
  rows.forEach(([a, b], r) => {
    const count = b - a;
    const rowWidth = count ? cw + (count - 1) * strip + gapsIn(a, b) * gap : 0;
    let x = Math.max(0, (width - rowWidth) / 2);
    let extra = 0; // how much taller than a card the row's tallest column is
    for (let u = a; u < b; u++) {
      const last = u === b - 1;
      const step = strip + (ends.has(u) && !last ? gap : 0);
      const left = Math.round(x * 10) / 10;
      const right = Math.round((x + step) * 10) / 10; // the next place's left: slots tile without overlap
      const [first, end] = places[u];
      const dy = vstep(end - first);
      for (let i = first; i < end; i++) {
        positions[i] = { left, top: Math.round((top + (i - first) * dy) * 10) / 10, width: last ? cw : Math.min(cw, Math.round((right - left) * 10) / 10), row: r };
      }
      extra = Math.max(extra, (end - first - 1) * dy);
      x += step;
      maxRight = Math.max(maxRight, left + (last ? cw : step));
    }
    bottom = top + ch + extra;
    top += rowStep + extra;
  });
  return { rows: rows.length, strip, positions, width: maxRight, height: n ? Math.ceil(bottom * 10) / 10 : rise + ch };
}

/** The display index ranges [first, end) of the groups drawn as columns: bombs and the joker bomb. */
export function stackRanges(groups) {
  const out = [];
  let i = 0;
  for (const g of groups || []) {
    const k = g.cards.length;
    if ((g.kind === "bomb" || g.kind === "joker_bomb") && k > 1) out.push([i, i + k]);
    i += k;
  }
  return out;
}

/** Display indices at which each group ends (the last index of each group but the last). */
export function groupEnds(groups) {
  const ends = [];
  let i = -1;
  for (const g of groups) {
    i += g.cards.length;
    ends.push(i);
  }
  ends.pop();
  return ends;
}
