// A hetero plan (FlagScale) on the page's views, in node: the stage table shows each stage's
// mesh, the command view shows the FlagScale configs, hostfile and warnings instead of Megatron
// flags. Needs build/hapmoe (or HAPMOE_CLI) for a real result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stageTableMarkup } from '../../web/stage-table.js';
import { megatronMarkup } from '../../web/megatron-view.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');

function heteroResult() {
  const out = execFileSync(CLI, ['plan', path.join(REPO, 'examples/mixtral-l-16-2-hetero.json'), '--json', '--top', '1']);
  return JSON.parse(out);
}

test('a hetero plan shows its per-stage meshes and its FlagScale config', () => {
  const r = heteroResult();
  const p = r.plans[0];
  assert.ok(p.flagscale && !p.megatron, 'a hetero plan carries flagscale, not megatron');
  const table = stageTableMarkup(p);
  assert.match(table, /<th scope="col"[^>]*>Mesh<\/th>/);
  for (const s of p.plan.stages) assert.ok(table.includes(`tp${s.tp} ep${s.ep} etp${s.etp} dp${s.dp}`));
  const view = megatronMarkup(p.megatron, p);
  assert.ok(view.includes('enable_hetero: true'));
  assert.ok(view.includes('flagscale-hostfile'));
  assert.ok(view.includes('type=h800-sxm'));
  for (const w of p.warnings) assert.ok(view.includes(w.replaceAll("'", '&#39;').slice(0, 30)));
  assert.ok(r.baselines.upstream && r.notes.some((n) => n.startsWith('hetero mode gains')));
});

test('an upstream plan keeps the Megatron view and no Mesh column', () => {
  const entry = { plan: { tp: 1, pp: 1, dp: 1, stages: [{ gpu: 'h100-sxm', group: 0, layers: 2, recompute: 'none' }] },
    metrics: { peak_memory_gib: [1], memory_capacity_gib: [80] }, breakdown: { stages: [{}] },
    megatron: { args: '--tensor-model-parallel-size 1', env: {}, launch: 'torchrun' } };
  assert.ok(!stageTableMarkup(entry).includes('>Mesh<'));
  assert.ok(megatronMarkup(entry.megatron, entry).includes('--tensor-model-parallel-size 1'));
});

test('FlagScale text is escaped', () => {
  const entry = { flagscale: { yaml: '<script>x</script>', hostfile: 'h slots=1 type=<b>' }, warnings: ['<img>'] };
  const view = megatronMarkup(undefined, entry);
  assert.ok(!view.includes('<script>') && !view.includes('<img>') && !view.includes('<b>'));
});
