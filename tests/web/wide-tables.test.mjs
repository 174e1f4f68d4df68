// Desktop tables at 1440 px (issue 22, item 7) in headless Chromium: the GPU-groups table shows
// every column (Memory and Reserved too) inside the form panel, each value and each GPU id in
// full; a hetero result's plans table names every GPU group's mesh and fits its box.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, openAndPlan, linkFor, SCENARIO, DESKTOP } from './harness.mjs';

let h;

describe('desktop tables at 1440 px', { timeout: 240_000 }, () => {
  before(async () => { h = await startHarness(); });
  after(async () => { await h?.close(); });

  test('the GPU-groups table shows all its columns, values and GPU ids without scrolling', async () => {
    assert.equal(DESKTOP.width, 1440);
    const twoA100s = SCENARIO({}, { cluster: { groups: [{ gpu: 'a100-sxm-40gb', nodes: 2, gpus_per_node: 8 }, { gpu: 'a100-sxm-80gb', nodes: 2, gpus_per_node: 8 }] } });
    const page = await openAndPlan(h, `${h.url}/${await linkFor(twoA100s)}`);
    const m = await page.evaluate(() => {
      const t = document.querySelector('table.groups');
      const box = t.getBoundingClientRect();
      const inside = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.left >= box.left - 0.5 && r.right <= box.right + 0.5; };
      const ctx = document.createElement('canvas').getContext('2d');
      return {
        overflow: t.scrollWidth - t.clientWidth,
        headers: [...t.querySelectorAll('thead th')].map((th) => ({ text: th.textContent, inside: inside(th) })),
        inputs: [...t.querySelectorAll('tbody input')].map((i) => ({ field: i.dataset.field, value: i.value, inside: inside(i), full: i.scrollWidth <= i.clientWidth })),
        billed: [...t.querySelectorAll('tbody select[data-col="billed"]')].map((sel) => ({ text: sel.selectedOptions[0].text, inside: inside(sel), full: sel.scrollWidth <= sel.clientWidth })),
        selects: [...t.querySelectorAll('tbody select[data-col="gpu"]')].map((sel) => {
          const cs = getComputedStyle(sel);
          ctx.font = cs.font;
          const text = sel.options[sel.selectedIndex].text;
          // The text, its padding and the drop-down arrow (about 20 px) within the closed select.
          const needed = ctx.measureText(text).width + parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight) + 24;
          return { text, needed: Math.round(needed), width: sel.clientWidth, inside: inside(sel), spec: sel.parentElement.querySelector('.gpu-spec').textContent };
        }),
      };
    });
    assert.ok(m.overflow <= 0, `the table scrolls ${m.overflow} px sideways`);
    for (const name of ['GPU', 'Nodes', 'GPUs / node', 'GPUs / host', 'Inter-node', 'Memory', 'Reserved', 'Price', 'Billed']) {
      const th = m.headers.find((x) => x.text.startsWith(name));
      assert.ok(th?.inside, `header ${name} shown inside the table: ${JSON.stringify(th)}`);
    }
    assert.equal(m.inputs.length, 14, 'seven inputs per group (six numbers and the price)');
    assert.deepEqual(m.billed.map((b) => b.text), ['GPUs used', 'GPUs used']);
    for (const b of m.billed) assert.ok(b.inside && b.full, `billing choice shown in full: ${JSON.stringify(b)}`);
    for (const i of m.inputs) assert.ok(i.inside && i.full, `input ${i.field} (${i.value}) shown in full: ${JSON.stringify(i)}`);
    assert.ok(m.inputs.some((i) => /groups\[0\]\.gpu\.memory_gib/.test(i.field) && /^39\.\d+$/.test(i.value)), 'the 40 GB A100 shows its memory');
    assert.ok(m.inputs.some((i) => /groups\[1\]\.gpu\.memory_gib/.test(i.field) && i.value === '80'));
    assert.deepEqual(m.selects.map((s) => s.text.match(/\(([^)]+)\)$/)?.[1]), ['a100-sxm-40gb', 'a100-sxm-80gb']);
    for (const s of m.selects) {
      assert.ok(s.inside && s.needed <= s.width, `"${s.text}" needs ${s.needed} px of its ${s.width}`);
      assert.match(s.spec, /^a100-sxm-[48]0gb · /, 'the id also in full under the select');
    }
  });

  test('a hetero result\'s plans table names every GPU group\'s mesh and does not overflow', async () => {
    const hetero = SCENARIO({ global_batch_size: 512 }, { model: 'mixtral-l', cluster: '16-2', search: { mode: 'hetero', top_k: 5 } });
    const page = await openAndPlan(h, `${h.url}/${await linkFor(hetero)}`);
    const m = await page.evaluate(() => {
      const table = document.querySelector('table.plans');
      const row = table.querySelector('tbody tr[data-index="0"]');
      return {
        overflow: table.scrollWidth - table.parentElement.clientWidth,
        wrapWidth: table.parentElement.clientWidth,
        meshes: [...row.querySelectorAll('.c-meshes .group-mesh')].map((g) => g.textContent),
        pp: Number(row.querySelector('.c-pp').textContent),
        // The selected plan's stages (plan 0): GPU and FlagScale mesh of each, from the stage table.
        stages: [...document.querySelectorAll('table.stages tbody tr')].map((tr) => [tr.cells[1].textContent, tr.cells[4].textContent]),
      };
    });
    assert.ok(m.overflow <= 0, `the plans table is ${m.overflow} px wider than its ${m.wrapWidth} px box`);
    assert.ok(m.stages.length >= 2 && m.stages.every(([, mesh]) => /^tp\d+ ep\d+ etp\d+ dp\d+$/.test(mesh)), JSON.stringify(m.stages));
    assert.ok(new Set(m.stages.map(([gpu]) => gpu)).size >= 2, 'the plan spans two GPU types');
    for (const [gpu, mesh] of m.stages) {
      const [, tp, ep, , dp] = mesh.match(/^tp(\d+) ep(\d+) etp(\d+) dp(\d+)$/);
      assert.ok(m.meshes.some((g) => g.startsWith(`${gpu} ×`) && g.includes(`TP${tp} `) && g.includes(`EP${ep} `) && g.endsWith(`DP${dp}`)),
        `stage on ${gpu} (${mesh}) among ${m.meshes.join(' | ')}`);
    }
    const stagesListed = m.meshes.reduce((n, g) => n + Number(g.match(/×(\d+)/)[1]), 0);
    assert.equal(stagesListed, m.pp, 'the groups hold all PP stages');
  });
});
