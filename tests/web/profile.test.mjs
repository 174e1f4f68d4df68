// The page's "Measured profile" section (web/profile-form.js) end to end in headless Chromium:
// nccl-tests outputs and a Megatron-LM log picked on its file inputs go through the core's
// importers (importNccl / importLog in the worker), reach the scenario (link) and the re-planned
// result (measured / extrapolated terms); a file of another kind is refused by name and changes
// nothing; the open section fits a phone's width.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startHarness, openAndPlan, waitRuns, runs, hashScenario, linkFor, overflowX, screenshot, REPO, PHONE } from './harness.mjs';

const PROFILE = path.join(REPO, 'tests/profile');
const NCCL = ['nccl-all-reduce-h100-1x8.txt', 'nccl-alltoall-h100-2x8.txt'].map((f) => path.join(PROFILE, f));
const LOG = path.join(PROFILE, 'qwen3-30b-a3b-h100-16-fp8-run-b.log');
const RUN_B = JSON.parse(fs.readFileSync(path.join(PROFILE, 'qwen3-30b-a3b-h100-16-fp8-run-b.json'), 'utf8'));
/** The run's scenario without its plan (the page searches), on the h100-16 preset (h100-sxm). */
const { plan: RUN_B_PLAN, ...H100 } = RUN_B;

let h;

const openSection = (page) => page.evaluate(() => { document.querySelector('#profile-import').open = true; });
const summaryLines = (page) => page.$$eval('#profile-import .profile-summary li', (li) => li.map((l) => l.textContent));
const note = (page) => page.$eval('#profile-import p[role="status"]', (p) => p.textContent);

/** The plan bundle the page downloads ({scenario, result}). */
async function downloadBundle(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-btn')]);
  return JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
}

