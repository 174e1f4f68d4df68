// A custom GPU in the form (issue 22, item 11), in headless Chromium: "Custom GPU…" in a group's
// GPU list opens its fields (unit, range and help from the field schema), an out-of-range value
// is named with its field, the plan runs on the custom GPU's figures (checked against the CLI)
// and the share link carries the GPU so that opening it shows the same fields.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { startHarness, openAndPlan, waitRuns, runs, field, linkFor, SCENARIO, REPO } from './harness.mjs';

const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');
const hashScenario = (page) => page.evaluate(async () => (await (await import('./url-state.js')).decodeHash(location.hash))?.scenario);
const AXE = path.join(REPO, 'node_modules/axe-core/axe.min.js');
let h;

describe('custom GPU', { timeout: 240_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('the GPU list names vendor and memory; a custom GPU has fields with units, ranges and help, and out-of-range values are refused beside the field', async () => {
    const scenario = SCENARIO({}, { cluster: { groups: [{ gpu: 'h100-sxm', nodes: 2, gpus_per_node: 8 }] } });
    const page = await openAndPlan(h, `${h.url}/${await linkFor(scenario)}`);
    const select = page.locator(field('cluster.groups[0].gpu'));
    const labels = await select.locator('option').allTextContents();
    assert.ok(labels.includes('NVIDIA H100 SXM5 80GB, 80 GiB (h100-sxm)'), labels.join(' | '));
    assert.ok(labels.includes('AMD Instinct MI300X 192GB, 192 GiB (mi300x)'));
    assert.equal(labels.at(-1), 'Custom GPU…');
    const editor = page.locator('.custom-gpu');
    assert.equal(await editor.isVisible(), false);
    const n = await runs(page);
    await select.selectOption('');
    assert.equal(await editor.isVisible(), true);
    // Started from the row's preset: the H100's figures, each with its unit and range.
    assert.equal(await page.inputValue(field('cluster.groups[0].gpu.bf16_tflops')), '989');
    const text = await editor.innerText();
    for (const s of ['Dense BF16', 'TFLOPS', 'HBM bandwidth', 'GB/s', 'Scale-up bandwidth', 'Scale-out bandwidth', '1–100000']) assert.ok(text.includes(s), s);
    assert.equal(await editor.locator('button.help-toggle').count(), 8);
    await page.fill(field('cluster.groups[0].gpu.bf16_tflops'), '0');
    // Refused with the range, beside the field it names (its label), and the plans marked stale.
    const note = editor.locator('.field-error[data-error-for="cluster.groups[0].gpu.bf16_tflops"]');
    await note.waitFor({ timeout: 20_000 });
    assert.match(await note.innerText(), /1 to 100000/);
    assert.match(await note.evaluate((el) => el.closest('.field').querySelector('label').textContent), /Dense BF16/);
    assert.equal(await page.getAttribute(field('cluster.groups[0].gpu.bf16_tflops'), 'aria-invalid'), 'true');
    const m = await runs(page);
    await page.fill(field('cluster.groups[0].gpu.name'), 'Half H100');
    await page.fill(field('cluster.groups[0].gpu.bf16_tflops'), '494.5');
    await waitRuns(page, m);
    assert.equal(await editor.locator('.field-error').count(), 0);
    for (let i = 0; i < 100 && (await hashScenario(page))?.cluster?.groups?.[0]?.gpu?.bf16_tflops !== 494.5; i++) await page.waitForTimeout(100);
    const sent = await hashScenario(page);
    const gpu = sent.cluster.groups[0].gpu;
    assert.equal(gpu.name, 'Half H100');
    assert.equal(gpu.bf16_tflops, 494.5);
    assert.equal(gpu.preset, undefined, 'an inline GPU spec, not a preset override');
    // The page's best plan is the core's for that scenario.
    await page.waitForFunction(() => document.body.dataset.state === 'idle');
    const [cli] = JSON.parse(execFileSync(CLI, ['plan', '-', '--json'], { input: JSON.stringify(sent) })).plans;
    assert.match(await page.textContent('#summary'), new RegExp(cli.metrics.iteration_time_s.toFixed(3).replace('.', '\\.') + ' s'));
    // The share link opens with the custom GPU and its fields.
    const other = await openAndPlan(h, page.url(), { bypassCSP: true });
    assert.match(await other.locator(`${field('cluster.groups[0].gpu')} option:checked`).innerText(), /custom: Half H100/);
    assert.equal(await other.inputValue(field('cluster.groups[0].gpu.bf16_tflops')), '494.5');
    assert.equal(await other.locator('.custom-gpu').isVisible(), true);
    // axe-core: no violation of any impact with the custom GPU's fields shown.
    await other.addScriptTag({ path: AXE });
    const found = await other.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`));
    assert.deepEqual(found, []);
  });
});
