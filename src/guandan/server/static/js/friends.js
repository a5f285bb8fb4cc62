// Friends (issue 25 item 2): the lobby's friends panel (friends with online dots and "at table"
// links, requests to accept or decline, the add-by-name form, invitations to rooms, the friends
// leaderboard), the "Add friend" button of a profile, the waiting room's "Invite a friend" control,
// and the profile links of a finished game's players. Server: GET /api/friends and the POSTs of
// src/guandan/server/api_friends.py; rules in src/guandan/server/friends.py.
//
// While the tab is visible the panel listens to GET /api/friends/stream (server-sent events: the
// panel now and whenever it changes; src/guandan/server/friends_push.py) and closes it when the tab
// is hidden. Without the stream (a browser without EventSource, a proxy that holds the events back,
// a stream that failed) it polls GET /api/friends every POLL_MS instead, and tries the stream again
// after STREAM_RETRY_MS. Guests see a line saying that friends need an account.

import { h, link, replaceChildren, toast } from "./dom.js";
import { get, post, roomTitle } from "./api.js";
import { getLang, t } from "./i18n.js";
import { errText } from "./auth.js";

export const POLL_MS = 20000;
/** After a stream that failed for good (the browser stopped reconnecting), wait this long before opening it again. */
export const STREAM_RETRY_MS = 60000;

const enc = encodeURIComponent;

/** A person's name as a link to the profile. */
function profileLink(name, attrs = {}) {
  return link(`/profile/${enc(name)}`, name, attrs);
}

/** "online" / "offline" / "at table X" words of a friend from GET /api/friends. */
export function presenceText(f) {
  if (!f.online) return t("fr_offline");
  if (f.table) return t(f.table.status === "playing" ? "fr_at_table_playing" : "fr_at_table_waiting", { room: roomTitle({ name: f.table.room_name, id: f.table.room_id }) });
  return t("fr_online");
}

async function act(path, body, done) {
  try {
    const out = await post(path, body);
    if (done) done(out);
    return out;
  } catch (e) {
    toast(errText(e));
    return null;
  }
}

/**
 * The lobby's friends panel. ctx: the app context ({me, navigate}). Returns {el, invites, destroy()}:
 * `el` the panel (side column), `invites` the bar of invitations to rooms, which the lobby puts
 * above both columns so that a phone shows it without scrolling (hidden while there are none).
 */
