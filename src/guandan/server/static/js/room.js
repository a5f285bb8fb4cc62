// The room page: seats, invite link, bots, start, and the live table over the websocket
// /ws/rooms/{id} (server_contract.md "Table websocket").
//
// Legal plays come only from view.legal_actions: the selection is compared with each action's
// cards as a sorted multiset and the chosen action is sent back exactly as listed.

import { h, link, replaceChildren, toast } from "./dom.js";
import { get, post } from "./api.js";
import { getLang, t } from "./i18n.js";
import { authForm, errText } from "./auth.js";
import { ReconnectingSocket } from "./ws.js";
import { actionText, cardEl, groupByRank, miniCards, rankLabel, sameCards, sortCards } from "./cards.js";
import {
  botLabel, infoStrip, lastActions, placeLabel, positionOf, seatName, seatNo, teamName, teamOf, teamTag, trickCell,
  tributeEventLines,
} from "./table.js";

const SEATS = [0, 1, 2, 3];

function asArray(x, n, fill = null) {
  return Array.isArray(x) ? x : Array.from({ length: n }, () => fill);
}

/** "Clock: lead 30s, follow 20s" for room.clocks {lead_s, follow_s}; "" when there is no clock. */
function clocksText(clocks) {
  if (!clocks || typeof clocks !== "object") return "";
  const parts = [];
  if (typeof clocks.lead_s === "number") parts.push(t("room_clock_lead", { s: clocks.lead_s }));
  if (typeof clocks.follow_s === "number") parts.push(t("room_clock_follow", { s: clocks.follow_s }));
  return parts.length ? t("room_clocks", { list: parts.join(t("list_sep")) }) : "";
}

/** Display name of a seat name sent by the server: "bot:heuristic" becomes a short bot label ("Bot 2"). */
function displayName(name, seat) {
  const m = typeof name === "string" ? name.match(/^bot:(\w+)$/) : null;
  return m ? t("bot_short", { n: seat + 1 }) : name;
}

function ownerName(room) {
  const o = room && room.owner;
  if (o && typeof o === "object") return o.name || "";
  return o ? String(o) : "";
}

