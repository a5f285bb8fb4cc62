// The replay viewer: GET /api/games/{id} -> {id, preset, record: [header, events...], players,
// winner_team}. Steps event by event with every hand visible; cards move out of a hand when
// played and between hands at tribute and return.
//
// The trick shown is display bookkeeping only (a play by the seat that made the last play, or
// the first play after a deal start, a return or 接风, starts a new trick); no rules are checked.

import { h, link, replaceChildren, toast } from "./dom.js";
import { errorText, get } from "./api.js";
import { t } from "./i18n.js";
import { errText } from "./auth.js";
import { notFoundPage } from "./pages.js";
import { actionText, cardEl, groupByRank, rankLabel, sortCards } from "./cards.js";
import { botName, isDifficulty, resultPhrase, rulesInWords } from "./rules.js";
import { infoStrip, placeLabel, positionOf, seatName, teamName, teamOf, teamTag, trickCell, tributeEventLines } from "./table.js";

const SEATS = [0, 1, 2, 3];
const AUTO_MS = 900;

function removeCards(hand, cards) {
  for (const c of cards || []) {
    const i = hand.indexOf(c);
    if (i >= 0) hand.splice(i, 1);
  }
}

function copyState(s) {
  return {
    ...s,
    hands: s.hands.map((x) => [...x]),
    trick: [...s.trick],
    finished: [...s.finished],
    events: [...s.events],
  };
}

/**
 * Turn a record (list of parsed JSON lines) into snapshots, one per event after the header:
 * [{event, hands[4], level, levels, game, deal, trick[4], topSeat, finished, events (public
 * tribute events of the deal), a_fails, points_total, actor, dealEnd, gameOver}]. Unknown
 * events are kept as steps that change nothing.
 */
export function buildSteps(record) {
  const events = (Array.isArray(record) ? record : []).filter(
    (e) => e && typeof e === "object" && typeof e.type === "string",
  );
  let cur = {
    hands: [[], [], [], []],
    level: null,
    levels: null,
    game: null,
    deal: null,
    trick: [null, null, null, null],
    topSeat: null,
    newTrick: true,
    finished: [],
    events: [],
    a_fails: null,
    points_total: null,
    actor: null,
    dealEnd: null,
    gameOver: null,
  };
  const steps = [];
  for (const ev of events) {
    const s = copyState(cur);
    s.actor = null;
    s.event = ev;
    switch (ev.type) {
      case "deal":
        s.hands = SEATS.map((i) => (Array.isArray(ev.hands) && Array.isArray(ev.hands[i]) ? [...ev.hands[i]] : []));
        s.level = ev.level;
        s.levels = ev.levels;
        s.game = ev.game;
        s.deal = ev.deal;
        s.trick = [null, null, null, null];
        s.topSeat = null;
        s.newTrick = true;
        s.finished = [];
        s.events = [];
        s.dealEnd = null;
        s.gameOver = null;
        break;
      case "action": {
        const seat = ev.seat;
        const a = ev.action;
        if (!Number.isInteger(seat) || seat < 0 || seat > 3 || !Array.isArray(a)) break;
        s.actor = seat;
        const [type, , cards] = a;
        if (type === "tribute" || type === "return") {
          removeCards(s.hands[seat], cards); // the card reaches its receiver when revealed
        } else if (type === "pass") {
          s.trick[seat] = a;
        } else {
          if (s.newTrick || s.topSeat === null || s.topSeat === seat) s.trick = [null, null, null, null];
          s.newTrick = false;
          removeCards(s.hands[seat], cards);
          s.trick[seat] = a;
          s.topSeat = seat;
          if (!s.hands[seat].length && !s.finished.includes(seat)) s.finished.push(seat);
        }
        break;
      }
      case "tribute_paid":
        for (const x of Array.isArray(ev.tributes) ? ev.tributes : []) {
          if (Array.isArray(x) && s.hands[x[1]]) s.hands[x[1]].push(x[2]);
        }
        s.events.push(ev);
        break;
      case "returns_revealed":
        for (const x of Array.isArray(ev.returns) ? ev.returns : []) {
          if (Array.isArray(x) && s.hands[x[1]]) s.hands[x[1]].push(x[2]);
        }
        s.events.push(ev);
        s.newTrick = true;
        break;
      case "anti_tribute":
        s.events.push(ev);
        break;
      case "jiefeng":
        s.events.push(ev);
        s.newTrick = true;
        break;
      case "deal_end":
        s.dealEnd = ev;
        if (Array.isArray(ev.levels)) s.levels = ev.levels;
        if (Array.isArray(ev.a_fails)) s.a_fails = ev.a_fails;
        if (Array.isArray(ev.points_total)) s.points_total = ev.points_total;
        if (Array.isArray(ev.finish_order)) {
          for (const x of ev.finish_order) if (!s.finished.includes(x)) s.finished.push(x);
        }
        break;
      case "game_over":
        s.gameOver = ev;
        break;
      default:
        if (ev.format) continue; // the header line is not a step
        break;
    }
    steps.push(s);
    cur = s;
  }
  return steps;
}

