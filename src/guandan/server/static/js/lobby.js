// The lobby: quick game against bots (a guest can play at once), sign in, the list of rooms with
// their rules in words, create a room (preset + rule changes + move clocks, on by default), and
// join by invite link. Contract: docs/table-contract.md sections 1, 2, 9 and 10.

import { h, link, replaceChildren, toast } from "./dom.js";
import { get, getConfig, post, roomTitle } from "./api.js";
import { t } from "./i18n.js";
import { authForm, errText } from "./auth.js";
import { friendsPanel } from "./friends.js";
import { matchPanel } from "./matchmaking.js";
import {
  CLOCK_OPTIONS,
  HOUSE_OPTIONS,
  DIFFICULTIES,
  OPTION_CHOICES,
  OPTION_IDS,
  PRESET_IDS,
  clocksInWords,
  difficultyName,
  optionName,
  optionWords,
  presetDescription,
  presetName,
  rulesInWords,
} from "./rules.js";

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
 * as a string and the server answers with its error code (translated by the page).
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

function seatList(room) {
  return Array.isArray(room.seats) ? room.seats.filter(Boolean) : [];
}

function seatedCount(room) {
  if (typeof room.seated === "number") return room.seated;
  const seats = seatList(room);
  return seats.length ? seats.filter((s) => s.user || s.bot).length : null;
}

function ownerName(room) {
  const o = room.owner;
  if (o && typeof o === "object") return o.name || "";
  return o ? String(o) : "";
}

/** "2 bots (Normal, Hard)" for the bot seats of a room summary; "" without bots. */
function botsText(room) {
  const bots = seatList(room).filter((s) => !s.user && (s.difficulty || s.bot));
  if (!bots.length) return "";
  const names = [...new Set(bots.map((s) => difficultyName(s.difficulty || s.bot)))];
  return t("room_bots", { n: bots.length, names: names.join(t("list_sep")) });
}

/** One room of the list: name, status, rules in words, seats, bots with difficulty, clocks. */
function roomItem(r) {
  const n = seatedCount(r);
  const rules = rulesInWords(r.preset, r.overrides || r.options);
  const meta = [
    n === null ? null : t("room_players", { n }),
    botsText(r),
    ownerName(r),
    r.clocks ? clocksInWords(r.clocks) : null,
  ].filter(Boolean);
  return h(
    "a",
    { class: "room-item", href: `/room/${r.id}`, "data-link": "", testid: "room-item", dataset: { room: String(r.id) } },
    h(
      "span",
      { class: "room-line" },
      h("span", { class: "room-name" }, roomTitle(r)),
      h("span", { class: `status-pill ${r.status || ""}` }, r.status ? t(`room_status_${r.status}`) : ""),
    ),
    h("span", { class: "room-rules", testid: "room-rules", title: rules.description }, rules.text),
    h("span", { class: "room-meta" }, meta.join(" · ")),
  );
}

/**
 * The quick-game panel: difficulty buttons (those the server offers) and one button that signs
 * in as a guest when needed, creates a started room with three bots (POST /api/quick) and opens it.
 */
