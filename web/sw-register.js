// Registers the service worker (offline use after the first visit) where the browser allows it.

/** Registers sw.js; failures only mean no offline copy, so they are reported, never thrown. */
export function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || !/^https?:$/.test(location.protocol)) return;
  navigator.serviceWorker.register('sw.js').catch((err) => console.warn(`offline copy unavailable: ${err.message}`));
}
