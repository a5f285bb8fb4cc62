// Profile, history and leaderboard pages (GET /api/users/{name}, /api/history, /api/leaderboard,
// /api/ladder).

import { fmtDate, fmtPct, h, link, replaceChildren } from "./dom.js";
import { get } from "./api.js";
import { getLang, t } from "./i18n.js";
import { authForm, errText } from "./auth.js";
import { addFriendButton } from "./friends.js";
import { botName, rulesInWords } from "./rules.js";
import { rankLabel } from "./cards.js";

/**
 * The Anhui title ladder (docs/rules.md section 2.1; AMB-22: 0 is 秀才, below 0 平民): [floor, title]
 * ascending; a title holds from its floor up to the next floor minus one.
 */
export const ANHUI_LADDER = [
  [-Infinity, "平民"],
  [0, "秀才"],
  [100, "舉人"],
  [400, "九品主簿"],
  [800, "八品縣丞"],
  [1500, "七品知縣"],
  [3000, "六品通判"],
  [7000, "五品知州"],
  [12000, "四品知府"],
  [20000, "三品侍郎"],
  [30000, "二品巡撫"],
  [50000, "一品大學士"],
  [80000, "宰相"],
  [100000, "皇帝"],
];

/** English names of the Anhui titles (historical ranks, section 2.1; the Chinese stays in the tooltip). */
const ANHUI_TITLE_EN = {
  平民: "Commoner",
  秀才: "Xiucai",
  舉人: "Juren",
  举人: "Juren",
  九品主簿: "Registrar",
  八品縣丞: "Deputy magistrate",
  七品知縣: "County magistrate",
  六品通判: "Prefectural judge",
  五品知州: "Department magistrate",
  四品知府: "Prefect",
  三品侍郎: "Vice minister",
  二品巡撫: "Governor",
  一品大學士: "Grand secretary",
  宰相: "Chancellor",
  皇帝: "Emperor",
};

/** An Anhui title in the UI language: the title itself in Chinese, its English name in English. */
export function anhuiTitleText(title) {
  const s = String(title || "");
  return getLang() === "zh" || !ANHUI_TITLE_EN[s] ? s : ANHUI_TITLE_EN[s];
}

/** Index in ANHUI_LADDER of the title for integer points. */
export function ladderIndex(points) {
  let i = 0;
  for (let k = 0; k < ANHUI_LADDER.length; k++) if (points >= ANHUI_LADDER[k][0]) i = k;
  return i;
}

function winRate(user, given) {
  if (typeof given === "number") return given;
  if (user && user.games_played) return (user.games_won || 0) / user.games_played;
  return null;
}

function ladderEl(points) {
  const pts = Number(points) || 0;
  const cur = ladderIndex(pts);
  const nextStep = ANHUI_LADDER[cur + 1];
  return h(
    "section",
    { class: "card-panel ladder", testid: "anhui-ladder" },
    h("h2", {}, t("anhui_ladder")),
    h(
      "p",
      {},
      `${t("anhui_points")}: `,
      h("strong", {}, String(pts)),
      " · ",
      `${t("anhui_title")}: `,
      h("strong", { testid: "anhui-title", dataset: { title: ANHUI_LADDER[cur][1] } }, anhuiTitleText(ANHUI_LADDER[cur][1])),
    ),
    h("p", { class: "muted" }, nextStep ? t("anhui_next", { n: nextStep[0] - pts, title: anhuiTitleText(nextStep[1]) }) : t("anhui_top")),
    h(
      "ol",
      { class: "ladder-list" },
      ANHUI_LADDER.map(([floor, title], i) =>
        h(
          "li",
          { class: i === cur ? "current" : i < cur ? "passed" : "" },
          h("span", { class: "ladder-title", title }, anhuiTitleText(title)),
          h("span", { class: "muted" }, Number.isFinite(floor) ? t("anhui_from", { n: floor }) : "< 0"),
        ),
      ),
    ),
  );
}

/** A seat of a game as a name: the person (a link to their profile) or the bot's difficulty. */
function playerEl(p) {
  if (!p) return "–";
  if (p.name) return link(`/profile/${encodeURIComponent(p.name)}`, p.name);
  if (p.bot || p.difficulty) return h("span", { class: "bot-name" }, botName(p.difficulty || p.bot));
  return "–";
}

/** The player at a seat of a game row (from row.players), or null. */
function playerAt(g, seat) {
  const list = Array.isArray(g.players) ? g.players : [];
  return list.find((p) => p && p.seat === seat) || null;
}

