// The room page: seats, invite link, bots and start while the room waits; once the game runs, the
// table view (issue 7): the whole table in the viewport with the own hand pinned to the bottom, the
// other seats around it, each seat's last play in front of it, the turn and its clock, the actions
// (play, pass, hint cycling, clear, 理牌, 托管), the card tracker (记牌器), the last trick (上一轮),
// sounds and motion, the result screen between deals with its ready step, and the game-over summary
// with "play again". Room chrome (invite link, rules, seats, language) sits in a drawer.
//
// Server messages follow docs/table-contract.md. Legal plays come only from view.legal_actions: the
// selection is compared with each action's cards as a sorted multiset and the chosen action is sent
// back exactly as listed.

import { h, hideToast, link, replaceChildren, toast } from "./dom.js";
import { errorText, get, getConfig, inviteLink, post, roomTitle } from "./api.js";
import { getLang, LANGS, setLang, t } from "./i18n.js";
import { authForm, errText } from "./auth.js";
import { ReconnectingSocket } from "./ws.js";
import { actionText, cardEl, miniCards, rankLabel, sameCards } from "./cards.js";
import {
  lastActions, placeLabel, positionOf, seatName, seatNo, teamName, teamOf, teamTag, trickCell,
  tributeEventLines,
} from "./table.js";
import { arrangeHand, arrangementKey, flatten, groupEnds, layoutFan, loadArrangement, saveArrangement, SORT_MODES } from "./hand.js";
import { previousTrick, trackerPanel, tricksOf } from "./tracker.js";
import { isMuted, playSound, setMuted, unlockAudio } from "./sound.js";
import { botName, clocksInWords, DIFFICULTIES, difficultyName, presetName, resultWords as resultInWords, rulesInWords } from "./rules.js";

const SEATS = [0, 1, 2, 3];
const BOMB_TYPES = new Set(["bomb", "straight_flush", "joker_bomb"]);
/** Seconds the cards received in tribute or return stay highlighted in the hand (item 10). */
const RECEIVED_HIGHLIGHT_MS = 6000;
/** Seconds a table notice stays up. */
const NOTICE_MS = 6000;

function asArray(x, n, fill = null) {
  return Array.isArray(x) ? x : Array.from({ length: n }, () => fill);
}

/** Display name of a seat name sent by the server: "bot:normal" becomes a short bot label ("Bot 2"). */
function displayName(name, seat) {
  const m = typeof name === "string" ? name.match(/^bot:(\w+)$/) : null;
  return m ? t("bot_short", { n: seat + 1 }) : name;
}

function ownerName(room) {
  const o = room && room.owner;
  if (o && typeof o === "object") return o.name || "";
  return o ? String(o) : "";
}

