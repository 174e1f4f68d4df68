// Service worker: network first (a new version is picked up on the next load while online),
// the cached copy when offline. Installing pre-caches every file the page needs, so it works
// offline after its first visit. The first one activates at once; a later one (a new build:
// a new VERSION) waits until the page, told by the "updatefound" events, asks it to take over
// ("Update available — reload"); activating drops the caches of older versions.
'use strict';

/** The site's version: 'dev' in web/; the build stamps a hash of every file of dist/ (scripts/stamp-sw.mjs). */
const VERSION = 'dev';
const CACHE = `hapmoe-page-${VERSION}`;
/** Every file of the page (tests/web checks that each web/*.js is listed). */
const FILES = ['./', 'index.html', 'style.css', 'hapmoe.js', 'hapmoe.wasm', 'worker.js', 'boot.js', 'core-data.json',
  'manifest.webmanifest', 'icon.svg',
  'chart-download.js', 'clipboard.js', 'cluster-form.js', 'column-help.js', 'compare-view.js', 'errors.js', 'failure-view.js',
  'fields.js', 'form.js', 'format.js', 'hf-config.js', 'json-limits.js', 'main.js', 'megatron-view.js',
  'memory-chart.js', 'model-form.js', 'no-fit.js', 'pareto-chart.js', 'planner-client.js', 'plans-table.js',
  'preset-select.js', 'profile-form.js', 'reproduce-view.js', 'results-view.js', 'run-status.js', 'scenario-check.js', 'skip-links.js',
  'stage-table.js', 'sw-register.js', 'timeline-chart.js', 'url-state.js'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES.map((f) => new Request(f, { cache: 'reload' }))))
    .then(() => { if (!self.registration.active) return self.skipWaiting(); }));  // the first one: no page to ask
});

self.addEventListener('message', (event) => {
  if (event.data === 'skip-waiting') self.skipWaiting();  // the page's "Reload" on "Update available"
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith('hapmoe-') && k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const fresh = await fetch(req, { cache: 'no-cache' });
      if (fresh.ok && fresh.type === 'basic') cache.put(req, fresh.clone());
      return fresh;
    } catch (err) {
      const cached = await cache.match(req, { ignoreSearch: req.mode === 'navigate' });
      if (cached) return cached;
      throw err;
    }
  })());
});