/**
 * The partner, opponents, final levels and result of a history / recent-games row
 * (docs/table-contract.md section 12), filling in from `players` and `seat` when the row lacks them.
 */
export function rowFacts(g) {
  const seat = Number.isInteger(g.seat) ? g.seat : null;
  const partner = g.partner || (seat === null ? null : playerAt(g, (seat + 2) % 4));
  const opponents = Array.isArray(g.opponents) ? g.opponents : seat === null ? [] : [playerAt(g, (seat + 1) % 4), playerAt(g, (seat + 3) % 4)].filter(Boolean);
  let mine = g.my_level ?? null;
  let theirs = g.their_level ?? null;
  if ((mine === null || theirs === null) && Array.isArray(g.levels) && seat !== null) {
    mine = g.levels[seat % 2];
    theirs = g.levels[(seat + 1) % 2];
  }
  const result = g.result || (g.won === true ? "won" : g.won === false ? "lost" : "unfinished");
  return { partner, opponents, mine, theirs, result };
}

function resultEl(result) {
  const cls = result === "won" ? "good" : result === "lost" ? "bad" : "muted";
  return h("span", { class: `result-word ${cls}`, testid: "game-result" }, t(`result_${result === "won" || result === "lost" || result === "drawn" ? result : "unfinished"}`));
}

/**
 * The table of games for the history and the profile: date, rules in words, partner, opponents,
 * final levels (ours · theirs), deals, result in words, and links to the replay and the record
 * download. Every row opens its replay when clicked. On a phone each row is a card (CSS).
 */
function gamesTable(games, opts = {}, ctx = null) {
  const td = (label, ...children) => h("td", { "data-label": label }, ...children);
  // columns without data in any row (an older server's rows) are left out
  const hasPlayers = games.some((g) => g.partner || (Array.isArray(g.players) && g.players.length));
  const hasLevels = games.some((g) => g.my_level != null || Array.isArray(g.levels) || Number.isInteger(g.deals));
  return h(
    "table",
    { class: "data-table games-table", testid: opts.testid },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, t("col_game")),
        h("th", {}, t("col_date")),
        h("th", {}, t("col_preset")),
        hasPlayers ? h("th", {}, t("col_partner")) : null,
        hasPlayers ? h("th", {}, t("col_opponents")) : null,
        hasLevels ? h("th", {}, t("col_levels")) : null,
        h("th", {}, t("col_result")),
        h("th", {}, t("col_record")),
      ),
    ),
    h(
      "tbody",
      {},
      games.map((g) => {
        const f = rowFacts(g);
        const replayHref = g.replay_url || `/replay/${g.id}`;
        const recordHref = g.record_url || `/api/games/${g.id}/record`;
        const rules = rulesInWords(g.preset || "official", g.options || g.overrides || null);
        const levels = f.mine !== null && f.mine !== undefined ? t("levels_us_them", { mine: rankLabel(String(f.mine)), theirs: rankLabel(String(f.theirs)) }) : "–";
        return h(
          "tr",
          {
            testid: "game-row",
            class: "clickable",
            dataset: { game: String(g.id) },
            onclick: (ev) => {
              if (ev.target.closest("a")) return; // the links do their own thing
              if (ctx) ctx.navigate(replayHref);
              else window.location.assign(replayHref);
            },
          },
          td(t("col_game"), link(replayHref, `#${g.id}`, { testid: "game-replay-link", title: t("open_replay") })),
          td(t("col_date"), fmtDate(g.finished_at)),
          td(t("col_preset"), h("span", { title: rules.description }, rules.text)),
          hasPlayers ? td(t("col_partner"), h("span", { testid: "game-partner" }, playerEl(f.partner))) : null,
          hasPlayers
            ? td(t("col_opponents"), h("span", { testid: "game-opponents" }, f.opponents.length ? f.opponents.flatMap((p, i) => (i ? [t("list_sep"), playerEl(p)] : [playerEl(p)])) : "–"))
            : null,
          hasLevels ? td(t("col_levels"), h("span", { testid: "game-levels" }, levels), Number.isInteger(g.deals) ? h("span", { class: "muted small" }, ` · ${t("col_deals")} ${g.deals}`) : null) : null,
          td(t("col_result"), resultEl(f.result), g.unrated ? h("span", { class: "muted small", testid: "game-unrated", title: t("unrated_why") }, ` · ${t("unrated")}`) : null),
          td(
            t("col_record"),
            link(replayHref, t("open_replay"), { class: "btn small" }),
            " ",
            h("a", { href: recordHref, download: `game-${g.id}.jsonl`, class: "btn small", title: t("download_title"), testid: "download-record" }, t("download_record")),
          ),
        );
      }),
    ),
  );
}

