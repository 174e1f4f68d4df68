// Installable and honest about its offline copy (issue 22, item 14), in headless Chromium: the web
// app manifest is linked, served and parsed by the browser (nothing but the test's incognito
// context keeps the page from being installed), and cached with the page; the first visit says
// "Ready to work offline" once the service worker has cached everything, later visits do not; a
// new build (a new sw.js: scripts/stamp-sw.mjs stamps a hash of the site) makes an open page say
// "Update available — reload", and Reload lets the new worker take over.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHarness, openAndPlan, waitRuns, DIST_ROOTS } from './harness.mjs';
import { siteVersion, stamp } from '../../scripts/stamp-sw.mjs';

const NOTICE_MS = 30_000;
let h;

/** A private copy of the served site, so a test can publish a "new build" in it. */
function siteCopy() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-site-'));
  for (const root of [...DIST_ROOTS].reverse()) fs.cpSync(root, dir, { recursive: true, dereference: true });
  return dir;
}

const notice = (page) => page.textContent('#app-notice');
const waitNotice = (page, re) => page.waitForFunction((src) => new RegExp(src).test(document.querySelector('#app-notice').textContent),
  re.source, { timeout: NOTICE_MS });

describe('installable, with offline notices', { timeout: 240_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('the manifest is linked, served as a manifest and parsed without errors; its icon is served', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const href = await page.getAttribute('link[rel="manifest"]', 'href');
    assert.equal(href, 'manifest.webmanifest');
    const res = await page.request.get(`${h.url}/${href}`);
    assert.equal(res.status(), 200);
    assert.match(res.headers()['content-type'], /^application\/manifest\+json/);
    const cdp = await page.context().newCDPSession(page);
    const { errors, manifest } = await cdp.send('Page.getAppManifest');
    assert.deepEqual(errors, []);
    assert.equal(manifest.name, 'HAPMoE Planner');
    assert.equal(manifest.shortName ?? JSON.parse(await res.text()).short_name, 'HAPMoE');
    assert.equal(manifest.startUrl, `${h.url}/`);
    assert.equal(manifest.display, 'kStandalone');
    assert.match(manifest.themeColor, /^rgba\(59,91,219/);
    assert.match(manifest.backgroundColor, /^rgba\(/);
    assert.ok(manifest.icons.length > 0);
    for (const icon of manifest.icons) {
      const r = await page.request.get(icon.url);
      assert.equal(r.status(), 200, icon.url);
      assert.match(r.headers()['content-type'], /^image\/svg\+xml/);
      assert.match(await r.text(), /^<svg[^>]+viewBox="0 0 512 512"/);
    }
    // Installable but for the test's own context (playwright contexts are incognito).
    const { installabilityErrors } = await cdp.send('Page.getInstallabilityErrors');
    assert.deepEqual(installabilityErrors.map((e) => e.errorId).filter((id) => id !== 'in-incognito'), []);
    // The service worker caches the manifest and its icon with the page.
    await waitNotice(page, /Ready to work offline/);
    const cached = await page.evaluate(async () => {
      const keys = await caches.keys();
      return (await (await caches.open(keys[0])).keys()).map((r) => new URL(r.url).pathname);
    });
    for (const f of ['/manifest.webmanifest', '/icon.svg']) assert.ok(cached.includes(f), `${f} cached`);
  });

  test('"Ready to work offline" on the first visit, once cached; "Update available — reload" when a new build waits', async () => {
    const dir = siteCopy();
    const site = await startHarness([dir]);
    try {
      const page = await openAndPlan(site, `${site.url}/`);
      await waitNotice(page, /^Ready to work offline\.$/);
      assert.equal(await page.evaluate(async () => (await caches.keys()).length), 1);
      // A second visit: already offline-ready, nothing to say.
      await page.reload();
      await waitRuns(page, 0);
      assert.equal(await page.evaluate(() => navigator.serviceWorker.controller != null), true);
      await page.waitForTimeout(1500);
      assert.equal(await notice(page), '');
      // A new build on the server: its sw.js has another version.
      const sw = fs.readFileSync(path.join(dir, 'sw.js'), 'utf8');
      fs.writeFileSync(path.join(dir, 'sw.js'), stamp(sw, 'test-update'));
      await page.reload();
      await waitRuns(page, 0);
      await waitNotice(page, /^Update available — Reload$/);
      assert.equal(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).waiting != null), true,
        'the new worker waits for the page');
      await Promise.all([page.waitForEvent('load', { timeout: NOTICE_MS }), page.click('#app-notice button')]);
      await waitRuns(page, 0);
      const after = await page.evaluate(async () => {
        const reg = await navigator.serviceWorker.getRegistration();
        return { caches: await caches.keys(), waiting: reg.waiting != null, controlled: navigator.serviceWorker.controller != null };
      });
      assert.deepEqual(after, { caches: ['hapmoe-page-test-update'], waiting: false, controlled: true });
      await page.waitForTimeout(1000);
      assert.doesNotMatch(await notice(page), /Update available/);
    } finally {
      await site.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the build stamps sw.js with a hash of the site, which changes with any file', () => {
    const dir = siteCopy();
    try {
      const served = fs.readFileSync(path.join(dir, 'sw.js'), 'utf8');
      const version = served.match(/const VERSION = '([^']*)';/)?.[1];
      if (fs.existsSync(path.join(dir, 'app.js'))) assert.equal(version, siteVersion(dir), 'dist/sw.js carries the hash of dist/');
      const before = siteVersion(dir);
      fs.appendFileSync(path.join(dir, 'style.css'), '\n/* edited */\n');
      const edited = siteVersion(dir);
      assert.notEqual(edited, before);
      fs.writeFileSync(path.join(dir, 'sw.js'), 'changed');
      assert.equal(siteVersion(dir), edited, 'sw.js itself is not part of the hash');
      assert.throws(() => stamp('self.addEventListener()', 'x'), /VERSION/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
