// JSON HTTP client for the server API (server_contract.md "HTTP API"; error shape:
// docs/table-contract.md section 14), the translation of error codes, and the invite link.

import { t } from "./i18n.js";
import { fmtDate } from "./dom.js";
import { difficultyName, isDifficulty, isPreset, optionName, presetName } from "./rules.js";

/**
 * An API failure. message: the server's one-line English {"error"} text (for logs only, never
 * shown); status: the HTTP status (0 = network); code: the stable error code ("name_taken", ...;
 * null when the answer had none); params: the values the translation fills in ({} when none).
 */
export class ApiError extends Error {
  constructor(message, status, code = null, params = {}) {
    super(message);
    this.status = status;
    this.code = code || null;
    this.params = params && typeof params === "object" ? params : {};
  }
}

/** Window event sent when a call is answered 401 ``login_required``: the session has ended. */
export const SESSION_ENDED = "gd:session-ended";

/**
 * Call the API. method: "GET" | "POST"; path: "/api/..."; body: object sent as JSON (POST).
 * Returns the parsed JSON object ({} for an empty body). Throws ApiError on a non-2xx status
 * or a network failure.
 */
export async function api(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  } else if (method !== "GET") {
    init.headers["Content-Type"] = "application/json";
    init.body = "{}";
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (_e) {
    throw new ApiError("network", 0);
  }
  let data = {};
  const text = await res.text().catch(() => "");
  if (text) {
    try {
      data = JSON.parse(text);
    } catch (_e) {
      data = { error: text.split("\n")[0].slice(0, 200) };
    }
  }
  if (!res.ok) {
    let msg = data && typeof data === "object" ? data.error || data.detail : null;
    if (msg && typeof msg !== "string") msg = JSON.stringify(msg).slice(0, 200);
    const code = data && typeof data === "object" && typeof data.code === "string" ? data.code : null;
    const params = data && typeof data === "object" && data.params && typeof data.params === "object" ? data.params : {};
    // the session is gone (signed out in another tab, expired, or removed on the server): the app
    // shows the signed-out page instead of polling on with a dead session (app.js)
    if (res.status === 401 && code === "login_required") window.dispatchEvent(new CustomEvent(SESSION_ENDED));
    throw new ApiError(msg || `HTTP ${res.status}`, res.status, code, params);
  }
  return data && typeof data === "object" ? data : {};
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body);

const SEAT_PARAMS = new Set(["seat", "empty"]);

/** One error parameter as text: seats 1-4, lists joined, option/preset/difficulty ids in words. */
function paramText(key, value) {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map((v) => paramText(key, v)).join(t("list_sep"));
  if (key === "until") return fmtDate(value); // a suspension's or a phrase mute's end, in local time
  if (SEAT_PARAMS.has(key)) return Number.isInteger(value) ? String(value + 1) : String(value);
  if (key === "option") return optionName(String(value));
  if (isPreset(value) && (key === "preset" || key === "valid")) return presetName(String(value));
  if (isDifficulty(value) && (key === "bot" || key === "difficulty" || key === "valid")) return difficultyName(String(value));
  if (key === "action") {
    const k = `err_action_${value}`;
    const s = t(k);
    return s === k ? t("err_action_other") : s;
  }
  if (typeof value === "object") return "";
  return String(value);
}

/**
 * The message of a server error code in the current language, with its params filled in
 * (docs/table-contract.md section 14: HTTP `code`, websocket `reason`). Seats are shown 1-4,
 * lists joined, rule options, presets and bot difficulties in words. An unknown or missing code
 * gives the generic translated message, never the server's English text.
 * code: string | null; params: object (may be missing). Returns a string.
 */
export function errorText(code, params) {
  if (!code || typeof code !== "string") return t("error_generic");
  const key = `err_${code}`;
  const raw = t(key);
  if (raw === key) return t("error_generic");
  const p = {};
  for (const [k, v] of Object.entries(params && typeof params === "object" ? params : {})) p[k] = paramText(k, v);
  return t(key, p).replace(/\{\w+\}/g, "").replace(/\s+([，。,.)）])/g, "$1");
}

/**
 * The full invite link of a room summary (docs/table-contract.md sections 1 and 15): the server's
 * public_url when it was started with one, else the address this page was loaded from
 * (location.origin), followed by the room's invite path. Never a hard-coded loopback address.
 * room: {id, invite_url?, public_url?}. Returns an absolute URL string.
 */
export function inviteLink(room) {
  const path = (room && room.invite_url) || `/room/${encodeURIComponent((room && room.id) || "")}`;
  const base = room && typeof room.public_url === "string" && room.public_url ? room.public_url : window.location.origin;
  return `${base.replace(/\/+$/, "")}${path.startsWith("/") ? path : `/${path}`}`;
}

/** What GET /api/config answers before the server has it (docs/table-contract.md section 2). */
const CONFIG_FALLBACK = {
  public_url: null,
  difficulties: ["normal"],
  default_difficulty: "normal",
  default_clocks: { lead_s: 60, follow_s: 30 },
};
let configPromise = null;

/**
 * The server's UI settings (GET /api/config, fetched once per page load): {public_url,
 * difficulties (bot difficulties this server offers), default_difficulty, default_clocks:
 * {lead_s, follow_s}, ...}. Resolves to the fallback above when the call fails.
 */
export function getConfig() {
  if (!configPromise) {
    configPromise = get("/api/config")
      .then((c) => ({ ...CONFIG_FALLBACK, ...(c && typeof c === "object" ? c : {}) }))
      .catch(() => ({ ...CONFIG_FALLBACK }));
  }
  return configPromise;
}

/**
 * The name of a room to show: the name its owner gave, or, for the names the server makes up when
 * none was given ("alice's table", "alice vs bots" for a quick game, "匹配 Match" for a matched
 * room), the same words in the UI's language ("alice 的牌桌", "alice 对战机器人", "匹配对局" / "Matched game"). room: {name?, id?}. Returns a string.
 */
export function roomTitle(room) {
  const name = String((room && (room.name || room.id)) || "");
  if (name === "匹配 Match") return t("mm_room_name"); // a matched room (api_matchmaking.MATCH_ROOM_NAME), in the reader's language
  let m = name.match(/^(.+)'s table$/);
  if (m) return t("room_default_name", { name: m[1] });
  m = name.match(/^(.+) vs bots$/);
  if (m) return t("room_quick_name", { name: m[1] });
  return name;
}
