// Nothing fits (issue 22, item 8), in headless Chromium: over memory, the page asks the core for
// the smallest larger cluster (the same groups with 2, 4, 8 or 16 times their nodes) that has a
// plan, names it with that plan's time and memory (checked against the CLI), highlights the
// group sizes and loads that cluster on request; a rule the core names comes with a sentence and
// the form fields it depends on highlighted, never as a bare rule id.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { startHarness, openAndPlan, waitRuns, runs, linkFor, SCENARIO, REPO, field } from './harness.mjs';

const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');
const cliPlans = (scenario) => JSON.parse(execFileSync(CLI, ['plan', '-', '--json', '--top', '1'], { input: JSON.stringify(scenario) })).plans;
const deepseekOn = (nodes) => SCENARIO({}, { model: 'deepseek-v3', cluster: { groups: [{ gpu: 'h100-sxm', nodes, gpus_per_node: 8 }] } });
let h;

describe('no feasible plan', { timeout: 240_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('over memory: the smallest larger cluster with a plan, the group sizes highlighted, "Use this cluster"', async () => {
    // The core's answers: DeepSeek-V3 fits on 8 nodes of H100 and not on 4.
    assert.equal(cliPlans(deepseekOn(4)).length, 0);
    const [expected] = cliPlans(deepseekOn(8));
    const page = await openAndPlan(h, `${h.url}/${await linkFor(deepseekOn(1))}`);
    const text = await page.innerText('#summary .diagnosis');
    assert.match(text, /It fits on 64 GPUs: each group with 8× its nodes \(32 GPUs did not\)/);
    assert.ok(text.includes(`${expected.metrics.iteration_time_s.toFixed(3)} s per iteration, TP${expected.plan.tp} PP${expected.plan.pp} DP${expected.plan.dp} EP${expected.plan.ep}`), text);
    assert.match(text, /peak memory \d+\.\d of \d+\.\d GiB per GPU/);
    assert.match(text, /Highlighted in the form: Nodes\./);
    assert.deepEqual(await page.$$eval('#scenario-form .is-cause', (els) => els.map((e) => e.dataset.field)), ['cluster.groups[0].nodes']);
    const n = await runs(page);
    await page.click('#summary .use-fit');
    await waitRuns(page, n);
    assert.equal(await page.inputValue(field('cluster.groups[0].nodes')), '8');
    assert.ok(await page.locator('table.plans tbody tr').count() > 0, 'the larger cluster has plans');
    assert.equal(await page.locator('#scenario-form .is-cause').count(), 0, 'the highlight goes with the no-fit result');
  });

  test('over memory: the closest plan with its memory per stage (the CLI\'s figures, GiB per GPU)', async () => {
    // DeepSeek-V3 on one node of 8 H100: the core's closest plan and its breakdown.
    const cli = JSON.parse(execFileSync(CLI, ['plan', '-', '--json'], { input: JSON.stringify(deepseekOn(1)) }));
    const c = cli.diagnosis.closest_plan;
    assert.ok(c && c.stages.length > 0 && c.shortfall_gib > 0, 'the core gives a closest plan');
    const page = await openAndPlan(h, `${h.url}/${await linkFor(deepseekOn(1))}`);
    const box = page.locator('#summary .diagnosis .closest-plan');
    assert.match(await box.innerText(), new RegExp(`TP${c.plan.tp} PP${c.plan.pp} DP${c.plan.dp} EP${c.plan.ep}.*${c.shortfall_gib.toFixed(1)} GiB per GPU over on stage ${c.fullest_stage}`));
    const heads = await box.locator('thead th').allInnerTexts();
    assert.deepEqual(heads, ['Stage', 'GPU', 'Layers', 'Weights (GiB)', 'Gradients (GiB)', 'Optimizer state (GiB)', 'Activations (GiB)',
      'Reserved (GiB)', 'Total (GiB)', 'GPU memory (GiB)', 'Over by (GiB)']);
    const rows = await box.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
    assert.equal(rows.length, c.stages.length);
    const keys = ['weights_gib', 'gradients_gib', 'optimizer_state_gib', 'activations_gib', 'reserved_gib', 'total_gib', 'capacity_gib', 'shortfall_gib'];
    c.stages.forEach((st, i) => {
      assert.deepEqual(rows[i], [String(st.stage), st.gpu, String(st.layers), ...keys.map((k) => st[k].toFixed(1))]);
    });
    assert.equal(await box.locator('tbody tr.fullest').count(), 1);
    assert.match(await box.innerText(), /How it was found: the upstream candidates with the least static memory shortfall/);
  });

  test('a rule the core names comes with a sentence and its form fields highlighted', async () => {
    const tpTooWide = SCENARIO({}, { cluster: { groups: [{ gpu: 'h100-sxm', nodes: 2, gpus_per_node: 4 }] }, search: { tp: [8] } });
    const page = await openAndPlan(h, `${h.url}/${await linkFor(tpTooWide)}`);
    const text = await page.innerText('#summary .diagnosis');
    assert.doesNotMatch(text, /\b[a-z]+(_[a-z0-9]+){2,}\b/, 'no raw rule id');
    assert.match(text, /TP must divide the GPUs of one node/);
    assert.match(text, /Highlighted in the form: TP, GPUs \/ node\./);
    const causes = await page.$$eval('#scenario-form .is-cause', (els) => els.map((e) => [e.dataset.field, e.getClientRects().length > 0]));
    assert.deepEqual(causes.map(([f]) => f).sort(), ['cluster.groups[0].gpus_per_node', 'search.tp']);
    assert.ok(causes.every(([, shown]) => shown), 'highlighted fields are shown (their sections opened)');
    assert.match(await page.$eval(field('search.tp'), (e) => getComputedStyle(e).outlineStyle), /solid/);
    // The search statistics: each pruning counter with the core's sentence, never its id.
    const pruned = await page.locator('#summary details.pruned li').allTextContents();
    assert.ok(pruned.some((li) => /^\d[\d,]* TP must divide the GPUs of one node/.test(li)), pruned.join(' | '));
    for (const li of pruned) assert.doesNotMatch(li, /\b[a-z]+(_[a-z0-9]+)+\b/, 'no raw counter id');
  });
});
