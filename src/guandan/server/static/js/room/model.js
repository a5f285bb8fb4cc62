// What the room page derives from the store's state (no DOM): who I am, the seat names, whose
// turn, the legal actions matching the selection, the position key of hints, the arranged hand.
// Each function takes the room store (state, roomId, ctx).

import { t } from "../i18n.js";
import { sameCards } from "../cards.js";
import { arrangeHand, flatten } from "../hand.js";
import { resultPhrase as resultPhraseOf } from "../rules.js";
import { teamName } from "../table.js";

export const SEATS = [0, 1, 2, 3];
export const BOMB_TYPES = new Set(["bomb", "straight_flush", "joker_bomb"]);

export function asArray(x, n, fill = null) {
  return Array.isArray(x) ? x : Array.from({ length: n }, () => fill);
}

/** Display name of a seat name sent by the server: "bot:normal" becomes a short bot label ("Bot 2"). */
export function displayName(name, seat) {
  const m = typeof name === "string" ? name.match(/^bot:(\w+)$/) : null;
  return m ? t("bot_short", { n: seat + 1 }) : name;
}

export function ownerName(room) {
  const o = room && room.owner;
  if (o && typeof o === "object") return o.name || "";
  return o ? String(o) : "";
}

/**
 * The losing team of a deal result: the team its word describes (docs/rules.md R34: 双下 is the team that
 * finished 3rd and 4th, so a 1-2 is 双下 for the losers, never for the winners). "" without a winner.
 */
export function loserName(r) {
  return r && Number.isInteger(r.winner_team) ? teamName(1 - r.winner_team) : "";
}

/** The result said of the right team: "乙队双下" for a 1-2, "单下" / "平下" otherwise (rules.js resultPhrase). */
export function resultPhrase(r) {
  return r ? resultPhraseOf(r.result_code || r.result, loserName(r)) : "";
}

export function mySeat(store) {
  const st = store.state;
  if (Number.isInteger(st.seat)) return st.seat;
  const me = store.ctx.me && store.ctx.me.name;
  if (me && st.room && Array.isArray(st.room.seats)) {
    const s = st.room.seats.find((x) => x && x.user === me);
    if (s && Number.isInteger(s.seat)) return s.seat;
  }
  return null;
}

export function names(store) {
  const st = store.state;
  const v = st.view;
  if (v && Array.isArray(v.seat_names)) return v.seat_names.map((n, s) => displayName(n, s));
  const out = [null, null, null, null];
  if (st.room && Array.isArray(st.room.seats)) {
    for (const s of st.room.seats) {
      if (!s || !Number.isInteger(s.seat) || s.seat < 0 || s.seat > 3) continue;
      out[s.seat] = s.user || (s.bot ? t("bot_short", { n: s.seat + 1 }) : null);
    }
  }
  return out;
}

export function isOwner(store) {
  const st = store.state;
  return Boolean(store.ctx.me && st.room && ownerName(st.room) === store.ctx.me.name);
}

export function seated(store) {
  const st = store.state;
  return st.role !== "spectator" && st.view && Number.isInteger(st.view.seat);
}

export function myTurn(store) {
  const st = store.state;
  const v = st.view;
  if (st.actSent) return false; // an action is on its way: no second one before the server answers
  return Boolean(v && seated(store) && v.to_act === v.seat && Array.isArray(v.legal_actions) && v.legal_actions.length);
}

export function inGame(store) {
  return Boolean(store.state.view) && !store.state.notFound;
}

export function gameIsOver(store) {
  const st = store.state;
  return Boolean(st.view && (st.view.phase === "game_over" || st.gameOver || st.final));
}

export function selectedCards(store) {
  const st = store.state;
  return [...st.selected].sort((a, b) => a - b).map((i) => st.display[i]).filter((c) => c !== undefined);
}

export function matchingActions(store) {
  const v = store.state.view;
  if (!v || !Array.isArray(v.legal_actions)) return [];
  const sel = selectedCards(store);
  if (!sel.length) return [];
  return v.legal_actions.filter((a) => Array.isArray(a) && a[0] !== "pass" && sameCards(a[2], sel));
}

export function passAction(store) {
  const v = store.state.view;
  if (!v || !Array.isArray(v.legal_actions)) return null;
  return v.legal_actions.find((a) => Array.isArray(a) && a[0] === "pass") || null;
}

export function positionKey(store) {
  const v = store.state.view;
  return v ? `${v.game}.${v.deal}.${store.state.seq}.${v.to_act}` : "";
}

/** Arrange the hand of the view into state.groups and state.display (the arrangement state.arr). */
export function arrange(st) {
  const v = st.view;
  const hand = v && Array.isArray(v.hand) ? v.hand : [];
  st.groups = arrangeHand(hand, v ? v.level : "2", st.arr);
  st.display = flatten(st.groups);
}

export function sameOrder(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Cards received in tribute or return: highlighted for a few seconds once they arrive (item 10). */
export function receivedCards(store) {
  const v = store.state.view;
  if (!v || !seated(store)) return [];
  if (Array.isArray(v.received)) return v.received;
  const out = [];
  for (const ev of Array.isArray(v.tribute_events) ? v.tribute_events : []) {
    const moves = ev && ev.type === "tribute_paid" ? ev.tributes : ev && ev.type === "returns_revealed" ? ev.returns : null;
    for (const m of Array.isArray(moves) ? moves : []) if (Array.isArray(m) && m[1] === v.seat) out.push(m[2]);
  }
  return out;
}

/** The seat shown at the bottom of the table: one's own, else seat 0 for a spectator. */
export function bottomSeat(store) {
  const st = store.state;
  const v = st.view;
  return Number.isInteger(v.seat) && st.role !== "spectator" ? v.seat : mySeat(store) ?? 0;
}

/** The room's four seats as the room lists them ({seat} alone for an empty one). */
export function roomSeats(store) {
  const room = store.state.room;
  return SEATS.map((s) => (room && Array.isArray(room.seats) ? room.seats.find((x) => x && x.seat === s) : null) || { seat: s });
}

export function showResult(store) {
  const st = store.state;
  return Boolean((st.dealResult || st.gameOver) && !st.resultHidden);
}

/** The room's target level ("A", or "8" in a play-to-8 room): failed attempts are counted at it (R41, AMB-13). */
export function targetOf(v, room) {
  return String((v && v.rules && v.rules.target_level) || (room && room.options && room.options.target_level) || "A");
}