describe('measured profile section', { timeout: 300_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('nccl-tests outputs: summary, profile in the link, measured terms in the re-planned result', async () => {
    // EP pinned to 16 (two nodes: the all-to-all points' 16 ranks, inter_node); the search alone
    // picks EP 8 inside a node, which no point covers (nothing measured, rightly).
    const page = await openAndPlan(h, `${h.url}/${await linkFor({ ...H100, search: { ep: 16 } })}`);
    await openSection(page);
    assert.deepEqual(await page.$$eval('#profile-gpu option', (o) => o.map((x) => x.value)), ['h100-sxm']);
    const before = await downloadBundle(page);
    assert.equal(before.scenario.profile, undefined);
    const n = await runs(page);
    await page.setInputFiles('#profile-nccl', NCCL);
    await waitRuns(page, n);
    const lines = await summaryLines(page);
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0], /nccl-all-reduce-h100-1x8\.txt: all_reduce, 8 ranks, intra_node \(1 host\(s\)\), NVIDIA H100[^,]*, \d+ sizes, busbw up to [\d.]+ GB\/s/);
    assert.match(lines[1], /nccl-alltoall-h100-2x8\.txt: all_to_all, 16 ranks, inter_node \(2 host\(s\)\), NVIDIA H100[^,]*, \d+ sizes/);
    assert.equal(await note(page), '');
    const points = Number(lines[1].match(/(\d+) sizes/)[1]);

    // The link carries the imported points for the cluster's GPU.
    const { scenario: linked } = await hashScenario(page);
    const gpu = linked.profile.gpus['h100-sxm'];
    assert.deepEqual([...new Set(gpu.collectives.map((c) => `${c.op}/${c.ranks}/${c.placement}`))].sort(),
      ['all_reduce/8/intra_node', 'all_to_all/16/inter_node']);
    assert.equal(gpu.collectives.filter((c) => c.op === 'all_to_all').length, points);
    assert.match(gpu.source, /nccl-all-reduce-h100-1x8\.txt/);

    // The re-planned result: the best plan's stages name the terms taken from the points.
    const after = await downloadBundle(page);
    assert.deepEqual(after.scenario.profile, linked.profile);
    const stages = after.result.plans[0].breakdown.stages;
    const terms = new Set(stages.flatMap((s) => [...(s.measured || []), ...(s.extrapolated || [])]));
    assert.ok(terms.size > 0, `no measured term in ${JSON.stringify(stages).slice(0, 400)}`);
    for (const t of terms) assert.match(t, /^(forward_s|backward_s|tp_comm_s|ep_comm_s|dp_comm_s)$/);
    assert.equal(after.result.plans[0].plan.ep, 16);
    assert.ok(stages.every((s) => (s.measured || []).includes('ep_comm_s')), JSON.stringify(stages.map((s) => [s.measured, s.extrapolated])));
    assert.deepEqual(before.result.plans[0].breakdown.stages.flatMap((s) => s.measured || []), []);
    // The stage table says so, per stage, in the words of the result.
    const shown = await page.$$eval('#stages tbody tr', (rows) => rows.map((r) => r.querySelector('.profile-terms')?.textContent));
    assert.equal(shown.length, stages.length);
    shown.forEach((text, i) => assert.match(text, /measured: [^;]*\bEP\b/, `stage ${i}: ${text}`));

    // Importing again appends (the merge is per GPU).
    const m = await runs(page);
    await page.setInputFiles('#profile-nccl', NCCL[1]);
    await waitRuns(page, m);
    const again = (await hashScenario(page)).scenario.profile.gpus['h100-sxm'];
    assert.equal(again.collectives.length, gpu.collectives.length + points);
    assert.deepEqual(h.errors, []);
  });

  test('a Megatron-LM log fits the cluster\'s GPU', async () => {
    const page = await openAndPlan(h, `${h.url}/${await linkFor(RUN_B)}`);
    await openSection(page);
    const n = await runs(page);
    await page.setInputFiles('#profile-log', LOG);
    await waitRuns(page, n);
    const lines = await summaryLines(page);
    assert.match(lines[0], /qwen3-30b-a3b-h100-16-fp8-run-b\.log: median [\d.]+ ms per iteration over \d+ logged line\(s\)/);
    assert.match(lines[1], /^h100-sxm: efficiency factors x[\d.]+; iteration [\d.]+ s \(model\) -> [\d.]+ s \(fitted; logged [\d.]+ s\)/);
    assert.equal(await note(page), '');
    // The fitted GPU replaces the preset's in the scenario (the link), and the run's plan is kept.
    const { scenario: linked } = await hashScenario(page);
    const text = JSON.stringify(linked.cluster);
    assert.notEqual(linked.cluster, 'h100-16', 'the cluster now carries the fitted GPU');
    assert.match(text, /h100-sxm/);
    assert.deepEqual(linked.plan, RUN_B_PLAN);
    assert.deepEqual(h.errors, []);
  });

  test('files dropped on the section: a log is told from nccl-tests outputs by its lines', async () => {
    const page = await openAndPlan(h, `${h.url}/${await linkFor(RUN_B)}`);
    await openSection(page);
    const n = await runs(page);
    await page.evaluate(({ name, text }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'text/plain' }));
      document.querySelector('#profile-import').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, { name: path.basename(LOG), text: fs.readFileSync(LOG, 'utf8') });
    await waitRuns(page, n);
    const lines = await summaryLines(page);
    assert.match(lines[0], /run-b\.log: median/);
    assert.match(lines[1], /^h100-sxm: efficiency factors/);
    assert.deepEqual(h.errors, []);
  });

  test('a file of another kind is refused by name and changes nothing', async () => {
    const page = await openAndPlan(h, `${h.url}/${await linkFor(H100)}`);
    await openSection(page);
    const hash = await page.evaluate(() => location.hash);
    const n = await runs(page);
    const notNccl = { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello\nthis is not a benchmark\n') };
    await page.setInputFiles('#profile-nccl', notNccl);
    await page.waitForFunction(() => /Not imported/.test(document.querySelector('#profile-import p[role="status"]').textContent));
    const refusal = await note(page);
    assert.match(refusal, /notes\.txt/, refusal);
    assert.match(refusal, /Collective test starting/, refusal);  // what is missing
    const bad = { name: 'bad.log', mimeType: 'text/plain', buffer: Buffer.from('some other program\nfinished\n') };
    await page.setInputFiles('#profile-log', bad);
    await page.waitForFunction((prev) => document.querySelector('#profile-import p[role="status"]').textContent !== prev, refusal);
    const logRefusal = await note(page);
    assert.match(logRefusal, /^Not imported: .*(bad\.log|iteration|log)/i, logRefusal);
    await page.waitForTimeout(300);
    assert.equal(await runs(page), n, 'no re-plan');
    assert.equal(await page.evaluate(() => location.hash), hash, 'link unchanged');
    assert.equal((await hashScenario(page)).scenario.profile, undefined);
    assert.deepEqual(await summaryLines(page), []);
    assert.deepEqual(h.errors, []);
  });

  test('no horizontal overflow at 390 x 844 with the section open and filled', async () => {
    const page = await openAndPlan(h, `${h.url}/${await linkFor(H100)}`, { viewport: PHONE });
    await openSection(page);
    assert.ok(await overflowX(page) <= 0, `overflow ${await overflowX(page)} px (section open)`);
    const n = await runs(page);
    await page.setInputFiles('#profile-nccl', NCCL);
    await waitRuns(page, n);
    await page.setInputFiles('#profile-nccl', { name: 'x'.repeat(120) + '.txt', mimeType: 'text/plain', buffer: Buffer.from('nothing\n') });
    await page.waitForFunction(() => /Not imported/.test(document.querySelector('#profile-import p[role="status"]').textContent));
    await page.locator('#profile-import').scrollIntoViewIfNeeded();
    await screenshot(page, 'profile-phone');
    assert.ok(await overflowX(page) <= 0, `overflow ${await overflowX(page)} px (summary and refusal shown)`);
    const box = await page.locator('#profile-import').boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, JSON.stringify(box));
  });
});
