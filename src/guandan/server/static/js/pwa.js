// The installable app (issue 25, item 5): registers the service worker (/sw.js, scope "/"), which
// caches the static files and shows the offline page when the network is gone. Browsers without
// service workers (or pages not served over http(s) from localhost or https) simply go without.

/**
 * Register /sw.js once the page has loaded. Returns a promise of the registration, or of null where
 * service workers are unavailable or registration failed (never rejects: the app works without it).
 */
export function registerServiceWorker() {
  if (typeof navigator === "undefined" || !("serviceWorker" in navigator) || typeof window === "undefined") return Promise.resolve(null);
  const go = () => navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => null);
  if (document.readyState === "complete") return go();
  return new Promise((resolve) => window.addEventListener("load", () => resolve(go()), { once: true }));
}
