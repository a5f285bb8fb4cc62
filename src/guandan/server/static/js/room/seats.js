// The seats: the seat cards of the waiting room (take or move to a seat, fill with bots, leave,
// start; also listed in the drawer during the game) and the seat panels around the table (avatar
// with the turn's clock ring, name, cards left, place, 托管, bot level, offline).

import { h, keptForm, replaceChildren } from "../dom.js";
import { getConfig } from "../api.js";
import { getLang, t } from "../i18n.js";
import { authForm } from "../auth.js";
import { placeLabel, seatName, seatNo, teamName, teamOf, teamTag } from "../table.js";
import { botName, DIFFICULTIES, difficultyName } from "../rules.js";
import { asArray, isOwner, mySeat, names, roomSeats } from "./model.js";
import { clockRing, clockText } from "./widgets.js";
import { anhuiTitleText } from "../pages.js";
import { inviteControl } from "../friends.js";

/** The four seat cards; in the waiting room (waiting) with a button to take an empty seat. */
export function seatCards(store, actions, waiting) {
  const me = mySeat(store);
  const ctx = store.ctx;
  return h(
    "div",
    { class: `seat-grid${waiting ? "" : " compact"}` },
    roomSeats(store).map((s) => {
      const occupant = s.user ? s.user : s.bot ? botName(s.difficulty || s.bot, getLang()) : t("seat_empty");
      const empty = !s.user && !s.bot;
      const mine = me === s.seat;
      // one's own seat: offline exactly while one's own socket is down (the room summary may be older than the socket)
      const offline = mine ? store.state.conn !== "open" : Boolean(s.user && s.connected === false);
      return h(
        "div",
        { class: `seat-card team-${teamOf(s.seat)}${mine ? " mine" : ""}${empty ? " empty" : ""}`, testid: `seat-${s.seat}` },
        h("div", { class: "seat-card-head" }, teamTag(s.seat), h("span", {}, t("seat", { n: seatNo(s.seat) }))),
        h(
          "div",
          { class: "seat-occupant" },
          occupant,
          mine ? h("span", { class: "badge" }, t("seat_you")) : null,
          s.title ? h("span", { class: "badge ladder-title", title: s.title }, anhuiTitleText(s.title)) : null,
          offline ? h("span", { class: "badge offline", testid: `seat-offline-${s.seat}` }, t("seat_offline")) : null,
        ),
        waiting && ctx.me && empty
          ? h(
              "button",
              { type: "button", class: "btn small primary", testid: `seat-btn-${s.seat}`, onclick: () => actions.roomPost("seat", { seat: s.seat }) },
              me === null ? t("seat_take") : t("seat_move"),
            )
          : null,
      );
    }),
  );
}

/** The seats section of the room page before the game (sign-in, seat cards, bots, leave, start). */
export function renderSeats(store, actions, seatsEl) {
  const st = store.state;
  const ctx = store.ctx;
  const room = st.room;
  if (!room || st.notFound) {
    replaceChildren(seatsEl);
    return;
  }
  const waiting = room.status === "waiting" || !room.status;
  const me = mySeat(store);
  const seats = roomSeats(store);
  const owner = isOwner(store);
  const parts = [];
  if (room.status === "damaged") parts.push(h("p", { class: "damaged-note", testid: "room-damaged", role: "status" }, t("room_damaged_note")));
  // one sign-in form for the page: a room update redraws the seats while someone types their name
  if (!store.signInForm) store.signInForm = keptForm(() => authForm((user) => ctx.setMe(user)), getLang);
  if (!ctx.me && waiting) parts.push(store.signInForm());
  parts.push(seatCards(store, actions, waiting));
  if (waiting && ctx.me) {
    const botSel = h(
      "select",
      { testid: "bot-kind", "aria-label": t("fill_bots") },
      h("option", { value: "heuristic" }, t("bot_heuristic")),
      h("option", { value: "random" }, t("bot_random")),
    );
    // the other difficulties this server offers (easy, hard, expert), before the test bot
    getConfig().then((cfg) => {
      for (const d of Array.isArray(cfg.difficulties) ? cfg.difficulties : []) {
        if (d === "normal" || !DIFFICULTIES.includes(d) || [...botSel.options].some((o) => o.value === d)) continue;
        botSel.insertBefore(h("option", { value: d }, difficultyName(d, getLang())), botSel.lastChild);
      }
    });
    const anyEmpty = seats.some((s) => !s.user && !s.bot);
    const full = seats.every((s) => s.user || s.bot);
    parts.push(
      h(
        "div",
        { class: "seat-controls" },
        botSel,
        h("button", { type: "button", class: "btn", testid: "fill-bots-btn", disabled: !anyEmpty, onclick: () => actions.roomPost("bots", { bot: botSel.value }) }, t("fill_bots")),
        me !== null ? h("button", { type: "button", class: "btn", testid: "leave-btn", onclick: () => actions.roomPost("leave") }, t("leave_seat")) : null,
        owner
          ? h("button", { type: "button", class: "btn primary", testid: "start-btn", disabled: !full, onclick: () => actions.roomPost("start") }, t("start"))
          : null,
      ),
      h("p", { class: "muted" }, full && !owner ? t("waiting_for_start") : t("waiting_for_players")),
      me !== null ? inviteControl(ctx, room.id) : null,
    );
  }
  replaceChildren(seatsEl, parts);
}

