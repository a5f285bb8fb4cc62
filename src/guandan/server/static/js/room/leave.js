// Leaving a game under way (issue 25, item 9; server: guandan.server.table.leaving): the drawer's
// Leave button and its confirmation dialog. The dialog says what will happen: with no other person
// still playing the game ends now (abandoned, unrated); otherwise the bot plays the seat on and the
// leaver may come back and take it again (取消托管 / "Take my seat back").

import { h, toast } from "../dom.js";
import { post } from "../api.js";
import { t } from "../i18n.js";
import { errText } from "../auth.js";
import { gameIsOver, mySeat, roomSeats } from "./model.js";

/** Whether another person still plays at the table (seated, and has not left the game). */
export function othersPlay(store) {
  const me = mySeat(store);
  const reasons = store.state.autoReason || [];
  return roomSeats(store).some((s) => s.user && s.seat !== me && reasons[s.seat] !== "left");
}

/** Whether the own seat may leave the game now: seated, the game runs, not a tournament table. */
export function canLeave(store) {
  const st = store.state;
  return mySeat(store) !== null && Boolean(st.view) && !gameIsOver(store) && !st.competition
    && st.room && st.room.status === "playing" && (st.autoReason || [])[mySeat(store)] !== "left";
}

function setConfirm(store, on) {
  store.update((s) => {
    s.leaveConfirm = on;
  }, "table");
}

/** The drawer's section with the Leave button (null when one cannot leave). */
export function leaveSection(store) {
  if (!canLeave(store)) return null;
  return h(
    "div",
    { class: "drawer-sec" },
    h("button", { type: "button", class: "btn danger", testid: "leave-game-btn", onclick: () => setConfirm(store, true) }, t("leave_game")),
  );
}

async function leaveNow(store) {
  const id = store.roomId;
  try {
    const data = await post(`/api/rooms/${encodeURIComponent(id)}/leave`);
    toast(t(data && data.left === "ended" ? "leave_done_ended" : "leave_done_bot"), "info");
    store.update((s) => {
      s.leaveConfirm = false;
      s.drawer = false;
    }, "table");
    store.ctx.navigate("/");
  } catch (e) {
    setConfirm(store, false);
    toast(errText(e));
  }
}

/** The confirmation dialog (an alert dialog over the table), or null when not asked. */
export function leaveDialog(store) {
  if (!store.state.leaveConfirm || !canLeave(store)) return null;
  const stay = () => setConfirm(store, false);
  const yes = h("button", { type: "button", class: "btn danger", testid: "leave-confirm-yes", onclick: () => leaveNow(store) }, t("leave_confirm_yes"));
  const no = h("button", { type: "button", class: "btn primary", testid: "leave-confirm-no", onclick: stay }, t("leave_confirm_no"));
  const dlg = h(
    "div",
    { class: "confirm-host", onclick: (ev) => { if (ev.target === ev.currentTarget) stay(); } },
    h(
      "div",
      { class: "confirm-box", role: "alertdialog", "aria-modal": "true", "aria-labelledby": "leave-title", "aria-describedby": "leave-text", testid: "leave-confirm",
        onkeydown: (ev) => { if (ev.key === "Escape") stay(); } },
      h("h2", { id: "leave-title" }, t("leave_confirm_title")),
      h("p", { id: "leave-text", testid: "leave-confirm-text" }, t(othersPlay(store) ? "leave_confirm_others" : "leave_confirm_alone")),
      h("div", { class: "confirm-actions" }, no, yes),
    ),
  );
  setTimeout(() => no.focus({ preventScroll: true }), 0); // the safe choice has the focus
  return dlg;
}
