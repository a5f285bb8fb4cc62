// Small DOM helpers: element builder, toast, text utilities. No framework.

/**
 * Build an element. attrs: {class, text, testid, dataset: {...}, style: {...}, on<Event>: fn,
 * any other attribute}. Children: nodes, strings, numbers, arrays (flattened), null/false (skipped).
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = String(v);
      else if (k === "testid") el.setAttribute("data-testid", v);
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k === "style" && typeof v === "object") Object.assign(el.style, v);
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2).toLowerCase(), v);
      else if (k === "value") el.value = v;
      else if (k === "checked" || k === "disabled" || k === "selected") el[k] = Boolean(v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  appendAll(el, children);
  return el;
}

function appendAll(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) appendAll(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Remove all children of el and append the given ones. */
export function replaceChildren(el, ...children) {
  while (el.firstChild) el.removeChild(el.firstChild);
  appendAll(el, children);
}

let toastTimer = null;

/** Show a one-line message at the bottom of the screen for a few seconds. kind: "error" | "info". */
export function toast(message, kind = "error") {
  let el = document.getElementById("toast");
  if (!el) {
    el = h("div", { id: "toast", class: "toast", role: "status", "aria-live": "polite", testid: "toast" });
    document.body.appendChild(el);
  }
  const line = String(message === undefined || message === null ? "" : message).split("\n")[0].slice(0, 300);
  el.textContent = line;
  el.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.className = `toast ${kind}`;
  }, kind === "error" ? 4500 : 2500);
}

/** Hide the toast now if it still shows ``message`` (a message about a moment that has passed). */
export function hideToast(message) {
  const el = document.getElementById("toast");
  if (!el || !el.classList.contains("show")) return;
  if (message !== undefined && el.textContent !== message) return;
  clearTimeout(toastTimer);
  el.classList.remove("show");
}

/** Format an ISO date/time (or epoch seconds/ms) as a short local date-time; "" when missing. */
export function fmtDate(value) {
  if (value === null || value === undefined || value === "") return "";
  let d;
  if (typeof value === "number") d = new Date(value < 1e12 ? value * 1000 : value);
  else d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toLocaleString(undefined, { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" });
}

/** Percentage text of a fraction (0..1) or "–" when not a number. */
export function fmtPct(x) {
  return typeof x === "number" && Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "–";
}

/** A link that navigates inside the single-page app (see app.js navigate()). */
export function link(href, text, attrs = {}) {
  return h("a", { href, "data-link": "", ...attrs }, text);
}

/**
 * A form kept across a page's redraws, so that what someone is typing survives them (a room update,
 * a list that arrives, a poll). Returns ``() => element``: the same element on every call while
 * ``key()`` (the language) is unchanged; when it changes, ``build()`` runs again and the new form's
 * fields take the values of the old one's fields with the same ``data-testid``.
 */
export function keptForm(build, key) {
  let el = null;
  let builtFor = null;
  return () => {
    const now = key();
    if (el && builtFor === now) return el;
    const old = el;
    el = build();
    builtFor = now;
    if (old) {
      for (const field of old.querySelectorAll("input[data-testid], select[data-testid], textarea[data-testid]")) {
        const twin = el.querySelector(`[data-testid="${field.getAttribute("data-testid")}"]`);
        if (!twin) continue;
        if (field.type === "checkbox" || field.type === "radio") twin.checked = field.checked;
        else twin.value = field.value;
      }
    }
    return el;
  };
}