export function friendsPanel(ctx) {
  const el = h("section", { class: "card-panel friends-panel", testid: "friends-panel" });
  const invites = h("div", { class: "friend-invites-bar", hidden: true });
  let data = null;
  let timer = null;
  let destroyed = false;
  let stream = null; // the EventSource while one is open or reconnecting
  let streaming = false; // the stream has delivered a panel since it last failed: no polling
  let retryTimer = null;
  const guest = !ctx.me || ctx.me.is_guest;

  async function load() {
    if (destroyed || guest || document.hidden) return;
    try {
      const d = await get("/api/friends");
      if (destroyed) return;
      data = d;
      draw();
    } catch (e) {
      if (!destroyed && !data) replaceChildren(el, h("h2", {}, t("fr_title")), h("p", { class: "error-text" }, errText(e)));
    }
  }

  const refresh = () => load();

  /** Listen to the panel's stream (nothing for guests, hidden tabs, or browsers without EventSource). */
  function openStream() {
    if (destroyed || guest || document.hidden || stream || typeof window.EventSource !== "function") return;
    const es = new window.EventSource("/api/friends/stream");
    stream = es;
    es.addEventListener("friends", (e) => {
      if (destroyed || stream !== es) return;
      try {
        data = JSON.parse(e.data);
      } catch (_err) {
        return;
      }
      streaming = true;
      draw();
    });
    es.onerror = () => {
      if (stream !== es) return;
      streaming = false; // poll until the stream delivers again
      if (es.readyState === window.EventSource.CLOSED) {
        // refused (logged out, a guest, an error page) or not a stream: poll, try again later
        stream = null;
        load();
        clearTimeout(retryTimer);
        retryTimer = setTimeout(openStream, STREAM_RETRY_MS);
      }
    };
  }

  function closeStream() {
    if (stream) stream.close();
    stream = null;
    streaming = false;
    clearTimeout(retryTimer);
  }

  /** The timer's poll: only while no stream delivers. */
  function poll() {
    if (!streaming) load();
  }

  // made once and never taken out of the page: a redraw (every poll) keeps what is being typed and the focus
  const addFormEl = addForm();
  const headEl = h("div", { class: "panel-head" });
  const bodyEl = h("div", { class: "friends-body" });
  const tailEl = h("div", { class: "friends-tail" });
  let blockedOpen = false;

  function addForm() {
    const input = h("input", { type: "text", maxlength: "24", placeholder: t("fr_add_placeholder"), "aria-label": t("fr_add_placeholder"), testid: "friend-add-name" });
    return h(
      "form",
      {
        class: "inline-form friend-add",
        testid: "friend-add-form",
        onsubmit: async (ev) => {
          ev.preventDefault();
          const name = input.value.trim();
          if (!name) return;
          const out = await act("/api/friends/requests", { name });
          if (out) {
            input.value = "";
            toast(t(out.outcome === "accepted" ? "fr_now_friends" : "fr_request_sent", { name: out.name }), "info");
            load();
          }
        },
      },
      input,
      h("button", { type: "submit", class: "btn", testid: "friend-add-btn" }, t("fr_add_button")),
    );
  }

  function drawInvitations(list) {
    invites.hidden = !list.length;
    replaceChildren(invites, list.length ? invitationsEl(list) : null);
  }

  function invitationsEl(list) {
    return h(
      "div",
      { class: "friend-block friend-invites", testid: "friend-invites" },
      list.map((inv) =>
        h(
          "div",
          { class: "friend-invite", testid: "friend-invite", dataset: { room: inv.room_id }, role: "status" },
          h("span", { class: "friend-invite-text" }, t("fr_invited_you", { name: inv.from, room: roomTitle({ name: inv.room_name, id: inv.room_id }) })),
          h(
            "span",
            { class: "friend-actions" },
            h("button", { type: "button", class: "btn small primary", testid: "friend-invite-join", onclick: () => ctx.navigate(`/room/${inv.room_id}`) }, t("fr_join")),
            h("button", { type: "button", class: "btn small", testid: "friend-invite-dismiss", onclick: () => act(`/api/friends/invitations/${inv.id}/dismiss`, {}, load) }, t("fr_dismiss")),
          ),
        ),
      ),
    );
  }

  function requestsEl(list) {
    if (!list.length) return null;
    return h(
      "div",
      { class: "friend-block", testid: "friend-requests" },
      h("div", { class: "field-title" }, t("fr_requests")),
      list.map((r) =>
        h(
          "div",
          { class: "friend-row", testid: "friend-request", dataset: { name: r.name } },
          h("span", { class: "friend-name" }, profileLink(r.name)),
          h(
            "span",
            { class: "friend-actions" },
            h("button", { type: "button", class: "btn small primary", testid: "friend-accept", onclick: () => act("/api/friends/accept", { name: r.name }, load) }, t("fr_accept")),
            h("button", { type: "button", class: "btn small", testid: "friend-decline", onclick: () => act("/api/friends/decline", { name: r.name }, load) }, t("fr_decline")),
            h(
              "button",
              {
                type: "button",
                class: "btn small",
                testid: "friend-block",
                onclick: () => {
                  if (window.confirm(t("fr_block_confirm", { name: r.name }))) act("/api/friends/block", { name: r.name }, load);
                },
              },
              t("fr_block"),
            ),
          ),
        ),
      ),
    );
  }

  function friendRow(f) {
    const where = f.online && f.table
      ? link(`/room/${f.table.room_id}`, presenceText(f), { testid: "friend-table", class: "friend-where" })
      : h("span", { class: "friend-where muted" }, presenceText(f));
    return h(
      "div",
      { class: "friend-row", testid: "friend-item", dataset: { name: f.name, online: f.online ? "1" : "0" } },
      h("span", { class: `friend-dot${f.online ? " on" : ""}`, testid: "friend-dot", role: "img", "aria-label": t(f.online ? "fr_online" : "fr_offline"), title: t(f.online ? "fr_online" : "fr_offline") }),
      h("span", { class: "friend-name" }, profileLink(f.name)),
      where,
      h(
        "button",
        {
          type: "button",
          class: "btn small friend-x",
          testid: "friend-remove",
          title: t("fr_remove"),
          "aria-label": `${t("fr_remove")}: ${f.name}`,
          onclick: () => {
            if (window.confirm(t("fr_remove_confirm", { name: f.name }))) act("/api/friends/remove", { name: f.name }, load);
          },
        },
        "✕",
      ),
    );
  }

  function boardEl(board) {
    if (board.length < 2) return null;
    return h(
      "div",
      { class: "friend-block", testid: "friend-board" },
      h("div", { class: "field-title" }, t("fr_board")),
      h(
        "ol",
        { class: "friend-board" },
        board.map((e) =>
          h(
            "li",
            { class: `friend-board-row${e.me ? " me" : ""}`, testid: "friend-board-row", dataset: { name: e.name } },
            h("span", { class: "fb-rank" }, String(e.rank)),
            h("span", { class: "fb-name" }, e.me ? `${e.name} (${t("seat_you")})` : profileLink(e.name)),
            h("span", { class: "fb-rating" }, String(e.rating)),
          ),
        ),
      ),
    );
  }

  function blockedEl(list) {
    if (!list.length) return null;
    return h(
      "details",
      { class: "friend-block friend-blocked", testid: "friend-blocked", open: blockedOpen, ontoggle: (ev) => { blockedOpen = ev.target.open; } },
      h("summary", {}, t("fr_blocked", { n: list.length })),
      list.map((x) =>
        h(
          "div",
          { class: "friend-row", testid: "friend-blocked-item", dataset: { name: x.name } },
          h("span", { class: "friend-name" }, x.name),
          h("button", { type: "button", class: "btn small", testid: "friend-unblock", onclick: () => act("/api/friends/unblock", { name: x.name }, load) }, t("fr_unblock")),
        ),
      ),
    );
  }

  function draw() {
    if (destroyed) return;
    if (guest) {
      replaceChildren(el, h("h2", {}, t("fr_title")), h("p", { class: "muted", testid: "friends-guest" }, t("fr_guest")));
      return;
    }
    if (el.firstChild !== headEl) replaceChildren(el, headEl, bodyEl, addFormEl, tailEl); // the form stays put: typing survives the polls
    if (!data) {
      replaceChildren(headEl, h("h2", {}, t("fr_title")));
      replaceChildren(bodyEl, h("p", { class: "muted" }, t("loading")));
      return;
    }
    const friends = Array.isArray(data.friends) ? data.friends : [];
    const online = friends.filter((f) => f.online).length;
    const outgoing = Array.isArray(data.outgoing) ? data.outgoing : [];
    drawInvitations(Array.isArray(data.invitations) ? data.invitations : []);
    replaceChildren(headEl, h("h2", {}, t("fr_title")), h("span", { class: "muted small", testid: "friends-online" }, t("fr_online_count", { n: online, total: friends.length })));
    replaceChildren(
      bodyEl,
      requestsEl(Array.isArray(data.incoming) ? data.incoming : []),
      h(
        "div",
        { class: "friend-list", testid: "friend-list" },
        friends.length ? friends.map(friendRow) : h("p", { class: "muted" }, t("fr_none")),
      ),
      outgoing.length
        ? h(
            "div",
            { class: "friend-block", testid: "friend-outgoing" },
            h("div", { class: "field-title" }, t("fr_sent")),
            outgoing.map((o) =>
              h(
                "div",
                { class: "friend-row", testid: "friend-sent", dataset: { name: o.name } },
                h("span", { class: "friend-name" }, profileLink(o.name)),
                h("button", { type: "button", class: "btn small", testid: "friend-cancel", onclick: () => act("/api/friends/remove", { name: o.name }, load) }, t("fr_cancel")),
              ),
            ),
          )
        : null,
    );
    replaceChildren(tailEl, boardEl(Array.isArray(data.leaderboard) ? data.leaderboard : []), blockedEl(Array.isArray(data.blocked) ? data.blocked : []));
  }

  function onVisible() {
    if (document.hidden) {
      closeStream();
      return;
    }
    if (typeof window.EventSource === "function") openStream();
    else load();
  }

  draw();
  if (!guest) {
    if (typeof window.EventSource === "function") openStream();
    else load();
    timer = setInterval(poll, POLL_MS);
    document.addEventListener("visibilitychange", onVisible);
  }
  return {
    el,
    invites,
    refresh,
    redraw: draw,
    destroy() {
      destroyed = true;
      clearInterval(timer);
      closeStream();
      document.removeEventListener("visibilitychange", onVisible);
    },
  };
}

