/* sheetsync's service worker: keeps the page, its wheels and Pyodide's files in the browser's
   cache, so a page loaded once also reloads, and runs every step, with no network.

   The site's own files (the page, config.json, the wheels, and Pyodide when the site serves
   it) come from the network while there is one, so a new version shows at once, and from the
   cache when there is none.  Files from another origin (the public Pyodide CDN, whose
   addresses carry the version) come from the cache first.  Installing fetches them all
   ahead, since the first load runs before this worker controls the page. */
"use strict";

const CACHE = "sheetsync-site-v1";
const PAGE = ["./", "index.html", "app.js", "worker.js", "style.css", "config.json"];
const PYODIDE_FILES = ["pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
  "pyodide-lock.json"];

async function keep(cache, request) {
  try {
    await cache.add(request);
  } catch (error) {
    // the page fetches it again as it loads, and that copy is kept
  }
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(PAGE.map((path) => keep(cache, new Request(path, { cache: "no-cache" }))));
    try {
      const config = await (await fetch("config.json", { cache: "no-cache" })).json();
      const pyodide = new URL(config.pyodide, self.registration.scope).href;
      const wanted = [...(config.wheels || []), ...PYODIDE_FILES.map((name) => pyodide + name)];
      await Promise.all(wanted.map((url) => keep(cache, url)));
    } catch (error) {
      // no config: what the page loads is kept as it loads
    }
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith("sheetsync-") && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(request, response.clone());
    return response;
  } catch (error) {
    const kept = await cache.match(request, { ignoreVary: true });
    if (kept) return kept;
    throw error;
  }
}

async function cacheFirst(request) {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(request, { ignoreVary: true });
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok) await cache.put(request, response.clone());
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || !request.url.startsWith("http")) return;
  const sameOrigin = new URL(request.url).origin === self.location.origin;
  if (sameOrigin && new URL(request.url).pathname.includes("/api/")) return; // the server's steps: never kept
  event.respondWith(sameOrigin ? networkFirst(request) : cacheFirst(request));
});