/** Mount the replay of game params.id into el. Returns {destroy(), onLang()}. */
export function mountReplay(el, params, ctx) {
  let destroyed = false;
  let data = null;
  let steps = [];
  let dealStarts = [];
  let idx = 0;
  let autoTimer = null;
  let header = null;
  let names = [null, null, null, null];

  /** Seat names from data.players ({seat, name, bot}) or the record header's players. */
  function computeNames() {
    const out = [null, null, null, null];
    if (data && Array.isArray(data.players)) {
      for (const p of data.players) {
        if (p && Number.isInteger(p.seat) && p.seat >= 0 && p.seat < 4) out[p.seat] = p.name || (p.bot || p.difficulty ? `${botName(p.difficulty || p.bot)} #${p.seat + 1}` : null);
      }
    } else if (header && Array.isArray(header.players)) {
      header.players.slice(0, 4).forEach((x, i) => {
        out[i] = x ? (isDifficulty(String(x)) || x === "heuristic" ? botName(String(x)) : String(x)) : null;
      });
    }
    return out;
  }

  replaceChildren(el, h("p", { class: "muted" }, t("loading")));

  function go(i) {
    if (!steps.length) return;
    idx = Math.max(0, Math.min(steps.length - 1, i));
    render();
  }
  const next = () => go(idx + 1);
  const prev = () => go(idx - 1);
  function nextDeal() {
    const d = dealStarts.find((x) => x > idx);
    go(d === undefined ? steps.length - 1 : d);
  }
  function prevDeal() {
    // to the start of this deal, or of the previous deal when already there
    const before = dealStarts.filter((x) => x < idx);
    go(before.length ? before[before.length - 1] : 0);
  }
  function toggleAuto() {
    if (autoTimer) {
      clearInterval(autoTimer);
      autoTimer = null;
    } else {
      autoTimer = setInterval(() => {
        if (idx >= steps.length - 1) toggleAuto();
        else next();
      }, AUTO_MS);
    }
    render();
  }

  function onKey(ev) {
    if (ev.target && /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName)) return;
    const keys = { ArrowRight: next, ArrowLeft: prev, ArrowDown: nextDeal, ArrowUp: prevDeal, PageDown: nextDeal, PageUp: prevDeal, Home: () => go(0), End: () => go(steps.length - 1), " ": toggleAuto };
    const fn = keys[ev.key];
    if (fn) {
      ev.preventDefault();
      fn();
    }
  }
  document.addEventListener("keydown", onKey);

  function describe(s) {
    const ev = s.event || {};
    const nm = (x) => seatName(names, x);
    switch (ev.type) {
      case "deal": {
        const lv = Array.isArray(ev.levels) ? ev.levels : ["?", "?"];
        return [t("ev_deal", { game: ev.game, deal: ev.deal, level: rankLabel(ev.level), a: rankLabel(lv[0]), b: rankLabel(lv[1]) })];
      }
      case "action":
        return [t("ev_action", { name: nm(ev.seat), play: actionText(ev.action, true, s.level) })];
      case "anti_tribute":
      case "tribute_paid":
      case "returns_revealed":
      case "jiefeng":
        return tributeEventLines(ev, names, s.level);
      case "deal_end": {
        const lv = Array.isArray(ev.levels) ? ev.levels : ["?", "?"];
        const lines = [
          t("ev_deal_end", { result: resultPhrase(ev.result_code || ev.result, teamName(1 - ev.winner_team)), team: teamName(ev.winner_team), n: ev.upgrade, a: rankLabel(lv[0]), b: rankLabel(lv[1]) }),
        ];
        if (ev.passed) lines.push(h("div", { class: "note good" }, t("result_passed", { team: teamName(ev.winner_team) })));
        for (const team of Array.isArray(ev.failed) ? ev.failed : []) lines.push(h("div", { class: "note bad" }, t("result_failed", { team: teamName(team) })));
        for (const team of Array.isArray(ev.demoted) ? ev.demoted : []) lines.push(h("div", { class: "note bad" }, t("result_demoted", { team: teamName(team) })));
        if (Array.isArray(ev.points)) lines.push(h("div", {}, `${t("result_points")}: ${ev.points.map((p, x) => `${nm(x)} ${p > 0 ? "+" : ""}${p}`).join(" · ")}`));
        return lines;
      }
      case "time_called":
        return [t("ev_time_called")];
      case "game_over":
        return [Number.isInteger(ev.winner_team) ? t("ev_game_over", { team: teamName(ev.winner_team) }) : t("ev_game_over_draw")];
      default:
        return [t("ev_unknown", { type: String(ev.type) })];
    }
  }

  /** The review of the deal shown (of the signed-in player's seat, else seat 1). */
  function openReview() {
    const n = Math.max(1, dealStarts.filter((x) => x <= idx).length);
    const me = ctx && ctx.me ? ctx.me.name : null;
    const mine = (Array.isArray(data.players) ? data.players : []).find((p) => p && me && p.name === me);
    const seat = mine && Number.isInteger(mine.seat) ? mine.seat : 0;
    const path = `/review/${encodeURIComponent(data.id ?? params.id)}?deal=${n}&seat=${seat}`;
    if (ctx && ctx.navigate) ctx.navigate(path);
    else window.location.assign(path);
  }

  function handEl(s, seat) {
    const sorted = sortCards(s.hands[seat], s.level);
    const place = s.finished.indexOf(seat);
    return h(
      "div",
      { class: `replay-seat pos-${positionOf(seat, 0)} team-${teamOf(seat)}${s.actor === seat ? " actor" : ""}`, testid: `replay-seat-${seat}` },
      h(
        "div",
        { class: "seat-panel-name" },
        teamTag(seat),
        h("span", { class: "nm" }, seatName(names, seat)),
        h("span", { class: "count" }, t("cards_left", { n: sorted.length })),
        place >= 0 ? h("span", { class: `badge place place-${place + 1}` }, placeLabel(place)) : null,
      ),
      h(
        "div",
        { class: "replay-hand", testid: `replay-hand-${seat}` },
        groupByRank(sorted).map((g) => h("div", { class: "rank-group" }, g.cards.map(({ card }) => cardEl(card, { level: s.level, size: "small" })))),
      ),
    );
  }

  /** The game's rules in words: its preset and the options the record header stores (section P). */
  function replayRules() {
    const preset = (header && header.preset) || data.preset || "official";
    return t("room_preset", { preset: rulesInWords(preset, header && header.options ? header.options : null).text });
  }

  function render() {
    if (destroyed || !data) return;
    if (!steps.length) {
      replaceChildren(el, h("div", { class: "card-panel" }, h("h1", {}, t("replay_title", { id: params.id })), h("p", {}, t("replay_start"))));
      return;
    }
    names = computeNames();
    const s = steps[idx];
    // symbol + label; narrow screens show the symbols only (the label stays as the title)
    const btn = (testid, sym, key, fn, disabled, extra = "") =>
      h("button", { type: "button", class: `btn ${extra}`, testid, onclick: fn, disabled, title: t(key), "aria-label": t(key) },
        h("span", { class: "sym" }, sym), h("span", { class: "lbl" }, t(key)));
    const atStart = idx === 0;
    const atEnd = idx >= steps.length - 1;
    const controls = h(
      "div",
      { class: "replay-controls" },
      btn("replay-first", "|◀", "replay_first", () => go(0), atStart),
      btn("replay-prev-deal", "◀◀", "replay_prev_deal", prevDeal, atStart),
      btn("replay-prev", "◀", "replay_prev", prev, atStart),
      btn("replay-next", "▶", "replay_next", next, atEnd),
      btn("replay-next-deal", "▶▶", "replay_next_deal", nextDeal, atEnd),
      btn("replay-last", "▶|", "replay_last", () => go(steps.length - 1), atEnd),
      btn("replay-play", autoTimer ? "❚❚" : "▶", autoTimer ? "replay_pause" : "replay_play", toggleAuto, false, autoTimer ? "primary" : ""),
    );
    const showPoints = Array.isArray(s.points_total);
    const finished = steps.some((x) => x.event && x.event.type === "game_over");
    const center = h(
      "div",
      { class: "table-center" },
      SEATS.map((seat) => trickCell(s.trick[seat], s.level, seat, positionOf(seat, 0), seat === s.topSeat && Array.isArray(s.trick[seat]) && s.trick[seat][0] !== "pass")),
      h(
        "div",
        { class: "center-info" },
        h("div", { class: "replay-desc", testid: "replay-desc" }, describe(s)),
        s.events.length && s.event && s.event.type === "action"
          ? h("div", { class: "tribute-events" }, s.events.flatMap((e) => tributeEventLines(e, names, s.level)))
          : null,
      ),
    );
    replaceChildren(
      el,
      h(
        "div",
        { class: "replay-page" },
        h(
          "div",
          { class: "room-title-row" },
          h("h1", {}, t("replay_title", { id: data.id ?? params.id })),
          data.preset || header ? h("span", { class: "muted replay-rules", testid: "replay-rules" }, replayRules()) : null,
          Number.isInteger(data.winner_team) ? h("span", { class: "badge" }, t("game_over_winner", { team: teamName(data.winner_team) })) : null,
          h("a", { class: "btn small", href: `/api/games/${encodeURIComponent(data.id ?? params.id)}/record`, download: `game-${data.id ?? params.id}.jsonl`, title: t("download_title"), testid: "download-record" }, t("download_record")),
          finished ? h("button", { type: "button", class: "btn small primary", testid: "replay-review", title: t("review_button_title"), onclick: openReview }, t("review_button")) : null,
        ),
        controls,
        h("div", { class: "replay-step muted", testid: "replay-step" }, `${t("replay_step", { i: idx + 1, n: steps.length })} · ${t("replay_keys")}`),
        infoStrip({ levels: s.levels, level: s.level, game: s.game, deal: s.deal, a_fails: s.a_fails, points: s.points_total, showPoints, finished: s.finished, names }),
        h("div", { class: "felt replay-felt", testid: "replay-table" }, SEATS.map((seat) => handEl(s, seat)), center),
      ),
    );
  }

  get(`/api/games/${encodeURIComponent(params.id)}`)
    .then((d) => {
      if (destroyed) return;
      data = d && typeof d === "object" ? d : {};
      if (data.damaged) {
        // the stored record is damaged (the server answers the game without it): say so, as for an error
        const msg = errorText("corrupt_record", { game: data.id ?? params.id });
        replaceChildren(el, h("div", { class: "card-panel", testid: "replay-damaged" }, h("p", { class: "error-text" }, msg), link("/", t("back_to_lobby"))));
        return;
      }
      const record = Array.isArray(data.record) ? data.record : [];
      header = record.find((e) => e && e.format) || null;
      steps = buildSteps(record.filter((e) => !(e && e.format)));
      dealStarts = steps.map((s, i) => (s.event && s.event.type === "deal" ? i : -1)).filter((i) => i >= 0);
      idx = 0;
      render();
    })
    .catch((e) => {
      if (destroyed) return;
      if (e.status === 404) {
        replaceChildren(el, notFoundPage(window.location.pathname + window.location.hash));
        return;
      }
      toast(errText(e));
      replaceChildren(el, h("div", { class: "card-panel" }, h("p", { class: "error-text" }, errText(e)), link("/", t("back_to_lobby"))));
    });

  return {
    destroy() {
      destroyed = true;
      clearInterval(autoTimer);
      document.removeEventListener("keydown", onKey);
    },
    onLang: render,
  };
}