/** The panel of seat s at the table, at position pos ("bottom", "left", "top", "right"). */
export function seatPanel(store, s, pos) {
  const st = store.state;
  const v = st.view;
  const nm = names(store);
  const counts = asArray(v.card_counts, 4);
  const finished = Array.isArray(v.finished) ? v.finished : [];
  const place = finished.indexOf(s);
  const turn = v.to_act === s && v.phase !== "game_over" && !st.between;
  const clockHere = turn && st.clock && st.clock.seat === s && st.clock.deadline_ms;
  const count = counts[s];
  const roomSeat = st.room && Array.isArray(st.room.seats) ? st.room.seats.find((x) => x && x.seat === s) : null;
  const name = seatName(nm, s);
  const isBot = Boolean(roomSeat && roomSeat.bot) || /^bot:/.test((v.seat_names || [])[s] || "");
  const initial = isBot ? "AI" : [...String(name)][0] || "?";
  const low = typeof count === "number" && count > 0 && count <= 10;
  // one's own seat: offline exactly while one's own socket is down (the room summary may be older than the socket)
  const offline = s === mySeat(store) ? st.conn !== "open" : Boolean(roomSeat && roomSeat.user && roomSeat.connected === false);
  // a person who left the game (issue 25, item 9): the bot plays the seat; shown "已离开 / left"
  const left = Array.isArray(st.autoReason) && st.autoReason[s] === "left";
  // for screen readers: team and name, you, cards left, finished, whose turn, 托管, offline
  const label = [
    t("seat_label", { team: teamName(teamOf(s)), name }),
    s === mySeat(store) ? t("seat_label_you") : null,
    typeof count === "number" ? t("cards_left", { n: count }) : null,
    place >= 0 ? t("seat_label_out", { place: placeLabel(place) }) : null,
    turn ? t("seat_label_turn") : null,
    left ? t("seat_left_title") : st.auto[s] ? t("auto_badge") : null,
    offline ? t("seat_offline") : null,
  ].filter(Boolean).join(t("call_joiner"));
  return h(
    "div",
    {
      class: `seat-panel pos-${pos} team-${teamOf(s)}${turn ? " turn" : ""}${place >= 0 ? " out" : ""}${st.auto[s] ? " auto" : ""}`,
      testid: `seat-panel-${s}`,
      role: "group",
      "aria-label": label,
    },
    h(
      "div",
      { class: "avatar-wrap" },
      h("div", { class: `avatar team-${teamOf(s)}`, title: teamName(teamOf(s)) }, initial),
      turn ? clockRing() : null,
      clockHere ? h("span", { class: "clock", testid: "turn-clock", dataset: { deadline: String(st.clock.deadline_ms) } }, clockText(st.clock.deadline_ms)) : null,
    ),
    h(
      "div",
      { class: "seat-text" },
      h("div", { class: "seat-panel-name" }, teamTag(s), h("span", { class: "nm", title: name }, name)),
      h(
        "div",
        { class: "seat-panel-info" },
        h(
          "span",
          { class: `count${low ? " low" : ""}`, testid: `card-count-${s}`, title: count === null || count === undefined ? t("cards_hidden") : t("cards_left", { n: count }) },
          count === null || count === undefined ? t("cards_hidden") : t("cards_left", { n: count }),
        ),
        place >= 0 ? h("span", { class: `badge place place-${place + 1}` }, placeLabel(place)) : null,
        left
          ? h("span", { class: "badge left", testid: `left-badge-${s}`, title: t("seat_left_title") }, t("seat_left"))
          : st.auto[s] ? h("span", { class: "badge auto", testid: `auto-badge-${s}`, title: t("auto_title") }, t("auto_badge")) : null,
        roomSeat && roomSeat.bot ? h("span", { class: "badge bot-level" }, difficultyName(roomSeat.difficulty || roomSeat.bot, getLang())) : null,
        roomSeat && roomSeat.title ? h("span", { class: "badge ladder-title", testid: `seat-title-${s}`, title: roomSeat.title }, anhuiTitleText(roomSeat.title)) : null,
        offline ? h("span", { class: "badge offline", testid: `seat-offline-${s}` }, t("seat_offline")) : null,
      ),
      turn && !clockHere ? h("div", { class: "turn-line" }, t("turn")) : null,
    ),
  );
}