/**
 * The app's own 404 page (both languages) for a path no route matches (issue 7, item 12).
 * path: the path that was asked for. Returns an element.
 */
export function notFoundPage(path) {
  return h(
    "section",
    { class: "card-panel not-found", testid: "not-found" },
    h("div", { class: "not-found-mark", "aria-hidden": "true" }, "4♠4"),
    h("h1", {}, t("page404_title")),
    h("p", {}, t("page404_text", { path: String(path || "") })),
    link("/", t("back_to_lobby"), { class: "btn primary", testid: "not-found-home" }),
  );
}

/** Mount the profile of params.name. */
export function mountProfile(el, params, ctx) {
  let destroyed = false;
  replaceChildren(el, h("p", { class: "muted" }, t("loading")));
  let data = null;

  function render() {
    if (destroyed || !data) return;
    const u = data.user || {};
    const games = Array.isArray(data.recent_games) ? data.recent_games : [];
    const anhui = (typeof u.anhui_points === "number" && u.anhui_points !== 0) || games.some((g) => g && g.preset === "anhui");
    const stat = (k, v, testid) => h("div", { class: "stat", testid }, h("div", { class: "stat-v" }, v), h("div", { class: "stat-k" }, k));
    replaceChildren(
      el,
      h(
        "div",
        { class: "profile", testid: "profile" },
        h("h1", {}, t("profile_title", { name: u.name || params.name }), u.is_guest ? h("span", { class: "badge" }, t("guest_badge")) : null,
          addFriendButton(ctx, u.name || params.name, u)),
        h(
          "div",
          { class: "stats" },
          stat(t("profile_games"), String(u.games_played ?? 0), "profile-games"),
          stat(t("profile_won"), String(u.games_won ?? 0), "profile-won"),
          stat(t("profile_win_rate"), fmtPct(winRate(u, data.win_rate)), "profile-win-rate"),
          stat(t("profile_rating"), u.rating === undefined || u.rating === null ? "–" : String(u.rating), "profile-rating"),
          anhui && u.anhui_title ? stat(t("anhui_title"), anhuiTitleText(u.anhui_title), "profile-anhui-title") : null,
        ),
        h("p", { class: "hint rating-help", testid: "rating-help" }, t("rating_explained")),
        anhui ? ladderEl(u.anhui_points) : null,
        h(
          "section",
          { class: "card-panel" },
          h("h2", {}, t("profile_recent")),
          games.length ? gamesTable(games, { testid: "recent-games" }, ctx) : h("p", { class: "muted" }, t("profile_none")),
        ),
      ),
    );
  }

  get(`/api/users/${encodeURIComponent(params.name)}`)
    .then((d) => {
      data = d || {};
      render();
    })
    .catch((e) => {
      if (!destroyed) replaceChildren(el, e.status === 404 ? notFoundPage(window.location.pathname) : h("div", { class: "card-panel" }, h("p", { class: "error-text" }, errText(e)), link("/", t("back_to_lobby"))));
    });
  return {
    destroy() {
      destroyed = true;
    },
    onLang: render,
  };
}

/** Mount the signed-in user's game history. */
export function mountHistory(el, _params, ctx) {
  let destroyed = false;
  let games = null;

  function render() {
    if (destroyed) return;
    if (!ctx.me) {
      replaceChildren(el, h("div", { class: "lobby narrow" }, h("p", {}, t("history_login")), authForm((u) => ctx.setMe(u))));
      return;
    }
    if (games === null) {
      replaceChildren(el, h("p", { class: "muted" }, t("loading")));
      return;
    }
    replaceChildren(
      el,
      h(
        "section",
        { class: "card-panel", testid: "history" },
        h("h1", {}, t("history_title")),
        games.length ? gamesTable(games, { testid: "history-list" }, ctx) : h("p", { class: "muted", testid: "history-list" }, t("history_empty")),
      ),
    );
  }

  function load() {
    if (!ctx.me) {
      render();
      return;
    }
    get("/api/history")
      .then((d) => {
        games = Array.isArray(d.games) ? d.games : [];
        render();
      })
      .catch((e) => {
        if (!destroyed) replaceChildren(el, h("p", { class: "error-text" }, errText(e)));
      });
  }
  load();
  render();
  return {
    destroy() {
      destroyed = true;
    },
    onLang: render,
    onMe: load,
  };
}