function quickPanel(ctx, isDestroyed) {
  const choice = h("div", { class: "seg", role: "radiogroup", "aria-label": t("quick_difficulty"), testid: "quick-difficulty" });
  const btn = h("button", { type: "button", class: "btn primary wide big", testid: "quick-btn" }, t("quick_button"));
  // the move clock (issue 25): on by default, as at commercial tables; off by choice
  const clocksOn = h("input", { type: "checkbox", checked: true, testid: "quick-clocks", role: "switch" });
  const clockWords = h("span", { class: "hint", testid: "quick-clocks-words" }, t("quick_clocks_words", { lead: 60, follow: 30 }));
  let difficulty = "normal";

  function renderChoices(list) {
    replaceChildren(
      choice,
      list.map((d) =>
        h(
          "button",
          {
            type: "button",
            role: "radio",
            class: `seg-btn${d === difficulty ? " on" : ""}`,
            "aria-checked": d === difficulty ? "true" : "false",
            testid: "quick-diff",
            dataset: { difficulty: d },
            onclick: () => {
              difficulty = d;
              renderChoices(list);
            },
          },
          difficultyName(d),
        ),
      ),
    );
  }

  getConfig().then((cfg) => {
    if (isDestroyed()) return;
    const offered = (Array.isArray(cfg.difficulties) ? cfg.difficulties : ["normal"]).filter((d) => DIFFICULTIES.includes(d) || d === "random");
    const list = offered.length ? offered : ["normal"];
    difficulty = list.includes(cfg.default_difficulty) ? cfg.default_difficulty : list.includes("normal") ? "normal" : list[0];
    renderChoices(list);
    const dc = cfg.default_clocks || {};
    if (Number.isFinite(dc.lead_s) && Number.isFinite(dc.follow_s)) clockWords.textContent = t("quick_clocks_words", { lead: dc.lead_s, follow: dc.follow_s });
  });
  renderChoices([difficulty]);

  btn.addEventListener("click", async () => {
    if (btn.disabled) return;
    btn.disabled = true;
    btn.textContent = t("quick_starting");
    let user = ctx.me;
    try {
      if (!user) {
        const g = await post("/api/guest");
        user = g && g.user ? g.user : null;
        if (!user) throw new Error("guest");
      }
      const data = await post("/api/quick", { difficulty, clocks: clocksOn.checked ? "default" : "off" });
      if (user !== ctx.me) ctx.me = user; // the header is redrawn by the navigation below
      if (data.room && data.room.id) ctx.navigate(`/room/${data.room.id}`);
      else toast(t("error_generic"));
    } catch (e) {
      toast(errText(e));
      if (user && user !== ctx.me) ctx.setMe(user);
      // one game against bots at a time: open the one that runs
      if (e && e.code === "quick_game_running" && e.params && typeof e.params.room === "string") {
        ctx.navigate(`/room/${encodeURIComponent(e.params.room)}`);
      }
    } finally {
      if (!isDestroyed()) {
        btn.disabled = false;
        btn.textContent = t("quick_button");
      }
    }
  });

  return h(
    "section",
    { class: "card-panel quick-panel", testid: "quick-game" },
    h("h2", {}, t("quick_title")),
    h("p", { class: "muted" }, t("quick_text")),
    h("div", { class: "field-title" }, t("quick_difficulty")),
    choice,
    h("label", { class: "switch-row" }, clocksOn, h("span", { class: "field-title" }, t("create_clock_switch")), clockWords),
    btn,
  );
}

