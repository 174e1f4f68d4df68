// Runtime "auto", the page's default (issue 21): the upstream Megatron-LM plans are shown first,
// then both runtimes' plans ranked together, each row tagged with the runtime that runs it;
// nothing slower above something faster on the same side of the memory margin.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, openAndPlan, waitRuns, runs } from './harness.mjs';

let h;

/** Records every value of body[data-phase] and every plans-table rendering, from the start. */
function recordPhases() {
  window.__phases = [];
  new MutationObserver(() => {
    const p = document.body?.dataset.phase;
    if (p && window.__phases.at(-1) !== p) window.__phases.push(p);
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-phase'] });
}

/** The shown rows: [runtime tag, time s, tight]. */
const rows = (page) => page.$$eval('table.plans tbody tr', (trs) => trs.map((tr) => ({
  tag: tr.querySelector('.c-rank .runtime-tag')?.textContent || '',
  time: Number(tr.querySelector('.c-time').textContent),
  tight: tr.querySelector('.c-head.tight') != null,
})));

function assertRanked(list) {
  for (let i = 1; i < list.length; i++) {
    assert.ok(!list[i - 1].tight || list[i].tight, `row ${i + 1} within the margin after a tight row`);
    if (list[i - 1].tight === list[i].tight) assert.ok(list[i - 1].time <= list[i].time, `row ${i} ${list[i - 1].time} s above row ${i + 1} ${list[i].time} s`);
  }
}

describe('runtime auto', { timeout: 300_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('the default is auto: upstream plans first, then both runtimes ranked together with their tags', async () => {
    const page = await h.newPage();
    await page.addInitScript(recordPhases);
    await page.goto(`${h.url}/`);
    await waitRuns(page, 0);
    assert.equal(await page.isChecked('.mode-choice input[value="auto"]'), true);
    assert.deepEqual(await page.evaluate(() => window.__phases), ['flagscale'], 'the FlagScale half ran after the upstream plans were shown');
    assert.equal(await page.evaluate(() => document.body.dataset.phase), undefined);
    const list = await rows(page);
    assert.ok(list.length > 1);
    for (const r of list) assert.match(r.tag, /^(MLM|FS)$/);
    assertRanked(list);
    assert.match(await page.textContent('#results'), /runtime of the best plan/);
    assert.deepEqual(h.errors, []);
    // The link carries the runtime: opened again, it is still auto.
    const again = await openAndPlan(h, page.url());
    assert.equal(await again.isChecked('.mode-choice input[value="auto"]'), true);
  });

  test('across vendors a FlagScale plan ranks first and the summary says what it gains over upstream', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const n = await runs(page);
    await page.selectOption('#preset-cluster', 'mi300x-h100-32');
    await page.click('#plan-btn');
    await waitRuns(page, n);
    const list = await rows(page);
    assert.equal(list[0].tag, 'FS');
    assertRanked(list);
    const text = await page.textContent('#results');
    assert.match(text, /FlagScale/);
    assert.match(text, /gains \d(\.\d+)?x over the best upstream Megatron-LM plan/);
    assert.doesNotMatch(text, /gains 0\.\d/);
  });
});
