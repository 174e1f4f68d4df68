// End-to-end test of the static page in headless Chromium (Debian's /usr/bin/chromium via
// playwright-core; no browser download). Serves HAPMOE_DIST (default ./dist; a list of folders
// separated by ':' is also accepted, first match wins) on 127.0.0.1 at a random port.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer, resolveFile } from '../../scripts/static-server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const ROOTS = (process.env.HAPMOE_DIST || path.join(REPO, 'dist')).split(path.delimiter).map((r) => path.resolve(REPO, r));
const ARTIFACTS = path.join(HERE, 'artifacts');
const CHROMIUM = process.env.HAPMOE_CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];
const PLAN_TIMEOUT = 60_000;

let server, browser;
const contexts = [];
const consoleErrors = [];
const requests = [];

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, deviceScaleFactor: 1 });
  contexts.push(context);
  context.on('request', (r) => requests.push(r.url()));
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${m.text()} @ ${m.location()?.url ?? ''}`); });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  page.on('worker', (w) => requests.push(w.url()));
  return page;
}

const runs = (page) => page.evaluate(() => Number(document.body.dataset.runs || 0));

/** Waits until more than `count` runs have finished and the page is idle. */
async function waitRuns(page, count, timeout = PLAN_TIMEOUT) {
  await page.waitForFunction((n) => Number(document.body.dataset.runs || 0) > n && document.body.dataset.state === 'idle',
    count, { timeout });
}

/** Clicks Plan and waits for that run to finish. */
async function planAndWait(page) {
  const before = await runs(page);
  await page.click('#plan-btn');
  await waitRuns(page, before);
}

async function openAndPlan(url) {
  const page = await newPage();
  await page.goto(url);
  await waitRuns(page, 0);
  return page;
}

const args = (page) => page.textContent('#megatron-args');
const field = (p) => `[data-field="${p}"]`;

/** Every form value keyed by data-field (checkbox state for checkboxes). */
const formValues = (page) => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#scenario-form [data-field]')]
  .filter((el) => 'value' in el).map((el) => [el.dataset.field, el.type === 'checkbox' ? el.checked : el.value])));

async function selectPreset(page, kind, id) {
  const has = await page.$(`${field(kind)} option[value="${id}"]`);
  if (!has) return false;
  await page.selectOption(field(kind), id);
  return true;
}

describe('HAPMoE Planner page', { timeout: 180_000 }, () => {
  before(async () => {
    for (const f of ['index.html', 'hapmoe.js']) {
      assert.ok(resolveFile(ROOTS, `/${f}`), `${f} not found in ${ROOTS.join(', ')}: build the page (dist/) or set HAPMOE_DIST`);
    }
    server = await startServer(ROOTS);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  });

  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await server?.close();
  });

  test('default preset plans on load and shows a plan table and Megatron args', async () => {
    const page = await openAndPlan(`${server.url}/`);
    assert.equal(await page.inputValue(field('model')), 'mixtral-8x7b');
    assert.equal(await page.inputValue(field('cluster')), 'h100-a100-32');
    assert.equal(await page.inputValue(field('training.global_batch_size')), '256');
    assert.equal(await page.inputValue(field('training.seq_length')), '4096');
    assert.ok(await page.locator('table.plans tbody tr').count() >= 1, 'plans table has rows');
    assert.match(await args(page), /--tensor-model-parallel-size \d+/);
    assert.match(await page.evaluate(() => location.hash), /^#s=v1\./);
    assert.ok(await page.locator('#memory-chart svg rect').count() > 0, 'memory chart drawn');
    assert.ok(await page.locator('#timeline-chart svg').count() === 1, 'timeline drawn');
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'results.png'), fullPage: true });
  });

  test('changing the global batch size and re-running updates the table', async () => {
    const page = await openAndPlan(`${server.url}/`);
    const before = await args(page);
    await page.fill(field('training.global_batch_size'), '512');
    await planAndWait(page);
    const after = await args(page);
    assert.notEqual(after, before);
    assert.match(after, /--global-batch-size 512\b/);
    // Sorting by a header reorders without losing rows.
    const n = await page.locator('table.plans tbody tr').count();
    await page.click('table.plans th button[data-sort="mem"]');
    assert.equal(await page.locator('table.plans tbody tr').count(), n);
    assert.equal(await page.getAttribute('table.plans th:has(button[data-sort="mem"])', 'aria-sort'), 'ascending');
  });

  test('a long search can be cancelled and a new search then works', async () => {
    const page = await openAndPlan(`${server.url}/`);
    const big = (await selectPreset(page, 'cluster', 'mixed-2048')) && (await selectPreset(page, 'model', 'deepseek-v3'));
    assert.ok(big, 'presets mixed-2048 and deepseek-v3 exist');
    // A search wide enough to run for tens of seconds (about a minute natively).
    await page.fill(field('training.global_batch_size'), '4096');
    await page.click('#scenario-form summary:has-text("Constraints")');
    await page.fill(field('search.micro_batch_size'), '1, 2, 4, 8');
    await page.fill(field('search.vpp'), '1, 2, 3, 4, 5, 6, 7, 8');
    const before = await runs(page);
    await page.click('#plan-btn');
    await page.waitForFunction(() => document.body.dataset.state === 'running' &&
      /Searching|evaluated/.test(document.querySelector('#run-status').textContent), null, { timeout: 20_000 });
    // The page stays responsive while the worker searches.
    const t0 = Date.now();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    assert.ok(Date.now() - t0 < 2000, 'main thread responsive during search');
    await page.click('#cancel-btn');
    await waitRuns(page, before, 5000);
    assert.match(await page.textContent('#run-status'), /cancelled/i);
    assert.equal(await page.isDisabled('#plan-btn'), false);
    await selectPreset(page, 'model', 'mixtral-s');
    await selectPreset(page, 'cluster', '16-1');
    await page.fill(field('training.global_batch_size'), '256');
    await page.fill(field('search.micro_batch_size'), '');
    await page.fill(field('search.vpp'), '');
    await planAndWait(page);
    assert.match(await page.textContent('#run-status'), /Done/);
    // The best plan's command: Megatron-LM arguments, or FlagScale's config when a FlagScale plan
    // within the memory margin ranks first (Mixtral-S on 16-1 in auto mode: 13.15 s vs 16.46 s).
    const command = await page.textContent('#megatron-args, #flagscale-yaml');
    assert.match(command, /--tensor-model-parallel-size|tensor_model_parallel_size/);
  });

  test('the share link restores every field and the same best plan in a fresh context', async () => {
    const page = await openAndPlan(`${server.url}/`);
    await page.fill(field('training.global_batch_size'), '128');
    await page.fill(field('cluster.groups[0].nodes'), '2');
    await page.click('#scenario-form details summary:has-text("Model fields")');
    await page.fill(field('model.moe_router_topk'), '1');
    await planAndWait(page);
    const url = page.url();
    assert.match(url, /#s=v1\./);
    const values = await formValues(page);
    const best = await args(page);
    const other = await openAndPlan(url);
    assert.deepEqual(await formValues(other), values);
    assert.equal(await args(other), best);
  });

  test('invalid input is reported at its field and nothing typed is lost', async () => {
    const page = await openAndPlan(`${server.url}/`);
    await page.fill(field('training.global_batch_size'), '-5');
    await planAndWait(page);
    const gbsError = page.locator(`.field-error[data-error-for="training.global_batch_size"]`);
    assert.equal(await gbsError.count(), 1);
    assert.ok((await gbsError.textContent()).length > 0);
    assert.equal(await page.getAttribute(field('training.global_batch_size'), 'aria-invalid'), 'true');
    assert.equal(await page.inputValue(field('training.global_batch_size')), '-5');

    await page.fill(field('training.global_batch_size'), '256');
    await page.fill(field('cluster.groups[1].nodes'), '0');
    await planAndWait(page);
    assert.equal(await page.locator(`.field-error[data-error-for="cluster.groups[1].nodes"]`).count(), 1);
    assert.equal(await page.inputValue(field('cluster.groups[1].nodes')), '0');
    assert.equal(await page.inputValue(field('training.global_batch_size')), '256');
  });

  test('a Hugging Face config.json can be imported as a custom model and planned', async () => {
    const page = await openAndPlan(`${server.url}/`);
    const config = {
      architectures: ['MixtralForCausalLM'], _name_or_path: 'test/mixtral-tiny', hidden_act: 'silu', hidden_size: 4096,
      intermediate_size: 14336, num_attention_heads: 32, num_hidden_layers: 16, num_key_value_heads: 8,
      num_local_experts: 8, num_experts_per_tok: 2, vocab_size: 32000, tie_word_embeddings: false,
    };
    await page.setInputFiles('.hf-file', { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) });
    // the file is read asynchronously: wait for the form to take it
    await page.waitForFunction((sel) => document.querySelector(sel)?.value === '16', field('model.num_layers'), { timeout: 10_000 });
    assert.equal(await page.inputValue(field('model.num_layers')), '16');
    assert.equal(await page.inputValue(field('model.num_experts')), '8');
    await planAndWait(page);
    assert.match(await page.textContent('#run-status'), /Done/);
    assert.match(await args(page), /--num-layers 16\b/);
  });

  test('no console errors and every request stayed on 127.0.0.1', () => {
    assert.deepEqual(consoleErrors, []);
    assert.ok(requests.some((u) => u.endsWith('/hapmoe.js')), 'worker requests are observed');
    const offsite = requests.filter((u) => {
      if (/^(data|blob):/.test(u)) return false;
      try { return new URL(u).hostname !== '127.0.0.1'; } catch { return true; }
    });
    assert.deepEqual(offsite, []);
  });
});
