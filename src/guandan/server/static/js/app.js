// pyguandan browser UI: entry point, router and page header.
//
// Routes (path routing; the server serves index.html for each, and "#/room/x" style hashes work
// too for a static preview): /  /room/{id}  /profile/{name}  /replay/{id}  /review/{id}?deal=N&seat=S
// /leaderboard  /history  /tournaments  /tournaments/{id}  /challenge  /admin (admins only)  /teammatch/{id}
// (/login?next=/room/x shows the lobby, which asks to sign in when nobody is signed in, and goes
// back to the path in `next` once signed in; the header's sign-in link for signed-out people
// leads there from any page)
//
// Stable data-testid attributes for browser tests:
//   header:      lang-switch (select: "zh" | "en"), nav-lobby, nav-challenge, nav-tournaments, nav-leaderboard, nav-history,
//                nav-profile, nav-login (signed out: opens the sign-in form, then comes back),
//                user-name, logout-btn, toast (one-line messages, errors)
//   sign-in:     login-form, login-name, login-password, login-btn, register-btn, guest-btn
//   lobby:       quick-game, quick-difficulty, quick-diff (data-difficulty; aria-checked),
//                quick-clocks (switch, on by default), quick-clocks-words, quick-btn, room-list, room-item (data-room="{id}"), room-rules, rooms-refresh,
//                create-room-form, create-room-name, create-room-preset (select),
//                create-room-preset-desc, create-room-add-option, option-rows, option-row,
//                option-key (select), option-value (select or input), option-words, option-remove,
//                create-room-clocks (checkbox, on by default), create-room-clock-lead,
//                create-room-clock-follow, create-room-clock-hint, create-room-btn,
//                create-room-house-modes, create-room-no-shuffle, create-room-single-deal
//                (house modes, checkboxes), joker-reveal, joker-reveal-seat-0..3, joker-card,
//                turned-card (the R51 card, data-card, data-seat), result-streak,
//                join-input, join-btn
//   room:        room-title, room-damaged, conn-status, spectator-badge, room-rules-line (preset and rules
//                changed from it), room-clocks, room-unrated (不计分: a matched room with bots), invite-link, copy-invite,
//                seat-0..seat-3 (seat cards), seat-btn-0..seat-btn-3 (take/move to a seat),
//                bot-kind (select: heuristic | random), fill-bots-btn, leave-btn, start-btn
//   table:       table, levels, deal-level, wilds, a-fails, points, finish-order,
//                seat-panel-0..3, card-count-0..3, auto-badge-0..3, left-badge-0..3 (the person left the
//                game), seat-offline-0..3, seat-title-0..3 (the
//                account's Anhui title in rooms awarding points), turn-clock,
//                trick-seat-0..3, phase-prompt, tribute-events, actions-bar,
//                hand, hand-card (data-card="TH", data-index = position in the sorted hand;
//                class "selected" when selected), play-btn, pass-btn, hint-btn, clear-btn,
//                reading-chooser, reading-option (data-reading="type:rank"), reading-cancel,
//                result-panel, result-finish-order, result-code, result-winner,
//                result-upgrade, result-levels, result-a-fails, result-points (table:
//                per seat, this deal and total; Anhui only; result-title-0..3 its titles), result-close, game-over-panel, replay-link,
//                game-over-banner, replay-link-banner, game-over-title, game-over-heading, match-decision
//                (a tournament table: the tournament's decision after R54 penalties)
//   table view:  menu-btn, room-drawer (drawer-close, drawer-lang, drawer-lobby, room-rules),
//                last-trick-btn, last-trick (last-trick-row, data-seat), tracker-btn, tracker-panel
//                (tracker-cell data-rank/data-left, tracker-wild), popover-close, mute-btn,
//                sort-btn (data-mode), auto-btn, auto-banner, auto-cancel-btn, hint-index,
//                notices, notice, top-play, bomb-fx, show-result-btn, result-x, result-hands,
//                result-hand-0..3 (data-count), ready-state, ready-state-0..3, ready-clock,
//                ready-btn, game-summary, summary-deals, summary-levels, again-btn, again-follow,
//                result-lobby, drawer-tribute-events, reopen-result-btn, result-main (the
//                essentials), result-details (the scrolling finish order, hands and points),
//                result-more (its "more ↓" cue, shown while more lies below), leave-game-btn (the
//                drawer's Leave), leave-confirm (leave-confirm-text, leave-confirm-yes, leave-confirm-no)
//   friends:     friends-panel (lobby side column), friends-online, friends-guest, friend-invites,
//                friend-invite (data-room), friend-invite-join, friend-invite-dismiss, friend-requests,
//                friend-request (data-name), friend-accept, friend-decline, friend-block, friend-blocked,
//                friend-blocked-item (data-name), friend-unblock, friend-list, friend-item
//                (data-name, data-online "1"/"0"), friend-dot, friend-table (link to the friend's room),
//                friend-remove, friend-outgoing, friend-sent, friend-cancel, friend-add-form,
//                friend-add-name, friend-add-btn, friend-board, friend-board-row (data-name);
//                profile-add-friend (profile; data-state add/sent/accept/friends); waiting room:
//                invite-friends, invite-friend-btn, invite-friend-list, invite-friend (data-name),
//                invite-friend-none; game over: game-over-players, game-over-player
//   matchmaking: match-panel (lobby), match-partner, match-bots (select: "" | difficulty), match-join,
//                match-wait, match-partner-name, match-range, match-bots-in, match-leave, match-ready-check
//                (the ready dialog), match-ready-left, match-players (li data-name, class "ready"),
//                match-ready, match-decline, match-waiting-others, match-in-game (joining while seated in a
//                live game: the notice), match-goto-room (its "go to the game" link)
//   keyboard, voice (issue 25): keys-btn, keys-legend, av-settings (av-voice, av-sounds, av-effects,
//                av-voice-missing, av-reduced-motion), call-live (the live region of the plays called aloud)
//   phrases (issue 25): phrase-btn, phrase-off (where phrases are off; says why), phrase-panel, phrase-close,
//                phrase-item (data-id), emote-item (data-id), phrase-mute-all, phrase-layer, phrase-bubble
//                (data-seat, data-id); seat menu (click another person's seat panel): seat-menu (data-seat),
//                seat-menu-close, seat-mute, seat-report, report-reason, report-where, report-cancel, report-submit;
//                game over: game-over-report (then report-pick, data-name, with more than one other person)
//   admin:       nav-admin, admin-page, admin-only, admin-reports, admin-report (data-id, data-target),
//                admin-report-link, admin-target-state, admin-no-reports, admin-action, admin-hours, admin-why,
//                admin-apply, admin-action-form, admin-name, admin-log, admin-log-row (data-action), admin-no-log
//   offline page (static/offline.html): offline-page, offline-title, offline-text, offline-retry
//   profile:     profile, profile-games, profile-won, profile-win-rate, profile-rating,
//                rating-help, profile-anhui-title, anhui-ladder, anhui-title, recent-games, game-row
//   history:     history, history-list, game-row (data-game="{id}"; a click opens the replay),
//                game-replay-link, game-partner, game-opponents, game-levels, game-result, game-unrated,
//                download-record (also on the replay page)
//   not found:   not-found, not-found-home
//   leaderboard: leaderboard, leaderboard-row, board-tab-rating, board-tab-points; the points ladder
//                (?by=points): ladder, ladder-row
//   tournaments: tournament-list, tournament-item (data-tournament="{id}"), tournament-status,
//                create-tournament-form, create-tournament-name, create-tournament-preset,
//                create-tournament-format, create-tournament-rounds, create-tournament-minutes,
//                create-tournament-venue (select: tables | online), create-tournament-late,
//                create-tournament-btn
//   online:      table-link (a pairing row's link to its room), match-clock (round, table and the
//                match clock at a tournament table), delayed-spectating (a spectator's panel there)
//   tournament:  tournament-title, tournament-error, standings-table, standings-row (data-entry),
//                standings-fp, prize-list, round-section (data-round), pairing-row (data-table,
//                data-status), print-round-btn, print-btn, export-csv, export-json
//   table codes: claim-form, claim-table, claim-code, claim-level-a, claim-level-b,
//                claim-passed, claim-time, claim-btn, claim-status, table-cards-panel, table-cards,
//                table-card (data-table), table-card-half (data-side), table-card-code (data-side),
//                print-cards-btn, claim-confirm
//   challenge:   challenge-page, challenge-head, challenge-title, challenge-error, challenge-sign-in,
//                challenge-guest-note, challenge-me, challenge-boards, challenge-board (data-board,
//                data-status: open | playing | played), challenge-board-status, challenge-board-result,
//                challenge-board-pct, challenge-play-btn, challenge-resume-link, challenge-results-btn,
//                challenge-review-link, challenge-board-panel, challenge-board-close,
//                challenge-frequencies, challenge-results, challenge-result-row, challenge-leaderboard,
//                challenge-lb-day, challenge-lb-week, challenge-leaderboard-table,
//                challenge-leaderboard-row, challenge-leaderboard-empty, challenge-history,
//                challenge-history-row; lobby-challenge, lobby-challenge-link (the lobby's link); challenge-back
//   teammatch:   teammatch-page, teammatch-head, teammatch-title, teammatch-error, teammatch-score,
//                teammatch-points-a, teammatch-points-b, teammatch-table (data-table: 1 | 2),
//                teammatch-room-link, teammatch-next-btn, teammatch-boards, teammatch-board (data-board,
//                data-open: 0 | 1), teammatch-board-score, teammatch-replay-link, teammatch-review-link;
//                teammatch-link (a tournament table's team match)
//                (a board room's game-over panel)
//   organiser:   organiser-panel, org-pair-btn, org-repair-btn, org-entry-form, org-player1,
//                org-player2, org-club, org-rating, org-entry-add, org-csv, org-csv-btn,
//                org-result-form, org-result-table (value "round:table"), org-level-a, org-level-b,
//                org-passed, org-absent, org-extra (knock-out draws), org-time, org-correct, org-override, org-reason,
//                org-result-btn,
//                org-penalty-form, org-penalty-table, org-penalty-side, org-penalty-levels,
//                org-penalty-reason, org-penalty-loses, org-penalty-btn, org-withdraw-entry,
//                org-withdraw-btn, org-codirector-name, org-codirector-btn, org-codirectors,
//                org-codirector-remove, org-audit-log, org-audit-row
//   replay:      replay-first, replay-prev-deal, replay-prev, replay-next, replay-next-deal,
//                replay-last, replay-play, replay-step, replay-desc, replay-table, replay-rules,
//                replay-seat-0..3, replay-hand-0..3 (cards inside carry data-card), replay-review
//                (opens the review of the deal shown), replay-damaged (the stored record is damaged)
//   review:      review-page, review-title, review-back, review-deal-prev, review-deal,
//                review-deal-next, review-seat-0..3 (aria-pressed), review-progress,
//                review-progress-bar, review-error, review-summary, review-view-seat,
//                review-view-real (aria-pressed), review-list, review-row (data-index,
//                data-severity; class "costly" when marked), review-mark, review-played,
//                review-best, review-real-best, review-est-played, review-est-best,
//                review-est-real-best, review-board, review-board-desc, review-hand-0..3,
//                review-link (the game-over panel)

