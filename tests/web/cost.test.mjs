// Prices, objectives and the Pareto front on the page (issue 24), in headless Chromium: prices
// typed in the GPU-groups table and "Cheapest per token" give $ columns, run totals and a chart of
// time against cost whose points select their plan (click or Enter; a plan outside the top k is
// shown as the front's own entry); the link carries prices, billing, objective, budget and
// training tokens through the form; partial prices are refused beside the price field with
// nothing typed lost; axe-core finds nothing with the chart shown (light, and dark on a phone).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { startHarness, openAndPlan, waitRuns, runs, field, linkFor, overflowX, screenshot, PHONE, REPO } from './harness.mjs';

const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');
const AXE = path.join(REPO, 'node_modules/axe-core/axe.min.js');
const hashScenario = (page) => page.evaluate(async () => (await (await import('./url-state.js')).decodeHash(location.hash))?.scenario);

/** Mixtral 8x7B on 2 nodes of H100 and 2 of A100 (upstream Megatron-LM): prices and search go in `groups` and `search`. */
const scenario = ({ prices = [], billed = [], training = {}, search } = {}) => ({
  format: 'hapmoe.scenario/1', model: 'mixtral-8x7b',
  cluster: { groups: ['h100-sxm', 'a100-sxm-80gb'].map((gpu, i) => ({ gpu, nodes: 2, gpus_per_node: 8,
    ...(prices[i] != null ? { price_per_gpu_hour: prices[i] } : {}), ...(billed[i] ? { billed: billed[i] } : {}) })) },
  training: { global_batch_size: 256, seq_length: 4096, ...training },
  ...(search ? { search } : {}),
});

/** Clicks Plan and waits for that run. */
async function planAndWait(page) {
  const n = await runs(page);
  await page.click('#plan-btn');
  await waitRuns(page, n);
}

