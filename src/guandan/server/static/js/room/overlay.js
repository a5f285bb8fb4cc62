// The overlay over the table: the reading chooser (a selection that reads as several plays) and
// the result panel. It is rebuilt only when what it shows changes: every table change sends a new
// `state` message, and rebuilding the same panel each time would drop the keyboard focus (on
// Continue, on a reading) and detach the panel under the pointer. The focus moves into the overlay
// when it opens and back to where it was when it closes.

import { h, replaceChildren } from "../dom.js";
import { getLang, t } from "../i18n.js";
import { actionText, miniCards } from "../cards.js";
import { isOwner, names, showResult } from "./model.js";
import { resultPanel } from "./result.js";

/** The overlay component in overlayEl; it renders on the store's "overlay" topic (detail: force). */
export function mountOverlay(store, actions, overlayEl) {
  const st = store.state;
  let overlayKey = ""; // the text of what is shown ("" when nothing is)
  let focusBeforeOverlay = null; // element focused before the overlay opened, focused again when it closes

  function overlayContentKey() {
    const v = st.view;
    const chooser = st.chooser && st.chooser.length ? st.chooser : null;
    const result = showResult(store) ? [st.dealResult, st.gameOver, names(store), st.between && st.between.ready, st.readySent, isOwner(store)] : null;
    if (!chooser && !result) return "";
    return JSON.stringify([getLang(), chooser, chooser && v ? v.level : null, result]);
  }

  /** Text naming a control inside the overlay (its test id and reading), to find it again after a rebuild. */
  function controlSignature(node) {
    if (!node || !node.getAttribute) return null;
    const tid = node.getAttribute("data-testid");
    return tid ? `${tid}|${node.getAttribute("data-reading") || ""}` : null;
  }

  function findControl(signature) {
    if (!signature) return null;
    for (const node of overlayEl.querySelectorAll("[data-testid]")) if (controlSignature(node) === signature) return node;
    return null;
  }

  function focusQuietly(node) {
    if (node && typeof node.focus === "function") node.focus({ preventScroll: true });
  }

  function chooserEl() {
    const v = st.view;
    return h(
      "div",
      { class: "modal chooser", testid: "reading-chooser", role: "dialog", "aria-modal": "true" },
      h("h3", {}, t("choose_reading")),
      miniCards(st.chooser[0][2], v ? v.level : null),
      st.chooser.map((a) =>
        h(
          "button",
          { type: "button", class: "btn wide", testid: "reading-option", dataset: { reading: `${a[0]}:${a[1]}` }, onclick: () => actions.act(a) },
          actionText(a, false),
        ),
      ),
      h("button", { type: "button", class: "btn secondary wide", testid: "reading-cancel", onclick: () => store.update((s) => { s.chooser = null; }, "overlay") }, t("cancel")),
    );
  }

  function render(force = false) {
    const key = overlayContentKey();
    if (key === overlayKey && !force) return; // same content: keep the DOM (and the focus) as it is
    const active = document.activeElement;
    const focusInside = Boolean(active && overlayEl.contains(active));
    const keepFocus = focusInside ? controlSignature(active) : null;
    const hadChooser = Boolean(overlayEl.querySelector("[data-testid=reading-chooser]"));
    const hadResult = Boolean(overlayEl.querySelector("[data-testid=result-panel]"));
    if (!overlayKey && key) focusBeforeOverlay = focusInside ? null : active;
    overlayKey = key;

    const boxes = [];
    if (st.chooser && st.chooser.length) boxes.push(chooserEl());
    if (showResult(store)) boxes.push(resultPanel(store, actions));
    replaceChildren(overlayEl, boxes.length ? h("div", { class: "overlay" }, boxes) : null);

    if (!key) {
      // closed: give the focus back to where it was, when that element is still on the page
      const back = focusBeforeOverlay;
      focusBeforeOverlay = null;
      if (focusInside && back && back.isConnected) focusQuietly(back);
      return;
    }
    const again = findControl(keepFocus);
    if (again) focusQuietly(again);
    else if (!hadChooser && st.chooser && st.chooser.length) focusQuietly(overlayEl.querySelector("[data-testid=reading-option]"));
    else if (!hadResult && showResult(store)) focusQuietly(overlayEl.querySelector("[data-testid=ready-btn]") || overlayEl.querySelector("[data-testid=again-btn]") || overlayEl.querySelector("[data-testid=result-close]"));
    else if (focusInside) focusQuietly(overlayEl.querySelector("button"));
  }

  store.subscribe("overlay", (force) => render(Boolean(force)));
  return { render };
}
