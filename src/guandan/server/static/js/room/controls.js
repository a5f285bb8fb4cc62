// The controls under the table: the action buttons beside the own seat (play / pay tribute /
// return with the reading's preview, pass, hint with its index, clear, 理牌, 托管) and the 托管
// banner with its cancel button.

import { h, replaceChildren } from "../dom.js";
import { getLang, t } from "../i18n.js";
import { actionText } from "../cards.js";
import { keyFor } from "./keyboard.js";
import { gameIsOver, matchingActions, mySeat, myTurn, passAction, positionKey } from "./model.js";

/** The tooltip and aria-keyshortcuts of the button of an action of room/actions.js: "出牌 (P)". */
function keyAttrs(actionName, label) {
  const key = keyFor(actionName);
  return key ? { title: `${label} (${key})`, "aria-keyshortcuts": key } : {};
}

/** The action buttons into barEl; rebuilt only when what they show changed (a button under the pointer stays). */
export function renderActions(store, actions, barEl) {
  const st = store.state;
  const v = st.view;
  const mine = myTurn(store);
  const phase = v.phase;
  const matches = matchingActions(store);
  const pass = passAction(store);
  const me = mySeat(store);
  const playLabel = phase === "tribute" ? t("pay_tribute") : phase === "return" ? t("return_card") : t("play");
  const preview = matches.length === 1 ? actionText(matches[0], false) : matches.length > 1 ? `${matches.length}×` : "";
  const hintInfo = st.hints && st.hints.key === positionKey(store) && st.hints.list.length > 1 && st.hints.index >= 0 ? `${st.hints.index + 1}/${st.hints.list.length}` : "";
  const auto = me !== null && st.auto[me];
  const over = gameIsOver(store);
  const key = JSON.stringify([getLang(), mine, phase, matches, Boolean(pass), hintInfo, auto, over, st.selected.size, st.arr.mode, st.display.length]);
  if (barEl.dataset.k === key) return;
  barEl.dataset.k = key;
  if (over) {
    replaceChildren(barEl); // nothing left to play: the banner and the summary lead on
    return;
  }
  replaceChildren(
    barEl,
    h("button", { type: "button", class: "btn primary big", testid: "play-btn", ...keyAttrs("onPlay", playLabel), disabled: !(mine && matches.length), onclick: actions.onPlay }, playLabel, preview ? h("span", { class: "preview" }, preview) : null),
    h("button", { type: "button", class: "btn big", testid: "pass-btn", ...keyAttrs("onPass", t("pass")), disabled: !(mine && pass), onclick: actions.onPass }, t("pass")),
    h("button", { type: "button", class: "btn big", testid: "hint-btn", ...keyAttrs("onHintPress", t("hint")), disabled: !mine, onclick: actions.onHintPress }, t("hint"), hintInfo ? h("span", { class: "preview", testid: "hint-index" }, hintInfo) : null),
    h("button", { type: "button", class: "btn big secondary", testid: "clear-btn", ...keyAttrs("clearSelection", t("clear")), disabled: !st.selected.size, onclick: actions.clearSelection }, t("clear")),
    h(
      "button",
      { type: "button", class: "btn big secondary", testid: "sort-btn", dataset: { mode: st.arr.mode }, title: `${t(`sort_mode_${st.arr.mode}`)} (${keyFor("onSort")})`, "aria-keyshortcuts": keyFor("onSort"), disabled: !st.display.length, onclick: actions.onSort },
      st.selected.size ? t("sort_group") : t("sort"),
    ),
    // no 托管 at a tournament table with a move clock (R54: a move not made in time is a timeout)
    me !== null && !over && (auto || !(st.competition && st.room && st.room.clocks && (st.room.clocks.lead_s || st.room.clocks.follow_s)))
      ? h("button", { type: "button", class: `btn big auto-btn${auto ? " on" : ""}`, testid: "auto-btn", "aria-pressed": String(auto), onclick: actions.onAutoToggle }, auto ? t("auto_cancel") : t("auto_on"))
      : null,
  );
}

/** The banner while 托管 plays for the own seat me (why, and the button that cancels it). */
export function autoBanner(store, actions, me) {
  const reason = store.state.autoReason[me];
  return h(
    "div",
    { class: "auto-banner", testid: "auto-banner", role: "status" },
    h("span", {}, reason === "timeouts" ? t("auto_banner_timeouts") : reason === "left" ? t("auto_banner_left") : t("auto_banner")),
    h("button", { type: "button", class: "btn primary", testid: "auto-cancel-btn", onclick: actions.onAutoToggle }, reason === "left" ? t("rejoin_seat") : t("auto_cancel")),
  );
}
