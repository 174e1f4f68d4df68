// Shared set-up for the browser tests: serves HAPMOE_DIST (default ./dist; a ':'-list of folders,
// first match wins) on 127.0.0.1 and drives Debian's /usr/bin/chromium through playwright-core.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer, resolveFile } from '../../scripts/static-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '../..');
export const ARTIFACTS = path.join(HERE, 'artifacts');
const ROOTS = (process.env.HAPMOE_DIST || path.join(REPO, 'dist')).split(path.delimiter).map((r) => path.resolve(REPO, r));
const CHROMIUM = process.env.HAPMOE_CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];
export const PLAN_TIMEOUT = 60_000;
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1440, height: 1000 };

/** The folders served (HAPMOE_DIST or ./dist). */
export const DIST_ROOTS = ROOTS;

/** Starts the server (on roots) and browser; returns {url, newPage(options), close()}. */
export async function startHarness(roots = ROOTS) {
  for (const f of ['index.html', 'hapmoe.js']) {
    assert.ok(resolveFile(roots, `/${f}`), `${f} not found in ${roots.join(', ')}: build the page (dist/) or set HAPMOE_DIST`);
  }
  const server = await startServer(roots);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  const contexts = [];
  return {
    url: server.url,
    errors: [],
    /** A fresh context and page; options go to browser.newContext (viewport, colorScheme, bypassCSP...). */
    async newPage(options = {}) {
      const context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 1, ...options });
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (e) => this.errors.push(`pageerror: ${e.message}`));
      return page;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close();
      await server.close();
    },
  };
}

export const runs = (page) => page.evaluate(() => Number(document.body.dataset.runs || 0));

/** Waits until more than `count` runs have finished and the page is idle. */
export async function waitRuns(page, count, timeout = PLAN_TIMEOUT) {
  await page.waitForFunction((n) => Number(document.body.dataset.runs || 0) > n && document.body.dataset.state === 'idle',
    count, { timeout });
}

/** Opens url and waits for the first run to finish. */
export async function openAndPlan(h, url, options) {
  const page = await h.newPage(options);
  await page.goto(url);
  await waitRuns(page, 0);
  return page;
}

export const field = (p) => `[data-field="${p}"]`;

/**
 * Waits until the browser's processes are idle: their CPU time, summed, grew by at most quietMs in
 * stepMs, twice in a row (at most maxMs in all). A new context's first renderer (its blank page)
 * spends about 0.7 s of one core starting up; a first visit timed in that second also times that
 * start-up, which a visit from a browser tab that is already open does not pay.
 */
export async function settle(page, { quietMs = 20, stepMs = 100, maxMs = 5000 } = {}) {
  const cdp = await page.context().browser().newBrowserCDPSession();
  try {
    const cpuMs = async () => 1000 * (await cdp.send('SystemInfo.getProcessInfo')).processInfo.reduce((sum, p) => sum + p.cpuTime, 0);
    let last = await cpuMs();
    for (let waited = 0, quiet = 0; waited < maxMs && quiet < 2; waited += stepMs) {
      await new Promise((resolve) => setTimeout(resolve, stepMs));
      const now = await cpuMs();
      quiet = now - last <= quietMs ? quiet + 1 : 0;
      last = now;
    }
  } finally {
    await cdp.detach();
  }
}

/**
 * Opens url and measures its first plan: {painted, seen} in ms after navigation. painted: when the
 * browser painted the best plan's summary (Element Timing, "plan-summary" in results-view.js);
 * seen: when a poll from here first found the plans table and the Megatron command in the page.
 * Nothing is injected into the page before it is painted (playwright's waitForFunction evaluates
 * a 300 KB script on the page's main thread, 50 ms of a first visit on this machine).
 */
export async function firstPlanTimes(page, url, timeout = PLAN_TIMEOUT) {
  await page.goto(url, { waitUntil: 'commit' });
  const painted = await page.evaluate((ms) => new Promise((resolve, reject) => {
    setTimeout(() => reject(new Error(`no plan painted within ${ms} ms`)), ms);
    new PerformanceObserver((list) => {
      const e = list.getEntries().find((x) => x.identifier === 'plan-summary');
      if (e) resolve(e.renderTime || e.loadTime);
    }).observe({ type: 'element', buffered: true });
  }), timeout);
  await page.waitForFunction(() => document.querySelector('#plans tbody tr') && /--tensor-model-parallel-size/.test(document.body.textContent), null, { timeout });
  const seen = await page.evaluate(() => performance.now());
  return { painted, seen };
}


/** Page width beyond the viewport, in CSS pixels (0 when nothing scrolls sideways). */
export const overflowX = (page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The scenario object inside the page's current URL hash (decoded by the page's own module). */
export const hashScenario = (page) => page.evaluate(async () => (await (await import('./url-state.js')).decodeHash(location.hash)));

/** The page link ("#s=v1....") for a scenario object or raw JSON text, built like the page does. */
export async function linkFor(scenarioOrText, view = '') {
  const { deflateRawSync } = await import('node:zlib');
  const text = typeof scenarioOrText === 'string' ? scenarioOrText : JSON.stringify(scenarioOrText);
  return '#s=v1.' + deflateRawSync(Buffer.from(text)).toString('base64url') + (view ? `&v=${view}` : '');
}

export const SCENARIO = (training = {}, extra = {}) => ({
  format: 'hapmoe.scenario/1', model: 'mixtral-s', cluster: '16-1',
  training: { global_batch_size: 256, seq_length: 4096, ...training }, ...extra,
});