/** Mount the room page for params.id into el. Returns {destroy(), onMe(), onLang()}. */
export function mountRoom(el, params, ctx) {
  const roomId = params.id;
  const st = {
    room: null,
    view: null,
    role: null,
    seat: null,
    clock: null,
    auto: [false, false, false, false],
    conn: "connecting",
    notFound: false,
    handSorted: [],
    selected: new Set(),
    chooser: null, // list of actions offered in the reading chooser
    dealResult: null,
    gameOver: null,
    seenJiefeng: "",
  };
  let destroyed = false;
  let socket = null;
  let clockTimer = null;

  // Fixed skeleton; each part is re-rendered from st.
  const headEl = h("div", { class: "room-head" });
  const seatsEl = h("div", { class: "seats-section" });
  const tableEl = h("div", { class: "table-section" });
  const overlayEl = h("div", { class: "overlay-host" });
  replaceChildren(el, h("div", { class: "room-page" }, headEl, seatsEl, tableEl, overlayEl));

  // --- data ----------------------------------------------------------------------------
  function mySeat() {
    if (Number.isInteger(st.seat)) return st.seat;
    const me = ctx.me && ctx.me.name;
    if (me && st.room && Array.isArray(st.room.seats)) {
      const s = st.room.seats.find((x) => x && x.user === me);
      if (s && Number.isInteger(s.seat)) return s.seat;
    }
    return null;
  }

  function names() {
    const v = st.view;
    if (v && Array.isArray(v.seat_names)) return v.seat_names.map((n, s) => displayName(n, s));
    const out = [null, null, null, null];
    if (st.room && Array.isArray(st.room.seats)) {
      for (const s of st.room.seats) {
        if (!s || !Number.isInteger(s.seat) || s.seat < 0 || s.seat > 3) continue;
        out[s.seat] = s.user || (s.bot ? t("bot_short", { n: s.seat + 1 }) : null);
      }
    }
    return out;
  }

  function isOwner() {
    return Boolean(ctx.me && st.room && ownerName(st.room) === ctx.me.name);
  }

  function myTurn() {
    const v = st.view;
    return Boolean(v && st.role !== "spectator" && Number.isInteger(v.seat) && v.to_act === v.seat && Array.isArray(v.legal_actions) && v.legal_actions.length);
  }

  function selectedCards() {
    return [...st.selected].sort((a, b) => a - b).map((i) => st.handSorted[i]).filter((c) => c !== undefined);
  }

  function matchingActions() {
    const v = st.view;
    if (!v || !Array.isArray(v.legal_actions)) return [];
    const sel = selectedCards();
    if (!sel.length) return [];
    return v.legal_actions.filter((a) => Array.isArray(a) && a[0] !== "pass" && sameCards(a[2], sel));
  }

  function passAction() {
    const v = st.view;
    if (!v || !Array.isArray(v.legal_actions)) return null;
    return v.legal_actions.find((a) => Array.isArray(a) && a[0] === "pass") || null;
  }

  async function loadRoom() {
    try {
      const data = await get(`/api/rooms/${encodeURIComponent(roomId)}`);
      if (destroyed) return;
      if (data.room) st.room = data.room;
      render();
    } catch (e) {
      if (destroyed) return;
      if (e.status === 404) {
        st.notFound = true;
        render();
      } else toast(errText(e));
    }
  }

  // --- websocket ---------------------------------------------------------------------
  function onMessage(msg) {
    switch (msg.type) {
      case "state":
        onState(msg);
        break;
      case "deal_result":
        st.dealResult = msg;
        renderOverlay();
        break;
      case "game_over":
        st.gameOver = msg;
        renderOverlay();
        renderTable();
        break;
      case "error":
        toast(msg.message || t("error_generic"));
        break;
      case "hint":
        onHint(msg.action);
        break;
      default:
        break; // pong and anything unknown
    }
  }

  function onState(msg) {
    if (msg.room && typeof msg.room === "object") st.room = msg.room;
    st.role = msg.role || st.role;
    st.seat = Number.isInteger(msg.seat) ? msg.seat : null;
    st.view = msg.view && typeof msg.view === "object" ? msg.view : null;
    st.clock = msg.clock && typeof msg.clock === "object" ? msg.clock : null;
    st.auto = Array.isArray(msg.auto) ? msg.auto : [false, false, false, false];
    const v = st.view;
    const sorted = v && Array.isArray(v.hand) ? sortCards(v.hand, v.level) : [];
    if (!sameOrder(sorted, st.handSorted)) {
      st.selected.clear();
      st.chooser = null;
    }
    st.handSorted = sorted;
    if (!myTurn()) st.chooser = null;
    announceJiefeng();
    render();
  }

  function sameOrder(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }

  function announceJiefeng() {
    const v = st.view;
    if (!v || !Array.isArray(v.tribute_events)) return;
    const n = v.tribute_events.filter((e) => e && e.type === "jiefeng").length;
    const key = `${v.game}-${v.deal}-${n}`;
    if (n > 0 && st.seenJiefeng && key !== st.seenJiefeng) {
      const last = [...v.tribute_events].reverse().find((e) => e && e.type === "jiefeng");
      toast(t("ev_jiefeng", { name: seatName(names(), last.leader) }), "info");
    }
    st.seenJiefeng = key;
  }

  function onHint(action) {
    if (!Array.isArray(action)) {
      toast(t("hint_none"), "info");
      return;
    }
    if (action[0] === "pass") {
      st.selected.clear();
      toast(t("hint_pass"), "info");
      renderHandAndActions();
      return;
    }
    const want = [...(action[2] || [])];
    const picked = new Set();
    for (const card of want) {
      const i = st.handSorted.findIndex((c, j) => c === card && !picked.has(j));
      if (i >= 0) picked.add(i);
    }
    st.selected = picked;
    st.chooser = null;
    renderHandAndActions();
  }

  function send(obj) {
    if (!socket || !socket.send(obj)) toast(t("reconnecting"));
  }

  function act(action) {
    st.chooser = null;
    send({ type: "act", action });
    renderOverlay();
  }

  function onPlay() {
    if (!myTurn()) return;
    const matches = matchingActions();
    if (!matches.length) {
      toast(st.selected.size ? t("not_legal") : t("select_cards"));
      return;
    }
    if (matches.length === 1) act(matches[0]);
    else {
      st.chooser = matches;
      renderOverlay();
    }
  }

  function onPass() {
    const p = passAction();
    if (myTurn() && p) act(p);
  }

  // --- seat actions --------------------------------------------------------------------
  async function roomPost(path, body) {
    try {
      const data = await post(`/api/rooms/${encodeURIComponent(roomId)}/${path}`, body);
      if (data && data.room) {
        st.room = data.room;
        render();
      }
    } catch (e) {
      toast(errText(e));
    }
  }

  // --- rendering ---------------------------------------------------------------------
  function render() {
    if (destroyed) return;
    renderHead();
    renderSeats();
    renderTable();
    renderOverlay();
  }

  function renderHead() {
    if (st.notFound) {
      replaceChildren(headEl, h("div", { class: "card-panel" }, h("p", {}, t("not_found")), link("/", t("back_to_lobby"))));
      return;
    }
    const room = st.room || {};
    const invitePath = room.invite_url || `/room/${roomId}`;
    const inviteUrl = `${window.location.origin}${invitePath}`;
    const connKey = st.conn === "open" ? "connected" : st.conn === "reconnecting" ? "reconnecting" : "connecting";
    replaceChildren(
      headEl,
      h(
        "div",
        { class: "room-title-row" },
        h("h1", { testid: "room-title" }, t("room_title", { name: room.name || roomId })),
        room.status ? h("span", { class: `status-pill ${room.status}` }, t(`room_status_${room.status}`)) : null,
        h("span", { class: `conn conn-${st.conn}`, testid: "conn-status", title: t(connKey) }, st.conn === "open" ? "●" : `● ${t(connKey)}`),
        st.role === "spectator" && st.view ? h("span", { class: "badge spectator", testid: "spectator-badge" }, t("spectating")) : null,
      ),
      h(
        "div",
        { class: "room-meta-row" },
        room.preset ? h("span", {}, t("room_preset", { preset: room.preset })) : null,
        ownerName(room) ? h("span", {}, t("room_owner", { name: ownerName(room) })) : null,
        clocksText(room.clocks) ? h("span", { testid: "room-clocks" }, clocksText(room.clocks)) : null,
        h(
          "span",
          { class: "invite" },
          h("span", { class: "muted" }, `${t("invite")}: `),
          h("a", { href: invitePath, "data-link": "", testid: "invite-link", class: "invite-link" }, inviteUrl),
          h("button", { type: "button", class: "btn small", testid: "copy-invite", onclick: () => copyText(inviteUrl) }, t("copy")),
        ),
      ),
    );
  }

  function renderSeats() {
    const room = st.room;
    if (!room || st.notFound) {
      replaceChildren(seatsEl);
      return;
    }
    const waiting = room.status === "waiting" || !room.status;
    const me = mySeat();
    const seats = SEATS.map((s) => (Array.isArray(room.seats) ? room.seats.find((x) => x && x.seat === s) : null) || { seat: s });
    const parts = [];
    if (!ctx.me && waiting) parts.push(authForm((user) => ctx.setMe(user)));
    parts.push(
      h(
        "div",
        { class: `seat-grid${waiting ? "" : " compact"}` },
        seats.map((s) => {
          const occupant = s.user ? s.user : s.bot ? botLabel(s.bot) : t("seat_empty");
          const empty = !s.user && !s.bot;
          const mine = me === s.seat;
          return h(
            "div",
            { class: `seat-card team-${teamOf(s.seat)}${mine ? " mine" : ""}${empty ? " empty" : ""}`, testid: `seat-${s.seat}` },
            h("div", { class: "seat-card-head" }, teamTag(s.seat), h("span", {}, t("seat", { n: seatNo(s.seat) }))),
            h(
              "div",
              { class: "seat-occupant" },
              occupant,
              mine ? h("span", { class: "badge" }, t("seat_you")) : null,
              s.user && s.connected === false ? h("span", { class: "badge offline" }, t("seat_offline")) : null,
            ),
            waiting && ctx.me && empty
              ? h(
                  "button",
                  { type: "button", class: "btn small primary", testid: `seat-btn-${s.seat}`, onclick: () => roomPost("seat", { seat: s.seat }) },
                  me === null ? t("seat_take") : t("seat_move"),
                )
              : null,
          );
        }),
      ),
    );
    if (waiting && ctx.me) {
      const botSel = h(
        "select",
        { testid: "bot-kind", "aria-label": t("fill_bots") },
        h("option", { value: "heuristic" }, t("bot_heuristic")),
        h("option", { value: "random" }, t("bot_random")),
      );
      const anyEmpty = seats.some((s) => !s.user && !s.bot);
      const full = seats.every((s) => s.user || s.bot);
      parts.push(
        h(
          "div",
          { class: "seat-controls" },
          botSel,
          h("button", { type: "button", class: "btn", testid: "fill-bots-btn", disabled: !anyEmpty, onclick: () => roomPost("bots", { bot: botSel.value }) }, t("fill_bots")),
          me !== null ? h("button", { type: "button", class: "btn", testid: "leave-btn", onclick: () => roomPost("leave") }, t("leave_seat")) : null,
          isOwner()
            ? h("button", { type: "button", class: "btn primary", testid: "start-btn", disabled: !full, onclick: () => roomPost("start") }, t("start"))
            : null,
        ),
        h("p", { class: "muted" }, full && !isOwner() ? t("waiting_for_start") : t("waiting_for_players")),
      );
    }
    replaceChildren(seatsEl, parts);
  }

  function renderTable() {
    const v = st.view;
    if (!v || st.notFound) {
      replaceChildren(tableEl);
      return;
    }
    const nm = names();
    const bottom = Number.isInteger(v.seat) && st.role !== "spectator" ? v.seat : mySeat() ?? 0;
    const last = lastActions(v);
    const counts = asArray(v.card_counts, 4);
    const finished = Array.isArray(v.finished) ? v.finished : [];
    const showPoints = Boolean((v.rules && v.rules.points) || (st.room && st.room.options && st.room.options.points));

    const seatPanel = (s) => {
      const pos = positionOf(s, bottom);
      const place = finished.indexOf(s);
      const turn = v.to_act === s;
      const clockHere = st.clock && st.clock.seat === s && st.clock.deadline_ms;
      const count = counts[s];
      const roomSeat = st.room && Array.isArray(st.room.seats) ? st.room.seats.find((x) => x && x.seat === s) : null;
      return h(
        "div",
        { class: `seat-panel pos-${pos} team-${teamOf(s)}${turn ? " turn" : ""}${place >= 0 ? " out" : ""}`, testid: `seat-panel-${s}` },
        h(
          "div",
          { class: "seat-panel-name" },
          teamTag(s),
          h("span", { class: "nm" }, seatName(nm, s)),
          roomSeat && roomSeat.user && roomSeat.connected === false ? h("span", { class: "badge offline" }, t("seat_offline")) : null,
        ),
        h(
          "div",
          { class: "seat-panel-info" },
          h("span", { class: "count", testid: `card-count-${s}` }, count === null || count === undefined ? t("cards_hidden") : t("cards_left", { n: count })),
          place >= 0 ? h("span", { class: `badge place place-${place + 1}` }, placeLabel(place)) : null,
          st.auto[s] ? h("span", { class: "badge auto", testid: `auto-badge-${s}`, title: t("auto_title") }, t("auto_badge")) : null,
        ),
        turn
          ? h(
              "div",
              { class: "turn-line" },
              h("span", { class: "turn-dot" }, "▶"),
              clockHere
                ? h("span", { class: "clock", testid: "turn-clock", dataset: { deadline: String(st.clock.deadline_ms) } }, clockText(st.clock.deadline_ms))
                : h("span", {}, t("turn")),
            )
          : null,
      );
    };

    const topSeat = Number.isInteger(v.top_seat) ? v.top_seat : null;
    const center = h(
      "div",
      { class: "table-center" },
      SEATS.map((s) => trickCell(last[s], v.level, s, positionOf(s, bottom), s === topSeat && Array.isArray(last[s]) && last[s][0] !== "pass")),
      h("div", { class: "center-info" }, promptEl(), tributeEl()),
    );

    const parts = [
      infoStrip({
        levels: v.levels,
        level: v.level,
        wilds: v.wilds,
        game: v.game,
        deal: v.deal,
        a_fails: v.a_fails,
        points: v.points,
        showPoints,
        finished,
        names: nm,
      }),
      h("div", { class: "felt", testid: "table" }, SEATS.map(seatPanel), center),
    ];
    if (v.phase === "game_over" || st.gameOver) {
      parts.push(gameOverBanner());
    }
    if (st.role !== "spectator" && Number.isInteger(v.seat)) {
      parts.push(h("div", { class: "actions-bar", testid: "actions-bar" }));
      parts.push(h("div", { class: "hand-wrap" }, h("div", { class: "hand", testid: "hand" })));
    }
    replaceChildren(tableEl, parts);
    renderHandAndActions();
  }

  function promptEl() {
    const v = st.view;
    const nm = names();
    let text = "";
    let cls = "prompt";
    if (v.phase === "tribute") {
      text = myTurn() ? t("prompt_tribute") : t("prompt_tribute_wait", { name: seatName(nm, v.to_act) });
      cls += " tribute";
    } else if (v.phase === "return") {
      text = myTurn() ? t("prompt_return") : t("prompt_return_wait", { name: seatName(nm, v.to_act) });
      cls += " tribute";
    } else if (v.phase === "play") {
      if (myTurn()) text = Array.isArray(v.top) ? t("prompt_follow", { play: actionText(v.top) }) : t("prompt_lead");
      else if (Number.isInteger(v.to_act)) text = t("waiting_for", { name: seatName(nm, v.to_act) });
    } else if (v.phase === "game_over") {
      text = t("phase_game_over");
    }
    if (myTurn()) cls += " mine";
    return h("div", { class: cls, testid: "phase-prompt" }, myTurn() ? h("strong", {}, `${t("your_turn")} · `) : null, text);
  }

  function tributeEl() {
    const v = st.view;
    const evs = Array.isArray(v.tribute_events) ? v.tribute_events : [];
    if (!evs.length) return null;
    return h(
      "div",
      { class: "tribute-events", testid: "tribute-events" },
      h("div", { class: "info-label" }, t("tribute_events")),
      evs.flatMap((e) => tributeEventLines(e, names(), v.level)),
    );
  }

  function gameOverBanner() {
    const g = st.gameOver;
    const team = g && Number.isInteger(g.winner_team) ? g.winner_team : null;
    return h(
      "div",
      { class: "game-over-banner", testid: "game-over-banner" },
      h("strong", {}, team === null ? t("game_over_title") : t("game_over_winner", { team: teamName(team) })),
      g && g.game_id !== undefined && g.game_id !== null ? link(`/replay/${g.game_id}`, t("watch_replay"), { testid: "replay-link-banner", class: "btn small" }) : null,
    );
  }

  function renderHandAndActions() {
    const v = st.view;
    const handEl = tableEl.querySelector(".hand");
    const barEl = tableEl.querySelector(".actions-bar");
    if (!v || !handEl || !barEl) return;
    const mine = myTurn();
    const phase = v.phase;
    const eligible = new Set();
    if (mine && (phase === "tribute" || phase === "return")) {
      for (const a of v.legal_actions) if (Array.isArray(a) && Array.isArray(a[2])) a[2].forEach((c) => eligible.add(c));
    }
    const groups = groupByRank(st.handSorted);
    replaceChildren(
      handEl,
      groups.map((g) =>
        h(
          "div",
          { class: "rank-col" },
          g.cards.map(({ card, index }) => {
            // The slot is the hit target: it covers exactly the visible part of a stacked card,
            // so a click at its centre lands on it (the face inside ignores pointer events).
            const face = cardEl(card, { level: v.level });
            face.removeAttribute("data-card");
            const cls = ["card-slot"];
            if (st.selected.has(index)) cls.push("selected");
            if (eligible.size) cls.push(eligible.has(card) ? "eligible" : "dim");
            return h("div", { class: cls.join(" "), testid: "hand-card", dataset: { card, index: String(index) }, title: face.title }, face);
          }),
        ),
      ),
    );
    const matches = matchingActions();
    const pass = passAction();
    const playLabel = phase === "tribute" ? t("pay_tribute") : phase === "return" ? t("return_card") : t("play");
    const preview = matches.length === 1 ? actionText(matches[0], false) : matches.length > 1 ? `${matches.length}×` : "";
    replaceChildren(
      barEl,
      h("button", { type: "button", class: "btn primary big", testid: "play-btn", disabled: !(mine && matches.length), onclick: onPlay }, playLabel, preview ? h("span", { class: "preview" }, ` (${preview})`) : null),
      h("button", { type: "button", class: "btn big", testid: "pass-btn", disabled: !(mine && pass), onclick: onPass }, t("pass")),
      h("button", { type: "button", class: "btn big", testid: "hint-btn", disabled: !mine, onclick: () => send({ type: "hint" }) }, t("hint")),
      h("button", { type: "button", class: "btn big secondary", testid: "clear-btn", disabled: !st.selected.size, onclick: () => { st.selected.clear(); renderHandAndActions(); } }, t("clear")),
    );
  }

  // The overlay (reading chooser, result panel) is rebuilt only when what it shows changes:
  // every table change sends a new `state` message, and rebuilding the same panel each time
  // would drop the keyboard focus (on Continue, on a reading) and detach the panel under the
  // pointer. overlayKey is the text of what is shown ("" when nothing is).
  let overlayKey = "";
  let focusBeforeOverlay = null; // element focused before the overlay opened, focused again when it closes

  function overlayContentKey() {
    const v = st.view;
    const chooser = st.chooser && st.chooser.length ? st.chooser : null;
    const result = st.dealResult || st.gameOver ? [st.dealResult, st.gameOver, names()] : null;
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

  function renderOverlay() {
    if (destroyed) return;
    const key = overlayContentKey();
    if (key === overlayKey) return; // same content: keep the DOM (and the focus) as it is
    const active = document.activeElement;
    const focusInside = Boolean(active && overlayEl.contains(active));
    const keepFocus = focusInside ? controlSignature(active) : null;
    const hadChooser = Boolean(overlayEl.querySelector("[data-testid=reading-chooser]"));
    const hadResult = Boolean(overlayEl.querySelector("[data-testid=result-panel]"));
    if (!overlayKey && key) focusBeforeOverlay = focusInside ? null : active;
    overlayKey = key;

    const boxes = [];
    const v = st.view;
    if (st.chooser && st.chooser.length) {
      boxes.push(
        h(
          "div",
          { class: "modal chooser", testid: "reading-chooser", role: "dialog", "aria-modal": "true" },
          h("h3", {}, t("choose_reading")),
          miniCards(st.chooser[0][2], v ? v.level : null),
          st.chooser.map((a) =>
            h(
              "button",
              { type: "button", class: "btn wide", testid: "reading-option", dataset: { reading: `${a[0]}:${a[1]}` }, onclick: () => act(a) },
              actionText(a, false),
            ),
          ),
          h("button", { type: "button", class: "btn secondary wide", testid: "reading-cancel", onclick: () => { st.chooser = null; renderOverlay(); } }, t("cancel")),
        ),
      );
    }
    if (st.dealResult || st.gameOver) boxes.push(resultPanel());
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
    else if (!hadResult && (st.dealResult || st.gameOver)) focusQuietly(overlayEl.querySelector("[data-testid=result-close]"));
    else if (focusInside) focusQuietly(overlayEl.querySelector("button"));
  }

  function resultPanel() {
    const r = st.dealResult;
    const g = st.gameOver;
    const nm = names();
    const close = () => {
      st.dealResult = null;
      st.gameOver = null;
      renderOverlay();
    };
    const rows = [];
    if (r) {
      const order = Array.isArray(r.finish_order) ? r.finish_order : [];
      rows.push(
        h(
          "ol",
          { class: "finish-list", testid: "result-finish-order" },
          order.map((s, i) => h("li", { class: `team-${teamOf(s)}` }, h("span", { class: "badge place" }, placeLabel(i)), " ", teamTag(s), " ", seatName(nm, s))),
        ),
      );
      const kv = (k, val, testid) => h("div", { class: "kv", testid }, h("span", { class: "k" }, k), h("span", { class: "v" }, val));
      if (r.result) rows.push(kv(t("result_code"), r.result, "result-code"));
      if (Number.isInteger(r.winner_team)) rows.push(kv(t("result_winner"), teamName(r.winner_team), "result-winner"));
      if (r.upgrade !== undefined && r.upgrade !== null) rows.push(kv(t("result_upgrade"), t("result_upgrade_n", { n: r.upgrade }), "result-upgrade"));
      if (Array.isArray(r.levels)) rows.push(kv(t("result_new_levels"), `${t("team_a")} ${rankLabel(r.levels[0])} · ${t("team_b")} ${rankLabel(r.levels[1])}`, "result-levels"));
      if (Array.isArray(r.a_fails)) rows.push(kv(t("a_fails"), `${t("team_a")} ${r.a_fails[0]} · ${t("team_b")} ${r.a_fails[1]}`, "result-a-fails"));
      if (r.passed && Number.isInteger(r.winner_team)) rows.push(h("div", { class: "note good" }, t("result_passed", { team: teamName(r.winner_team) })));
      for (const team of Array.isArray(r.failed) ? r.failed : []) rows.push(h("div", { class: "note bad" }, t("result_failed", { team: teamName(team) })));
      for (const team of Array.isArray(r.demoted) ? r.demoted : []) rows.push(h("div", { class: "note bad" }, t("result_demoted", { team: teamName(team) })));
      if (Array.isArray(r.points) || Array.isArray(r.points_total)) {
        const pts = Array.isArray(r.points) ? r.points : [];
        const tot = Array.isArray(r.points_total) ? r.points_total : [];
        const signed = (p) => (typeof p === "number" && p > 0 ? `+${p}` : p === undefined || p === null ? "" : String(p));
        rows.push(
          h(
            "table",
            { class: "points-table", testid: "result-points" },
            h("thead", {}, h("tr", {}, h("th", {}, t("points")), h("th", {}, t("result_points")), h("th", {}, t("result_points_total")))),
            h("tbody", {}, SEATS.map((s) => h("tr", {}, h("td", {}, teamTag(s), " ", seatName(nm, s)), h("td", {}, signed(pts[s])), h("td", {}, tot[s] === undefined ? "" : String(tot[s]))))),
          ),
        );
      }
    }
    let over = null;
    if (g) {
      over = h(
        "div",
        { class: "game-over", testid: "game-over-panel" },
        h("h3", {}, Number.isInteger(g.winner_team) ? t("game_over_winner", { team: teamName(g.winner_team) }) : t("game_over_title")),
        g.game_id !== undefined && g.game_id !== null ? link(`/replay/${g.game_id}`, t("watch_replay"), { testid: "replay-link", class: "btn primary" }) : null,
      );
    }
    return h(
      "div",
      { class: "modal result", testid: "result-panel", role: "dialog", "aria-modal": "true" },
      h("h3", {}, r ? t("result_title") : t("game_over_title")),
      rows,
      over,
      h("button", { type: "button", class: "btn wide", testid: "result-close", onclick: close }, g ? t("close") : t("continue")),
    );
  }

  function clockText(deadline) {
    const s = Math.max(0, Math.ceil((Number(deadline) - Date.now()) / 1000));
    return t("clock_left", { s });
  }

  function tickClocks() {
    for (const c of el.querySelectorAll(".clock[data-deadline]")) {
      const dl = Number(c.dataset.deadline);
      c.textContent = clockText(dl);
      c.classList.toggle("urgent", dl - Date.now() < 5000);
    }
  }

  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
      toast(t("copied"), "info");
      return;
    } catch (_e) {
      // no clipboard API outside secure contexts (plain http on a LAN address): fall back below
    }
    const area = h("textarea", { class: "copy-buffer", readonly: true }, text);
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (_e) {
      ok = false;
    }
    area.remove();
    toast(ok ? t("copied") : t("copy_failed"), ok ? "info" : "error");
  }

  // --- selection: click or drag across cards ---------------------------------------------
  let drag = null; // {mode: true (select) | false (deselect), seen: Set, moved}

  function cardIndexAt(x, y) {
    const target = document.elementFromPoint(x, y);
    const card = target && target.closest ? target.closest(".hand .card-slot[data-index]") : null;
    return card ? Number(card.dataset.index) : null;
  }

  function setSelected(i, on) {
    if (on) st.selected.add(i);
    else st.selected.delete(i);
    const cardNode = tableEl.querySelector(`.hand .card-slot[data-index="${i}"]`);
    if (cardNode) cardNode.classList.toggle("selected", on);
  }

  function onPointerDown(ev) {
    const card = ev.target.closest && ev.target.closest(".hand .card-slot[data-index]");
    if (!card || (ev.button !== undefined && ev.button !== 0)) return;
    ev.preventDefault();
    const i = Number(card.dataset.index);
    drag = { mode: !st.selected.has(i), seen: new Set([i]) };
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
    renderHandAndActions();
  }

  tableEl.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", onPointerUp);
  document.addEventListener("pointercancel", onPointerUp);

  function onKey(ev) {
    if (ev.target && /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName)) return;
    const inOverlay = Boolean(ev.target && ev.target.nodeType === 1 && overlayEl.contains(ev.target));
    if (inOverlay && ev.key !== "Escape") return; // Enter/Space on a focused overlay button press that button
    if (ev.key === "Escape" && st.chooser) {
      st.chooser = null;
      renderOverlay();
    } else if (ev.key === "Enter" && myTurn() && !st.chooser) {
      ev.preventDefault();
      onPlay();
    }
  }
  document.addEventListener("keydown", onKey);

  // --- start -------------------------------------------------------------------------------
  render();
  loadRoom();
  socket = new ReconnectingSocket(`/ws/rooms/${encodeURIComponent(roomId)}`, {
    onMessage,
    onStatus: (s) => {
      st.conn = s;
      if (!destroyed) renderHead();
    },
  });
  clockTimer = setInterval(tickClocks, 250);

  return {
    destroy() {
      destroyed = true;
      clearInterval(clockTimer);
      if (socket) socket.close();
      document.removeEventListener("pointermove", onPointerMove);
      document.removeEventListener("pointerup", onPointerUp);
      document.removeEventListener("pointercancel", onPointerUp);
      document.removeEventListener("keydown", onKey);
    },
    onMe() {
      // the session cookie changed: the server must see the new identity
      if (socket) socket.reconnect();
      loadRoom();
      render();
    },
    onLang: render,
  };
}
