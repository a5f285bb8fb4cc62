// A websocket that reconnects with exponential backoff, pings to keep the line alive, and
// never throws on bad input (unparsable frames are ignored).

const MIN_DELAY_MS = 500;
const MAX_DELAY_MS = 15000;
const PING_MS = 25000;

/** The ws:// or wss:// URL of a server path on the current host. */
export function wsUrl(path) {
  const proto = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${window.location.host}${path}`;
}

/**
 * ReconnectingSocket(path, {onMessage(obj), onStatus(status)}): status is "connecting",
 * "open" or "reconnecting". Call close() to stop for good.
 */
export class ReconnectingSocket {
  constructor(path, handlers) {
    this.path = path;
    this.onMessage = handlers.onMessage || (() => {});
    this.onStatus = handlers.onStatus || (() => {});
    this.delay = MIN_DELAY_MS;
    this.closed = false;
    this.ws = null;
    this.retryTimer = null;
    this.pingTimer = null;
    this.connect();
  }

  connect() {
    if (this.closed) return;
    this.onStatus(this.ws ? "reconnecting" : "connecting");
    let ws;
    try {
      ws = new WebSocket(wsUrl(this.path));
    } catch (_e) {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.delay = MIN_DELAY_MS;
      this.onStatus("open");
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ type: "ping" }), PING_MS);
    };
    ws.onmessage = (ev) => {
      let obj;
      try {
        obj = JSON.parse(ev.data);
      } catch (_e) {
        return;
      }
      if (obj && typeof obj === "object" && !Array.isArray(obj)) {
        try {
          this.onMessage(obj);
        } catch (e) {
          console.error("message handler failed", e);
        }
      }
    };
    ws.onclose = (ev) => {
      clearInterval(this.pingTimer);
      if (ev && ev.code === 4404) {
        // the room does not exist: retrying cannot help
        this.closed = true;
        this.onStatus("closed");
        return;
      }
      if (this.ws === ws) this.scheduleRetry();
    };
    ws.onerror = () => {
      // onclose follows and schedules the retry
    };
  }

  scheduleRetry() {
    if (this.closed) return;
    this.onStatus("reconnecting");
    clearTimeout(this.retryTimer);
    const jitter = Math.random() * 0.3 * this.delay;
    this.retryTimer = setTimeout(() => this.connect(), this.delay + jitter);
    this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
  }

  /** Send an object as JSON; returns false when the socket is not open. */
  send(obj) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(obj));
    return true;
  }

  /** Reconnect now (after a login change, for example). */
  reconnect() {
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    const old = this.ws;
    this.ws = null;
    if (old) {
      old.onclose = null;
      try {
        old.close();
      } catch (_e) {
        // already closed
      }
    }
    this.delay = MIN_DELAY_MS;
    this.connect();
  }

  /** Stop for good. */
  close() {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    if (this.ws) {
      this.ws.onclose = null;
      try {
        this.ws.close();
      } catch (_e) {
        // already closed
      }
    }
  }
}
