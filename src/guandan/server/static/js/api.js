// JSON HTTP client for the server API (server_contract.md "HTTP API").

/** An API failure: message is the server's one-line {"error"} text; status the HTTP status (0 = network). */
export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

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
    throw new ApiError(msg || `HTTP ${res.status}`, res.status);
  }
  return data && typeof data === "object" ? data : {};
}

export const get = (path) => api("GET", path);
export const post = (path, body) => api("POST", path, body);
