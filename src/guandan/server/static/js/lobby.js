// The lobby: sign in, list rooms, create a room (preset + option overrides + clocks), join by invite.

import { h, replaceChildren, toast } from "./dom.js";
import { get, post } from "./api.js";
import { t } from "./i18n.js";
import { authForm, errText } from "./auth.js";

const CLOCK_KEYS = ["clock_lead_s", "clock_follow_s"];
const REFRESH_MS = 5000;

/** Text of an option value for display: [6,4,2] -> "6/4/2", null -> "null". */
export function fmtOption(v) {
  if (Array.isArray(v)) return v.join("/");
  if (v === null || v === undefined) return "null";
  return String(v);
}

/**
 * Parse the text typed for an option into the JSON type of the preset's value: lists of ints
 * ("6/4/2", "6,4,2" or JSON), booleans, numbers or null, strings. Text that does not fit is sent
 * as a string and the server answers with its one-line error.
 */
export function parseOption(text, sample) {
  const s = String(text).trim();
  if (Array.isArray(sample)) {
    try {
      const j = JSON.parse(s);
      if (Array.isArray(j)) return j;
    } catch (_e) {
      // not JSON; split below
    }
    const parts = s.split(/[\s,/]+/).filter(Boolean);
    return parts.every((p) => /^-?\d+$/.test(p)) ? parts.map(Number) : s;
  }
  if (typeof sample === "boolean") {
    const low = s.toLowerCase();
    if (["true", "1", "yes", "on"].includes(low)) return true;
    if (["false", "0", "no", "off"].includes(low)) return false;
    return s;
  }
  if (typeof sample === "number" || sample === null) {
    const low = s.toLowerCase();
    if (low === "" || low === "null" || low === "none") return null;
    if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
    return s;
  }
  return s;
}

/** Room id from an invite link (any URL with "/room/{id}", or the path alone) or a bare id; "" when none. */
export function roomIdFrom(text) {
  const s = String(text || "").trim();
  const m = s.match(/\/room\/([A-Za-z0-9_-]+)/);
  if (m) return m[1];
  return /^[A-Za-z0-9_-]+$/.test(s) ? s : "";
}

function seatedCount(room) {
  if (typeof room.seated === "number") return room.seated;
  if (Array.isArray(room.seats)) return room.seats.filter((s) => s && (s.user || s.bot)).length;
  return null;
}

function ownerName(room) {
  const o = room.owner;
  if (o && typeof o === "object") return o.name || "";
  return o ? String(o) : "";
}

