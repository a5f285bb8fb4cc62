// The offline page (offline.html, served by the service worker when a page cannot reach the
// server): its words in the player's language (the app's saved choice, else the browser's), and
// "try again", which reloads the page the player asked for; it also reloads by itself once the
// browser is back online.

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

fill();
window.addEventListener("online", () => window.location.reload());
