// "If a node fails" on the page (issue 24), in headless Chromium: the selected plan's checkpoint
// figures with a checkpoint write bandwidth, the N-1 re-plan button whose table matches the native
// CLI's node-loss answer for the same plan, the fields in the link, no sideways scroll on a phone,
// and axe-core finding nothing with the re-plan shown.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startHarness, openAndPlan, linkFor, hashScenario, overflowX, screenshot, PHONE, REPO } from './harness.mjs';

const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');
const AXE = path.join(REPO, 'node_modules/axe-core/axe.min.js');
const example = JSON.parse(fs.readFileSync(path.join(REPO, 'examples/mixtral-8x7b-priced.json'), 'utf8'));

let h;

describe('if a node fails', { timeout: 300_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('checkpoint figures, and the N-1 re-plan of the selected plan as the CLI gives it', async () => {
    const page = await openAndPlan(h, `${h.url}/${await linkFor(example)}`, { bypassCSP: true });  // axe below
    try {
      const sent = (await hashScenario(page)).scenario;
      assert.equal(sent.training.checkpoint_write_gbps, 20, 'the link carries the checkpoint bandwidth');
      const cli = JSON.parse(execFileSync(CLI, ['plan', '-', '--json'], { input: JSON.stringify(sent) }));
      const x = cli.plans[0].metrics.resilience;
      const figures = await page.textContent('table.resilience');
      assert.ok(figures.includes(`${x.checkpoint_gib.toFixed(1)} GiB`), figures);
      assert.ok(figures.includes(`--save-interval ${x.save_interval_iterations.toLocaleString('en-US')}`), figures);
      assert.ok(figures.includes(`${(100 * x.expected_goodput).toFixed(1)} %`), figures);
      // The re-plan of plan #1 (the one shown), compared with the CLI's for the same plan.
      await page.click('#node-loss-btn');
      await page.waitForSelector('table.node-loss tbody tr', { timeout: 60_000 });
      const rows = await page.$$eval('table.node-loss tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      const want = JSON.parse(execFileSync(CLI, ['node-loss', '-', '--json'], { input: JSON.stringify({ ...sent, plan: cli.plans[0].plan }) }));
      assert.equal(rows.length, want.losses.length);
      want.losses.forEach((l, i) => {
        assert.ok(rows[i][0].includes(l.gpu), rows[i][0]);
        if (l.entry) {
          assert.equal(rows[i][3], l.iteration_time_s.toFixed(3));
          assert.equal(rows[i][4], `×${l.slowdown.toFixed(2)}`);
        } else {
          assert.match(rows[i][2], /No plan fits/);
        }
      });
      assert.match(await page.textContent('#node-loss-status'), /re-plans? done/);
      // Another plan selected: its own figures, the re-plan answer gone.
      await page.click('#plans tbody tr:nth-child(2)');
      assert.equal(await page.$('table.node-loss'), null);
      await page.addScriptTag({ path: AXE });
      await page.click('#node-loss-btn');
      await page.waitForSelector('table.node-loss tbody tr', { timeout: 60_000 });
      const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
        .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`));
      assert.deepEqual(violations, []);
    } catch (err) {
      await screenshot(page, 'failure-desktop');
      throw err;
    } finally {
      await page.context().close();
    }
  });

  test('without a checkpoint bandwidth the section says which field adds the figures; a phone does not scroll sideways', async () => {
    const doc = structuredClone(example);
    delete doc.training.checkpoint_write_gbps;
    const page = await openAndPlan(h, `${h.url}/${await linkFor(doc)}`, { viewport: PHONE });
    try {
      assert.equal(await page.$('table.resilience'), null);
      assert.match(await page.textContent('#failure'), /Checkpoint write bandwidth/);
      await page.click('#node-loss-btn');
      await page.waitForSelector('table.node-loss tbody tr', { timeout: 60_000 });
      assert.ok(await overflowX(page) <= 0, 'no sideways scroll at 390 px');
    } catch (err) {
      await screenshot(page, 'failure-phone');
      throw err;
    } finally {
      await page.context().close();
    }
  });
});