/** Mount the lobby into el. Returns {destroy()}. */
export function mountLobby(el, _params, ctx) {
  let destroyed = false;
  let refreshTimer = null;
  let presets = null;
  const roomList = h("div", { class: "room-list", testid: "room-list" }, t("loading"));

  async function loadRooms() {
    try {
      const data = await get("/api/rooms");
      if (destroyed) return;
      const rooms = Array.isArray(data.rooms) ? data.rooms : [];
      if (!rooms.length) {
        replaceChildren(roomList, h("p", { class: "muted" }, t("rooms_empty")));
        return;
      }
      replaceChildren(
        roomList,
        rooms.map((r) => {
          const n = seatedCount(r);
          const status = r.status ? t(`room_status_${r.status}`) : "";
          return h(
            "a",
            { class: "room-item", href: `/room/${r.id}`, "data-link": "", testid: "room-item", dataset: { room: String(r.id) } },
            h("span", { class: "room-name" }, r.name || r.id),
            h("span", { class: "room-meta" }, [r.preset, n === null ? null : t("room_players", { n }), ownerName(r)].filter(Boolean).join(" · ")),
            h("span", { class: `status-pill ${r.status || ""}` }, status),
          );
        }),
      );
    } catch (e) {
      if (!destroyed) replaceChildren(roomList, h("p", { class: "error-text" }, errText(e)));
    }
  }

  function createForm() {
    const nameInput = h("input", { type: "text", maxlength: "40", placeholder: t("create_name_placeholder"), testid: "create-room-name" });
    const presetSelect = h("select", { testid: "create-room-preset" });
    const rows = h("div", { class: "option-rows", testid: "option-rows" });
    const lead = h("input", { type: "number", min: "1", step: "1", inputmode: "numeric", testid: "create-room-clock-lead" });
    const follow = h("input", { type: "number", min: "1", step: "1", inputmode: "numeric", testid: "create-room-clock-follow" });
    const createBtn = h("button", { type: "submit", class: "btn primary wide", testid: "create-room-btn" }, t("create_button"));

    function presetValues() {
      return (presets && presets.presets && presets.presets[presetSelect.value]) || {};
    }

    function optionNames() {
      const fromDoc = presets && presets.options ? Object.keys(presets.options) : [];
      const names = fromDoc.length ? fromDoc : Object.keys(presetValues());
      return names.filter((k) => !CLOCK_KEYS.includes(k));
    }

    function refreshRowHints() {
      for (const row of rows.querySelectorAll(".option-row")) row._refresh();
    }

    function addRow() {
      const keySel = h("select", { testid: "option-key", "aria-label": t("create_option_key") }, optionNames().map((k) => h("option", { value: k }, k)));
      const valInput = h("input", { type: "text", testid: "option-value", "aria-label": t("create_option_value") });
      const hint = h("div", { class: "hint option-hint" });
      const row = h(
        "div",
        { class: "option-row", testid: "option-row" },
        keySel,
        valInput,
        h("button", { type: "button", class: "btn small", testid: "option-remove", title: t("create_option_remove"), onclick: () => row.remove() }, "✕"),
        hint,
      );
      row._refresh = () => {
        const vals = presetValues();
        const k = keySel.value;
        valInput.placeholder = k in vals ? fmtOption(vals[k]) : "";
        const valid = presets && presets.options ? presets.options[k] : "";
        hint.textContent = [valid, k in vals ? t("create_option_default", { value: fmtOption(vals[k]) }) : ""].filter(Boolean).join(" — ");
      };
      keySel.addEventListener("change", row._refresh);
      row._refresh();
      rows.appendChild(row);
      valInput.focus();
    }

    async function submit(ev) {
      ev.preventDefault();
      const vals = presetValues();
      const options = {};
      for (const row of rows.querySelectorAll(".option-row")) {
        const k = row.querySelector("select").value;
        const v = row.querySelector("input").value;
        if (!k || v.trim() === "") continue;
        options[k] = parseOption(v, vals[k]);
      }
      const body = { preset: presetSelect.value || "official", options };
      if (nameInput.value.trim()) body.name = nameInput.value.trim();
      if (lead.value !== "") body.clock_lead_s = Number(lead.value);
      if (follow.value !== "") body.clock_follow_s = Number(follow.value);
      createBtn.disabled = true;
      try {
        const data = await post("/api/rooms", body);
        if (data.room && data.room.id) ctx.navigate(`/room/${data.room.id}`);
        else toast(t("error_generic"));
      } catch (e) {
        toast(errText(e));
      } finally {
        createBtn.disabled = false;
      }
    }

    presetSelect.addEventListener("change", refreshRowHints);
    get("/api/presets")
      .then((data) => {
        if (destroyed) return;
        presets = data && typeof data === "object" ? data : {};
        const names = Object.keys(presets.presets || {});
        replaceChildren(presetSelect, (names.length ? names : ["official"]).map((n) => h("option", { value: n }, n)));
        refreshRowHints();
      })
      .catch((e) => {
        replaceChildren(presetSelect, h("option", { value: "official" }, "official"));
        toast(errText(e));
      });

    return h(
      "form",
      { class: "card-panel create-form", testid: "create-room-form", onsubmit: submit },
      h("h2", {}, t("create_title")),
      h("label", {}, h("span", {}, t("create_name")), nameInput),
      h("label", {}, h("span", {}, t("create_preset")), presetSelect),
      h("div", { class: "field-title" }, t("create_options")),
      rows,
      h("button", { type: "button", class: "btn small", testid: "create-room-add-option", onclick: addRow }, `+ ${t("create_add_option")}`),
      h("div", { class: "field-title" }, t("create_clocks")),
      h(
        "div",
        { class: "clock-row" },
        h("label", {}, h("span", {}, t("create_clock_lead")), lead),
        h("label", {}, h("span", {}, t("create_clock_follow")), follow),
      ),
      createBtn,
    );
  }

  function joinForm() {
    const input = h("input", { type: "text", placeholder: t("join_placeholder"), testid: "join-input" });
    return h(
      "form",
      {
        class: "card-panel join-form",
        onsubmit: (ev) => {
          ev.preventDefault();
          const id = roomIdFrom(input.value);
          if (id) ctx.navigate(`/room/${id}`);
          else toast(t("join_placeholder"));
        },
      },
      h("h2", {}, t("join_title")),
      h("div", { class: "inline-form" }, input, h("button", { type: "submit", class: "btn", testid: "join-btn" }, t("join_button"))),
    );
  }

  function render() {
    clearInterval(refreshTimer);
    if (!ctx.me) {
      replaceChildren(el, h("div", { class: "lobby narrow" }, authForm((user) => ctx.setMe(user)), joinForm()));
      return;
    }
    replaceChildren(
      el,
      h(
        "div",
        { class: "lobby" },
        h(
          "section",
          { class: "card-panel rooms-panel" },
          h(
            "div",
            { class: "panel-head" },
            h("h2", {}, t("rooms_title")),
            h("button", { type: "button", class: "btn small", testid: "rooms-refresh", onclick: loadRooms }, t("rooms_refresh")),
          ),
          roomList,
        ),
        h("div", { class: "lobby-side" }, createForm(), joinForm()),
      ),
    );
    loadRooms();
    refreshTimer = setInterval(loadRooms, REFRESH_MS);
  }

  render();
  return {
    destroy() {
      destroyed = true;
      clearInterval(refreshTimer);
    },
    onMe: render,
  };
}
