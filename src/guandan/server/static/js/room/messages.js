// The room's websocket messages (docs/table-contract.md) into the store: the state frame (with the
// result of a deal, the between-deals pause and the game's end), errors, hints, table notices and a
// move of the table to another room; plus the sounds and motion of what changed since the last view
// (new plays, passes, bombs, one's turn), the 接风 notice and the highlight of received cards.

import { toast } from "../dom.js";
import { errorText } from "../api.js";
import { t } from "../i18n.js";
import { lastActions, seatName, teamOf } from "../table.js";
import { arrangementKey, loadArrangement } from "../hand.js";
import { playSound } from "../sound.js";
import { callPlay } from "../voice.js";
import { noteReveal } from "./reveal.js";
import { preselectTribute } from "./tribute-pick.js";
import { arrange, asArray, BOMB_TYPES, mySeat, myTurn, names, positionKey, receivedCards, sameOrder, SEATS, seated } from "./model.js";

/** Seconds the cards received in tribute or return stay highlighted in the hand (item 10). */
const RECEIVED_HIGHLIGHT_MS = 6000;
/** Seconds a table notice stays up. */
const NOTICE_MS = 6000;

/** The handler of the room's websocket messages: onMessage(msg) changes the store and tells its topics. */
export function createMessages(store, actions) {
  const st = store.state;
  let noticeSeq = 0;

  function onMessage(msg) {
    switch (msg.type) {
      case "state":
        onState(msg);
        break;
      case "deal_result":
        st.dealResult = msg;
        st.resultHidden = false;
        onDealResultSound(msg);
        store.notify("overlay");
        break;
      case "game_over":
        st.gameOver = msg;
        st.resultHidden = false;
        store.notify("page-soon");
        break;
      case "error":
        onError(msg);
        break;
      case "hint":
        actions.onHint(msg.action);
        break;
      case "hints":
        actions.onHints(Array.isArray(msg.actions) ? msg.actions : []);
        break;
      case "notice":
        onNotice(msg);
        break;
      case "moved":
        if (typeof msg.room === "string" && msg.room && msg.room !== store.roomId) actions.followTo(msg.room);
        break;
      default:
        break; // pong and anything unknown
    }
  }

  function onError(msg) {
    if (st.actSent) {
      // the action was refused: the seat may act again
      store.update((s) => {
        s.actSent = false;
      }, "actions");
    }
    if (msg.reason === "unknown_type" && st.hintWanted) {
      // a server without the hints list: fall back to the bot's one suggestion
      st.hintWanted = false;
      actions.send({ type: "hint" }); // hintAskedKey stays: the answer is for the same position
      return;
    }
    st.hintWanted = false;
    st.hintAskedKey = null;
    toast(errorText(msg.reason, msg.params));
  }

  function onState(msg) {
    st.actSent = false;
    if (msg.room && typeof msg.room === "object") st.room = msg.room;
    st.role = msg.role || st.role;
    st.seat = Number.isInteger(msg.seat) ? msg.seat : null;
    const prevView = st.view;
    st.view = msg.view && typeof msg.view === "object" ? msg.view : null;
    // a tournament table (issue 21): its match clock; a spectator sees no deal in progress (delayed)
    st.competition = msg.competition && typeof msg.competition === "object" ? msg.competition : null;
    st.delayed = st.view && st.view.delayed ? st.view : null;
    if (st.delayed) st.view = null;
    st.seq = Number.isInteger(msg.seq) ? msg.seq : st.seq;
    st.clock = msg.clock && typeof msg.clock === "object" ? msg.clock : null;
    st.auto = Array.isArray(msg.auto) ? msg.auto : [false, false, false, false];
    st.autoReason = Array.isArray(msg.auto_reason) ? msg.auto_reason : [null, null, null, null];
    const wasBetween = st.between;
    st.between = msg.between && typeof msg.between === "object" ? msg.between : null;
    if (st.between && (!wasBetween || wasBetween.deal !== st.between.deal)) {
      st.resultHidden = false;
      if (!st.dealResult || st.dealResult.deal !== st.between.deal) st.dealResult = { ...(st.between.result || {}), deal: st.between.deal };
    }
    if (!st.between && wasBetween) {
      // the next deal started: the result screen of the pause closes by itself
      st.dealResult = null;
      st.readySent = null;
    }
    st.final = msg.final && typeof msg.final === "object" ? msg.final : null;
    if (st.final && !st.gameOver) st.gameOver = { type: "game_over", ...st.final };
    if (st.room && st.room.next_room && st.gameOver) st.gameOver.next_room = st.room.next_room;

    const v = st.view;
    dropOtherDealsNotices();
    // the arrangement of this deal (sessionStorage: survives reloads and reconnects)
    if (v && Number.isInteger(v.deal)) {
      const key = arrangementKey(store.roomId, v.game, v.deal);
      if (key !== st.arrKey) {
        st.arrKey = key;
        st.arr = loadArrangement(key);
      }
    }
    const before = st.display;
    arrange(st);
    if (!sameOrder(before, st.display)) {
      st.selected.clear();
      st.chooser = null;
    }
    if (!myTurn(store)) st.chooser = null;
    preselectTribute(store);
    noteReveal(store);
    if (st.hints && st.hints.key !== positionKey(store)) st.hints = null;
    actions.dropStaleHintToast();
    announceJiefeng();
    noteReceived();
    animateChanges(prevView);
    store.notify("actions", "page-soon");
  }

  function announceJiefeng() {
    const v = st.view;
    if (!v || !Array.isArray(v.tribute_events)) return;
    const n = v.tribute_events.filter((e) => e && e.type === "jiefeng").length;
    const key = `${v.game}-${v.deal}-${n}`;
    if (n > 0 && st.seenJiefeng && key !== st.seenJiefeng) {
      const last = [...v.tribute_events].reverse().find((e) => e && e.type === "jiefeng");
      addNotice(t("ev_jiefeng", { name: seatName(names(store), last.leader) }), "", dealKey(v));
    }
    st.seenJiefeng = key;
  }

  /** "game-deal" of a view: the scope of a notice about one deal (the 接风 notice). */
  function dealKey(v) {
    return v ? `${v.game}-${v.deal}` : "";
  }

  /**
   * Drop the notices about another deal than the view's: when a deal ends the view is already the
   * next deal's (its tribute), and the last deal's 接风 must not stay up over it.
   */
  function dropOtherDealsNotices() {
    const key = dealKey(st.view);
    if (!st.notices.some((n) => n.deal && n.deal !== key)) return;
    st.notices = st.notices.filter((n) => !n.deal || n.deal === key);
    store.notify("notices");
  }

  function noteReceived() {
    const v = st.view;
    const got = receivedCards(store);
    const key = v ? `${v.game}.${v.deal}.${got.join(",")}` : "";
    if (got.length && key !== st.receivedKey) {
      st.receivedUntil = Date.now() + RECEIVED_HIGHLIGHT_MS;
      setTimeout(() => store.notify("hand"), RECEIVED_HIGHLIGHT_MS + 50);
    }
    st.receivedKey = key;
  }

  /** Sounds and motion for what changed since the previous view (new plays, passes, bombs, the turn). */
  function animateChanges(prevView) {
    const v = st.view;
    const last = v ? lastActions(v) : [null, null, null, null];
    const prev = st.prevLast;
    st.prevLast = last;
    if (!st.fresh) st.fresh = new Set(); // seats whose play is new since the last render
    if (v && prev && prevView && prevView.deal === v.deal) {
      for (const s of SEATS) {
        const a = last[s];
        if (!Array.isArray(a) || JSON.stringify(a) === JSON.stringify(prev[s])) continue;
        st.fresh.add(s);
        callPlay(a, asArray(v.card_counts, 4)[s], names(store)[s] || ""); // 报牌: voice, else the sounds (voice.js)
        if (BOMB_TYPES.has(a[0])) store.notify(["bomb", a]);
      }
    }
    const turn = myTurn(store);
    if (turn && !st.prevTurn) playSound("turn");
    st.prevTurn = turn;
  }

  function onDealResultSound(r) {
    const s = mySeat(store);
    if (s === null || !Number.isInteger(r.winner_team)) playSound("notice");
    else playSound(teamOf(s) === r.winner_team ? "win" : "lose");
  }

  function onNotice(msg) {
    const p = msg.params || {};
    const nm = names(store);
    const mine = Number.isInteger(p.seat) && p.seat === mySeat(store) && seated(store);
    const who = Number.isInteger(p.seat) ? (mine ? t("notice_you") : seatName(nm, p.seat)) : "";
    let text = "";
    switch (msg.code) {
      case "timeout_move":
        text = t("notice_timeout_move", { who, n: p.timeouts ?? 1, limit: p.limit ?? 2 });
        break;
      case "auto_on":
        text = t(p.reason === "away" ? "notice_auto_on_away" : p.reason === "timeouts" ? "notice_auto_on_timeouts" : p.reason === "left" ? "notice_auto_on_left" : "notice_auto_on", { who });
        break;
      case "bot_played":
        // "while you were away" only when 托管 was on because of an absence (contract section 5)
        {
          const moves = p.moves ?? 0;
          const deals = p.deals ?? 1;
          // {moves}/{deals}: bare numbers (Chinese); {moves_n}/{deals_n}: counted nouns ("1 move", "3 moves")
          const counts = {
            moves,
            deals,
            moves_n: t(moves === 1 ? "count_moves_one" : "count_moves_other", { n: moves }),
            deals_n: t(deals === 1 ? "count_deals_one" : "count_deals_other", { n: deals }),
          };
          text = mine
            ? t(p.reason === "away" ? "notice_bot_played_you" : "notice_bot_played_you_auto", counts)
            : t("notice_bot_played", { who, ...counts });
        }
        break;
      case "next_deal":
        text = t("notice_next_deal", { deal: p.deal ?? "" });
        break;
      default:
        text = msg.message || "";
    }
    if (!text) return;
    if (mine || msg.code === "next_deal") playSound("notice");
    addNotice(text, mine ? "mine" : "");
  }

  /** A table notice for NOTICE_MS; deal: the "game-deal" it is about (dropped when another deal starts), or null. */
  function addNotice(text, kind = "", deal = null) {
    const id = ++noticeSeq;
    store.update((s) => {
      s.notices.push({ id, text, kind, deal, until: Date.now() + NOTICE_MS });
      s.notices = s.notices.slice(-3);
    }, "notices");
    setTimeout(() => {
      store.update((s) => {
        s.notices = s.notices.filter((n) => n.id !== id);
      }, "notices");
    }, NOTICE_MS);
  }

  return { onMessage };
}
