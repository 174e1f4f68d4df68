// Registers the service worker (offline use after the first visit) where the browser allows it,
// and reports its life: onOfflineReady() once the first one has cached the page, onUpdate(reload)
// when a newer one (a new build) waits; reload() lets it take over and reloads the page.
// Registration waits until the page's first run has finished (body data-runs set by run-status.js)
// or MAX_WAIT_MS have passed: installing fetches every file of the page again, which would
// compete with the first plan for the network and the CPU.

const MAX_WAIT_MS = 10_000;

/** Resolves once the first run has finished, or after MAX_WAIT_MS. */
function firstRunFinished() {
  return new Promise((resolve) => {
    if (document.body?.dataset.runs) { resolve(); return; }
    const observer = new MutationObserver(() => {
      if (document.body.dataset.runs) done();
    });
    const timer = setTimeout(() => done(), MAX_WAIT_MS);
    function done() { observer.disconnect(); clearTimeout(timer); resolve(); }
    observer.observe(document.body, { attributes: true, attributeFilter: ['data-runs'] });
  });
}

/** A function that makes the waiting worker take over, then reloads the page once it has. */
function reloader(worker) {
  return () => {
    navigator.serviceWorker.addEventListener('controllerchange', () => location.reload(), { once: true });
    worker.postMessage('skip-waiting');
  };
}

/** Follows reg's workers: the first one activated (no worker before it), or a newer one waiting. */
function watch(reg, { onOfflineReady, onUpdate }) {
  const first = !reg.active;
  const follow = (worker) => {
    if (!worker) return;
    worker.addEventListener('statechange', () => {
      if (worker.state === 'activated' && first) onOfflineReady();
      else if (worker.state === 'installed' && reg.waiting === worker && navigator.serviceWorker.controller) onUpdate(reloader(worker));
    });
  };
  if (reg.waiting && navigator.serviceWorker.controller) onUpdate(reloader(reg.waiting));
  follow(reg.installing);
  reg.addEventListener('updatefound', () => follow(reg.installing));
}

/** Registers sw.js after the first run; failures only mean no offline copy, so they are reported, never thrown. */
export function registerServiceWorker({ onOfflineReady = () => {}, onUpdate = () => {} } = {}) {
  if (!('serviceWorker' in navigator) || !/^https?:$/.test(location.protocol)) return;
  firstRunFinished()
    .then(() => navigator.serviceWorker.register('sw.js'))
    .then((reg) => watch(reg, { onOfflineReady, onUpdate }))
    .catch((err) => console.warn(`offline copy unavailable: ${err.message}`));
}