/**
 * The profile's "Add friend" button for the account `name` (user: the profile's user object), or
 * null when it does not apply (signed out, a guest on either side, one's own profile). The button
 * shows "Friends" / "Request sent" / "Accept request" from GET /api/friends.
 */
export function addFriendButton(ctx, name, user) {
  if (!ctx.me || ctx.me.is_guest || (user && user.is_guest) || String(ctx.me.name).toLowerCase() === String(name).toLowerCase()) return null;
  const btn = h("button", { type: "button", class: "btn small primary", testid: "profile-add-friend" }, t("fr_add_friend"));
  let mode = "add";

  function show(m) {
    mode = m;
    btn.textContent = t({ add: "fr_add_friend", friends: "fr_is_friend", sent: "fr_request_sent_short", accept: "fr_accept_request" }[m]);
    btn.disabled = m === "friends" || m === "sent";
    btn.dataset.state = m;
  }

  get("/api/friends")
    .then((d) => {
      const low = String(name).toLowerCase();
      const has = (list) => Array.isArray(list) && list.some((x) => String(x.name).toLowerCase() === low);
      if (has(d.friends)) show("friends");
      else if (has(d.outgoing)) show("sent");
      else if (has(d.incoming)) show("accept");
      else show("add");
    })
    .catch(() => show("add"));

  btn.addEventListener("click", async () => {
    if (mode === "accept") {
      if (await act("/api/friends/accept", { name })) show("friends");
      return;
    }
    const out = await act("/api/friends/requests", { name });
    if (out) {
      toast(t(out.outcome === "accepted" ? "fr_now_friends" : "fr_request_sent", { name: out.name }), "info");
      show(out.outcome === "accepted" ? "friends" : "sent");
    }
  });
  show("add");
  return btn;
}

