// What a player does at the room page, as changes of the store and messages to the server: play
// (with the reading chooser when a selection reads several ways), pass, hints (the server's list,
// cycled by each press), 理牌, 托管, the ready step between deals, "play again", the seat buttons of
// the waiting room, and following the table to another room. Legal plays come only from
// view.legal_actions: the chosen action is sent back exactly as listed.

import { hideToast, toast } from "../dom.js";
import { post } from "../api.js";
import { t } from "../i18n.js";
import { errText } from "../auth.js";
import { saveArrangement, SORT_MODES } from "../hand.js";
import { arrange, matchingActions, mySeat, myTurn, passAction, positionKey, selectedCards } from "./model.js";

/** The actions of the room page over store; send(obj) puts a message on the room's websocket. */
export function createActions(store, send) {
  const st = store.state;
  const roomId = store.roomId;

  function act(action) {
    st.chooser = null;
    send({ type: "act", action });
    store.update((s) => {
      s.actSent = true;
    }, "actions", "overlay");
  }

  function onPlay() {
    if (!myTurn(store)) return;
    const matches = matchingActions(store);
    if (!matches.length) {
      toast(st.selected.size ? t("not_legal") : t("select_cards"));
      return;
    }
    if (matches.length === 1) act(matches[0]);
    else {
      store.update((s) => {
        s.chooser = matches;
      }, "overlay");
    }
  }

  function onPass() {
    const p = passAction(store);
    if (myTurn(store) && p) act(p);
  }

  function onAutoToggle() {
    const s = mySeat(store);
    if (s === null) return;
    send({ type: "auto", on: !st.auto[s] });
  }

  /** 重选: nothing selected, and the hint counter starts again (the next 提示 shows the first play). */
  function clearSelection() {
    store.update((s) => {
      s.selected.clear();
      restartHints(s);
    }, "hand");
  }

  /** The hint list of this position is kept, but its counter is hidden and the next 提示 selects its first play. */
  function restartHints(s) {
    if (s.hints) s.hints.index = -1;
  }

  /** 理牌: with cards selected, put them in a group of their own; else the next arrangement mode. */
  function onSort() {
    if (st.selected.size) {
      const cards = selectedCards(store);
      st.arr = { mode: st.arr.mode, custom: [...st.arr.custom.map((g) => g.filter((c) => !cards.includes(c))).filter((g) => g.length), cards] };
    } else {
      const i = SORT_MODES.indexOf(st.arr.mode);
      st.arr = { mode: SORT_MODES[(i + 1) % SORT_MODES.length], custom: [] };
    }
    if (st.arrKey) saveArrangement(st.arrKey, st.arr);
    store.update((s) => {
      arrange(s);
      s.selected.clear();
      restartHints(s);
    }, "hand");
  }

  // --- hints (issue 7, item 3) ---------------------------------------------------------------
  function onHintPress() {
    if (!myTurn(store)) return;
    const key = positionKey(store);
    if (st.hints && st.hints.key === key) {
      if (!st.hints.list.length) {
        hintToast(t("hint_nothing_beats"));
        return;
      }
      st.hints.index = (st.hints.index + 1) % st.hints.list.length;
      selectAction(st.hints.list[st.hints.index]);
      return;
    }
    st.hintWanted = true;
    st.hintAskedKey = key;
    send({ type: "hints" });
  }

  /** An info toast about the hint of this position; hidden as soon as the position changes. */
  function hintToast(text) {
    st.hintToast = { key: positionKey(store), text };
    toast(text, "info");
  }

  /** Hide a hint toast that belonged to a position which has passed (it must not linger into the next turn). */
  function dropStaleHintToast() {
    if (st.hintToast && st.hintToast.key !== positionKey(store)) {
      hideToast(st.hintToast.text);
      st.hintToast = null;
    }
  }

  /** Whether a hints answer belongs to the position on screen (asked for at this position, and it is still the seat's turn). */
  function hintAnswerIsCurrent() {
    const asked = st.hintAskedKey;
    st.hintWanted = false;
    st.hintAskedKey = null;
    return asked !== null && asked === positionKey(store) && myTurn(store);
  }

  /** The server's hints list for this position: select the first, or say nothing beats the table. */
  function onHints(list) {
    if (!hintAnswerIsCurrent()) return; // an answer for a position that has passed
    const actions = list.filter((a) => Array.isArray(a) && a[0] !== "pass");
    st.hints = { key: positionKey(store), list: actions, index: 0 };
    if (!actions.length) {
      store.update((s) => s.selected.clear(), "hand");
      hintToast(t("hint_nothing_beats"));
      return;
    }
    selectAction(actions[0]);
  }

  /** The bot's one suggestion (servers without the hints list). */
  function onHint(action) {
    if (!hintAnswerIsCurrent()) return;
    if (!Array.isArray(action)) {
      hintToast(t("hint_none"));
      return;
    }
    if (action[0] === "pass") {
      st.selected.clear();
      hintToast(t("hint_pass"));
      store.notify("hand");
      return;
    }
    selectAction(action);
  }

  /** Select the hand cards of an action (by display position, one per card text copy). */
  function selectAction(action) {
    const want = [...(action[2] || [])];
    const picked = new Set();
    for (const card of want) {
      const i = st.display.findIndex((c, j) => c === card && !picked.has(j));
      if (i >= 0) picked.add(i);
    }
    store.update((s) => {
      s.selected = picked;
      s.chooser = null;
    }, "hand");
  }

  // --- between deals and after the game -------------------------------------------------------
  function onReady() {
    const b = st.between;
    if (!b) return;
    st.readySent = b.deal;
    send({ type: "ready" });
    store.notify(["overlay", true]);
  }

  async function onPlayAgain() {
    try {
      const data = await post(`/api/rooms/${encodeURIComponent(roomId)}/again`);
      if (data && data.room && data.room.id) followTo(data.room.id);
    } catch (e) {
      toast(errText(e));
    }
  }

  function followTo(id) {
    if (st.movingTo) return;
    st.movingTo = id;
    store.ctx.navigate(`/room/${encodeURIComponent(id)}`);
  }

  // --- seat actions of the waiting room ---------------------------------------------------------
  async function roomPost(path, body) {
    try {
      const data = await post(`/api/rooms/${encodeURIComponent(roomId)}/${path}`, body);
      if (data && data.room) {
        store.update((s) => {
          s.room = data.room;
        }, "page");
      }
    } catch (e) {
      toast(errText(e));
    }
  }

  return {
    send, act, onPlay, onPass, onAutoToggle, clearSelection, onSort, onHintPress, onHints, onHint, dropStaleHintToast,
    onReady, onPlayAgain, followTo, roomPost,
  };
}
