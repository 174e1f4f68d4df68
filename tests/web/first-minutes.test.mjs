// The page's first ten minutes (issue 22) in headless Chromium: sizes next to the plan, the memory
// margin, Hugging Face import (mapped, refused, pasted), downloads, stale results, axe-core.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startHarness, openAndPlan, waitRuns, runs, field, linkFor, SCENARIO, PHONE, REPO } from './harness.mjs';

let h;
const AXE = path.join(REPO, 'node_modules/axe-core/axe.min.js');
const fixture = (name) => fs.readFileSync(path.join(REPO, 'tests/hf-configs', `${name}.json`), 'utf8');

/** Every axe-core violation (any impact) on the page as it is now. */
async function violations(page) {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`));
}

describe('first ten minutes', { timeout: 300_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('the plan shows the model size, total and active, with units, and per-stage parameters', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const kpi = await page.textContent('.kpi.model-size');
    assert.match(kpi, /\d+(\.\d+)? [MBT]\s*parameters, \d+(\.\d+)? [MBT] active per token/);
    assert.match(await page.textContent('#detail-title'), /parameters \(.* active\)/);
    const cells = await page.$$eval('table.stages td.c-params', (tds) => tds.map((t) => t.textContent));
    assert.ok(cells.length > 0 && cells.every((c) => /^\d+(\.\d+)? [MBT]$/.test(c)), cells.join(','));
  });

  test('plans above the memory margin carry its flag and rank after those within it', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    await page.fill(field('search.memory_margin_fraction'), '0.3');
    const n = await runs(page);
    await page.click('#plan-btn');
    await waitRuns(page, n);
    const flags = await page.$$eval('table.plans tbody tr', (trs) => trs.map((tr) => tr.querySelector('.flag-tight') != null));
    const firstFlag = flags.indexOf(true);
    if (firstFlag >= 0) assert.ok(flags.slice(firstFlag).every(Boolean), `flags ${flags}`);
    assert.match(await page.textContent('table.plans caption'), /30 % of GPU memory free last/);
  });

  test('HF import: {} and a tokenizer_config.json are refused before the form changes; Llama-4 Maverick maps its interleave', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const layers = await page.inputValue(field('model.num_layers'));
    for (const [name, text] of [['config.json', '{}'], ['tokenizer_config.json', JSON.stringify({ tokenizer_class: 'LlamaTokenizer', chat_template: '' })]]) {
      await page.setInputFiles('.hf-file', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
      await page.waitForFunction(() => /was not imported/.test(document.querySelector('.import-note').textContent));
      assert.match(await page.textContent('.import-note'), /unchanged/);
      assert.equal(await page.inputValue(field('model.num_layers')), layers);
    }
    await page.setInputFiles('.hf-file', { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(fixture('llama-4-maverick')) });
    await page.waitForFunction(() => /Loaded/.test(document.querySelector('.import-note').textContent));
    assert.match(await page.textContent('.import-note'), /Ignored \(no effect on the plan\): .*rope_scaling/);
    assert.equal(await page.inputValue(field('model.ffn_hidden_size')), '16384');
    assert.equal(await page.inputValue(field('model.moe_shared_expert_intermediate_size')), '8192');
  });

  test('HF import: pasted text with a name; MiniMax-M1 refused with the reason', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    await page.click('.hf-paste summary');
    await page.fill('.hf-text', fixture('minimax-m1-80k'));
    await page.click('.hf-apply');
    assert.match(await page.textContent('.import-note'), /linear \("lightning"\) attention/);
    await page.fill('.hf-name', 'My GLM');
    await page.fill('.hf-text', fixture('glm-4.5'));
    await page.click('.hf-apply');
    assert.match(await page.textContent('.import-note'), /Loaded My GLM/);
    assert.equal(await page.inputValue(field('model.name')), 'My GLM');
    assert.equal(await page.inputValue(field('model.moe_router_score_function')), 'sigmoid');
    assert.equal(await page.isChecked(field('model.moe_router_enable_expert_bias')), true);
  });

  test('launch script, hostfile and arguments download as files named by plan; the header names the Megatron-LM version', async () => {
    const page = await openAndPlan(h, `${h.url}/`, { acceptDownloads: true });
    const buttons = await page.$$eval('#megatron button.download', (bs) => bs.map((b) => b.dataset.filename));
    assert.ok(buttons.some((f) => /^hapmoe-.+-plan1-launch\.sh$/.test(f)), buttons.join(','));
    assert.ok(buttons.some((f) => /-hostfile$/.test(f)), buttons.join(','));
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#megatron button.download[data-copy="megatron-launch"]')]);
    assert.match(dl.suggestedFilename(), /launch\.sh$/);
    const text = fs.readFileSync(await dl.path(), 'utf8');
    assert.match(text, /Megatron-LM/);
    assert.match(await page.textContent('#megatron'), /need Megatron-LM core_r0\.1\d\.0 or newer/);
  });

  test('after an invalid input the shown result is marked stale and its Copy/Download buttons are disabled', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    await page.fill(field('training.global_batch_size'), '-5');
    await page.waitForFunction(() => document.querySelector('#results').classList.contains('stale') &&
      document.body.dataset.state === 'idle', null, { timeout: 20_000 });
    await page.waitForTimeout(900);
    assert.equal(await page.isDisabled('#megatron button.copy >> nth=0'), true);
    assert.match(await page.textContent('#stale-note'), /stale/i);
  });

  test('editing a preset cluster\'s groups makes the selector say custom and sends the groups in full', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    await page.click('.add-group');
    assert.equal(await page.$eval('#preset-cluster', (s) => s.options[s.selectedIndex].text), '(custom)');
    const n = await runs(page);
    await page.click('#plan-btn');
    await waitRuns(page, n);
    assert.doesNotMatch(decodeURIComponent(page.url()), /"preset"\s*:\s*"[^"]+"\s*,\s*"groups"/);
  });

  test('the runtime is a visible radio group with the schema\'s modes; GPU options name vendor model and memory', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const radios = await page.$$eval('.mode-choice input[type=radio]', (rs) => rs.filter((r) => r.offsetParent !== null).map((r) => r.value));
    assert.ok(radios.includes('megatron') && radios.includes('hetero'), radios.join(','));
    assert.equal(await page.isChecked('.mode-choice input[value="auto"]'), true);
    const n = await runs(page);
    await page.check('.mode-choice input[value="hetero"]');
    await waitRuns(page, n);
    assert.equal(await page.inputValue(field('search.mode')), 'hetero');
    const option = await page.$eval('table.groups select', (s) => s.options[s.selectedIndex].text);
    assert.match(option, /^(NVIDIA|AMD|Huawei|Intel|Ascend).* \d+ GiB \(/i);
  });

  for (const colorScheme of ['light', 'dark']) {
    test(`axe-core: no violation of any impact on the loaded page (${colorScheme})`, async () => {
      const page = await openAndPlan(h, `${h.url}/`, { colorScheme, bypassCSP: true });
      assert.deepEqual(await violations(page), []);
    });

    test(`axe-core: no violation on the later views: column help, offline notice, skip link, no fit, hetero, phone (${colorScheme})`, async () => {
      const options = { colorScheme, bypassCSP: true };
      const page = await openAndPlan(h, `${h.url}/`, options);
      await page.click('#plans button.help-all');
      await page.waitForFunction(() => /offline/.test(document.querySelector('#app-notice').textContent), null, { timeout: 30_000 });
      await page.focus('.skip-links a');
      assert.deepEqual(await violations(page), [], 'help, notice, skip link');
      const noFit = SCENARIO({}, { model: 'deepseek-v3', cluster: { groups: [{ gpu: 'h100-sxm', nodes: 1, gpus_per_node: 8 }] } });
      const hetero = SCENARIO({ global_batch_size: 512 }, { model: 'mixtral-l', cluster: '16-2', search: { mode: 'hetero', top_k: 5 } });
      for (const [name, link, extra] of [['no fit', await linkFor(noFit), {}], ['hetero', await linkFor(hetero), {}], ['phone', '', { viewport: PHONE }]]) {
        const p = await openAndPlan(h, `${h.url}/${link}`, { ...options, ...extra });
        assert.deepEqual(await violations(p), [], name);
        await p.close();
      }
    });
  }
});
