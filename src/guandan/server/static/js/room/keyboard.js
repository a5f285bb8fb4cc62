// The table from the keyboard (issue 25, item 5): the hand is a list box whose cards take the
// focus one at a time (a roving tabindex) with a visible ring; arrow keys move along the hand (up
// and down to the other row on phones), Home / End to its ends, Space or Enter select or unselect
// the focused card; letter keys act from anywhere on the table: P play, X pass, H hint (again: the
// next one), C clear, S sort (理牌), and ? (or K) shows the legend of these keys. Keys with Ctrl,
// Alt or Meta are the browser's and left alone, as is any key typed into a field.
//
// Letter keys are read from KeyboardEvent.code (the key's place), so they work whatever the
// keyboard layout or input method.

import { h } from "../dom.js";
import { t } from "../i18n.js";
import { closeBtn } from "./widgets.js";
import { inGame, seated } from "./model.js";

/** The table's keys: code -> [action name of room/actions.js, label shown in the legend]. */
export const ACTION_KEYS = {
  KeyP: ["onPlay", "P"],
  KeyX: ["onPass", "X"],
  KeyH: ["onHintPress", "H"],
  KeyC: ["clearSelection", "C"],
  KeyS: ["onSort", "S"],
};

/** The key shown for an action of room/actions.js ("P" for onPlay), or "" when it has none. */
export function keyFor(actionName) {
  const hit = Object.values(ACTION_KEYS).find(([name]) => name === actionName);
  return hit ? hit[1] : "";
}

/** The legend's rows: [keys, string key of what they do]. */
const LEGEND = [
  ["← →", "keys_move"],
  ["↑ ↓", "keys_rows"],
  ["Home End", "keys_ends"],
  ["Space / Enter", "keys_select"],
  ["P", "keys_play"],
  ["X", "keys_pass"],
  ["H", "keys_hint"],
  ["C", "keys_clear"],
  ["S", "keys_sort"],
  ["Tab", "keys_tab"],
  ["?", "keys_help"],
];

function toggleLegend(store, on) {
  store.update((s) => {
    s.keysHelp = on === undefined ? !s.keysHelp : on;
  }, "table");
}

/** The bar's button that opens the legend of the keys (testid keys-btn). */
export function keysButton(store) {
  const on = Boolean(store.state.keysHelp);
  return h(
    "button",
    {
      type: "button", class: `btn icon-btn keys-btn${on ? " on" : ""}`, testid: "keys-btn", "aria-label": t("keys_btn"), title: `${t("keys_btn")} (?)`,
      "aria-expanded": String(on), "aria-keyshortcuts": "Shift+/", onclick: () => toggleLegend(store),
    },
    h("span", { class: "kbd-glyph", "aria-hidden": "true" }, "⌨"),
  );
}

/** The legend of the keys (testid keys-legend), a popover of the table. */
export function keysLegend(store) {
  return h(
    "div",
    { class: "popover keys-pop", testid: "keys-legend", role: "dialog", "aria-label": t("keys_title") },
    h("div", { class: "pop-head" }, h("strong", {}, t("keys_title")), closeBtn(() => toggleLegend(store, false))),
    h("dl", { class: "keys-list" }, LEGEND.flatMap(([keys, what]) => [h("dt", {}, keys.split(" ").map((k) => (k === "/" ? " / " : h("kbd", {}, k)))), h("dd", {}, t(what))])),
  );
}

/** The card slots of the hand in display order. */
function slotsOf(tableEl) {
  return [...tableEl.querySelectorAll(".hand .card-slot[data-index]")];
}

/** Move the focus to the hand's card at display index i (clamped); remembered across renders. */
export function focusCard(store, tableEl, i) {
  const slots = slotsOf(tableEl);
  if (!slots.length) return false;
  const k = Math.max(0, Math.min(slots.length - 1, i));
  store.state.focusIndex = k;
  for (const s of slots) s.tabIndex = -1;
  slots[k].tabIndex = 0;
  slots[k].focus({ preventScroll: true });
  return true;
}

/** The index of the card in the other row (up: the row behind, down: the row in front) nearest to slot's left edge. */
function otherRow(slots, slot, dir) {
  const row = Number(slot.dataset.row) + dir;
  const x = parseFloat(slot.style.left) || 0;
  let best = null;
  for (const s of slots) {
    if (Number(s.dataset.row) !== row) continue;
    const d = Math.abs((parseFloat(s.style.left) || 0) - x);
    if (best === null || d < best.d) best = { i: Number(s.dataset.index), d };
  }
  return best ? best.i : null;
}

/**
 * The keyboard of the table: returns onKey(ev) -> true when it handled the key (room.js calls it
 * first from its keydown listener). store: the room store; actions: room/actions.js; tableEl: the
 * table section.
 */
export function createKeyboard(store, actions, tableEl) {
  function toggleCard(i) {
    const st = store.state;
    store.update((s) => {
      if (s.selected.has(i)) s.selected.delete(i);
      else s.selected.add(i);
    }, "hand");
    if (st.focusIndex !== i) focusCard(store, tableEl, i);
  }

  return function onKey(ev) {
    if (ev.ctrlKey || ev.altKey || ev.metaKey || ev.isComposing) return false;
    const target = ev.target && ev.target.nodeType === 1 ? ev.target : null;
    if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) return false;
    if (!inGame(store) || !seated(store) || store.state.chooser) return false;
    if (target && target.closest && target.closest(".drawer")) return false; // the menu's own controls keep their keys
    const slot = target && target.closest ? target.closest(".hand .card-slot[data-index]") : null;
    const onControl = Boolean(target && !slot && target.closest && target.closest("button, a, [role=dialog]"));
    const st = store.state;
    const nav = { ArrowLeft: -1, ArrowRight: 1, Home: "first", End: "last", ArrowUp: "up", ArrowDown: "down" }[ev.key];
    if (nav !== undefined && !onControl) {
      const slots = slotsOf(tableEl);
      if (!slots.length) return false;
      ev.preventDefault();
      if (!slot) return focusCard(store, tableEl, Number.isInteger(st.focusIndex) ? st.focusIndex : 0);
      const i = Number(slot.dataset.index);
      let next = i;
      if (nav === "first") next = 0;
      else if (nav === "last") next = slots.length - 1;
      else if (nav === "up" || nav === "down") next = otherRow(slots, slot, nav === "up" ? -1 : 1) ?? i;
      else next = i + nav;
      return focusCard(store, tableEl, next);
    }
    if (slot && (ev.key === " " || ev.key === "Enter" || ev.key === "Spacebar")) {
      ev.preventDefault();
      toggleCard(Number(slot.dataset.index));
      return true;
    }
    if (ev.key === "?" || (ev.code === "KeyK" && !ev.shiftKey)) {
      ev.preventDefault();
      toggleLegend(store);
      return true;
    }
    if (ev.shiftKey) return false;
    const bound = ACTION_KEYS[ev.code];
    if (bound && typeof actions[bound[0]] === "function") {
      ev.preventDefault();
      actions[bound[0]]();
      return true;
    }
    return false;
  };
}
