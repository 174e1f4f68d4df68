// Registers the service worker (offline use after the first visit) where the browser allows it.
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

/** Registers sw.js after the first run; failures only mean no offline copy, so they are reported, never thrown. */
export function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || !/^https?:$/.test(location.protocol)) return;
  firstRunFinished()
    .then(() => navigator.serviceWorker.register('sw.js'))
    .catch((err) => console.warn(`offline copy unavailable: ${err.message}`));
}
