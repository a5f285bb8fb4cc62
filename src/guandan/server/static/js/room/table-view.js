// The table view (issue 7): the whole table in the viewport with the own hand pinned to the
// bottom. A fixed frame of slots (display: contents) holds the parts: the bar, the felt, the own
// seat with the action buttons, the hand, the 托管 banner, the game-over banner, the popovers and
// the drawer. Parts whose content did not change keep their DOM (a button under the pointer stays
// the same element however many states arrive); the felt and the own seat are rebuilt each time.

import { h, replaceChildren } from "../dom.js";
import { getLang, t } from "../i18n.js";
import { silent } from "../voice.js";
import { bottomSeat, gameIsOver, seated } from "./model.js";
import { tableBar, popovers } from "./bar.js";
import { phraseKey } from "./phrases.js";
import { autoBanner, renderActions } from "./controls.js";
import { drawer } from "./drawer.js";
import { renderHand } from "./hand-view.js";
import { gameOverBanner } from "./result.js";
import { seatPanel } from "./seats.js";
import { feltEl, renderNotices } from "./trick.js";
import { keyed, tickClocks } from "./widgets.js";

/**
 * The table component in tableEl (clocks tick in pageEl). It renders on the store's topics "table"
 * (everything), "hand" (the hand and the buttons), "actions" (the buttons now) and "notices".
 */
export function mountTable(store, actions, tableEl, pageEl) {
  const st = store.state;
  let skel = null;

  /** The table's fixed frame: slots that the parts are rendered into. */
  function skeleton(withHand) {
    if (skel && skel.withHand === withHand && tableEl.contains(skel.bar)) return skel;
    const slot = (cls) => h("div", { class: `slot ${cls}` });
    skel = {
      withHand,
      bar: slot("bar-slot"),
      felt: slot("felt-slot"),
      mePanel: slot("me-slot"),
      actions: withHand
        ? h("div", { class: "actions-bar", testid: "actions-bar" })
        : h("div", { class: "actions-bar spectator" }, h("span", { class: "badge spectator", testid: "spectator-badge" }, t("spectating"))),
      hand: withHand ? h("div", { class: "hand-wrap" }, h("div", { class: "hand", testid: "hand" })) : null,
      banner: slot("banner-slot"),
      over: slot("over-slot"),
      pops: slot("pop-slot"),
      drawer: slot("drawer-slot"),
    };
    replaceChildren(
      tableEl,
      skel.bar,
      skel.felt,
      h("div", { class: "me-row" }, skel.mePanel, skel.actions),
      skel.hand,
      skel.banner,
      skel.over,
      skel.pops,
      skel.drawer,
    );
    return skel;
  }

  function render() {
    const v = st.view;
    if (!v || st.notFound) {
      replaceChildren(tableEl);
      return;
    }
    const bottom = bottomSeat(store);
    const felt = feltEl(store);
    const me = seated(store) ? v.seat : null;
    const over = gameIsOver(store);
    const sk = skeleton(me !== null);
    keyed(sk.bar, [getLang(), v.levels, v.level, v.wilds, silent(), st.lastTrick, st.tracker, Boolean(st.keysHelp), me, st.room && st.room.name, phraseKey(st)], () => tableBar(store));
    replaceChildren(sk.felt, felt);
    replaceChildren(sk.mePanel, seatPanel(store, bottom, "bottom"));
    keyed(sk.banner, [getLang(), me !== null && st.auto[me] && !over, me !== null && st.autoReason[me]], () => (me !== null && st.auto[me] && !over ? autoBanner(store, actions, me) : null));
    keyed(sk.over, [getLang(), over, st.gameOver && st.gameOver.game_id], () => (over ? gameOverBanner(store) : null));
    keyed(sk.pops, [getLang(), st.tracker && me !== null, st.lastTrick, Boolean(st.keysHelp), v.game, v.deal, (v.history || []).length, (v.hand || []).length, phraseKey(st)], () => popovers(store, me));
    keyed(sk.drawer, [getLang(), st.drawer, Boolean(st.leaveConfirm), st.autoReason, st.room, v.game, v.deal, v.finished, v.a_fails, v.points, v.tribute_events], () => (st.drawer ? drawer(store, actions) : null));
    renderHandAndActions();
    renderNotices(store, tableEl);
    tickClocks(store, pageEl);
  }

  function renderHandAndActions() {
    const handEl = tableEl.querySelector(".hand");
    const barEl = tableEl.querySelector(".actions-bar");
    if (!st.view || !handEl || !barEl) return;
    renderHand(store, handEl);
    renderActions(store, actions, barEl);
  }

  /** The action buttons now (cheap, keyed): they follow every state at once, the rest at the next frame. */
  function renderActionsNow() {
    const bar = tableEl.querySelector(".actions-bar[data-testid=actions-bar]");
    if (bar && st.view) renderActions(store, actions, bar);
  }

  store.subscribe("table", render);
  store.subscribe("hand", renderHandAndActions);
  store.subscribe("actions", renderActionsNow);
  store.subscribe("notices", () => renderNotices(store, tableEl));
  return { render, renderHandAndActions };
}