/** axe-core's violations (any impact) on the page as it is now. */
async function violations(page) {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`));
}

/** The front as the chart draws it: each point's index and aria-label. */
const chartPoints = (page) => page.$$eval('#pareto-chart g[role="button"]', (gs) => gs.map((g) => ({ k: Number(g.dataset.point), label: g.getAttribute('aria-label'), tab: g.tabIndex })));

let h;

describe('prices, objectives and the Pareto front', { timeout: 300_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('prices and "Cheapest per token" give $ columns, run totals and a Pareto chart whose points select their plan', async () => {
    const page = await openAndPlan(h, `${h.url}/${await linkFor(scenario())}`);
    // Unpriced: no cost column, no chart, and no price in the link.
    assert.doesNotMatch(await page.textContent('#plans thead'), /\$/);
    assert.equal(await page.isHidden('#pareto'), true);
    assert.equal(JSON.stringify(await hashScenario(page)).includes('price'), false);
    // The price column and billing choice, with unit and help from the field schema.
    const head = await page.textContent('table.groups thead');
    for (const s of ['Price', 'USD/GPU-hour', 'Billed']) assert.ok(head.includes(s), s);
    assert.deepEqual(await page.$$eval(`${field('cluster.groups[0].billed')} option`, (os) => os.map((o) => o.value)), ['used', 'all']);
    assert.equal(await page.isHidden(field('search.budget_per_hour')), true, 'no budget asked for without its objective');
    await page.fill(field('cluster.groups[0].price_per_gpu_hour'), '3');
    await page.fill(field('cluster.groups[1].price_per_gpu_hour'), '1.2');
    await page.fill(field('training.train_tokens'), '1e11');
    await page.selectOption(field('search.objective'), { label: 'Cheapest per token' });
    await planAndWait(page);
    const sent = await hashScenario(page);
    assert.deepEqual(sent.cluster.groups.map((g) => g.price_per_gpu_hour), [3, 1.2]);
    assert.equal(sent.search.objective, 'cost');
    assert.equal(sent.training.train_tokens, 1e11);
    // The $ columns (units in the headers), each cell in dollars.
    const headers = await page.$$eval('#plans thead th', (ths) => ths.map((th) => th.textContent));
    assert.ok(headers.includes('Cost $/hour') && headers.includes('Cost $/M tokens'), headers.join(' | '));
    const costs = await page.$$eval('#plans tbody td.c-costTok', (tds) => tds.map((td) => td.textContent));
    assert.ok(costs.length >= 1 && costs.every((c) => /^\$\d/.test(c)), costs.join(' '));
    assert.match(await page.textContent('#plans caption'), /Cheapest plans/);
    // The summary: the first plan's cost and run totals, at "your prices", each with its unit.
    const cli = JSON.parse(execFileSync(CLI, ['plan', '-', '--json'], { input: JSON.stringify(sent) }));
    const best = cli.plans[0].metrics;
    const summary = await page.textContent('#summary');
    assert.ok(summary.includes(`$${best.cost_per_hour.toFixed(2)} per hour`), summary);
    assert.ok(summary.includes(`${best.train_hours.toFixed(1)} h (${(best.train_hours / 24).toFixed(1)} days)`), summary);
    assert.match(summary, /to train 100 B tokens/);
    assert.match(summary, /the whole run, at your prices/);
    // The chart: the core's front, at least two points, each a focusable button named by its figures.
    await page.waitForSelector('#pareto-chart svg');
    const points = await chartPoints(page);
    assert.ok(points.length >= 2, `${points.length} points`);
    assert.equal(points.length, cli.pareto.length);
    assert.ok(points.every((p) => p.tab === 0 && /s per iteration, \$[\d.]+ per million tokens/.test(p.label)), JSON.stringify(points));
    assert.equal(await page.getAttribute('#pareto-chart svg', 'role'), 'group');
    assert.equal(await page.locator('#pareto-table tbody tr').count(), points.length);
    // The first plan's point is the highlighted one.
    const first = cli.pareto.findIndex((p) => p.plan_index === 0);
    if (first >= 0) assert.equal(await page.getAttribute(`#pareto-chart g[data-point="${first}"]`, 'aria-current'), 'true');
    // Clicking a point of a plan in the table selects that row (details and commands).
    const inTable = cli.pareto.findIndex((p) => Number.isInteger(p.plan_index));
    await page.click(`#pareto-chart g[data-point="${inTable}"]`);
    const row = cli.pareto[inTable].plan_index;
    await page.waitForFunction((i) => document.querySelector(`#plans tr[data-index="${i}"]`)?.classList.contains('selected'), row);
    assert.match(await page.textContent('#detail-title'), new RegExp(`^Plan #${row + 1}:`));
    // Enter on a point outside the top k shows the front's own entry, labelled so; else Enter on another point.
    const outside = cli.pareto.findIndex((p) => p.plan_index == null);
    const target = outside >= 0 ? outside : (inTable + 1) % points.length;
    await page.focus(`#pareto-chart g[data-point="${target}"]`);
    await page.keyboard.press('Enter');
    if (outside >= 0) {
      await page.waitForFunction(() => /^Pareto plan \(not in the top k\)/.test(document.querySelector('#detail-title').textContent));
      assert.equal(await page.locator('#plans tr.selected').count(), 0, 'no row selected for a plan outside the table');
      const args = await page.textContent('#megatron-args');
      assert.ok(args.includes(`--pipeline-model-parallel-size ${cli.pareto[outside].entry.plan.pp}`), args.slice(0, 200));
    } else {
      const i = cli.pareto[target].plan_index;
      await page.waitForFunction((n) => document.querySelector(`#plans tr[data-index="${n}"]`)?.classList.contains('selected'), i);
    }
    assert.equal(await page.getAttribute(`#pareto-chart g[data-point="${target}"]`, 'aria-current'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.point), String(target), 'the focus stays on the point');
    assert.deepEqual(h.errors, []);
  });

  test('the link carries prices, billing, objective, budget and training tokens through the form', async () => {
    const linked = scenario({ prices: [3, 1.2], billed: [null, 'all'], training: { train_tokens: 2e11 },
      search: { objective: 'time_within_budget', budget_per_hour: 100 } });
    const page = await openAndPlan(h, `${h.url}/${await linkFor(linked)}`);
    const form = async (p) => ({
      prices: [await p.inputValue(field('cluster.groups[0].price_per_gpu_hour')), await p.inputValue(field('cluster.groups[1].price_per_gpu_hour'))],
      billed: [await p.inputValue(field('cluster.groups[0].billed')), await p.inputValue(field('cluster.groups[1].billed'))],
      objective: await p.inputValue(field('search.objective')),
      budget: await p.inputValue(field('search.budget_per_hour')),
      budgetShown: await p.isVisible(field('search.budget_per_hour')),
      tokens: Number(await p.inputValue(field('training.train_tokens'))),
    });
    const expected = { prices: ['3', '1.2'], billed: ['used', 'all'], objective: 'time_within_budget', budget: '100', budgetShown: true, tokens: 2e11 };
    assert.deepEqual(await form(page), expected);
    // Planned from the form itself: the scenario it sends is the link's.
    await planAndWait(page);
    assert.deepEqual(await hashScenario(page), linked);
    assert.match(await page.textContent('#plans caption'), /within your budget/);
    const summary = await page.textContent('#summary');
    const plansText = await page.textContent('#plans tbody');
    // Reloaded from its URL: the same form and the same result.
    const other = await openAndPlan(h, page.url());
    assert.deepEqual(await form(other), expected);
    assert.deepEqual(await hashScenario(other), linked);
    assert.equal(await other.textContent('#plans tbody'), plansText);
    assert.equal((await other.textContent('#summary')).replace(/ in [\d,]+ ms/, ''), summary.replace(/ in [\d,]+ ms/, ''));
  });

  test('partial or out-of-range prices are refused beside the price field and nothing typed is lost', async () => {
    const page = await openAndPlan(h, `${h.url}/${await linkFor(scenario())}`);
    await page.fill(field('cluster.groups[0].price_per_gpu_hour'), '3');
    await page.fill(field('training.train_tokens'), '5e10');
    const note = page.locator('.field-error[data-error-for="cluster.groups[1].price_per_gpu_hour"]');
    await note.waitFor({ timeout: 20_000 });
    assert.match(await note.innerText(), /price/);
    // Its own row, right under group 2's row of the table; the input marked invalid.
    assert.equal(await note.evaluate((el) => el.closest('tr.error-row')?.previousElementSibling?.querySelector('[data-col="price_per_gpu_hour"]')?.dataset.field),
      'cluster.groups[1].price_per_gpu_hour');
    assert.equal(await page.getAttribute(field('cluster.groups[1].price_per_gpu_hour'), 'aria-invalid'), 'true');
    assert.equal(await page.inputValue(field('cluster.groups[0].price_per_gpu_hour')), '3');
    assert.equal(await page.inputValue(field('training.train_tokens')), '5e10');
    assert.equal(await page.isVisible('#stale-note'), true, 'the shown result is marked stale');
    // Out of range: refused with the range, beside that field.
    await page.fill(field('cluster.groups[1].price_per_gpu_hour'), '-1');
    const range = page.locator('.field-error[data-error-for="cluster.groups[1].price_per_gpu_hour"]');
    await page.waitForFunction(() => /0 to 1000/.test(document.querySelector('.field-error[data-error-for="cluster.groups[1].price_per_gpu_hour"]')?.textContent || ''), null, { timeout: 20_000 });
    assert.equal(await range.count(), 1);
    assert.equal(await page.inputValue(field('cluster.groups[1].price_per_gpu_hour')), '-1');
    // No prices at all but a cost objective: the first group's price is asked for.
    await page.fill(field('cluster.groups[0].price_per_gpu_hour'), '');
    await page.fill(field('cluster.groups[1].price_per_gpu_hour'), '');
    await page.selectOption(field('search.objective'), 'cost');
    await page.locator('.field-error[data-error-for="cluster.groups[0].price_per_gpu_hour"]').waitFor({ timeout: 20_000 });
    assert.equal(await page.inputValue(field('search.objective')), 'cost');
    assert.deepEqual(h.errors, []);
  });

  for (const [colorScheme, viewport] of [['light', undefined], ['dark', PHONE]]) {
    test(`axe-core finds no violation with the Pareto chart shown (${colorScheme}${viewport ? ', 390 px' : ''})`, async () => {
      const priced = scenario({ prices: [3, 1.2], training: { train_tokens: 1e11 }, search: { objective: 'cost' } });
      const page = await openAndPlan(h, `${h.url}/${await linkFor(priced)}`, { bypassCSP: true, colorScheme, ...(viewport ? { viewport } : {}) });
      await page.waitForSelector('#pareto-chart svg');
      assert.ok((await chartPoints(page)).length >= 2);
      if (viewport) assert.ok(await overflowX(page) <= 0, `the page scrolls ${await overflowX(page)} px sideways`);
      await page.focus('#pareto-chart g[data-point="0"]');
      assert.deepEqual(await violations(page), []);
      await screenshot(page, `cost-${colorScheme}`);
    });
  }
});
