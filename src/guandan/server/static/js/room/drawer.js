// The drawer of the table view (the menu): the room's name, invite link, rules in words and clocks,
// the game and deal with A-fails, points and the finish order, this deal's tribute events, the seat
// cards, voice / sounds / effects (room/av-settings.js), the language and the way back to the lobby.

import { h, link } from "../dom.js";
import { roomTitle } from "../api.js";
import { getLang, LANGS, setLang, t } from "../i18n.js";
import { placeLabel, seatName, tributeEventLines } from "../table.js";
import { clocksInWords, rulesInWords } from "../rules.js";
import { names, targetOf } from "./model.js";
import { seatCards } from "./seats.js";
import { avSettings } from "./av-settings.js";
import { closeBtn, inviteEl } from "./widgets.js";
import { leaveDialog, leaveSection } from "./leave.js";

/** The room's rules in plain words (rules.js): the preset's name and each rule change ("打到 8"). */
function rulesLines(room) {
  const words = rulesInWords(room.preset || "official", room.overrides || room.options || {}, getLang());
  return [words.name, ...words.overrides.map((o) => o.text)];
}

export function drawer(store, actions) {
  const st = store.state;
  const v = st.view;
  const room = st.room || {};
  const nm = names(store);
  const finished = Array.isArray(v.finished) ? v.finished : [];
  const showPoints = Boolean((v.rules && v.rules.points) || (room.options && room.options.points));
  const close = () => store.update((s) => { s.drawer = false; }, "table");
  const langSel = h(
    "select",
    { class: "lang-switch", testid: "drawer-lang", "aria-label": t("language"), onchange: (ev) => setLang(ev.target.value) },
    LANGS.map((l) => h("option", { value: l, selected: l === getLang() }, l === "zh" ? "中文" : "English")),
  );
  return [h(
    "div",
    { class: "drawer-host", onclick: (ev) => { if (ev.target === ev.currentTarget) close(); } },
    h(
      "aside",
      { class: "drawer", testid: "room-drawer", role: "dialog", "aria-label": t("menu") },
      h("div", { class: "pop-head" }, h("h2", {}, t("room_title", { name: roomTitle({ name: room.name, id: store.roomId }) })), closeBtn(close, "drawer-close")),
      h("div", { class: "drawer-sec" }, inviteEl(store)),
      h(
        "div",
        { class: "drawer-sec", testid: "room-rules" },
        h("div", { class: "info-label" }, t("rules_title")),
        rulesLines(room).map((line) => h("div", { class: "rule-line" }, line)),
        h("div", { class: "rule-line", testid: "room-clocks" }, clocksInWords(room.clocks, getLang())),
        room.unrated ? h("div", { class: "rule-line", testid: "room-unrated", title: t("unrated_why") }, t("unrated")) : null,
      ),
      h(
        "div",
        { class: "drawer-sec" },
        h("div", { class: "info-label" }, t("game_deal", { game: v.game, deal: v.deal })),
        Array.isArray(v.a_fails) && (v.a_fails[0] || v.a_fails[1])
          ? h("div", { testid: "a-fails" }, `${t("a_fails_at", { target: targetOf(v, room) })}: ${t("team_a")} ${v.a_fails[0]} · ${t("team_b")} ${v.a_fails[1]}`)
          : null,
        showPoints && Array.isArray(v.points)
          ? h("div", { testid: "points" }, `${t("points")}: `, v.points.map((p, s) => h("span", { class: "pts" }, `${seatName(nm, s)} ${p}`)))
          : null,
        h(
          "div",
          { testid: "finish-order" },
          h("span", { class: "info-label" }, `${t("finish_order")}: `),
          finished.length ? finished.map((s, i) => h("span", { class: "place" }, `${placeLabel(i)} ${seatName(nm, s)}`)) : h("span", { class: "muted" }, t("finish_none")),
        ),
      ),
      Array.isArray(v.tribute_events) && v.tribute_events.length
        ? h(
            "div",
            { class: "drawer-sec tribute-events", testid: "drawer-tribute-events" },
            h("div", { class: "info-label" }, t("tribute_events")),
            v.tribute_events.flatMap((e) => tributeEventLines(e, nm, v.level)),
          )
        : null,
      h("div", { class: "drawer-sec" }, seatCards(store, actions, false)),
      avSettings(store),
      leaveSection(store),
      h("div", { class: "drawer-sec drawer-row" }, h("label", { class: "inline" }, t("language"), langSel), link("/", t("back_to_lobby"), { class: "btn", testid: "drawer-lobby" })),
    ),
  ), leaveDialog(store)];
}