/** Mount the leaderboard: two tabs, the rating (GET /api/leaderboard) and the points ladder
 * (比赛积分制, GET /api/ladder; issue 21 item 7). `?by=points` opens the ladder. */
export function mountLeaderboard(el, _params, _ctx) {
  let destroyed = false;
  let by = new URLSearchParams(location.search).get("by") === "points" ? "points" : "rating";
  const loaded = { rating: null, points: null };
  const failed = { rating: null, points: null };

  function tabs() {
    const tab = (key, label) =>
      h(
        "button",
        {
          type: "button",
          class: "btn tab-btn" + (by === key ? " active" : ""),
          role: "tab",
          "aria-selected": by === key ? "true" : "false",
          testid: key === "points" ? "board-tab-points" : "board-tab-rating",
          onclick: () => {
            if (by === key) return;
            by = key;
            history.replaceState(history.state, "", key === "points" ? "/leaderboard?by=points" : "/leaderboard");
            load();
          },
        },
        label,
      );
    return h("div", { class: "tab-row", role: "tablist" }, tab("rating", t("board_by_rating")), tab("points", t("board_by_points")));
  }

  function ratingTable(players) {
    return h(
      "table",
      { class: "data-table" },
      h("thead", {}, h("tr", {}, h("th", {}, t("col_rank")), h("th", {}, t("col_player")), h("th", {}, t("profile_rating")), h("th", {}, t("profile_games")), h("th", {}, t("profile_won")), h("th", {}, t("profile_win_rate")))),
      h(
        "tbody",
        {},
        players.map((u, i) =>
          h(
            "tr",
            { testid: "leaderboard-row" },
            h("td", {}, String(i + 1)),
            h("td", {}, link(`/profile/${encodeURIComponent(u.name)}`, u.name)),
            h("td", {}, u.rating === undefined || u.rating === null ? "–" : String(u.rating)),
            h("td", {}, String(u.games_played ?? 0)),
            h("td", {}, String(u.games_won ?? 0)),
            h("td", {}, fmtPct(winRate(u))),
          ),
        ),
      ),
    );
  }

  function pointsTable(players) {
    return h(
      "table",
      { class: "data-table" },
      h("thead", {}, h("tr", {}, h("th", {}, t("col_rank")), h("th", {}, t("col_player")), h("th", {}, t("col_points")), h("th", {}, t("col_title")))),
      h(
        "tbody",
        {},
        players.map((u) =>
          h(
            "tr",
            { testid: "ladder-row" },
            h("td", {}, String(u.place ?? "")),
            h("td", {}, link(`/profile/${encodeURIComponent(u.name)}`, u.name)),
            h("td", {}, String(u.anhui_points ?? 0)),
            h("td", { title: u.anhui_title || "" }, anhuiTitleText(u.anhui_title)),
          ),
        ),
      ),
    );
  }

  function render() {
    if (destroyed) return;
    const players = loaded[by];
    let body;
    if (failed[by]) body = h("p", { class: "error-text" }, errText(failed[by]));
    else if (players === null) body = h("p", { class: "muted" }, t("loading"));
    else if (!players.length) body = h("p", { class: "muted" }, t(by === "points" ? "ladder_empty" : "leaderboard_empty"));
    else body = by === "points" ? pointsTable(players) : ratingTable(players);
    replaceChildren(
      el,
      h(
        "section",
        { class: "card-panel", testid: by === "points" ? "ladder" : "leaderboard" },
        h("h1", {}, t("leaderboard_title")),
        tabs(),
        h("p", { class: "hint rating-help" }, t(by === "points" ? "ladder_explained" : "rating_explained")),
        body,
      ),
    );
  }

  function load() {
    const key = by;
    render();
    if (loaded[key] !== null) return;
    failed[key] = null;
    get(key === "points" ? "/api/ladder" : "/api/leaderboard")
      .then((d) => {
        loaded[key] = Array.isArray(d.players) ? d.players : [];
        render();
      })
      .catch((e) => {
        failed[key] = e;
        render();
      });
  }

  load();
  return {
    destroy() {
      destroyed = true;
    },
    onLang: render,
  };
}