import { h, link, replaceChildren, toast } from "./dom.js";
import { SESSION_ENDED, get, post } from "./api.js";
import { LANGS, getLang, onLangChange, setLang, t } from "./i18n.js";
import { mountLobby } from "./lobby.js";
import { mountRoom } from "./room.js";
import { mountReplay } from "./replay.js";
import { mountReview } from "./review.js";
import { mountHistory, mountLeaderboard, mountProfile, notFoundPage } from "./pages.js";
import { mountTournament, mountTournaments } from "./tournaments.js";
import { mountChallenge } from "./challenge.js";
import { mountTeamMatch } from "./teammatch.js";
import { errText } from "./auth.js";
import { registerServiceWorker } from "./pwa.js";
import { adminNavLink, mountAdmin } from "./admin.js";

const ROUTES = [
  [/^\/$/, mountLobby, () => ({})],
  [/^\/room\/([^/]+)\/?$/, mountRoom, (m) => ({ id: decodeURIComponent(m[1]) })],
  [/^\/profile\/([^/]+)\/?$/, mountProfile, (m) => ({ name: decodeURIComponent(m[1]) })],
  [/^\/replay\/([^/]+)\/?$/, mountReplay, (m) => ({ id: decodeURIComponent(m[1]) })],
  [/^\/review\/([^/]+)\/?$/, mountReview, (m) => ({ id: decodeURIComponent(m[1]) })],
  [/^\/leaderboard\/?$/, mountLeaderboard, () => ({})],
  [/^\/tournaments\/?$/, mountTournaments, () => ({})],
  [/^\/tournaments\/([0-9]+)\/?$/, mountTournament, (m) => ({ id: m[1] })],
  [/^\/history\/?$/, mountHistory, () => ({})],
  [/^\/challenge\/?$/, mountChallenge, () => ({})],
  [/^\/teammatch\/([0-9]+)\/?$/, mountTeamMatch, (m) => ({ id: m[1] })],
  [/^\/login\/?$/, mountLobby, () => ({})],
  [/^\/admin\/?$/, mountAdmin, () => ({})],
];