/** Whether the user asked the system for less motion (CSS honours it too). */
function reducedMotion() {
  return Boolean(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

/** The result of a deal in Guandan words (双下 / 单下 / 平下) from result_code or the neutral code. */
function resultWords(r) {
  return r ? resultInWords(r.result_code || r.result) : "";
}

/**
 * The losing team of a deal result: the team its word describes (docs/rules.md R34: 双下 is the team that
 * finished 3rd and 4th, so a 1-2 is 双下 for the losers, never for the winners). "" without a winner.
 */
function loserName(r) {
  return r && Number.isInteger(r.winner_team) ? teamName(1 - r.winner_team) : "";
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** The countdown ring around an avatar (an SVG circle whose dash shrinks with the time left). */
function clockRing() {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 48 48");
  svg.setAttribute("class", "ring");
  svg.setAttribute("aria-hidden", "true");
  const bg = document.createElementNS(SVG_NS, "circle");
  bg.setAttribute("cx", "24");
  bg.setAttribute("cy", "24");
  bg.setAttribute("r", "22");
  bg.setAttribute("class", "ring-bg");
  const fg = document.createElementNS(SVG_NS, "circle");
  fg.setAttribute("cx", "24");
  fg.setAttribute("cy", "24");
  fg.setAttribute("r", "22");
  fg.setAttribute("class", "ring-fg");
  fg.setAttribute("pathLength", "100");
  svg.append(bg, fg);
  return svg;
}

function icon(kind) {
  // small line icons drawn here (no icon fonts): menu, speaker on/off
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const paths = {
    menu: ["M3 6h18", "M3 12h18", "M3 18h18"],
    sound: ["M4 9h4l5-4v14l-5-4H4z", "M16 8.5a5 5 0 0 1 0 7", "M18.5 6a8.5 8.5 0 0 1 0 12"],
    muted: ["M4 9h4l5-4v14l-5-4H4z", "M16 9l6 6", "M22 9l-6 6"],
  }[kind];
  for (const d of paths) {
    const p = document.createElementNS(SVG_NS, "path");
    p.setAttribute("d", d);
    svg.appendChild(p);
  }
  return svg;
}

/** Mount the room page for params.id into el. Returns {destroy(), onMe(), onLang()}. */
export function mountRoom(el, params, ctx) {
  const roomId = params.id;
  const st = {
    room: null,
    view: null,
    role: null,
    seat: null,
    seq: -1,
    clock: null,
    auto: [false, false, false, false],
    autoReason: [null, null, null, null],
    between: null,
    final: null,
    conn: "connecting",
    notFound: false,
    display: [], // the hand in display order (card texts)
    groups: [], // arranged groups of the hand
    selected: new Set(), // display indices
    chooser: null, // list of actions offered in the reading chooser
    dealResult: null,
    gameOver: null,
    resultHidden: false, // the player closed the result panel of this pause
    readySent: null, // deal number the ready was sent for
    seenJiefeng: "",
    arrKey: "",
    arr: { mode: "level", custom: [] },
    hints: null, // {key, list, index} from the server's hints frame
    hintWanted: false,
    hintAskedKey: null, // positionKey() when the hints list was asked for
    hintToast: null, // {key, text}: a hint message about the position key (hidden when it passes)
    drawer: false,
    tracker: false,
    lastTrick: false,
    notices: [], // {id, text, until}
    prevLast: null, // last_actions of the previous state (to animate new plays)
    prevTurn: false,
    receivedUntil: 0,
    receivedKey: "",
    clockStart: new Map(), // deadline_ms -> epoch ms first seen (for the ring)
    movingTo: null,
  };
  let destroyed = false;
  let socket = null;
  let clockTimer = null;
  let noticeSeq = 0;

  // Fixed skeleton; each part is re-rendered from st.
  const headEl = h("div", { class: "room-head" });
  const seatsEl = h("div", { class: "seats-section" });
  const tableEl = h("div", { class: "table-section" });
  const overlayEl = h("div", { class: "overlay-host" });
  const fxEl = h("div", { class: "fx-host", "aria-hidden": "true" });
  const pageEl = h("div", { class: "room-page" }, headEl, seatsEl, tableEl, overlayEl, fxEl);
  replaceChildren(el, pageEl);

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

  function seated() {
    return st.role !== "spectator" && st.view && Number.isInteger(st.view.seat);
  }

  function myTurn() {
    const v = st.view;
    if (st.actSent) return false; // an action is on its way: no second one before the server answers
    return Boolean(v && seated() && v.to_act === v.seat && Array.isArray(v.legal_actions) && v.legal_actions.length);
  }

  /** The action buttons now (cheap, keyed): they follow every state at once, the rest at the next frame. */
  function renderActionsNow() {
    const bar = tableEl.querySelector(".actions-bar[data-testid=actions-bar]");
    if (bar && st.view && !destroyed) renderActions(bar);
  }

  function inGame() {
    return Boolean(st.view) && !st.notFound;
  }

  function gameIsOver() {
    return Boolean(st.view && (st.view.phase === "game_over" || st.gameOver || st.final));
  }

  function selectedCards() {
    return [...st.selected].sort((a, b) => a - b).map((i) => st.display[i]).filter((c) => c !== undefined);
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

  function positionKey() {
    const v = st.view;
    return v ? `${v.game}.${v.deal}.${st.seq}.${v.to_act}` : "";
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
        st.resultHidden = false;
        onDealResultSound(msg);
        renderOverlay();
        break;
      case "game_over":
        st.gameOver = msg;
        st.resultHidden = false;
        scheduleRender();
        break;
      case "error":
        onError(msg);
        break;
      case "hint":
        onHint(msg.action);
        break;
      case "hints":
        onHints(Array.isArray(msg.actions) ? msg.actions : []);
        break;
      case "notice":
        onNotice(msg);
        break;
      case "moved":
        if (typeof msg.room === "string" && msg.room && msg.room !== roomId) followTo(msg.room);
        break;
      default:
        break; // pong and anything unknown
    }
  }

  function onError(msg) {
    if (st.actSent) {
      st.actSent = false; // the action was refused: the seat may act again
      renderActionsNow();
    }
    if (msg.reason === "unknown_type" && st.hintWanted) {
      // a server without the hints list: fall back to the bot's one suggestion
      st.hintWanted = false;
      send({ type: "hint" }); // hintAskedKey stays: the answer is for the same position
      return;
    }
    st.hintWanted = false;
    st.hintAskedKey = null;
    toast(errorText(msg.reason, msg.params));
  }

  function onState(msg) {
    st.actSent = false;
    if (msg.room && typeof msg.room === "object") st.room = msg.room;
    st.role = msg.role || st.role;
    st.seat = Number.isInteger(msg.seat) ? msg.seat : null;
    const prevView = st.view;
    st.view = msg.view && typeof msg.view === "object" ? msg.view : null;
    st.seq = Number.isInteger(msg.seq) ? msg.seq : st.seq;
    st.clock = msg.clock && typeof msg.clock === "object" ? msg.clock : null;
    st.auto = Array.isArray(msg.auto) ? msg.auto : [false, false, false, false];
    st.autoReason = Array.isArray(msg.auto_reason) ? msg.auto_reason : [null, null, null, null];
    const wasBetween = st.between;
    st.between = msg.between && typeof msg.between === "object" ? msg.between : null;
    if (st.between && (!wasBetween || wasBetween.deal !== st.between.deal)) {
      st.resultHidden = false;
      if (!st.dealResult || st.dealResult.deal !== st.between.deal) st.dealResult = { ...(st.between.result || {}), deal: st.between.deal };
    }
    if (!st.between && wasBetween) {
      // the next deal started: the result screen of the pause closes by itself
      st.dealResult = null;
      st.readySent = null;
    }
    st.final = msg.final && typeof msg.final === "object" ? msg.final : null;
    if (st.final && !st.gameOver) st.gameOver = { type: "game_over", ...st.final };
    if (st.room && st.room.next_room && st.gameOver) st.gameOver.next_room = st.room.next_room;

    const v = st.view;
    // the arrangement of this deal (sessionStorage: survives reloads and reconnects)
    if (v && Number.isInteger(v.deal)) {
      const key = arrangementKey(roomId, v.game, v.deal);
      if (key !== st.arrKey) {
        st.arrKey = key;
        st.arr = loadArrangement(key);
      }
    }
    const before = st.display;
    arrange();
    if (!sameOrder(before, st.display)) {
      st.selected.clear();
      st.chooser = null;
    }
    if (!myTurn()) st.chooser = null;
    if (st.hints && st.hints.key !== positionKey()) st.hints = null;
    if (st.hintToast && st.hintToast.key !== positionKey()) {
      // "nothing beats" belonged to the previous position: it must not linger into the next turn
      hideToast(st.hintToast.text);
      st.hintToast = null;
    }
    announceJiefeng();
    noteReceived();
    animateChanges(prevView);
    renderActionsNow();
    scheduleRender();
  }

  // Renders are coalesced: a burst of state frames (fast bots) costs one render per display frame,
  // so the page keeps reading its socket and never falls behind the table.
  let renderPending = false;
  function scheduleRender() {
    if (renderPending || destroyed) return;
    renderPending = true;
    const run = () => {
      renderPending = false;
      if (!destroyed) render();
    };
    if (typeof requestAnimationFrame === "function" && !document.hidden) requestAnimationFrame(run);
    else setTimeout(run, 16);
  }

  function arrange() {
    const v = st.view;
    const hand = v && Array.isArray(v.hand) ? v.hand : [];
    st.groups = arrangeHand(hand, v ? v.level : "2", st.arr);
    st.display = flatten(st.groups);
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
      addNotice(t("ev_jiefeng", { name: seatName(names(), last.leader) }));
    }
    st.seenJiefeng = key;
  }

  /** Cards received in tribute or return: highlighted for a few seconds once they arrive (item 10). */
  function receivedCards() {
    const v = st.view;
    if (!v || !seated()) return [];
    if (Array.isArray(v.received)) return v.received;
    const out = [];
    for (const ev of Array.isArray(v.tribute_events) ? v.tribute_events : []) {
      const moves = ev && ev.type === "tribute_paid" ? ev.tributes : ev && ev.type === "returns_revealed" ? ev.returns : null;
      for (const m of Array.isArray(moves) ? moves : []) if (Array.isArray(m) && m[1] === v.seat) out.push(m[2]);
    }
    return out;
  }

  function noteReceived() {
    const v = st.view;
    const got = receivedCards();
    const key = v ? `${v.game}.${v.deal}.${got.join(",")}` : "";
    if (got.length && key !== st.receivedKey) {
      st.receivedUntil = Date.now() + RECEIVED_HIGHLIGHT_MS;
      setTimeout(() => {
        if (!destroyed) renderHandAndActions();
      }, RECEIVED_HIGHLIGHT_MS + 50);
    }
    st.receivedKey = key;
  }

  /** Sounds and motion for what changed since the previous view (new plays, passes, bombs, the turn). */
  function animateChanges(prevView) {
    const v = st.view;
    const last = v ? lastActions(v) : [null, null, null, null];
    const prev = st.prevLast;
    st.prevLast = last;
    if (!st.fresh) st.fresh = new Set(); // seats whose play is new since the last render
    if (v && prev && prevView && prevView.deal === v.deal) {
      for (const s of SEATS) {
        const a = last[s];
        if (!Array.isArray(a) || JSON.stringify(a) === JSON.stringify(prev[s])) continue;
        st.fresh.add(s);
        if (a[0] === "pass") playSound("pass");
        else if (BOMB_TYPES.has(a[0])) {
          playSound(a[0]);
          bombEffect(a);
        } else playSound("play");
      }
    }
    const turn = myTurn();
    if (turn && !st.prevTurn) playSound("turn");
    st.prevTurn = turn;
  }

  function bombEffect(action) {
    if (reducedMotion()) return;
    const jokers = action[0] === "joker_bomb";
    const label = t(`type_${action[0]}`);
    const fx = h("div", { class: `bomb-fx ${action[0]}`, testid: "bomb-fx" }, h("div", { class: "bomb-flash" }), h("div", { class: "bomb-word" }, label));
    fxEl.appendChild(fx);
    setTimeout(() => fx.remove(), jokers ? 1800 : 1200);
  }

  function onDealResultSound(r) {
    const s = mySeat();
    if (s === null || !Number.isInteger(r.winner_team)) playSound("notice");
    else playSound(teamOf(s) === r.winner_team ? "win" : "lose");
  }

  function onNotice(msg) {
    const p = msg.params || {};
    const nm = names();
    const mine = Number.isInteger(p.seat) && p.seat === mySeat() && seated();
    const who = Number.isInteger(p.seat) ? (mine ? t("notice_you") : seatName(nm, p.seat)) : "";
    let text = "";
    switch (msg.code) {
      case "timeout_move":
        text = t("notice_timeout_move", { who, n: p.timeouts ?? 1, limit: p.limit ?? 2 });
        break;
      case "auto_on":
        text = t(p.reason === "away" ? "notice_auto_on_away" : p.reason === "timeouts" ? "notice_auto_on_timeouts" : "notice_auto_on", { who });
        break;
      case "bot_played":
        // "while you were away" only when 托管 was on because of an absence (contract section 5)
        {
          const moves = p.moves ?? 0;
          const deals = p.deals ?? 1;
          // {moves}/{deals}: bare numbers (Chinese); {moves_n}/{deals_n}: counted nouns ("1 move", "3 moves")
          const counts = {
            moves,
            deals,
            moves_n: t(moves === 1 ? "count_moves_one" : "count_moves_other", { n: moves }),
            deals_n: t(deals === 1 ? "count_deals_one" : "count_deals_other", { n: deals }),
          };
          text = mine
            ? t(p.reason === "away" ? "notice_bot_played_you" : "notice_bot_played_you_auto", counts)
            : t("notice_bot_played", { who, ...counts });
        }
        break;
      case "next_deal":
        text = t("notice_next_deal", { deal: p.deal ?? "" });
        break;
      default:
        text = msg.message || "";
    }
    if (!text) return;
    if (mine || msg.code === "next_deal") playSound("notice");
    addNotice(text, mine ? "mine" : "");
  }

  function addNotice(text, kind = "") {
    const id = ++noticeSeq;
    st.notices.push({ id, text, kind, until: Date.now() + NOTICE_MS });
    st.notices = st.notices.slice(-3);
    renderNotices();
    setTimeout(() => {
      st.notices = st.notices.filter((n) => n.id !== id);
      if (!destroyed) renderNotices();
    }, NOTICE_MS);
  }

  // --- hints (item 3) ---------------------------------------------------------------------
  function onHintPress() {
    if (!myTurn()) return;
    const key = positionKey();
    if (st.hints && st.hints.key === key) {
      if (!st.hints.list.length) {
        hintToast(t("hint_nothing_beats"));
        return;
      }
      st.hints.index = (st.hints.index + 1) % st.hints.list.length;
      selectAction(st.hints.list[st.hints.index]);
      return;
    }
    st.hintWanted = true;
    st.hintAskedKey = key;
    send({ type: "hints" });
  }

  /** An info toast about the hint of this position; hidden as soon as the position changes. */
  function hintToast(text) {
    st.hintToast = { key: positionKey(), text };
    toast(text, "info");
  }

  /** Whether a hints answer belongs to the position on screen (asked for at this position, and it is still the seat's turn). */
  function hintAnswerIsCurrent() {
    const asked = st.hintAskedKey;
    st.hintWanted = false;
    st.hintAskedKey = null;
    return asked !== null && asked === positionKey() && myTurn();
  }

  function onHints(list) {
    if (!hintAnswerIsCurrent()) return; // an answer for a position that has passed
    const actions = list.filter((a) => Array.isArray(a) && a[0] !== "pass");
    st.hints = { key: positionKey(), list: actions, index: 0 };
    if (!actions.length) {
      st.selected.clear();
      renderHandAndActions();
      hintToast(t("hint_nothing_beats"));
      return;
    }
    selectAction(actions[0]);
  }

  function onHint(action) {
    if (!hintAnswerIsCurrent()) return;
    if (!Array.isArray(action)) {
      hintToast(t("hint_none"));
      return;
    }
    if (action[0] === "pass") {
      st.selected.clear();
      hintToast(t("hint_pass"));
      renderHandAndActions();
      return;
    }
    selectAction(action);
  }

  /** Select the hand cards of an action (by display position, one per card text copy). */
  function selectAction(action) {
    const want = [...(action[2] || [])];
    const picked = new Set();
    for (const card of want) {
      const i = st.display.findIndex((c, j) => c === card && !picked.has(j));
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
    st.actSent = true;
    renderActionsNow();
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

  function onAutoToggle() {
    const s = mySeat();
    if (s === null) return;
    send({ type: "auto", on: !st.auto[s] });
  }

  /** 理牌: with cards selected, put them in a group of their own; else the next arrangement mode. */
  function onSort() {
    if (st.selected.size) {
      const cards = selectedCards();
      st.arr = { mode: st.arr.mode, custom: [...st.arr.custom.map((g) => g.filter((c) => !cards.includes(c))).filter((g) => g.length), cards] };
    } else {
      const i = SORT_MODES.indexOf(st.arr.mode);
      st.arr = { mode: SORT_MODES[(i + 1) % SORT_MODES.length], custom: [] };
    }
    if (st.arrKey) saveArrangement(st.arrKey, st.arr);
    arrange();
    st.selected.clear();
    renderHandAndActions();
  }

  function onReady() {
    const b = st.between;
    if (!b) return;
    st.readySent = b.deal;
    send({ type: "ready" });
    renderOverlay(true);
  }

  async function onPlayAgain() {
    try {
      const data = await post(`/api/rooms/${encodeURIComponent(roomId)}/again`);
      if (data && data.room && data.room.id) followTo(data.room.id);
    } catch (e) {
      toast(errText(e));
    }
  }

  function followTo(id) {
    if (st.movingTo) return;
    st.movingTo = id;
    ctx.navigate(`/room/${encodeURIComponent(id)}`);
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
    const playing = inGame();
    const live = playing; // the table keeps the whole viewport, game over included (the drawer and the result panel lead on)
    document.body.classList.toggle("table-mode", live);
    pageEl.classList.toggle("in-game", playing);
    pageEl.classList.toggle("live", live);
    if (playing) {
      replaceChildren(headEl);
      replaceChildren(seatsEl);
    } else {
      renderHead();
      renderSeats();
    }
    renderTable();
    renderOverlay();
  }

  function inviteUrl() {
    const room = st.room || { id: roomId };
    return { path: room.invite_url || `/room/${roomId}`, url: inviteLink({ id: roomId, ...room }) };
  }

  function connEl() {
    const connKey = st.conn === "open" ? "connected" : st.conn === "reconnecting" ? "reconnecting" : "connecting";
    return h("span", { class: `conn conn-${st.conn}`, testid: "conn-status", title: t(connKey) }, st.conn === "open" ? "●" : `● ${t(connKey)}`);
  }

  function inviteEl() {
    const { path, url } = inviteUrl();
    return h(
      "span",
      { class: "invite" },
      h("span", { class: "muted" }, `${t("invite")}: `),
      h("a", { href: path, "data-link": "", testid: "invite-link", class: "invite-link" }, url),
      h("button", { type: "button", class: "btn small", testid: "copy-invite", onclick: () => copyText(url) }, t("copy")),
    );
  }

  function renderHead() {
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
        h("h1", { testid: "room-title" }, t("room_title", { name: roomTitle({ name: room.name, id: roomId }) })),
        room.status ? h("span", { class: `status-pill ${room.status}` }, t(`room_status_${room.status}`)) : null,
        connEl(),
        st.role === "spectator" && st.view ? h("span", { class: "badge spectator", testid: "spectator-badge" }, t("spectating")) : null,
      ),
      h(
        "div",
        { class: "room-meta-row" },
        room.preset ? h("span", {}, t("room_preset", { preset: presetName(room.preset, getLang()) })) : null,
        ownerName(room) ? h("span", {}, t("room_owner", { name: ownerName(room) })) : null,
        room.clocks ? h("span", { testid: "room-clocks" }, clocksInWords(room.clocks, getLang())) : null,
        inviteEl(),
      ),
    );
  }

  function roomSeats() {
    const room = st.room;
    return SEATS.map((s) => (room && Array.isArray(room.seats) ? room.seats.find((x) => x && x.seat === s) : null) || { seat: s });
  }

  function seatCards(waiting) {
    const me = mySeat();
    return h(
      "div",
      { class: `seat-grid${waiting ? "" : " compact"}` },
      roomSeats().map((s) => {
        const occupant = s.user ? s.user : s.bot ? botName(s.difficulty || s.bot, getLang()) : t("seat_empty");
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
    const seats = roomSeats();
    const parts = [];
    if (room.status === "damaged") parts.push(h("p", { class: "damaged-note", testid: "room-damaged", role: "status" }, t("room_damaged_note")));
    if (!ctx.me && waiting) parts.push(authForm((user) => ctx.setMe(user)));
    parts.push(seatCards(waiting));
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

  // --- the table ---------------------------------------------------------------------------
  function bottomSeat() {
    const v = st.view;
    return Number.isInteger(v.seat) && st.role !== "spectator" ? v.seat : mySeat() ?? 0;
  }

  function seatPanel(s, pos) {
    const v = st.view;
    const nm = names();
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
    return h(
      "div",
      {
        class: `seat-panel pos-${pos} team-${teamOf(s)}${turn ? " turn" : ""}${place >= 0 ? " out" : ""}${st.auto[s] ? " auto" : ""}`,
        testid: `seat-panel-${s}`,
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
          st.auto[s] ? h("span", { class: "badge auto", testid: `auto-badge-${s}`, title: t("auto_title") }, t("auto_badge")) : null,
          roomSeat && roomSeat.bot ? h("span", { class: "badge bot-level" }, difficultyName(roomSeat.difficulty || roomSeat.bot, getLang())) : null,
          roomSeat && roomSeat.user && roomSeat.connected === false ? h("span", { class: "badge offline" }, t("seat_offline")) : null,
        ),
        turn && !clockHere ? h("div", { class: "turn-line" }, t("turn")) : null,
      ),
    );
  }

  function renderTable() {
    const v = st.view;
    if (!v || st.notFound) {
      replaceChildren(tableEl);
      return;
    }
    const bottom = bottomSeat();
    const last = lastActions(v);
    const topSeat = Number.isInteger(v.top_seat) ? v.top_seat : null;
    const fresh = st.fresh || new Set();
    const cells = SEATS.map((s) => {
      const pos = positionOf(s, bottom);
      const isTop = s === topSeat && Array.isArray(last[s]) && last[s][0] !== "pass";
      const cell = trickCell(last[s], v.level, s, pos, isTop);
      if (isTop) cell.appendChild(h("span", { class: "top-tag", testid: "top-play" }, t("top_play")));
      if (fresh.has(s) && !reducedMotion()) cell.classList.add("fresh");
      return cell;
    });
    st.fresh = null;
    const felt = h(
      "div",
      { class: `felt${st.between ? " paused" : ""}`, testid: "table" },
      SEATS.filter((s) => s !== bottom).map((s) => seatPanel(s, positionOf(s, bottom))),
      cells,
      h("div", { class: "center-info" }, promptEl(), tributeEl(), h("div", { class: "notices", testid: "notices", "aria-live": "polite" })),
    );
    const me = seated() ? v.seat : null;
    const sk = skeleton(me !== null);
    // parts whose content did not change keep their DOM (a button under the pointer stays the
    // same element however many states arrive); the felt and the own seat are rebuilt each time
    keyed(sk.bar, [getLang(), v.levels, v.level, v.wilds, isMuted(), st.lastTrick, st.tracker, me, st.room && st.room.name], tableBar);
    replaceChildren(sk.felt, felt);
    replaceChildren(sk.mePanel, seatPanel(bottom, "bottom"));
    keyed(sk.banner, [getLang(), me !== null && st.auto[me] && !gameIsOver(), me !== null && st.autoReason[me]], () => (me !== null && st.auto[me] && !gameIsOver() ? autoBanner(me) : null));
    keyed(sk.over, [getLang(), gameIsOver(), st.gameOver && st.gameOver.game_id], () => (gameIsOver() ? gameOverBanner() : null));
    keyed(sk.pops, [getLang(), st.tracker && me !== null, st.lastTrick, v.game, v.deal, (v.history || []).length, (v.hand || []).length], () => [
      st.tracker && me !== null ? h("div", { class: "popover tracker-pop" }, trackerPanel(v), closeBtn(() => { st.tracker = false; renderTable(); })) : null,
      st.lastTrick ? lastTrickPanel() : null,
    ]);
    keyed(sk.drawer, [getLang(), st.drawer, st.room, v.game, v.deal, v.finished, v.a_fails, v.points, v.tribute_events], () => (st.drawer ? drawer() : null));
    renderHandAndActions();
    renderNotices();
    tickClocks();
  }

  let skel = null;

  /** The table's fixed frame: slots (display: contents) that the parts are rendered into. */
  function skeleton(withHand) {
    if (skel && skel.withHand === withHand && tableEl.contains(skel.bar)) return skel;
    const slot = (cls) => h("div", { class: `slot ${cls}` });
    skel = {
      withHand,
      bar: slot("bar-slot"),
      felt: slot("felt-slot"),
      mePanel: slot("me-slot"),
      actions: withHand
        ? h("div", { class: "actions-bar", testid: "actions-bar" })
        : h("div", { class: "actions-bar spectator" }, h("span", { class: "badge spectator", testid: "spectator-badge" }, t("spectating"))),
      hand: withHand ? h("div", { class: "hand-wrap" }, h("div", { class: "hand", testid: "hand" })) : null,
      banner: slot("banner-slot"),
      over: slot("over-slot"),
      pops: slot("pop-slot"),
      drawer: slot("drawer-slot"),
    };
    replaceChildren(
      tableEl,
      skel.bar,
      skel.felt,
      h("div", { class: "me-row" }, skel.mePanel, skel.actions),
      skel.hand,
      skel.banner,
      skel.over,
      skel.pops,
      skel.drawer,
    );
    return skel;
  }

  /** Rebuild node's children with build() only when key (any JSON value) changed since last time. */
  function keyed(node, key, build) {
    const k = JSON.stringify(key);
    if (node.dataset.k === k) return;
    node.dataset.k = k;
    replaceChildren(node, build());
  }

  function closeBtn(fn, testid = "popover-close") {
    return h("button", { type: "button", class: "btn small secondary close-x", testid, "aria-label": t("close"), onclick: fn }, "×");
  }

  function tableBar() {
    const v = st.view;
    const room = st.room || {};
    const levels = Array.isArray(v.levels) ? v.levels : [];
    const me = seated() ? v.seat : null;
    const playingTeam = levels[0] === v.level ? 0 : levels[1] === v.level ? 1 : null;
    const wilds = Array.isArray(v.wilds) && v.wilds.length ? v.wilds : [`${v.level}H`];
    const muted = isMuted();
    return h(
      "div",
      { class: "table-bar" },
      h("button", { type: "button", class: "btn icon-btn", testid: "menu-btn", "aria-label": t("menu"), title: t("menu"), onclick: () => { st.drawer = true; renderTable(); } }, icon("menu")),
      h("span", { class: "bar-title", testid: "room-title" }, roomTitle({ name: room.name, id: roomId })),
      h(
        "span",
        { class: "bar-levels", testid: "levels" },
        h("span", { class: `team-level team-0${playingTeam === 0 ? " playing" : ""}` }, `${t("team_a_short")} ${rankLabel(levels[0]) || "?"}`),
        h("span", { class: `team-level team-1${playingTeam === 1 ? " playing" : ""}` }, `${t("team_b_short")} ${rankLabel(levels[1]) || "?"}`),
      ),
      h("span", { class: "bar-deal-level", testid: "deal-level" }, h("span", { class: "lbl" }, `${t("deal_level")} `), h("strong", { class: "deal-level" }, rankLabel(v.level))),
      h("span", { class: "bar-wilds", testid: "wilds", title: t("wild_card") }, wilds.map((c) => cardEl(c, { level: v.level, size: "mini" }))),
      h("span", { class: "bar-spacer" }),
      connEl(),
      h("button", { type: "button", class: `btn bar-btn${st.lastTrick ? " on" : ""}`, testid: "last-trick-btn", "aria-pressed": String(st.lastTrick), onclick: () => { st.lastTrick = !st.lastTrick; renderTable(); } }, t("last_trick")),
      me !== null
        ? h("button", { type: "button", class: `btn bar-btn${st.tracker ? " on" : ""}`, testid: "tracker-btn", "aria-pressed": String(st.tracker), onclick: () => { st.tracker = !st.tracker; renderTable(); } }, t("tracker_btn"))
        : null,
      h(
        "button",
        {
          type: "button", class: `btn icon-btn${muted ? " muted" : ""}`, testid: "mute-btn", "aria-pressed": String(muted),
          "aria-label": muted ? t("sound_off") : t("sound_on"), title: muted ? t("sound_off") : t("sound_on"),
          onclick: () => { setMuted(!isMuted()); unlockAudio(); renderTable(); },
        },
        icon(muted ? "muted" : "sound"),
      ),
    );
  }

  function lastTrickPanel() {
    const v = st.view;
    const trick = previousTrick(v);
    const nm = names();
    return h(
      "div",
      { class: "popover last-trick-pop", testid: "last-trick" },
      h("div", { class: "pop-head" }, h("strong", {}, t("last_trick")), closeBtn(() => { st.lastTrick = false; renderTable(); })),
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
                a[0] === "pass" ? h("span", { class: "pass-label" }, t("pass_word")) : [miniCards(a[2], v.level), h("span", { class: "play-label" }, actionText(a, false))],
              ),
            ),
          )
        : h("p", { class: "muted" }, t("last_trick_none")),
    );
  }

  function drawer() {
    const v = st.view;
    const room = st.room || {};
    const nm = names();
    const finished = Array.isArray(v.finished) ? v.finished : [];
    const showPoints = Boolean((v.rules && v.rules.points) || (room.options && room.options.points));
    const close = () => { st.drawer = false; renderTable(); };
    const langSel = h(
      "select",
      { class: "lang-switch", testid: "drawer-lang", "aria-label": t("language"), onchange: (ev) => setLang(ev.target.value) },
      LANGS.map((l) => h("option", { value: l, selected: l === getLang() }, l === "zh" ? "中文" : "English")),
    );
    return h(
      "div",
      { class: "drawer-host", onclick: (ev) => { if (ev.target === ev.currentTarget) close(); } },
      h(
        "aside",
        { class: "drawer", testid: "room-drawer", role: "dialog", "aria-label": t("menu") },
        h("div", { class: "pop-head" }, h("h2", {}, t("room_title", { name: roomTitle({ name: room.name, id: roomId }) })), closeBtn(close, "drawer-close")),
        h("div", { class: "drawer-sec" }, inviteEl()),
        h(
          "div",
          { class: "drawer-sec", testid: "room-rules" },
          h("div", { class: "info-label" }, t("rules_title")),
          rulesLines(room).map((line) => h("div", { class: "rule-line" }, line)),
          h("div", { class: "rule-line", testid: "room-clocks" }, clocksInWords(room.clocks, getLang())),
        ),
        h(
          "div",
          { class: "drawer-sec" },
          h("div", { class: "info-label" }, t("game_deal", { game: v.game, deal: v.deal })),
          Array.isArray(v.a_fails) && (v.a_fails[0] || v.a_fails[1])
            ? h("div", { testid: "a-fails" }, `${t("a_fails")}: ${t("team_a")} ${v.a_fails[0]} · ${t("team_b")} ${v.a_fails[1]}`)
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
        h("div", { class: "drawer-sec" }, seatCards(false)),
        h("div", { class: "drawer-sec drawer-row" }, h("label", { class: "inline" }, t("language"), langSel), link("/", t("back_to_lobby"), { class: "btn", testid: "drawer-lobby" })),
      ),
    );
  }

  /** The room's rules in plain words (rules.js): the preset's name and each rule change ("打到 8"). */
  function rulesLines(room) {
    const words = rulesInWords(room.preset || "official", room.overrides || room.options || {}, getLang());
    return [words.name, ...words.overrides.map((o) => o.text)];
  }

  function autoBanner(me) {
    const reason = st.autoReason[me];
    return h(
      "div",
      { class: "auto-banner", testid: "auto-banner", role: "status" },
      h("span", {}, reason === "timeouts" ? t("auto_banner_timeouts") : t("auto_banner")),
      h("button", { type: "button", class: "btn primary", testid: "auto-cancel-btn", onclick: onAutoToggle }, t("auto_cancel")),
    );
  }

  function renderNotices() {
    const box = tableEl.querySelector(".notices");
    if (!box) return;
    const now = Date.now();
    replaceChildren(box, st.notices.filter((n) => n.until > now).map((n) => h("div", { class: `notice ${n.kind}`, testid: "notice" }, n.text)));
  }

  function promptEl() {
    const v = st.view;
    const nm = names();
    let text = "";
    let cls = "prompt";
    if (st.between) {
      // the result panel was closed to look at the table: a way back to it and its Next button
      const reopen = st.resultHidden
        ? h("button", { type: "button", class: "btn small primary", testid: "reopen-result-btn", onclick: () => { st.resultHidden = false; renderOverlay(true); renderTable(); } }, t("ready_next"))
        : null;
      return h("div", { class: "prompt", testid: "phase-prompt" }, t("prompt_between"), reopen ? " " : null, reopen);
    } else if (v.phase === "tribute") {
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
    if (!evs.length || v.phase === "game_over") return null;
    // shown during the tribute phases and the first trick of the deal
    if (v.phase === "play" && tricksOf(v.history).done.length > 0) return null; // shown until the first trick ends
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
      h("button", { type: "button", class: "btn small", testid: "show-result-btn", onclick: () => { st.resultHidden = false; renderOverlay(true); } }, t("show_summary")),
    );
  }

  // --- the hand ------------------------------------------------------------------------------
  function cardSize(handEl) {
    const cs = getComputedStyle(handEl);
    const cw = parseFloat(cs.getPropertyValue("--cw")) || 64;
    const ch = parseFloat(cs.getPropertyValue("--ch")) || 90;
    return { cw, ch };
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
    const received = Date.now() < st.receivedUntil ? [...receivedCards()] : [];
    const { cw, ch } = cardSize(handEl);
    const width = Math.max(120, handEl.clientWidth || handEl.parentElement.clientWidth || 300);
    const fan = layoutFan(st.display.length, groupEnds(st.groups), width, cw, ch);
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
          style: { left: `${p.left}px`, top: `${p.top}px`, width: `${p.width}px`, height: `${ch}px`, zIndex: String(index + 1) },
        },
        face,
      );
    });
    replaceChildren(handEl, slots);
    renderActions(barEl);
  }

  function renderActions(barEl) {
    const v = st.view;
    const mine = myTurn();
    const phase = v.phase;
    const matches = matchingActions();
    const pass = passAction();
    const me = mySeat();
    const playLabel = phase === "tribute" ? t("pay_tribute") : phase === "return" ? t("return_card") : t("play");
    const preview = matches.length === 1 ? actionText(matches[0], false) : matches.length > 1 ? `${matches.length}×` : "";
    const hintInfo = st.hints && st.hints.key === positionKey() && st.hints.list.length > 1 ? `${st.hints.index + 1}/${st.hints.list.length}` : "";
    const auto = me !== null && st.auto[me];
    const over = gameIsOver();
    const key = JSON.stringify([getLang(), mine, phase, matches, Boolean(pass), hintInfo, auto, over, st.selected.size, st.arr.mode, st.display.length]);
    if (barEl.dataset.k === key) return;
    barEl.dataset.k = key;
    if (over) {
      replaceChildren(barEl); // nothing left to play: the banner and the summary lead on
      return;
    }
    replaceChildren(
      barEl,
      h("button", { type: "button", class: "btn primary big", testid: "play-btn", disabled: !(mine && matches.length), onclick: onPlay }, playLabel, preview ? h("span", { class: "preview" }, preview) : null),
      h("button", { type: "button", class: "btn big", testid: "pass-btn", disabled: !(mine && pass), onclick: onPass }, t("pass")),
      h("button", { type: "button", class: "btn big", testid: "hint-btn", disabled: !mine, onclick: onHintPress }, t("hint"), hintInfo ? h("span", { class: "preview", testid: "hint-index" }, hintInfo) : null),
      h("button", { type: "button", class: "btn big secondary", testid: "clear-btn", disabled: !st.selected.size, onclick: () => { st.selected.clear(); renderHandAndActions(); } }, t("clear")),
      h(
        "button",
        { type: "button", class: "btn big secondary", testid: "sort-btn", dataset: { mode: st.arr.mode }, title: t(`sort_mode_${st.arr.mode}`), disabled: !st.display.length, onclick: onSort },
        st.selected.size ? t("sort_group") : t("sort"),
      ),
      me !== null && !over
        ? h("button", { type: "button", class: `btn big auto-btn${auto ? " on" : ""}`, testid: "auto-btn", "aria-pressed": String(auto), onclick: onAutoToggle }, auto ? t("auto_cancel") : t("auto_on"))
        : null,
    );
  }

  // The overlay (reading chooser, result panel) is rebuilt only when what it shows changes:
  // every table change sends a new `state` message, and rebuilding the same panel each time
  // would drop the keyboard focus (on Continue, on a reading) and detach the panel under the
  // pointer. overlayKey is the text of what is shown ("" when nothing is).
  let overlayKey = "";
  let focusBeforeOverlay = null; // element focused before the overlay opened, focused again when it closes

  function showResult() {
    return Boolean((st.dealResult || st.gameOver) && !st.resultHidden);
  }

  function overlayContentKey() {
    const v = st.view;
    const chooser = st.chooser && st.chooser.length ? st.chooser : null;
    const result = showResult() ? [st.dealResult, st.gameOver, names(), st.between && st.between.ready, st.readySent, isOwner()] : null;
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

  function renderOverlay(force = false) {
    if (destroyed) return;
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
    if (showResult()) boxes.push(resultPanel());
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
    else if (!hadResult && showResult()) focusQuietly(overlayEl.querySelector("[data-testid=ready-btn]") || overlayEl.querySelector("[data-testid=again-btn]") || overlayEl.querySelector("[data-testid=result-close]"));
    else if (focusInside) focusQuietly(overlayEl.querySelector("button"));
  }

  function levelPair(levels) {
    return Array.isArray(levels) ? `${t("team_a")} ${rankLabel(levels[0])} · ${t("team_b")} ${rankLabel(levels[1])}` : "";
  }

  function resultPanel() {
    const r = st.dealResult;
    const g = st.gameOver;
    const nm = names();
    const b = st.between;
    const me = mySeat();
    const close = () => {
      st.resultHidden = true;
      if (!b) st.dealResult = null;
      renderOverlay();
      if (b) renderTable();
    };
    const kv = (k, val, testid) => h("div", { class: "kv", testid }, h("span", { class: "k" }, k), h("span", { class: "v" }, val));
    const rows = [];
    if (r && !(g && !b && r === null)) {
      const order = Array.isArray(r.finish_order) ? r.finish_order : [];
      const words = resultWords(r);
      if (Number.isInteger(r.winner_team)) {
        rows.push(
          h(
            "div",
            { class: `result-headline team-${r.winner_team}`, testid: "result-winner" },
            t("result_headline", { team: teamName(r.winner_team), loser: loserName(r), result: words, n: r.upgrade ?? 0 }),
          ),
        );
      }
      rows.push(
        h(
          "ol",
          { class: "finish-list", testid: "result-finish-order" },
          order.map((s, i) => h("li", { class: `team-${teamOf(s)}` }, h("span", { class: `badge place place-${i + 1}` }, placeLabel(i)), " ", teamTag(s), " ", seatName(nm, s))),
        ),
      );
      if (r.result) {
        const shown = words.includes(r.result) ? words : `${words} (${r.result})`;
        rows.push(kv(t("result_code"), Number.isInteger(r.winner_team) ? t("result_loser", { loser: loserName(r), result: shown }) : shown, "result-code"));
      }
      if (r.upgrade !== undefined && r.upgrade !== null) rows.push(kv(t("result_upgrade"), t("result_upgrade_n", { n: r.upgrade }), "result-upgrade"));
      if (Array.isArray(r.levels)) {
        const before = Array.isArray(r.levels_before) ? `${levelPair(r.levels_before)} → ` : "";
        rows.push(kv(t("result_new_levels"), `${before}${levelPair(r.levels)}`, "result-levels"));
      }
      if (Array.isArray(r.a_fails) && (r.a_fails[0] || r.a_fails[1] || (r.failed && r.failed.length))) {
        rows.push(kv(t("a_fails"), `${t("team_a")} ${r.a_fails[0]} · ${t("team_b")} ${r.a_fails[1]}`, "result-a-fails"));
      }
      if (r.passed && Number.isInteger(r.winner_team)) rows.push(h("div", { class: "note good" }, t("result_passed", { team: teamName(r.winner_team) })));
      for (const team of Array.isArray(r.failed) ? r.failed : []) rows.push(h("div", { class: "note bad" }, t("result_failed", { team: teamName(team) })));
      for (const team of Array.isArray(r.demoted) ? r.demoted : []) rows.push(h("div", { class: "note bad" }, t("result_demoted", { team: teamName(team) })));
      if (Array.isArray(r.hands_left)) {
        rows.push(
          h(
            "div",
            { class: "hands-left", testid: "result-hands" },
            h("div", { class: "info-label" }, t("result_hands")),
            SEATS.map((s) =>
              h(
                "div",
                { class: `hand-left team-${teamOf(s)}`, testid: `result-hand-${s}`, dataset: { count: String((r.hands_left[s] || []).length) } },
                h("span", { class: "hl-name" }, teamTag(s), " ", seatName(nm, s)),
                (r.hands_left[s] || []).length ? miniCards(r.hands_left[s], r.level) : h("span", { class: "muted" }, t("result_hand_empty")),
              ),
            ),
          ),
        );
      }
      if (Array.isArray(r.points) || Array.isArray(r.points_total)) {
        const pts = Array.isArray(r.points) ? r.points : [];
        const tot = Array.isArray(r.points_total) ? r.points_total : [];
        const titles = Array.isArray(r.titles) ? r.titles : [];
        const titlesBefore = Array.isArray(r.titles_before) ? r.titles_before : [];
        const signed = (p) => (typeof p === "number" && p > 0 ? `+${p}` : p === undefined || p === null ? "" : String(p));
        rows.push(
          h(
            "table",
            { class: "points-table", testid: "result-points" },
            h("thead", {}, h("tr", {}, h("th", {}, t("points")), h("th", {}, t("result_points")), h("th", {}, t("result_points_total")), titles.length ? h("th", {}, t("anhui_title")) : null)),
            h(
              "tbody",
              {},
              SEATS.map((s) =>
                h(
                  "tr",
                  {},
                  h("td", {}, teamTag(s), " ", seatName(nm, s)),
                  h("td", {}, signed(pts[s])),
                  h("td", {}, tot[s] === undefined ? "" : String(tot[s])),
                  titles.length ? h("td", {}, titlesBefore[s] && titlesBefore[s] !== titles[s] ? `${titlesBefore[s]} → ${titles[s]}` : titles[s] || "") : null,
                ),
              ),
            ),
          ),
        );
      }
    }
    const foot = [];
    if (b && !g) {
      // the ready step: the next deal starts when everyone pressed "next" or at the deadline
      const ready = Array.isArray(b.ready) ? b.ready : [];
      const iAmReady = (me !== null && ready[me]) || st.readySent === b.deal;
      foot.push(
        h(
          "div",
          { class: "ready-row", testid: "ready-state" },
          SEATS.map((s) => h("span", { class: `ready-seat${ready[s] ? " ready" : ""}`, testid: `ready-state-${s}` }, teamTag(s), " ", seatName(nm, s), " ", ready[s] ? "✓" : "…")),
          b.deadline_ms ? h("span", { class: "clock", testid: "ready-clock", dataset: { deadline: String(b.deadline_ms) } }, clockText(b.deadline_ms)) : null,
        ),
      );
      if (seated()) {
        foot.push(
          h(
            "button",
            { type: "button", class: "btn primary wide big", testid: "ready-btn", disabled: iAmReady, onclick: onReady },
            iAmReady ? t("ready_waiting") : t("ready_next"),
          ),
        );
      }
    }
    let over = null;
    if (g) {
      const sum = g.summary && typeof g.summary === "object" ? g.summary : null;
      const next = g.next_room || (st.room && st.room.next_room);
      over = h(
        "div",
        { class: "game-over", testid: "game-over-panel" },
        h("h3", {}, Number.isInteger(g.winner_team) ? t("game_over_winner", { team: teamName(g.winner_team) }) : t("game_over_title")),
        sum
          ? h(
              "div",
              { class: "game-summary", testid: "game-summary" },
              kv(t("summary_deals"), String(sum.deals ?? (Array.isArray(sum.results) ? sum.results.length : "")), "summary-deals"),
              Array.isArray(sum.levels) ? kv(t("summary_levels"), levelPair(sum.levels), "summary-levels") : null,
              Array.isArray(sum.results) && sum.results.length
                ? h(
                    "ol",
                    { class: "summary-results" },
                    sum.results.map((x) =>
                      h("li", {}, t("summary_deal_line", {
                        deal: x.deal, level: rankLabel(x.level), team: teamName(x.winner_team), loser: loserName(x), result: resultWords(x), n: x.upgrade ?? 0,
                      })),
                    ),
                  )
                : null,
            )
          : null,
        h(
          "div",
          { class: "btn-row" },
          isOwner() && !next ? h("button", { type: "button", class: "btn primary", testid: "again-btn", onclick: onPlayAgain }, t("play_again")) : null,
          next ? h("button", { type: "button", class: "btn primary", testid: "again-follow", onclick: () => followTo(next) }, t("play_again_join")) : null,
          g.game_id !== undefined && g.game_id !== null ? link(`/replay/${g.game_id}`, t("watch_replay"), { testid: "replay-link", class: "btn" }) : null,
          link("/", t("back_to_lobby"), { class: "btn secondary", testid: "result-lobby" }),
        ),
      );
    }
    const title = r && !g ? t("result_title_n", { deal: r.deal ?? "" }) : g ? t("game_over_title") : t("result_title");
    return h(
      "div",
      { class: "modal result", testid: "result-panel", role: "dialog", "aria-modal": "true" },
      h("div", { class: "pop-head" }, h("h3", {}, title), closeBtn(close, "result-x")),
      rows,
      over,
      h(
        "div",
        { class: "result-foot" },
        foot,
        h("button", { type: "button", class: "btn wide secondary", testid: "result-close", onclick: close }, g ? t("close") : b ? t("result_view_table") : t("continue")),
      ),
    );
  }

  function clockText(deadline) {
    const s = Math.max(0, Math.ceil((Number(deadline) - Date.now()) / 1000));
    return t("clock_left", { s });
  }

  function tickClocks() {
    const now = Date.now();
    for (const c of el.querySelectorAll(".clock[data-deadline]")) {
      const dl = Number(c.dataset.deadline);
      c.textContent = clockText(dl);
      c.classList.toggle("urgent", dl - now < 5000);
    }
    // the countdown ring of the acting seat
    const dl = st.clock && st.clock.deadline_ms ? Number(st.clock.deadline_ms) : null;
    for (const ring of el.querySelectorAll(".seat-panel.turn .ring-fg")) {
      let frac = 1;
      if (dl) {
        if (!st.clockStart.has(dl)) st.clockStart.set(dl, now);
        const total = Math.max(1000, dl - st.clockStart.get(dl));
        frac = Math.max(0, Math.min(1, (dl - now) / total));
      }
      ring.style.strokeDashoffset = String(100 - frac * 100);
      ring.classList.toggle("urgent", Boolean(dl) && dl - now < 5000);
      ring.classList.toggle("no-clock", !dl);
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
  let drag = null; // {mode: true (select) | false (deselect), seen: Set}

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
    unlockAudio();
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
    } else if (ev.key === "Escape" && (st.drawer || st.tracker || st.lastTrick)) {
      st.drawer = false;
      st.tracker = false;
      st.lastTrick = false;
      renderTable();
    } else if (ev.key === "Enter" && myTurn() && !st.chooser) {
      ev.preventDefault();
      onPlay();
    }
  }
  document.addEventListener("keydown", onKey);

  let resizeTimer = null;
  function onResize() {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (!destroyed && inGame()) renderHandAndActions();
    }, 60);
  }
  window.addEventListener("resize", onResize);
  document.addEventListener("click", unlockAudio, { once: true });

  // --- start -------------------------------------------------------------------------------
  render();
  loadRoom();
  socket = new ReconnectingSocket(`/ws/rooms/${encodeURIComponent(roomId)}`, {
    onMessage,
    onStatus: (s) => {
      st.conn = s;
      if (destroyed) return;
      for (const c of el.querySelectorAll("[data-testid=conn-status]")) c.replaceWith(connEl());
    },
  });
  clockTimer = setInterval(tickClocks, 250);

  return {
    destroy() {
      destroyed = true;
      document.body.classList.remove("table-mode");
      clearInterval(clockTimer);
      clearTimeout(resizeTimer);
      if (socket) socket.close();
      document.removeEventListener("pointermove", onPointerMove);
      document.removeEventListener("pointerup", onPointerUp);
      document.removeEventListener("pointercancel", onPointerUp);
      document.removeEventListener("keydown", onKey);
      window.removeEventListener("resize", onResize);
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
