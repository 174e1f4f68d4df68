// The page's form against the core's field schema: every field the page shows exists in the
// schema (pure, needs build/hapmoe), and in headless Chromium the form shows the schema's
// defaults, ranges and units, with help reachable by keyboard (needs dist/).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/static-server.mjs';
import {
  MODEL_GROUPS, TRAINING_MAIN, TRAINING_MORE, SEARCH_MAIN, SEARCH_MORE, indexSchema, fieldDef, fieldDefs,
} from '../../web/fields.js';
import { COLUMNS } from '../../web/cluster-form.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');
const ROOTS = (process.env.HAPMOE_DIST || path.join(REPO, 'dist')).split(path.delimiter).map((r) => path.resolve(REPO, r));
const schemaJson = JSON.parse(execFileSync(CLI, ['schema', '--json'], { encoding: 'utf8' }));
const schema = indexSchema(schemaJson);

test('every field the page shows is in the schema, with a kind the form can render', () => {
  const defs = [
    ...MODEL_GROUPS.flatMap((g) => fieldDefs(schema, 'model', g.fields)),
    ...fieldDefs(schema, 'training', [...TRAINING_MAIN, ...TRAINING_MORE]),
    ...fieldDefs(schema, 'search', [...SEARCH_MAIN, ...SEARCH_MORE]),
    ...COLUMNS.map(([p, label]) => fieldDef(schema, p, label)),
    fieldDef(schema, 'search.recompute', 'Recompute'), fieldDef(schema, 'cluster.inter_group_gbps', 'x'),
  ];
  for (const d of defs) {
    assert.ok(['int', 'num', 'bool', 'text', 'select', 'list', 'words', 'checks', 'json'].includes(d.kind), d.path);
    assert.ok(d.help.length > 10, d.path);
    if (d.kind === 'select' || d.kind === 'checks') assert.ok(d.options.length > 0, d.path);
  }
  // Every training field of the schema is on the page (nothing the user cannot set).
  const shown = new Set(defs.map((d) => d.path));
  for (const f of schemaJson.fields) {
    if (f.path.startsWith('training.') && f.type !== 'object') assert.ok(shown.has(f.path), f.path);
  }
  assert.throws(() => fieldDef(schema, 'training.no_such_field', 'x'), /no_such_field/);
});

describe('form built from the schema', { timeout: 120_000 }, () => {
  let server, browser, page;
  before(async () => {
    server = await startServer(ROOTS);
    browser = await chromium.launch({ executablePath: process.env.HAPMOE_CHROMIUM || '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu'], headless: true });
    page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForSelector('[data-field="training.moe_load_imbalance"]', { timeout: 60_000 });
  });
  after(async () => { await browser?.close(); await server?.close(); });

  test('defaults, ranges and units come from the schema', async () => {
    const row = (p) => schemaJson.fields.find((f) => f.path === p);
    const imb = '[data-field="training.moe_load_imbalance"]';
    assert.equal(Number(await page.inputValue(imb)), row('training.moe_load_imbalance').default);
    assert.equal(await page.getAttribute(imb, 'min'), String(row('training.moe_load_imbalance').min));
    assert.equal(await page.inputValue('[data-field="search.top_k"]'), String(row('search.top_k').default));
    const options = await page.$$eval('[data-field="training.moe_token_dispatcher_type"] option', (os) => os.map((o) => o.value));
    assert.deepEqual(options, row('training.moe_token_dispatcher_type').allowed);
    const recompute = await page.$$eval('[data-field="search.recompute"] input', (cs) => cs.map((c) => c.value));
    assert.deepEqual(recompute, row('search.recompute').allowed);
    const unit = await page.textContent('.field:has([data-field="training.seq_length"]) .unit');
    assert.equal(unit, row('training.seq_length').unit);
  });

  test('help opens and closes from the keyboard, with aria-expanded and aria-controls', async () => {
    const button = page.locator('.field:has([data-field="training.global_batch_size"]) .help-toggle');
    const noteId = await button.getAttribute('aria-controls');
    const note = page.locator(`#${noteId}`);
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await note.isVisible(), false);
    await button.focus();
    await page.keyboard.press('Enter');
    assert.equal(await button.getAttribute('aria-expanded'), 'true');
    assert.equal(await note.isVisible(), true);
    assert.equal(await note.textContent(), schemaJson.fields.find((f) => f.path === 'training.global_batch_size').help);
    await page.keyboard.press('Space');
    assert.equal(await button.getAttribute('aria-expanded'), 'false');
    assert.equal(await note.isVisible(), false);
  });
});
