// Pieces of the card table shared by the live table (room.js) and the replay viewer (replay.js):
// seat positions, team and place labels, the info strip and the trick cells.

import { h } from "./dom.js";
import { t } from "./i18n.js";
import { actionText, cardEl, playMini, rankLabel, wildsOf } from "./cards.js";

/** Team of a seat: 0 for seats 0 and 2, 1 for seats 1 and 3. */
export const teamOf = (seat) => seat % 2;

/** "Team A" / "Team B". */
export const teamName = (team) => t(team === 0 ? "team_a" : "team_b");

/** Display seat number (1-4) of a seat index (0-3). */
export const seatNo = (seat) => seat + 1;

/** Place label of a 0-based finishing position: 头游 / 1st ... */
export const placeLabel = (i) => t(`place_${i + 1}`);

/** Screen position of seat when bottomSeat sits at the bottom (play order runs counter-clockwise). */
export function positionOf(seat, bottomSeat) {
  return ["bottom", "right", "top", "left"][(seat - (bottomSeat || 0) + 4) % 4];
}

/** Name of a seat from names[] (may hold null), falling back to "Seat N". */
export function seatName(names, seat) {
  const n = Array.isArray(names) ? names[seat] : null;
  return n ? String(n) : t("seat", { n: seatNo(seat) });
}

/** Label of a bot seat: "bot (heuristic)" / 机器人（启发式）. */
export function botLabel(kind) {
  const k = kind === "heuristic" ? t("bot_heuristic") : kind === "random" ? t("bot_random") : String(kind);
  return t("bot_label", { kind: k });
}

/** A small colored team tag. */
export function teamTag(seat) {
  const team = teamOf(seat);
  return h("span", { class: `team-tag team-${team}`, title: teamName(team) }, team === 0 ? "A" : "B");
}

/**
 * The info strip: both team levels, the deal level and its wilds, game/deal numbers, A attempts,
 * points (when shown) and the finishing order. info: {levels, level, game, deal, a_fails,
 * points, showPoints, finished, names}.
 */
export function infoStrip(info) {
  const levels = Array.isArray(info.levels) ? info.levels : [];
  const items = [];
  items.push(
    h(
      "div",
      { class: "info-item", testid: "levels" },
      h("span", { class: "info-label" }, t("levels")),
      h("span", { class: "team-level team-0" }, `${t("team_a")} ${rankLabel(levels[0]) || "?"}`),
      h("span", { class: "team-level team-1" }, `${t("team_b")} ${rankLabel(levels[1]) || "?"}`),
    ),
  );
  if (info.level) {
    items.push(
      h(
        "div",
        { class: "info-item", testid: "deal-level" },
        h("span", { class: "info-label" }, t("deal_level")),
        h("strong", { class: "deal-level" }, rankLabel(info.level)),
      ),
    );
    const wilds = Array.isArray(info.wilds) && info.wilds.length ? info.wilds : wildsOf(info.level);
    items.push(
      h(
        "div",
        { class: "info-item", testid: "wilds" },
        h("span", { class: "info-label" }, t("wilds")),
        wilds.map((c) => cardEl(c, { level: info.level, size: "mini" })),
      ),
    );
  }
  if (info.game !== undefined && info.game !== null) {
    items.push(h("div", { class: "info-item muted" }, t("game_deal", { game: info.game, deal: info.deal })));
  }
  if (Array.isArray(info.a_fails) && (info.a_fails[0] || info.a_fails[1])) {
    items.push(
      h("div", { class: "info-item", testid: "a-fails" }, `${t("a_fails")}: ${t("team_a")} ${info.a_fails[0]} · ${t("team_b")} ${info.a_fails[1]}`),
    );
  }
  if (info.showPoints && Array.isArray(info.points)) {
    items.push(
      h(
        "div",
        { class: "info-item", testid: "points" },
        h("span", { class: "info-label" }, t("points")),
        info.points.map((p, s) => h("span", { class: "pts" }, `${seatName(info.names, s)} ${p}`)),
      ),
    );
  }
  const finished = Array.isArray(info.finished) ? info.finished : [];
  items.push(
    h(
      "div",
      { class: "info-item", testid: "finish-order" },
      h("span", { class: "info-label" }, t("finish_order")),
      finished.length
        ? finished.map((s, i) => h("span", { class: "place" }, `${placeLabel(i)} ${seatName(info.names, s)}`))
        : h("span", { class: "muted" }, t("finish_none")),
    ),
  );
  return h("div", { class: "info-strip" }, items);
}

/** The cell showing one seat's last action in the current trick: cards, "Pass" or nothing. */
export function trickCell(action, level, seat, pos, isTop) {
  const attrs = { class: `trick-cell pos-${pos}${isTop ? " top-play" : ""}`, testid: `trick-seat-${seat}` };
  if (!Array.isArray(action)) return h("div", attrs);
  if (action[0] === "pass") return h("div", attrs, h("span", { class: "pass-label" }, t("pass_word")));
  return h(
    "div",
    attrs,
    playMini(action, level),
    h("div", { class: "play-label" }, actionText(action, false)),
  );
}

/**
 * The last action of each seat in the current trick, from view.last_actions when the server
 * sends it, else from view.trick ([[seat, action], ...], oldest first).
 */
export function lastActions(view) {
  if (view && Array.isArray(view.last_actions) && view.last_actions.length === 4) return view.last_actions;
  const out = [null, null, null, null];
  if (view && Array.isArray(view.trick)) {
    for (const entry of view.trick) {
      if (Array.isArray(entry) && entry.length >= 2 && Number.isInteger(entry[0]) && entry[0] >= 0 && entry[0] < 4) {
        out[entry[0]] = entry[1];
      }
    }
  }
  return out;
}

/** One line describing a tribute-phase event (anti_tribute, tribute_paid, returns_revealed, jiefeng). */
export function tributeEventLines(ev, names, level) {
  const nm = (s) => seatName(names, s);
  const card = (c) => h("span", { class: "inline-card" }, cardEl(c, { level, size: "mini" }));
  if (!ev || typeof ev !== "object") return [];
  switch (ev.type) {
    case "anti_tribute":
      return [
        h("div", { class: "event anti" }, t("ev_anti_tribute", {
          seats: (ev.seats || []).map(nm).join(", "),
          leader: nm(ev.leader),
        })),
      ];
    case "tribute_paid":
      return (ev.tributes || []).map((x) =>
        h("div", { class: "event" }, fill(t("ev_tribute"), { from: nm(x[0]), to: nm(x[1]), card: card(x[2]) })),
      );
    case "returns_revealed": {
      const lines = (ev.returns || []).map((x) =>
        h("div", { class: "event" }, fill(t("ev_return"), { from: nm(x[0]), to: nm(x[1]), card: card(x[2]) })),
      );
      if (ev.leader !== undefined && ev.leader !== null) lines.push(h("div", { class: "event" }, t("ev_leader", { name: nm(ev.leader) })));
      return lines;
    }
    case "jiefeng":
      return [h("div", { class: "event jiefeng" }, t("ev_jiefeng", { name: nm(ev.leader) }))];
    default:
      return [];
  }
}

/** Fill a template with {placeholders} whose values may be DOM nodes; returns an array of nodes/strings. */
export function fill(template, params) {
  const out = [];
  let last = 0;
  template.replace(/\{(\w+)\}/g, (m, name, offset) => {
    out.push(template.slice(last, offset));
    out.push(params[name] === undefined ? m : params[name]);
    last = offset + m.length;
    return m;
  });
  out.push(template.slice(last));
  return out;
}
