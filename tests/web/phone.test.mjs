// A phone, 390 x 844 (issue 22, item 10), in headless Chromium: the first screen says what the
// best plan is and jumps to the plans (which come after the form, far down); the emitted commands
// never wrap inside a flag (one "--flag value" per line; what is wider scrolls inside its block),
// and their text is unchanged. ("tap or hover" in the paper's view: reproduce.test.mjs.)
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, openAndPlan, overflowX, screenshot, PHONE } from './harness.mjs';

let h;

describe('phone', { timeout: 180_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('a link in the first screen names the best plan and jumps to it; the URL stays the scenario', async () => {
    const page = await openAndPlan(h, `${h.url}/`, { viewport: PHONE, hasTouch: true, isMobile: true });
    await page.evaluate(() => window.scrollTo(0, 0));
    const m = await page.evaluate(() => {
      const link = document.querySelector('#jump-plans');
      const r = link?.getBoundingClientRect();
      return { shown: !!link && !link.hidden && r.height > 0, top: r?.top, bottom: r?.bottom, text: link?.textContent,
        rowTop: document.querySelector('#plans tbody tr').getBoundingClientRect().top + scrollY,
        best: document.querySelector('[elementtiming="plan-summary"]').textContent };
    });
    assert.ok(m.rowTop > PHONE.height, `the first plan starts ${m.rowTop} px down, below the first screen`);
    assert.ok(m.shown && m.top >= 0 && m.bottom <= PHONE.height / 3, `the jump link in the first screen's top third: ${JSON.stringify(m)}`);
    assert.match(m.text, /Best plan: \d+\.\d{3} s per iteration/);
    assert.ok(m.text.includes(m.best.replace(' s', '')), `"${m.text}" names the best plan (${m.best})`);
    const url = page.url();
    await page.tap('#jump-plans');
    const after = await page.evaluate(() => {
      const r = document.activeElement.getBoundingClientRect();
      return { focused: document.activeElement.matches('#plans tbody tr.selected'), top: r.top, bottom: r.bottom };
    });
    assert.ok(after.focused, 'the selected plan row has the focus');
    assert.ok(after.top >= 0 && after.bottom <= PHONE.height, `the plan row is on screen: ${JSON.stringify(after)}`);
    assert.equal(page.url(), url, 'the hash (the scenario) is unchanged');
    await screenshot(page, 'phone-jumped');
  });

  test('commands never wrap inside a flag: one flag per line, wider lines scroll inside the block', async () => {
    const page = await openAndPlan(h, `${h.url}/`, { viewport: PHONE });
    const m = await page.evaluate(() => [...document.querySelectorAll('#megatron pre')].map((pre) => {
      const cs = getComputedStyle(pre);
      const lineHeight = parseFloat(cs.lineHeight);
      const flags = [...pre.querySelectorAll('.flag')];
      return {
        id: pre.id, whiteSpace: cs.whiteSpace, overflowX: cs.overflowX, scrolls: pre.scrollWidth > pre.clientWidth,
        flags: flags.length,
        // A flag on more than one line box wrapped inside itself.
        wrapped: flags.filter((f) => f.textContent.trim() && f.getBoundingClientRect().height > 1.5 * lineHeight).map((f) => f.textContent),
        layout: flags.find((f) => f.textContent.startsWith('--pipeline-model-parallel-layout'))?.textContent.trim(),
        text: pre.textContent,
      };
    }));
    const args = m.find((p) => p.id === 'megatron-args');
    assert.ok(args && args.flags > 40, 'the arguments, one span per flag');
    for (const p of m) {
      assert.equal(p.whiteSpace, 'pre', `${p.id} keeps its lines`);
      assert.equal(p.overflowX, 'auto', `${p.id} scrolls sideways when wider`);
      assert.deepEqual(p.wrapped, [], `${p.id}: flags wrapped inside themselves`);
    }
    assert.ok(m.some((p) => p.scrolls), 'the long lines scroll inside their block');
    assert.equal(await overflowX(page), 0, 'the page itself never scrolls sideways');
    // The text (what Copy and Download take) is the core's, one line of arguments.
    assert.equal(args.text.split('\n').length, 1);
    assert.match(args.text, /^--tensor-model-parallel-size \d+ --pipeline-model-parallel-size \d+ /);
    const layout = m.map((p) => p.layout).find(Boolean);
    if (layout) assert.match(layout, /^--pipeline-model-parallel-layout "[^"]+"$/);
    await screenshot(page, 'phone-commands');
  });
});