const headerEl = h("header", { class: "topbar" });
const mainEl = h("main", { class: "page", id: "page" });
let current = null; // {destroy, onLang?, onMe?}

const ctx = {
  me: null,
  /** Set the signed-in user (or null) and refresh the header and page. */
  setMe(user) {
    ctx.me = user && typeof user === "object" ? user : null;
    if (ctx.me && isLoginPath()) {
      // signed in from the sign-in page: back to the page the sign-in link was clicked on
      redirect(nextPath());
      return;
    }
    renderHeader();
    if (current && current.onMe) current.onMe();
  },
  /** Go to an app path ("/room/abc"). */
  navigate(path) {
    if (useHash()) window.location.hash = `#${path}`;
    else {
      window.history.pushState({}, "", path);
      route();
    }
  },
};

function useHash() {
  return window.location.hash.startsWith("#/");
}

function currentPath() {
  if (useHash()) return window.location.hash.slice(1).split("?")[0] || "/";
  return window.location.pathname || "/";
}

function isLoginPath() {
  return /^\/login\/?$/.test(currentPath());
}

/** Query parameters of the current location (after "?" in the path, or in the "#/..." hash). */
function currentQuery() {
  if (useHash()) {
    const i = window.location.hash.indexOf("?");
    return new URLSearchParams(i >= 0 ? window.location.hash.slice(i + 1) : "");
  }
  return new URLSearchParams(window.location.search);
}

