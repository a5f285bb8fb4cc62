// The room page: seats, invite link, bots and start while the room waits; once the game runs, the
// table view (issue 7): the whole table in the viewport with the own hand pinned to the bottom, the
// other seats around it, each seat's last play in front of it, the turn and its clock, the actions
// (play, pass, hint cycling, clear, 理牌, 托管), the card tracker (记牌器), the last trick (上一轮),
// sounds and motion, the result screen between deals with its ready step, and the game-over summary
// with "play again". Room chrome (invite link, rules, seats, language) sits in a drawer.
//
// Server messages follow docs/table-contract.md. Legal plays come only from view.legal_actions: the
// selection is compared with each action's cards as a sorted multiset and the chosen action is sent
// back exactly as listed.
//
// This module mounts the page: one state store (room/store.js) that the components read and render
// from, each told by the store's topics: room/head.js and room/seats.js (the waiting room),
// room/table-view.js (the table: room/bar.js, room/trick.js, room/seats.js, room/hand-view.js,
// room/controls.js, room/drawer.js, room/result.js), room/overlay.js (reading chooser, result
// panel); room/messages.js turns the websocket's messages into store changes, room/actions.js the
// player's.

import { h, replaceChildren, toast } from "./dom.js";
import { get } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";
import { ReconnectingSocket } from "./ws.js";
import { unlockAudio } from "./sound.js";
import { createRoomStore } from "./room/store.js";
import { createActions } from "./room/actions.js";
import { createMessages } from "./room/messages.js";
import { inGame, myTurn } from "./room/model.js";
import { renderHead } from "./room/head.js";
import { renderSeats } from "./room/seats.js";
import { mountTable } from "./room/table-view.js";
import { mountOverlay } from "./room/overlay.js";
import { bindSelection } from "./room/hand-view.js";
import { createKeyboard } from "./room/keyboard.js";
import { applyEffectsClass } from "./voice.js";
import { bombEffect } from "./room/trick.js";
import { connEl, tickClocks } from "./room/widgets.js";
import { mountPhrases } from "./room/phrases.js";