const inviteBoxes = new Map();

/**
 * The waiting room's "Invite a friend" control for room `roomId`: a button that opens the list of
 * online friends not seated here, each with an Invite button (POST /api/friends/invitations). The
 * same element is given back for the same room and language, so the seats' re-renders keep it open.
 * Returns null for guests and signed-out visitors.
 */
export function inviteControl(ctx, roomId) {
  if (!ctx.me || ctx.me.is_guest) return null;
  const key = `${roomId}:${getLang()}`; // a new language draws a new control
  const cached = inviteBoxes.get(key);
  if (cached) return cached;
  inviteBoxes.clear(); // one room at a time
  const list = h("div", { class: "invite-list", testid: "invite-friend-list", hidden: true });
  const toggle = h("button", { type: "button", class: "btn small", testid: "invite-friend-btn", "aria-expanded": "false" }, t("fr_invite_friend"));

  async function fill() {
    replaceChildren(list, h("p", { class: "muted" }, t("loading")));
    try {
      const d = await get("/api/friends");
      const here = (f) => f.table && f.table.room_id === roomId;
      const online = (Array.isArray(d.friends) ? d.friends : []).filter((f) => f.online && !here(f));
      if (!online.length) {
        replaceChildren(list, h("p", { class: "muted", testid: "invite-friend-none" }, t("fr_invite_none")));
        return;
      }
      replaceChildren(
        list,
        online.map((f) => {
          const b = h("button", { type: "button", class: "btn small primary", testid: "invite-friend", dataset: { name: f.name } }, t("fr_invite"));
          b.addEventListener("click", async () => {
            b.disabled = true;
            const out = await act("/api/friends/invitations", { name: f.name, room_id: roomId });
            if (out) {
              b.textContent = t("fr_invited");
              toast(t("fr_invite_sent", { name: f.name }), "info");
            } else {
              b.disabled = false;
            }
          });
          return h("div", { class: "friend-row" }, h("span", { class: "friend-dot on" }), h("span", { class: "friend-name" }, f.name), h("span", { class: "friend-where muted" }, presenceText(f)), b);
        }),
      );
    } catch (e) {
      replaceChildren(list, h("p", { class: "error-text" }, errText(e)));
    }
  }

  toggle.addEventListener("click", () => {
    const open = list.hidden;
    list.hidden = !open;
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) fill();
  });
  const box = h("div", { class: "invite-friends", testid: "invite-friends" }, toggle, list);
  inviteBoxes.set(key, box);
  return box;
}

/**
 * The people of a finished game as profile links (to add them as friends from their profiles):
 * seats = the room's seats ({user, bot}); me = the signed-in name. Returns null with nobody else.
 */
export function gamePlayersLinks(seats, me) {
  const names = (Array.isArray(seats) ? seats : []).map((s) => s && s.user).filter((n) => n && n !== me);
  if (!names.length) return null;
  return h(
    "div",
    { class: "game-players", testid: "game-over-players" },
    h("span", { class: "muted" }, `${t("fr_players")} `),
    names.map((n, i) => [i ? t("list_sep") : "", profileLink(n, { testid: "game-over-player" })]),
  );
}
