// The bar above the table: the menu (drawer) button, the room's name, both teams' levels, the
// deal's level and wild card, the connection, the last-trick (上一轮) and tracker (记牌器) toggles and
// the sound switch, the quick phrases (room/phrases.js); and the popovers those toggles open.

import { h } from "../dom.js";
import { roomTitle } from "../api.js";
import { t } from "../i18n.js";
import { actionText, cardEl, playMini, rankLabel } from "../cards.js";
import { seatName, teamOf, teamTag } from "../table.js";
import { previousTrick, trackerPanel } from "../tracker.js";
import { unlockAudio } from "../sound.js";
import { setSilent, silent } from "../voice.js";
import { keysButton, keysLegend } from "./keyboard.js";
import { names, seated } from "./model.js";
import { phraseButton, phrasePanel } from "./phrases.js";
import { closeBtn, connEl, icon, matchClockEl } from "./widgets.js";

/** Set one of the table's toggles (drawer, tracker, lastTrick) and render the table. */
function setToggle(store, name, on) {
  store.update((s) => {
    s[name] = on;
  }, "table");
}

export function tableBar(store) {
  const st = store.state;
  const v = st.view;
  const room = st.room || {};
  const levels = Array.isArray(v.levels) ? v.levels : [];
  const me = seated(store) ? v.seat : null;
  const playingTeam = levels[0] === v.level ? 0 : levels[1] === v.level ? 1 : null;
  const wilds = Array.isArray(v.wilds) && v.wilds.length ? v.wilds : [`${v.level}H`];
  const muted = silent(); // no sounds and no voice (voice.js)
  return h(
    "div",
    { class: "table-bar" },
    h("button", { type: "button", class: "btn icon-btn", testid: "menu-btn", "aria-label": t("menu"), title: t("menu"), onclick: () => setToggle(store, "drawer", true) }, icon("menu")),
    h("span", { class: "bar-title", testid: "room-title" }, roomTitle({ name: room.name, id: store.roomId })),
    h(
      "span",
      { class: "bar-levels", testid: "levels" },
      h("span", { class: `team-level team-0${playingTeam === 0 ? " playing" : ""}` }, `${t("team_a_short")} ${rankLabel(levels[0]) || "?"}`),
      h("span", { class: `team-level team-1${playingTeam === 1 ? " playing" : ""}` }, `${t("team_b_short")} ${rankLabel(levels[1]) || "?"}`),
    ),
    h("span", { class: "bar-deal-level", testid: "deal-level" }, h("span", { class: "lbl" }, `${t("deal_level")} `), h("strong", { class: "deal-level" }, rankLabel(v.level))),
    h("span", { class: "bar-wilds", testid: "wilds", title: t("wild_card") }, wilds.map((c) => cardEl(c, { level: v.level, size: "mini" }))),
    matchClockEl(store),
    h("span", { class: "bar-spacer" }),
    connEl(store),
    h("button", { type: "button", class: `btn bar-btn${st.lastTrick ? " on" : ""}`, testid: "last-trick-btn", "aria-pressed": String(st.lastTrick), onclick: () => setToggle(store, "lastTrick", !st.lastTrick) }, t("last_trick")),
    me !== null
      ? h("button", { type: "button", class: `btn bar-btn${st.tracker ? " on" : ""}`, testid: "tracker-btn", "aria-pressed": String(st.tracker), onclick: () => setToggle(store, "tracker", !st.tracker) }, t("tracker_btn"))
      : null,
    me !== null ? phraseButton(store) : null,
    h(
      "button",
      {
        type: "button", class: `btn icon-btn${muted ? " muted" : ""}`, testid: "mute-btn", "aria-pressed": String(muted),
        "aria-label": muted ? t("sound_off") : t("sound_on"), title: muted ? t("sound_off") : t("sound_on"),
        onclick: () => { setSilent(!silent()); unlockAudio(); store.notify("table"); },
      },
      icon(muted ? "muted" : "sound"),
    ),
    me !== null ? keysButton(store) : null,
  );
}

/** The popovers opened from the bar: the card tracker (seated players only) and the last trick. */
export function popovers(store, me) {
  const st = store.state;
  return [
    st.tracker && me !== null ? h("div", { class: "popover tracker-pop" }, trackerPanel(st.view), closeBtn(() => setToggle(store, "tracker", false))) : null,
    st.lastTrick ? lastTrickPanel(store) : null,
    st.keysHelp && me !== null ? keysLegend(store) : null,
    me !== null ? phrasePanel(store) : null,
  ];
}

function lastTrickPanel(store) {
  const v = store.state.view;
  const trick = previousTrick(v);
  const nm = names(store);
  return h(
    "div",
    { class: "popover last-trick-pop", testid: "last-trick" },
    h("div", { class: "pop-head" }, h("strong", {}, t("last_trick")), closeBtn(() => setToggle(store, "lastTrick", false))),
    trick
      ? h(
          "ol",
          { class: "last-trick-list" },
          trick.map(([s, a]) =>
            h(
              "li",
              { class: `team-${teamOf(s)}`, testid: "last-trick-row", dataset: { seat: String(s) } },
              teamTag(s),
              h("span", { class: "nm" }, seatName(nm, s)),
              a[0] === "pass" ? h("span", { class: "pass-label" }, t("pass_word")) : [playMini(a, v.level), h("span", { class: "play-label" }, actionText(a, false))],
            ),
          ),
        )
      : h("p", { class: "muted" }, t("last_trick_none")),
  );
}
