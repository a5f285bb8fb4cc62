// The service worker of the installable app (served at /sw.js by guandan.server.webapp, which
// writes the two lines marked below: the version of the static files and the list to precache).
//
// * Static assets (/static/...) come from a cache named after the static files' version: filled at
//   install, cache first. A new server version changes this file, so the browser installs the new
//   worker, which takes over at once and deletes every older cache on activation.
// * While an older worker still runs, a page answered by a newer server (its X-Static-Version
//   header differs) makes this worker fetch static files from the network: an upgraded page never
//   runs with the old scripts.
// * Nothing else is cached: API answers, websockets, pages and anything private always go to the
//   network. A page (navigation) that cannot reach the server gets the offline page instead, in
//   the player's language (offline.html reads the same language setting as the app).

const VERSION = "dev"; // written by the server
const PRECACHE = []; // written by the server
const CACHE = `guandan-static-${VERSION}`;
const OFFLINE_URL = "/static/offline.html";
let stale = false; // a newer server answered a page: static files from the network until the new worker runs

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(PRECACHE.map((url) => new Request(url, { cache: "reload" }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("guandan-static-") && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

async function page(request) {
  try {
    const response = await fetch(request);
    const version = response.headers.get("x-static-version");
    if (version && version !== VERSION) {
      stale = true;
      self.registration.update().catch(() => {});
    }
    return response;
  } catch (_e) {
    const offline = await caches.match(OFFLINE_URL, { cacheName: CACHE });
    return offline || Response.error();
  }
}

async function staticAsset(request) {
  if (stale) {
    try {
      // revalidated: the HTTP cache may still hold the old server's copy as fresh
      return await fetch(request.url, { cache: "no-cache", credentials: "same-origin" });
    } catch (_e) {
      // offline: the cached copy is better than nothing
    }
  }
  const cached = await caches.match(request, { cacheName: CACHE, ignoreSearch: true });
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok && response.type === "basic" && !stale) {
    const copy = response.clone();
    caches.open(CACHE).then((cache) => cache.put(request, copy)).catch(() => {});
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith(page(request));
  } else if (url.pathname.startsWith("/static/")) {
    event.respondWith(staticAsset(request));
  }
  // everything else (/api/, /ws/, /manifest.webmanifest, /sw.js, health checks) is left to the network
});
