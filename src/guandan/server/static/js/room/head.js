// The head of the room page before the game: the room's title, status, connection, spectator
// badge, preset with the rules changed from it, owner, clocks and the invite link (during the game they move into the drawer); at a
// tournament table the match clock, and for a spectator the levels only (delayed spectating).

import { h, link, replaceChildren } from "../dom.js";
import { roomTitle } from "../api.js";
import { getLang, t } from "../i18n.js";
import { clocksInWords, rulesInWords } from "../rules.js";
import { ownerName } from "./model.js";
import { connEl, inviteEl, matchClockEl } from "./widgets.js";

export function renderHead(store, headEl) {
  const st = store.state;
  if (st.notFound) {
    replaceChildren(headEl, h("div", { class: "card-panel" }, h("p", {}, t("not_found")), link("/", t("back_to_lobby"))));
    return;
  }
  const room = st.room || {};
  replaceChildren(
    headEl,
    h(
      "div",
      { class: "room-title-row" },
      h("h1", { testid: "room-title" }, t("room_title", { name: roomTitle({ name: room.name, id: store.roomId }) })),
      room.status ? h("span", { class: `status-pill ${room.status}` }, t(`room_status_${room.status}`)) : null,
      connEl(store),
      st.role === "spectator" && st.view ? h("span", { class: "badge spectator", testid: "spectator-badge" }, t("spectating")) : null,
    ),
    h(
      "div",
      { class: "room-meta-row" },
      // the preset and every rule changed from it ("官方规则 · 打到 8"), not only the preset's name
      room.preset ? h("span", { testid: "room-rules-line" }, t("room_preset", { preset: rulesInWords(room.preset, room.overrides || room.options || {}, getLang()).text })) : null,
      ownerName(room) ? h("span", {}, t("room_owner", { name: ownerName(room) })) : null,
      room.clocks ? h("span", { testid: "room-clocks" }, clocksInWords(room.clocks, getLang())) : null,
      room.unrated ? h("span", { class: "badge", testid: "room-unrated", title: t("unrated_why") }, t("unrated")) : null,
      st.competition ? null : inviteEl(store),
    ),
    st.competition ? h("div", { class: "room-meta-row competition-row" }, matchClockEl(store)) : null,
    st.delayed ? delayedPanel(st.delayed) : null,
  );
}

/** What a spectator of a tournament table sees during the game: the levels, no cards (delayed spectating). */
function delayedPanel(v) {
  const lv = Array.isArray(v.levels) ? v.levels : ["?", "?"];
  return h("div", { class: "card-panel delayed-panel", testid: "delayed-spectating" },
    h("p", {}, t("delayed_spectating")),
    h("p", {}, h("strong", {}, t("delayed_levels", { a: lv[0], b: lv[1], n: v.deal_number, done: v.deals_done }))));
}