/** Mount the lobby into el. Returns {destroy(), onMe, onLang}. */
export function mountLobby(el, _params, ctx) {
  let destroyed = false;
  let refreshTimer = null;
  let presets = null;
  let lastRooms = null;
  let friends = null;
  let match = null;
  const isDestroyed = () => destroyed;
  const roomList = h("div", { class: "room-list", testid: "room-list" }, t("loading"));

  function drawRooms() {
    if (lastRooms === null) return;
    if (!lastRooms.length) {
      replaceChildren(roomList, h("p", { class: "muted" }, t("rooms_empty")), h("p", { class: "muted small" }, t("rooms_quick_hint")));
      return;
    }
    replaceChildren(roomList, lastRooms.map(roomItem));
  }

  async function loadRooms() {
    try {
      const data = await get("/api/rooms");
      if (destroyed) return;
      lastRooms = Array.isArray(data.rooms) ? data.rooms : [];
      drawRooms();
    } catch (e) {
      if (!destroyed) replaceChildren(roomList, h("p", { class: "error-text" }, errText(e)));
    }
  }

  function createForm() {
    const nameInput = h("input", { type: "text", maxlength: "40", placeholder: t("create_name_placeholder"), testid: "create-room-name" });
    const presetSelect = h(
      "select",
      { testid: "create-room-preset" },
      PRESET_IDS.map((id) => h("option", { value: id }, presetName(id))),
    );
    const presetDesc = h("p", { class: "hint preset-desc", testid: "create-room-preset-desc" });
    const rows = h("div", { class: "option-rows", testid: "option-rows" });
    const clocksOn = h("input", { type: "checkbox", checked: true, testid: "create-room-clocks", role: "switch" });
    const lead = h("input", { type: "number", min: "1", max: "3600", step: "1", inputmode: "numeric", testid: "create-room-clock-lead" });
    const follow = h("input", { type: "number", min: "1", max: "3600", step: "1", inputmode: "numeric", testid: "create-room-clock-follow" });
    const clockHint = h("p", { class: "hint", testid: "create-room-clock-hint" });
    const clockFields = h(
      "div",
      { class: "clock-row" },
      h("label", {}, h("span", {}, t("create_clock_lead")), lead),
      h("label", {}, h("span", {}, t("create_clock_follow")), follow),
    );
    const createBtn = h("button", { type: "submit", class: "btn primary wide", testid: "create-room-btn" }, t("create_button"));
    // house modes (docs/rules.md P.1): 不洗牌 and 单局, each a switch with its words
    const houseBoxes = {
      no_shuffle: h("input", { type: "checkbox", testid: "create-room-no-shuffle", role: "switch" }),
      single_deal: h("input", { type: "checkbox", testid: "create-room-single-deal", role: "switch" }),
    };
    const houseModes = h(
      "fieldset",
      { class: "house-modes", testid: "create-room-house-modes" },
      h("legend", { class: "field-title" }, t("sd_house_modes")),
      h("label", { class: "switch-row" }, houseBoxes.no_shuffle, h("span", {}, t("sd_no_shuffle"))),
      h("p", { class: "hint" }, t("sd_no_shuffle_hint")),
      h("label", { class: "switch-row" }, houseBoxes.single_deal, h("span", {}, t("sd_single_deal"))),
      h("p", { class: "hint" }, t("sd_single_deal_hint")),
    );
    let defaults = { lead_s: 60, follow_s: 30 };
    let clocksEdited = false;

    function presetValues() {
      return (presets && presets.presets && presets.presets[presetSelect.value]) || {};
    }

    function refreshPreset() {
      presetDesc.textContent = presetDescription(presetSelect.value);
      for (const row of rows.querySelectorAll(".option-row")) row._refresh();
    }

    function refreshClocks() {
      clockFields.style.display = clocksOn.checked ? "" : "none"; // .clock-row sets display, so not [hidden]
      clockHint.textContent = clocksOn.checked ? t("create_clock_hint", { lead: lead.value || defaults.lead_s, follow: follow.value || defaults.follow_s }) : t("create_clock_off");
    }

    function addRow() {
      const used = new Set([...rows.querySelectorAll("[data-testid=option-key]")].map((s) => s.value));
      const names = OPTION_IDS.filter((k) => !CLOCK_OPTIONS.includes(k) && !HOUSE_OPTIONS.includes(k));
      const keySel = h(
        "select",
        { testid: "option-key", "aria-label": t("create_option_key") },
        names.map((k) => h("option", { value: k }, optionName(k))),
      );
      keySel.value = names.find((k) => !used.has(k)) || names[0];
      const valueBox = h("span", { class: "option-value-box" });
      const words = h("div", { class: "hint option-hint", testid: "option-words" });
      let valEl = null;
      const row = h(
        "div",
        { class: "option-row", testid: "option-row" },
        keySel,
        valueBox,
        h("button", { type: "button", class: "btn small", testid: "option-remove", title: t("create_option_remove"), "aria-label": t("create_option_remove"), onclick: () => row.remove() }, "✕"),
        words,
      );
      function showWords() {
        const k = keySel.value;
        const vals = presetValues();
        const raw = valEl.value;
        const v = raw === "" ? vals[k] : parseOption(raw, vals[k]);
        const opts = { ...vals };
        opts[k] = v;
        words.textContent = [optionWords(k, v, undefined, opts), k in vals ? t("create_option_default", { value: optionWords(k, vals[k], undefined, vals) }) : ""]
          .filter(Boolean)
          .join(" — ");
      }
      row._refresh = () => {
        const k = keySel.value;
        const vals = presetValues();
        const choices = OPTION_CHOICES[k];
        const keep = valEl && valEl.tagName === (choices ? "SELECT" : "INPUT") && row._key === k ? valEl.value : null;
        if (choices) {
          valEl = h(
            "select",
            { testid: "option-value", "aria-label": t("create_option_value") },
            choices.map((c) => h("option", { value: String(c) }, optionWords(k, c, undefined, vals))),
          );
          const other = choices.find((c) => String(c) !== String(vals[k]));
          valEl.value = keep !== null ? keep : String(other === undefined ? choices[0] : other);
        } else {
          valEl = h("input", {
            type: "text",
            testid: "option-value",
            "aria-label": t("create_option_value"),
            placeholder: t("create_value_placeholder", { example: k === "upgrade" ? "6/4/2" : k === "a_fail_limit" ? "2, null" : fmtOption(vals[k]) }),
          });
          if (keep !== null) valEl.value = keep;
        }
        row._key = k;
        valEl.addEventListener("input", showWords);
        valEl.addEventListener("change", showWords);
        replaceChildren(valueBox, valEl);
        showWords();
      };
      keySel.addEventListener("change", row._refresh);
      row._refresh();
      rows.appendChild(row);
      keySel.focus();
    }

    async function submit(ev) {
      ev.preventDefault();
      const vals = presetValues();
      const options = {};
      for (const row of rows.querySelectorAll(".option-row")) {
        const k = row.querySelector("[data-testid=option-key]").value;
        const v = row.querySelector("[data-testid=option-value]").value;
        if (!k || String(v).trim() === "") continue;
        options[k] = parseOption(v, vals[k]);
      }
      for (const [k, box] of Object.entries(houseBoxes)) if (box.checked) options[k] = true;
      const body = { preset: presetSelect.value || "official", options };
      if (nameInput.value.trim()) body.name = nameInput.value.trim();
      if (!clocksOn.checked) {
        body.clocks = "off";
      } else {
        body.clocks = "default";
        if (clocksEdited) {
          if (lead.value !== "") body.clock_lead_s = Number(lead.value);
          if (follow.value !== "") body.clock_follow_s = Number(follow.value);
        }
      }
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

    presetSelect.addEventListener("change", refreshPreset);
    clocksOn.addEventListener("change", refreshClocks);
    for (const inp of [lead, follow]) {
      inp.addEventListener("input", () => {
        clocksEdited = true;
        refreshClocks();
      });
    }
    getConfig().then((cfg) => {
      if (destroyed) return;
      if (cfg.default_clocks && typeof cfg.default_clocks === "object") defaults = { ...defaults, ...cfg.default_clocks };
      if (!clocksEdited) {
        lead.value = String(defaults.lead_s);
        follow.value = String(defaults.follow_s);
      }
      refreshClocks();
    });
    get("/api/presets")
      .then((data) => {
        if (destroyed) return;
        presets = data && typeof data === "object" ? data : {};
        refreshPreset();
      })
      .catch((e) => toast(errText(e)));
    refreshPreset();
    refreshClocks();

    return h(
      "form",
      { class: "card-panel create-form", testid: "create-room-form", onsubmit: submit },
      h("h2", {}, t("create_title")),
      h("label", {}, h("span", {}, t("create_name")), nameInput),
      h("label", {}, h("span", {}, t("create_preset")), presetSelect),
      presetDesc,
      h("div", { class: "field-title" }, t("create_options")),
      rows,
      h("button", { type: "button", class: "btn small", testid: "create-room-add-option", onclick: addRow }, `+ ${t("create_add_option")}`),
      houseModes,
      h("label", { class: "switch-row" }, clocksOn, h("span", { class: "field-title" }, t("create_clock_switch"))),
      clockFields,
      clockHint,
      createBtn,
    );
  }

  function joinForm() {
    const input = h("input", { type: "text", placeholder: t("join_placeholder"), "aria-label": t("join_placeholder"), testid: "join-input" });
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

  function challengePanel() {
    return h("section", { class: "card-panel challenge-panel", testid: "lobby-challenge" },
      h("h2", {}, t("ch_lobby_title")),
      h("p", { class: "hint" }, t("ch_lobby_text")),
      link("/challenge", t("ch_lobby_btn"), { class: "btn primary", testid: "lobby-challenge-link" }));
  }

  function render() {
    clearInterval(refreshTimer);
    if (friends) friends.destroy();
    if (match) match.destroy();
    friends = ctx.me ? friendsPanel(ctx) : null;
    match = ctx.me ? matchPanel(ctx) : null;
    if (!ctx.me) {
      replaceChildren(el, h("div", { class: "lobby narrow" }, quickPanel(ctx, isDestroyed), challengePanel(), authForm((user) => ctx.setMe(user)), joinForm()));
      return;
    }
    replaceChildren(
      el,
      h(
        "div",
        { class: "lobby" },
        friends.invites,
        h(
          "div",
          { class: "lobby-main" },
          match.el,
          quickPanel(ctx, isDestroyed),
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
        ),
        h("div", { class: "lobby-side" }, challengePanel(), friends.el, createForm(), joinForm()),
      ),
    );
    drawRooms();
    loadRooms();
    refreshTimer = setInterval(loadRooms, REFRESH_MS);
  }

  render();
  return {
    destroy() {
      destroyed = true;
      clearInterval(refreshTimer);
      if (friends) friends.destroy();
      if (match) match.destroy();
    },
    onMe: render,
    onLang: render,
  };
}
