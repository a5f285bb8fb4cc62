// The own hand, pinned to the bottom of the table: the cards fanned in the arranged order (理牌),
// in one or two rows to fit the width (hand.js layoutFan), the selection (a click, or a drag across
// cards), the cards eligible for tribute or return, and those just received highlighted. For the
// keyboard and screen readers the hand is a list box of named cards (room/keyboard.js moves the focus).

import { h, replaceChildren } from "../dom.js";
import { cardEl } from "../cards.js";
import { groupEnds, layoutFan, stackRanges } from "../hand.js";
import { unlockAudio } from "../sound.js";
import { getLang, t } from "../i18n.js";
import { cardName } from "../callout.js";
import { myTurn, receivedCards } from "./model.js";

function cardSize(handEl) {
  const cs = getComputedStyle(handEl);
  const cw = parseFloat(cs.getPropertyValue("--cw")) || 64;
  const ch = parseFloat(cs.getPropertyValue("--ch")) || 90;
  return { cw, ch };
}

/** Lay the hand of the store's state out into handEl (the element with data-testid "hand"). */
export function renderHand(store, handEl) {
  const st = store.state;
  const v = st.view;
  const mine = myTurn(store);
  const phase = v.phase;
  const eligible = new Set();
  if (mine && (phase === "tribute" || phase === "return")) {
    for (const a of v.legal_actions) if (Array.isArray(a) && Array.isArray(a[2])) a[2].forEach((c) => eligible.add(c));
  }
  const received = Date.now() < st.receivedUntil ? [...receivedCards(store)] : [];
  // keyboard (room/keyboard.js): the focused card keeps the focus across renders (a roving tabindex)
  const hadFocus = handEl.contains(document.activeElement);
  const focusAt = st.display.length ? Math.max(0, Math.min(st.display.length - 1, Number.isInteger(st.focusIndex) ? st.focusIndex : 0)) : -1;
  const { cw, ch } = cardSize(handEl);
  const width = Math.max(120, handEl.clientWidth || handEl.parentElement.clientWidth || 300);
  const fan = layoutFan(st.display.length, groupEnds(st.groups), width, cw, ch, { stacks: stackRanges(st.groups) });
  handEl.style.height = `${Math.ceil(fan.height)}px`;
  handEl.dataset.rows = String(fan.rows);
  handEl.dataset.mode = st.arr.mode;
  const slots = st.display.map((card, index) => {
    const face = cardEl(card, { level: v.level });
    face.removeAttribute("data-card");
    const cls = ["card-slot"];
    if (st.selected.has(index)) cls.push("selected");
    if (eligible.size) cls.push(eligible.has(card) ? "eligible" : "dim");
    const r = received.indexOf(card);
    if (r >= 0) {
      received.splice(r, 1);
      cls.push("received");
    }
    const p = fan.positions[index];
    return h(
      "div",
      {
        class: cls.join(" "),
        testid: "hand-card",
        dataset: { card, index: String(index), row: String(p.row) },
        title: face.title,
        role: "option",
        tabindex: index === focusAt ? "0" : "-1",
        "aria-selected": String(st.selected.has(index)),
        "aria-label": cardName(card, v.level, getLang()),
        style: { left: `${p.left}px`, top: `${p.top}px`, width: `${p.width}px`, height: `${ch}px`, zIndex: String(index + 1) },
      },
      face,
    );
  });
  replaceChildren(handEl, slots);
  handEl.setAttribute("role", "listbox");
  handEl.setAttribute("aria-multiselectable", "true");
  handEl.setAttribute("aria-label", st.selected.size ? t("hand_label_selected", { n: slots.length, k: st.selected.size }) : t("hand_label", { n: slots.length }));
  if (hadFocus && focusAt >= 0) slots[focusAt].focus({ preventScroll: true });
}

/**
 * Selection by click or drag across the cards of the hand under tableEl: the cards change class
 * at once, the hand and the buttons render when the pointer is let go. Returns the unbinding.
 */
export function bindSelection(store, tableEl) {
  let drag = null; // {mode: true (select) | false (deselect), seen: Set}

  function cardIndexAt(x, y) {
    const target = document.elementFromPoint(x, y);
    const card = target && target.closest ? target.closest(".hand .card-slot[data-index]") : null;
    return card ? Number(card.dataset.index) : null;
  }

  function setSelected(i, on) {
    if (on) store.state.selected.add(i);
    else store.state.selected.delete(i);
    const cardNode = tableEl.querySelector(`.hand .card-slot[data-index="${i}"]`);
    if (cardNode) cardNode.classList.toggle("selected", on);
  }

  function onPointerDown(ev) {
    unlockAudio();
    const card = ev.target.closest && ev.target.closest(".hand .card-slot[data-index]");
    if (!card || (ev.button !== undefined && ev.button !== 0)) return;
    ev.preventDefault();
    const i = Number(card.dataset.index);
    drag = { mode: !store.state.selected.has(i), seen: new Set([i]) };
    setSelected(i, drag.mode);
  }

  function onPointerMove(ev) {
    if (!drag) return;
    const i = cardIndexAt(ev.clientX, ev.clientY);
    if (i === null || drag.seen.has(i)) return;
    drag.seen.add(i);
    setSelected(i, drag.mode);
  }

  function onPointerUp() {
    if (!drag) return;
    drag = null;
    store.notify("hand");
  }

  tableEl.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);
  return () => {
    document.removeEventListener("pointermove", onPointerMove);
    document.removeEventListener("pointerup", onPointerUp);
    document.removeEventListener("pointercancel", onPointerUp);
  };
}
