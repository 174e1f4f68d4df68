// Keyboard only (issue 22, item 13), in headless Chromium at 1440 x 1000: skip links are the
// first tab stops and show when focused; through them the Plan button, the first plan row and
// the command's Copy button are a handful of key presses away; the plans table's header is one
// tab stop (arrow keys move along it) with one help toggle for every column. Tab counts before
// this change: 50 to Plan, 86 to the first plan row, 105 to Copy (46, 82, 101 in the issue).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, openAndPlan } from './harness.mjs';

let h;

/** Presses Tab from the top of a freshly loaded page until matches(activeElement); the count. */
async function tabsTo(page, selector, max = 200) {
  for (let n = 1; n <= max; n++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, selector)) return n;
  }
  return Infinity;
}

const TARGETS = {
  plan: '#plan-btn',
  row: '#plans tbody tr[data-index="0"]',
  copy: '#megatron button.copy',
};

describe('keyboard', { timeout: 240_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('the first tab stops are the skip links, off screen until focused', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    const box = () => page.evaluate(() => {
      const r = document.activeElement.getBoundingClientRect();
      return { text: document.activeElement.textContent, onScreen: r.bottom > 0 && r.top >= 0 && r.left >= 0 && r.width > 0 };
    });
    const offScreen = await page.$$eval('.skip-links a', (as) => as.every((a) => a.getBoundingClientRect().bottom <= 0));
    assert.ok(offScreen, 'the skip links are out of sight before they have the focus');
    const seen = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      seen.push(await box());
    }
    assert.deepEqual(seen.map((s) => s.text), ['Skip to plans', 'Skip to command', 'Skip to the Plan button']);
    assert.ok(seen.every((s) => s.onScreen), JSON.stringify(seen));
  });

  test('through the skip links the Plan button, the first plan row and Copy are at most 4 key presses away', async () => {
    const presses = {};
    for (const [name, link] of [['row', 'a[data-skip="plans"]'], ['copy', 'a[data-skip="command"]'], ['plan', 'a[data-skip="run"]']]) {
      const page = await openAndPlan(h, `${h.url}/`);
      const url = page.url();
      const tabs = await tabsTo(page, link, 10);
      await page.keyboard.press('Enter');
      assert.equal(await page.evaluate((sel) => document.activeElement.matches(sel), TARGETS[name]), true, `${link} leads to ${TARGETS[name]}`);
      assert.equal(page.url(), url, 'a skip link leaves the URL (the scenario) alone');
      const inView = await page.evaluate(() => { const r = document.activeElement.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; });
      assert.ok(inView, `${name} scrolled into view`);
      presses[name] = tabs + 1;
      await page.close();
    }
    console.log(`key presses via skip links (Tab + Enter): ${JSON.stringify(presses)}`);
    assert.deepEqual(presses, { row: 2, copy: 3, plan: 4 });
  });

  test('Tab alone: fewer stops than before (the plans header is one stop, not one per column)', async () => {
    const counts = {};
    for (const [name, sel] of Object.entries(TARGETS)) {
      const page = await openAndPlan(h, `${h.url}/`);
      counts[name] = await tabsTo(page, sel);
      await page.close();
    }
    console.log(`Tab presses from the top (before: plan 50, row 86, copy 105): ${JSON.stringify(counts)}`);
    // Fields added since those counts (issue 24): each of the 2 groups' price and billing, their 2
    // header help buttons, the objective and the training tokens with their help buttons.
    const added = 10;
    assert.ok(counts.plan <= 53 + added, `Plan after ${counts.plan} Tabs`);  // the form's fields, and the 3 skip links
    assert.ok(counts.row <= counts.plan + 12, `first plan row after ${counts.row} Tabs`);
    assert.ok(counts.copy <= counts.row + 24, `Copy after ${counts.copy} Tabs`);
    assert.ok(counts.row < 86 - 20 + added && counts.copy < 105 - 20 + added, JSON.stringify(counts));
  });

  test('the plans header: one tab stop, arrow keys along it, Enter sorts; one toggle explains every column', async () => {
    const page = await openAndPlan(h, `${h.url}/`);
    await page.focus('#plans button.help-all');
    const stops = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      stops.push(await page.evaluate(() => {
        const a = document.activeElement;
        return a.closest('thead') ? `thead:${a.dataset.sort}` : a.closest('tbody') ? 'tbody' : a.matches('.table-wrap') ? 'region' : a.tagName;
      }));
    }
    const headStops = stops.slice(0, stops.indexOf('tbody')).filter((s) => s.startsWith('thead'));
    assert.deepEqual(headStops, ['thead:rank'], `tab stops before the first row: ${stops.join(', ')}`);
    await page.focus('table.plans thead button[data-sort="rank"]');
    // The header's columns depend on the result (e.g. one mesh column for per-stage meshes): as
    // many steps right as the iteration time's place in the header.
    const keys = await page.$$eval('table.plans thead button[data-sort]', (bs) => bs.map((b) => b.dataset.sort));
    assert.ok(keys.indexOf('time') > 0, keys.join(','));
    for (let i = 0; i < keys.indexOf('time'); i++) await page.keyboard.press('ArrowRight');
    const key = await page.evaluate(() => document.activeElement.dataset.sort);
    assert.equal(key, 'time', `${keys.indexOf('time')} steps right of # is the iteration time`);
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('table.plans th:has(button[data-sort="time"])', 'aria-sort'), 'ascending');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.sort), 'time', 'the focus stays on the sorted column');
    assert.deepEqual(await page.$$eval('table.plans thead button', (bs) => bs.filter((b) => b.tabIndex >= 0).map((b) => b.dataset.sort)), ['time']);
    await page.keyboard.press('End');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.sort), 'vsUni');
    await page.keyboard.press('Home');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.sort), 'rank');
    // The help toggle.
    await page.focus('#plans button.help-all');
    await page.keyboard.press('Enter');
    const help = await page.textContent('#plans .help-pop');
    for (const name of ['Parallel mesh', 'Layers per stage', 'Iteration time', 'MFU', 'Memory headroom', 'vs uniform', 'Compare']) {
      assert.ok(help.includes(name), `the help names ${name}`);
    }
    await page.keyboard.press('Enter');
    assert.equal(await page.isHidden('#plans .help-pop'), true, 'the toggle closes it again');
  });
});