/** Mount the room page for params.id into el. Returns {destroy(), onMe(), onLang()}. */
export function mountRoom(el, params, ctx) {
  const roomId = params.id;
  const store = createRoomStore(roomId, ctx);
  const st = store.state;
  let socket = null;
  let clockTimer = null;

  // Fixed skeleton; each part is re-rendered from the store.
  const headEl = h("div", { class: "room-head" });
  const seatsEl = h("div", { class: "seats-section" });
  const tableEl = h("div", { class: "table-section" });
  const overlayEl = h("div", { class: "overlay-host" });
  const fxEl = h("div", { class: "fx-host", "aria-hidden": "true" });
  const pageEl = h("div", { class: "room-page" }, headEl, seatsEl, tableEl, overlayEl, fxEl);
  replaceChildren(el, pageEl);

  function send(obj) {
    if (!socket || !socket.send(obj)) toast(t("reconnecting"));
  }

  const actions = createActions(store, send);
  const messages = createMessages(store, actions);
  const table = mountTable(store, actions, tableEl, pageEl);
  const overlay = mountOverlay(store, actions, overlayEl);
  const phrases = mountPhrases(store, send, pageEl); // quick phrases, the seat menu, reports (issue 25)

  // --- the page ------------------------------------------------------------------------------
  function render() {
    if (store.closed) return;
    const playing = inGame(store);
    const live = playing; // the table keeps the whole viewport, game over included (the drawer and the result panel lead on)
    document.body.classList.toggle("table-mode", live);
    pageEl.classList.toggle("in-game", playing);
    pageEl.classList.toggle("live", live);
    if (playing) {
      replaceChildren(headEl);
      replaceChildren(seatsEl);
    } else {
      renderHead(store, headEl);
      renderSeats(store, actions, seatsEl);
    }
    table.render();
    overlay.render();
  }

  // Renders are coalesced: a burst of state frames (fast bots) costs one render per display frame,
  // so the page keeps reading its socket and never falls behind the table.
  let renderPending = false;
  function scheduleRender() {
    if (renderPending || store.closed) return;
    renderPending = true;
    const run = () => {
      renderPending = false;
      if (!store.closed) render();
    };
    if (typeof requestAnimationFrame === "function" && !document.hidden) requestAnimationFrame(run);
    else setTimeout(run, 16);
  }

  store.subscribe("page", render);
  store.subscribe("page-soon", scheduleRender);
  store.subscribe("conn", () => {
    for (const c of el.querySelectorAll("[data-testid=conn-status]")) c.replaceWith(connEl(store));
    scheduleRender(); // one's own seat shows offline exactly while this socket is down
  });
  store.subscribe("bomb", (action) => bombEffect(fxEl, action));

  async function loadRoom() {
    try {
      const data = await get(`/api/rooms/${encodeURIComponent(roomId)}`);
      if (store.closed) return;
      if (data.room) st.room = data.room;
      render();
    } catch (e) {
      if (store.closed) return;
      if (e.status === 404) {
        store.update((s) => {
          s.notFound = true;
        }, "page");
      } else toast(errText(e));
    }
  }

  // --- input: the hand's selection, keys, resizing -----------------------------------------------
  const unbindSelection = bindSelection(store, tableEl);
  const keyboard = createKeyboard(store, actions, tableEl); // the hand and the actions from the keyboard (room/keyboard.js)
  applyEffectsClass();

  function onKey(ev) {
    if (ev.target && /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName)) return;
    const inOverlay = Boolean(ev.target && ev.target.nodeType === 1 && overlayEl.contains(ev.target));
    if (inOverlay && ev.key !== "Escape") return; // Enter/Space on a focused overlay button press that button
    if (keyboard(ev)) return;
    const onControl = Boolean(ev.target && ev.target.nodeType === 1 && ev.target.closest && ev.target.closest("button, a"));
    if (ev.key === "Escape" && st.chooser) {
      store.update((s) => {
        s.chooser = null;
      }, "overlay");
    } else if (ev.key === "Escape" && (st.drawer || st.tracker || st.lastTrick || st.keysHelp)) {
      store.update((s) => {
        s.drawer = false;
        s.tracker = false;
        s.lastTrick = false;
        s.keysHelp = false;
      }, "table");
    } else if (ev.key === "Enter" && !onControl && myTurn(store) && !st.chooser) {
      ev.preventDefault();
      actions.onPlay();
    }
  }
  document.addEventListener("keydown", onKey);

  let resizeTimer = null;
  function onResize() {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (!store.closed && inGame(store)) table.renderHandAndActions();
    }, 60);
  }
  window.addEventListener("resize", onResize);
  document.addEventListener("click", unlockAudio, { once: true });

  // --- start -------------------------------------------------------------------------------
  render();
  loadRoom();
  socket = new ReconnectingSocket(`/ws/rooms/${encodeURIComponent(roomId)}`, {
    onMessage: (msg) => {
      phrases.onMessage(msg);
      messages.onMessage(msg);
    },
    onStatus: (s) => store.update((state) => {
      state.conn = s;
    }, "conn"),
  });
  clockTimer = setInterval(() => tickClocks(store, pageEl), 250);

  return {
    destroy() {
      store.close();
      document.body.classList.remove("table-mode");
      clearInterval(clockTimer);
      clearTimeout(resizeTimer);
      if (socket) socket.close();
      phrases.destroy();
      unbindSelection();
      document.removeEventListener("keydown", onKey);
      window.removeEventListener("resize", onResize);
    },
    onMe() {
      // the session cookie changed: the server must see the new identity
      if (socket) socket.reconnect();
      loadRoom();
      render();
    },
    onLang() {
      phrases.onLang();
      render();
    },
  };
}
