// The offline page (offline.html, served by the service worker when a page cannot reach the
// server): its words in the player's language (the app's saved choice, else the browser's), and
// "try again", which reloads the page the player asked for; it also reloads by itself once the
// server answers again (the browser back online, or every 4 s while it says it is online).

import { getLang, t } from "./js/i18n.js";

function fill() {
  document.documentElement.lang = getLang() === "zh" ? "zh-CN" : "en";
  document.title = t("offline_page_title");
  document.querySelector("[data-testid=offline-title]").textContent = t("offline_title");
  document.querySelector("[data-testid=offline-text]").textContent = t("offline_text");
  const retry = document.querySelector("[data-testid=offline-retry]");
  retry.textContent = t("offline_retry");
  retry.addEventListener("click", () => window.location.reload());
}

/** Reload the page asked for once the server answers again (GET /healthz, never cached). */
async function reloadWhenBack() {
  try {
    const r = await fetch("/healthz", { cache: "no-store" });
    if (r.ok) window.location.reload();
  } catch (_e) {
    // still offline: the next try follows
  }
}

fill();
window.addEventListener("online", reloadWhenBack);
setInterval(() => {
  if (navigator.onLine !== false) reloadWhenBack();
}, 4000);
