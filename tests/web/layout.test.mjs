// Page layout and accessibility in headless Chromium: phone widths, focus, help, compare,
// headroom, SVG download, axe-core, offline reload and the core version.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHarness, DIST_ROOTS, openAndPlan, waitRuns, runs, field, overflowX, screenshot, linkFor, SCENARIO, PHONE, REPO } from './harness.mjs';

let h;
const AXE = path.join(REPO, 'node_modules/axe-core/axe.min.js');

/** axe-core violations of impact serious or critical on the page as it is now. */
async function seriousViolations(page) {
  await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`));
  return found;
}

describe('page layout and accessibility', { timeout: 240_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('at 390 x 844 no view scrolls sideways: initial, results, error and no-fit', async () => {
    const page = await h.newPage({ viewport: PHONE });
    await page.goto(`${h.url}/`);
    await page.waitForSelector(field('training.global_batch_size'));
    assert.equal(await overflowX(page), 0, 'initial view');
    await waitRuns(page, 0);
    assert.equal(await overflowX(page), 0, 'results view');
    await screenshot(page, 'phone-results');
    // Plan scrolls the results into view on a phone.
    await page.evaluate(() => window.scrollTo(0, 0));
    const before = await runs(page);
    await page.click('#plan-btn');
    await waitRuns(page, before);
    const top = await page.evaluate(() => document.querySelector('#results').getBoundingClientRect().top);
    assert.ok(top >= -1 && top < 200, `results start at ${top}px after Plan`);
    await page.fill(field('training.global_batch_size'), '-5');
    await page.click('#plan-btn');
    await page.waitForSelector('.field-error');
    assert.equal(await overflowX(page), 0, 'error view');
    await screenshot(page, 'phone-error');
    const noFit = SCENARIO({}, { model: 'deepseek-v3', cluster: { groups: [{ gpu: 'h100-sxm', nodes: 1, gpus_per_node: 8 }] } });
    const page2 = await openAndPlan(h, `${h.url}/${await linkFor(noFit)}`, { viewport: PHONE });
    assert.match(await page2.textContent('#summary'), /No feasible plan/);
    assert.equal(await overflowX(page2), 0, 'no-fit view');
    await screenshot(page2, 'phone-nofit');
    // The narrowest phones.
    await page.fill(field('training.global_batch_size'), '256');
    await page.setViewportSize({ width: 360, height: 780 });
    const n = await runs(page);
    await page.click('#plan-btn');
    await waitRuns(page, n);
    assert.equal(await overflowX(page), 0, 'results view at 360 px');
    await screenshot(page, 'phone360-results');
  });

  test('the no-fit view shows the core diagnosis text', async () => {
    const noFit = SCENARIO({}, { model: 'deepseek-v3', cluster: { groups: [{ gpu: 'h100-sxm', nodes: 1, gpus_per_node: 8 }] } });
    const page = await openAndPlan(h, `${h.url}/${await linkFor(noFit)}`);
    const text = await page.textContent('.diagnosis .cause');
    assert.match(text, /memory|GiB|rule/i);
    await screenshot(page, 'desktop-nofit');
  });

  test('sorting keeps focus on its header; rows are named; column help opens by keyboard', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    await screenshot(page, 'desktop-results');
    await page.focus('table.plans th button[data-sort="mem"]');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.sort), 'mem');
    assert.equal(await page.getAttribute('table.plans th:has(button[data-sort="mem"])', 'aria-sort'), 'ascending');
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('table.plans th:has(button[data-sort="mem"])', 'aria-sort'), 'descending');
    const label = await page.getAttribute('table.plans tbody tr:first-child', 'aria-label');
    assert.match(label, /^Plan \d+: TP\d+ .* s per iteration/);
    // One toggle explains every column (not one help stop per column).
    await page.focus('#plans button.help-all');
    await page.keyboard.press('Enter');
    const help = page.locator('#plans .help-pop');
    assert.equal(await help.isVisible(), true, 'column help shown');
    assert.equal(await page.getAttribute('#plans button.help-all', 'aria-expanded'), 'true');
    for (const name of ['MFU', 'Bubble', 'Memory headroom', 'Parallel mesh', 'Compare']) {
      assert.ok((await help.textContent()).includes(name), `help for ${name}`);
    }
    assert.equal(await page.locator('table.plans thead button[data-help]').count(), 0, 'no help button per column');
    // The focus ring is drawn (not suppressed) on the sort buttons.
    await page.focus('table.plans th button[data-sort="time"]');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none');
  });

  test('headroom shown and plans above 95% flagged; two plans compared term by term', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const heads = await page.$$eval('table.plans td.c-head', (tds) => tds.map((t) => t.textContent));
    assert.ok(heads.length > 0 && heads.every((t) => /\d+\.\d\d/.test(t)), heads.join(','));
    const flagged = await page.$$eval('table.plans tbody tr', (trs) => trs.map((tr) => {
      const i = Number(tr.dataset.index);
      return [i, tr.querySelector('.flag-tight') != null];
    }));
    const result = await page.evaluate(() => window.__lastResultForTests ?? null);
    assert.equal(result, null, 'no test hooks in the page');
    // Cross-check the flag against the plan's own numbers shown in the stage table.
    const fractions = await page.$$eval('table.stages .membar', (bars) => bars.map((b) => Number(b.getAttribute('aria-valuenow')) / Number(b.getAttribute('aria-valuemax'))));
    const tight0 = fractions.some((f) => f > 0.95);
    assert.equal(flagged.find(([i]) => i === 0)[1], tight0);
    await page.check('input[data-compare="0"]');
    await page.check('input[data-compare="1"]');
    assert.equal(await page.inputValue('#compare .cmp-b'), 'p1');
    const rows = await page.locator('#compare table.compare-terms tbody tr').count();
    assert.ok(rows >= 10);
    assert.match(await page.textContent('#compare table.compare-terms'), /EP all-to-all/);
    await page.check('.distinct-only');
    const meshes = await page.$$eval('table.plans tbody tr', (trs) => trs.map((tr) => [...tr.cells].slice(1, 7).map((c) => c.textContent).join('-')));
    assert.equal(new Set(meshes).size, meshes.length);
  });

  test('each chart downloads as a standalone SVG', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    for (const chart of ['memory-chart', 'timeline-chart']) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(`.svg-btn[data-chart="${chart}"]`)]);
      assert.equal(download.suggestedFilename(), `hapmoe-${chart}.svg`);
      const text = fs.readFileSync(await download.path(), 'utf8');
      assert.match(text, /^<\?xml[^>]*>\s*<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      assert.match(text, /<style>/);
    }
  });

  test('64 micro-batches stay legible: one op at least 4 px wide, stage labels inside the chart', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const m = await page.evaluate(() => document.querySelector('#timeline-chart svg').outerHTML.match(/(\d+) micro-batches/)?.[1]);
    assert.ok(Number(m) >= 64, `default plan has ${m} micro-batches`);
    const widths = await page.$$eval('#timeline-chart svg rect[fill]', (rs) => rs.map((r) => Number(r.getAttribute('width'))));
    assert.ok(widths.length > 0 && Math.min(...widths) >= 3.5, `narrowest op ${Math.min(...widths)} px`);
    const lefts = await page.$$eval('#timeline-chart svg text.label, #memory-chart svg text.label', (ts) => ts.map((t) => t.getBBox().x));
    assert.ok(lefts.every((x) => x >= 0), `label starts at ${Math.min(...lefts)}`);
  });

  test('the sticky run bar never covers the field that has focus (phone)', async () => {
    const page = await openAndPlan(h, `${h.url}/`, { viewport: PHONE });
    await page.evaluate(() => window.scrollTo(0, 0));
    // A visible field that lies under the pinned bar at the top of the page.
    const name = await page.evaluate(() => {
      const b = document.querySelector('.run-bar').getBoundingClientRect();
      if (Math.abs(b.bottom - innerHeight) > 2) return null;
      const el = [...document.querySelectorAll('#scenario-form input[data-field], #scenario-form select[data-field]')]
        .find((e) => !e.closest('details:not([open])') && e.checkVisibility() && e.getBoundingClientRect().top >= b.top - 4 && e.getBoundingClientRect().top < innerHeight);
      return el ? el.dataset.field : null;
    });
    assert.ok(name, 'a field starts under the pinned bar (else this test proves nothing)');
    await page.evaluate((sel) => document.querySelector(sel).focus({ preventScroll: true }), field(name));
    await page.keyboard.press('Shift+Tab');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.keyboard.press('Tab');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const s = await page.evaluate(() => ({ name: document.activeElement.dataset.field,
      bottom: document.activeElement.getBoundingClientRect().bottom, barTop: document.querySelector('.run-bar').getBoundingClientRect().top }));
    assert.equal(s.name, name);
    assert.ok(s.bottom <= s.barTop + 1, `${name} bottom ${s.bottom} under the bar top ${s.barTop}`);
  });

  for (const colorScheme of ['light', 'dark']) {
    test(`axe-core finds no serious or critical violation (${colorScheme})`, async () => {
      const page = await openAndPlan(h, `${h.url}/`, { bypassCSP: true, colorScheme });
      await page.click('#plans button.help-all');
      assert.deepEqual(await seriousViolations(page), []);
      await screenshot(page, `desktop-${colorScheme}`);
    });
  }

  test('the page says which core it runs and reloads offline after its first visit', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    assert.match(await page.textContent('#core-version'), /core \d+\.\d+\.\d+/);
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.reload();
    await waitRuns(page, 0);
    assert.equal(await page.evaluate(() => navigator.serviceWorker.controller != null), true, 'page controlled by the service worker');
    await page.context().setOffline(true);
    await page.reload();
    await waitRuns(page, 0);
    assert.match(await page.textContent('#run-status'), /Done/);
    assert.ok(await page.locator('table.plans tbody tr').count() > 0);
    await page.context().setOffline(false);
  });

  test('a new version on the server replaces the cached page on the next online load', async () => {
    // A private copy of the site, so this test can publish a "new version" of index.html.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-site-'));
    for (const root of [...DIST_ROOTS].reverse()) fs.cpSync(root, dir, { recursive: true, dereference: true });
    const site = await startHarness([dir]);
    try {
      const page = await openAndPlan(site, `${site.url}/`);
      await page.evaluate(() => navigator.serviceWorker.ready);
      await page.reload();
      await waitRuns(page, 0);
      assert.equal(await page.evaluate(() => navigator.serviceWorker.controller != null), true);
      const html = fs.readFileSync(path.join(dir, 'index.html'), 'utf8');
      fs.writeFileSync(path.join(dir, 'index.html'), html.replace('<title>HAPMoE Planner</title>', '<title>HAPMoE Planner v2</title>'));
      await page.reload();
      await waitRuns(page, 0);
      assert.equal(await page.title(), 'HAPMoE Planner v2');
      await page.context().setOffline(true);
      await page.reload();
      await waitRuns(page, 0);
      assert.equal(await page.title(), 'HAPMoE Planner v2', 'the offline copy is the new version');
    } finally {
      await site.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('without hapmoe.wasm (or core-data.json) the page says what failed and never hangs', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-site-'));
    for (const root of [...DIST_ROOTS].reverse()) fs.cpSync(root, dir, { recursive: true, dereference: true });
    fs.rmSync(path.join(dir, 'hapmoe.wasm'));
    fs.rmSync(path.join(dir, 'core-data.json'));  // the form then asks the worker, which fails too
    const site = await startHarness([dir]);
    try {
      const page = await site.newPage();
      await page.goto(`${site.url}/`);
      await page.waitForFunction(() => !document.querySelector('#banner').hidden, null, { timeout: 20_000 });
      assert.match(await page.textContent('#banner'), /hapmoe\.wasm/);
      await page.waitForFunction(() => document.body.dataset.state !== 'loading' && document.body.dataset.state !== 'running', null, { timeout: 5_000 });
    } finally {
      await site.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the baselines table shows its figures without scrolling at desktop width (the rule wraps)', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const box = await page.$eval('#baselines', (el) => {
      const t = el.querySelector('table.baselines');
      return t && { table: t.getBoundingClientRect().right, box: el.getBoundingClientRect().right, scroll: el.scrollWidth - el.clientWidth, rule: !!t.querySelector('.hint') };
    });
    assert.ok(box && box.rule, 'a baseline with its rule');
    assert.ok(box.table <= box.box + 1 && box.scroll <= 1, JSON.stringify(box));
  });

  test('an edit re-plans by itself shortly after', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const before = await runs(page);
    await page.fill(field('training.global_batch_size'), '512');
    await waitRuns(page, before, 20_000);
    assert.match(await page.textContent('#megatron-args'), /--global-batch-size 512\b/);
  });

  test('a live re-plan shows a field error without taking the focus from the field being typed in', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const before = await runs(page);
    await page.fill(field('training.global_batch_size'), '-5');
    await page.focus(field('training.seq_length'));
    await page.keyboard.type('0');
    await waitRuns(page, before, 20_000);
    assert.equal(await page.locator('.field-error[data-error-for="training.global_batch_size"]').count(), 1);
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.field), 'training.seq_length');
  });

  test('no uncaught page errors', () => { assert.deepEqual(h.errors, []); });
});
