// The "Paper's evaluation" view in headless Chromium: it runs the core's reproduce() in the
// worker, shows every model and cluster with units and sources, and its ratios and geometric
// means are the CLI's (`hapmoe reproduce --json`), value for value.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startHarness, openAndPlan, overflowX, screenshot, REPO, PHONE, PLAN_TIMEOUT } from './harness.mjs';

const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');
const expected = JSON.parse(execFileSync(CLI, ['reproduce', '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
let h;

before(async () => { h = await startHarness(); });
after(async () => { await h?.close(); });

/** Clicks the button and returns what the view shows: per model, cluster and column, the data-* values. */
async function openView(page) {
  await page.click('#reproduce-btn');
  await page.waitForSelector('#reproduce[data-reproduce="done"]', { timeout: PLAN_TIMEOUT });
  return page.evaluate(() => {
    const out = { tables: {}, text: document.querySelector('#reproduce').innerText };
    for (const t of document.querySelectorAll('#reproduce table.reproduce')) {
      const rows = {};
      for (const tr of t.querySelectorAll('tbody tr')) {
        rows[tr.dataset.cluster] = Object.fromEntries([...tr.querySelectorAll('td[data-column]')]
          .map((td) => [td.dataset.column, td.dataset.ratio === undefined ? null : Number(td.dataset.ratio)]));
      }
      const geomeans = Object.fromEntries([...t.querySelectorAll('tfoot td[data-column]')]
        .map((td) => [td.dataset.column, td.dataset.geomean === undefined ? null : Number(td.dataset.geomean)]));
      out.tables[t.dataset.model] = { rows, geomeans, head: t.querySelector('thead').innerText };
    }
    return out;
  });
}

test('the paper\'s evaluation renders every row with the CLI\'s ratios, units and sources', async () => {
  const page = await openAndPlan(h, h.url);
  const shown = await openView(page);
  assert.deepEqual(Object.keys(shown.tables), expected.setups.map((s) => s.model));
  for (const row of expected.rows) {
    const cells = shown.tables[row.model].rows[row.cluster];
    assert.ok(cells, `${row.model} ${row.cluster} shown`);
    for (const col of expected.columns) assert.equal(cells[col.id], row.columns[col.id].throughput_ratio, `${row.model} ${row.cluster} ${col.id}`);
  }
  for (const g of expected.geomeans) assert.equal(shown.tables[g.model].geomeans[g.column], g.value, `geomean ${g.model} ${g.column}`);
  for (const t of Object.values(shown.tables)) {
    for (const unit of ['tokens/s', 'iteration', '×']) assert.ok(t.head.includes(unit), `header has ${unit}`);
  }
  assert.match(shown.text, /arXiv 2609\.39350/);
  assert.match(shown.text, /paper 1\.67×/);  // Table 2, Mixtral-S vs Megatron-Infinigence
  for (const g of expected.geomeans.filter((x) => x.gap_reason)) assert.ok(shown.text.includes(g.gap_reason.slice(0, 40)), 'gap reason shown');
  // A second click hides the view, a third shows it again without re-running.
  await page.click('#reproduce-btn');
  assert.equal(await page.isHidden('#reproduce'), true);
  await page.click('#reproduce-btn');
  assert.equal(await page.isVisible('#reproduce'), true);
  assert.deepEqual(h.errors, []);
});

test('the paper\'s evaluation fits a phone (its tables scroll inside their frame); a tap shows how a paper figure is derived', async () => {
  const page = await openAndPlan(h, h.url, { viewport: PHONE, hasTouch: true, isMobile: true });
  const { text } = await openView(page);
  assert.equal(await overflowX(page), 0);
  // Issue 22, item 10: no "hover" alone on a touch screen, and the tap does what the text says.
  const hovers = text.match(/.{0,20}\bhover\b/gi) || [];
  assert.ok(hovers.length > 0 && hovers.every((m) => /tap or hover/i.test(m)), hovers.join(' | '));
  const figure = page.locator('#reproduce button.paper').first();
  const basis = page.locator('#reproduce button.paper + .paper-basis').first();
  assert.equal(await basis.isVisible(), false);
  await figure.scrollIntoViewIfNeeded();
  await figure.tap();
  assert.equal(await basis.isVisible(), true);
  assert.equal(await figure.getAttribute('aria-expanded'), 'true');
  assert.ok((await basis.textContent()).length > 20 && (await basis.textContent()) === await figure.getAttribute('title'));
  assert.equal(await overflowX(page), 0, 'the shown basis wraps inside its table');
  await screenshot(page, 'reproduce-phone');
});