/** The app path in the `next` parameter of /login; "/" when missing or not a path of this site. */
function nextPath() {
  const next = currentQuery().get("next") || "";
  if (!next.startsWith("/") || next.startsWith("//") || next.includes("\\") || /^\/login\/?(\?|$)/.test(next)) return "/";
  return next;
}

/** Go to an app path, replacing the current history entry (no way back to it with Back). */
function redirect(path) {
  if (useHash()) window.location.replace(`#${path}`);
  else {
    window.history.replaceState({}, "", path);
    route();
  }
}

/** Path of the sign-in page that comes back to the current page afterwards. */
function loginHref() {
  const here = currentPath();
  if (isLoginPath()) return `/login${useHash() ? "" : window.location.search}`;
  return here === "/" ? "/login" : `/login?next=${encodeURIComponent(here)}`;
}

/** Header sign-in link: focus the sign-in form when the page shows one, else open /login. */
function onLoginClick(ev) {
  if (ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const form = mainEl.querySelector("[data-testid=login-form]");
  if (!form) return; // the document click handler navigates to the link's path
  ev.preventDefault();
  form.scrollIntoView({ block: "center" });
  const name = form.querySelector("[data-testid=login-name]");
  if (name) name.focus();
}

function route() {
  if (isLoginPath() && ctx.me) {
    redirect(nextPath()); // already signed in
    return;
  }
  if (current) {
    try {
      current.destroy();
    } catch (e) {
      console.error(e);
    }
    current = null;
  }
  const path = currentPath();
  window.scrollTo(0, 0);
  for (const [re, mount, params] of ROUTES) {
    const m = path.match(re);
    if (m) {
      mainEl.className = `page page-${mount.name.replace(/^mount/, "").toLowerCase()}`;
      current = mount(mainEl, params(m), ctx) || null;
      renderHeader();
      if (!ctx.me && isLoginPath()) {
        const name = mainEl.querySelector("[data-testid=login-name]");
        if (name) name.focus(); // came here to sign in
      }
      return;
    }
  }
  mainEl.className = "page page-notfound";
  const draw = () => replaceChildren(mainEl, notFoundPage(path));
  draw();
  current = { destroy() {}, onLang: draw };
  renderHeader();
}

function renderHeader() {
  const path = currentPath();
  const nav = (href, key, testid) =>
    link(href, t(key), { class: `nav-link${path === href ? " active" : ""}`, testid });
  const langSel = h(
    "select",
    { class: "lang-switch", testid: "lang-switch", "aria-label": t("language"), onchange: (ev) => setLang(ev.target.value) },
    LANGS.map((l) => h("option", { value: l, selected: l === getLang() }, l === "zh" ? "中文" : "English")),
  );
  const me = ctx.me;
  replaceChildren(
    headerEl,
    h("a", { href: "/", "data-link": "", class: "brand" }, h("span", { class: "brand-mark" }, "♠♥"), t("app_title")),
    h(
      "nav",
      { class: "nav" },
      nav("/", "nav_lobby", "nav-lobby"),
      nav("/challenge", "nav_challenge", "nav-challenge"),
      nav("/tournaments", "nav_tournaments", "nav-tournaments"),
      nav("/leaderboard", "nav_leaderboard", "nav-leaderboard"),
      me ? nav("/history", "nav_history", "nav-history") : null,
      me ? nav(`/profile/${encodeURIComponent(me.name)}`, "nav_profile", "nav-profile") : null,
      me ? adminNavLink(me, path === "/admin") : null,
    ),
    h(
      "div",
      { class: "user-box" },
      me
        ? [
            h("span", { class: "user-name", testid: "user-name" }, me.name, me.is_guest ? h("span", { class: "badge" }, t("guest_badge")) : null),
            h("button", { type: "button", class: "btn small secondary", testid: "logout-btn", onclick: logout }, t("logout")),
          ]
        : link(loginHref(), t("nav_login"), { class: "btn small primary nav-login", testid: "nav-login", onclick: onLoginClick }),
      langSel,
    ),
  );
  document.title = t("app_title");
}

let loggingOut = false; // a poll answered 401 during one's own logout is not news

async function logout() {
  loggingOut = true;
  try {
    await post("/api/logout");
  } catch (e) {
    toast(errText(e));
  } finally {
    loggingOut = false;
  }
  ctx.setMe(null);
}

/** A call was answered 401 login_required while the page believed someone signed in (and was not
 * logging out): show the page signed out (its polls stop with it) and say why, once. */
function onSessionEnded() {
  if (!ctx.me || loggingOut) return;
  ctx.me = null;
  toast(t("session_ended"), "info");
  route();
}

function onLinkClick(ev) {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = ev.target.closest && ev.target.closest("a[data-link]");
  if (!a) return;
  const href = a.getAttribute("href");
  if (!href || !href.startsWith("/")) return;
  ev.preventDefault();
  ctx.navigate(href);
}

async function boot() {
  const root = document.getElementById("app") || document.body;
  replaceChildren(root, headerEl, mainEl);
  document.documentElement.lang = getLang() === "zh" ? "zh-CN" : "en";
  document.addEventListener("click", onLinkClick);
  window.addEventListener("popstate", route);
  window.addEventListener("hashchange", route);
  window.addEventListener(SESSION_ENDED, onSessionEnded);
  onLangChange(() => {
    renderHeader();
    if (current && current.onLang) current.onLang();
    else route();
  });
  try {
    const data = await get("/api/me");
    ctx.me = data && data.user ? data.user : null;
  } catch (_e) {
    ctx.me = null; // 401: not signed in
  }
  route();
}

boot();
registerServiceWorker();
