// KaLaro's service worker: keeps the app shell (HTML, CSS, scripts, icons) in a cache so
// the app installs and starts fast, and shows offline.html when a page cannot load.
//
// Network first for everything it handles, so a new release is picked up at once when
// online; the cache is only the fallback. The API, the WebSocket and the API docs are
// never cached (balances, tables and tokens must always be live).

const CACHE = "kalaro-shell-v4";
const OFFLINE = "offline.html";
const SHELL = [
  "./", "index.html", "offline.html", "manifest.webmanifest",
  "icons/icon-192.png", "icons/icon-512.png", "icons/maskable-512.png",
  "accounts.css", "api.js", "app.js", "cards.js", "dom.js", "format.js", "history.css", "hosting.css",
  "pwa.js", "record.js", "rules.css", "socket.js", "styles.css", "tiles.js", "verify.js",
  "views/admin.js", "views/clock.js", "views/dashboard.js", "views/dialogs.js",
  "views/extras.js", "views/history.js", "views/hosting.js", "views/house-rules.js",
  "views/how-to-play.js", "views/legal.js", "views/profile.js", "views/replay.js", "views/result.js",
  "views/rules-data.js", "views/rules-payouts.js", "views/sign-in.js", "views/table-dom.js",
  "views/table-log.js", "views/table-mahjong.js", "views/table-notices.js",
  "views/table-sets.js", "views/table-sound.js", "views/table-store.js",
  "views/table-tongits.js", "views/table.js", "views/verify-banner.js",
  "views/verify-email.js", "views/reset-password.js", "views/wallet.js",
  // ranked play (issue 34)
  "ranked.css", "views/fair-play.js", "views/leaderboard.js", "views/quick-play.js", "views/ratings.js",
];

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // One by one: a file another release renamed must not stop the rest (or the install).
    await Promise.all(SHELL.map((path) => cache.add(new Request(path, { cache: "reload" })).catch(() => {})));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) if (key !== CACHE) await caches.delete(key);
    await self.clients.claim();
  })());
});

function live(url) {
  return url.origin !== self.location.origin || url.pathname.startsWith("/api/")
    || url.pathname.startsWith("/ws") || url.pathname.startsWith("/schema");
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || live(url)) return; // the browser handles it as usual
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(request);
      if (response.ok && response.type === "basic") cache.put(request, response.clone());
      return response;
    } catch {
      const cached = await cache.match(request, { ignoreSearch: true });
      if (cached && request.mode !== "navigate") return cached;
      if (request.mode === "navigate") return (await cache.match(OFFLINE)) || Response.error();
      return Response.error();
    }
  })());
});
