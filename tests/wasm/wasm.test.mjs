// The wasm module under node: same JSON API as the native CLI, byte-identical plan results for
// every scenario in examples/, errors as values. Needs dist/ (or HAPMOE_WASM_DIR) and build/hapmoe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, CLI, loadModule } from './module.mjs';

const M = await loadModule();
const examples = fs.readdirSync(path.join(REPO, 'examples')).filter((f) => f.endsWith('.json')).sort();

test('version and presets', () => {
  assert.match(JSON.parse(M.version()).version, /^\d+\.\d+\.\d+$/);
  const p = JSON.parse(M.presets());
  for (const id of ['h100-sxm', 'h800-sxm', 'mi300x', 'ascend-910b', 'gb200']) assert.ok(p.gpus[id], id);
  for (const id of ['mixtral-8x7b', 'mixtral-s', 'mixtral-l', 'deepseek-v3', 'qwen3-30b-a3b', 'gpt-oss-120b']) assert.ok(p.models[id], id);
  for (const id of ['16-1-h', '16-1', '32-3']) assert.ok(p.clusters[id], id);
});

test('schema(): the field table, identical to the native CLI', () => {
  const s = JSON.parse(M.schema());
  assert.equal(s.format, 'hapmoe.schema/1');
  assert.equal(s.scenario_format, 'hapmoe.scenario/1');
  const byPath = new Map(s.fields.map((f) => [f.path, f]));
  assert.equal(byPath.size, s.fields.length, 'paths are unique');
  const layers = byPath.get('model.num_layers');
  assert.deepEqual([layers.type, layers.min, layers.default_kind], ['int', 1, 'required']);
  assert.deepEqual(byPath.get('training.precision').allowed, ['bf16', 'fp8']);
  assert.equal(byPath.get('cluster.groups[].gpu.gemm_efficiency').default, 0.62);
  for (const f of s.fields) assert.ok(f.help.length > 10, f.path);
  const native = execFileSync(CLI, ['schema', '--json']).toString();
  assert.deepEqual(s, JSON.parse(native));
});

for (const f of examples) {
  test(`plan ${f}: wasm result is byte-identical to the native CLI`, () => {
    const text = fs.readFileSync(path.join(REPO, 'examples', f), 'utf8');
    const wasm = M.planQuiet(text);
    const native = execFileSync(CLI, ['plan', path.join(REPO, 'examples', f), '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(wasm, native.trimEnd());
    assert.equal(JSON.parse(wasm).ok, true);
  });
}

test('plan reports progress through the callback', () => {
  const text = fs.readFileSync(path.join(REPO, 'examples', 'mixtral-s-16-1.json'), 'utf8');
  const seen = [];
  const out = JSON.parse(M.plan(text, (fraction, evaluated) => seen.push([fraction, evaluated])));
  assert.equal(out.ok, true);
  assert.ok(seen.length >= 2);
  assert.equal(seen.at(-1)[0], 1);
});

test('bad input is an error value naming the field, never a crash', () => {
  const cases = [
    ['{"model": ', '$'],
    ['{"model":"mixtral-8x7b","cluster":"16-1","training":{"global_batch_size":-5,"seq_length":4096}}', 'training.global_batch_size'],
    ['{"model":"mixtral-8x7b","cluster":{"groups":[{"gpu":"h100-sxm","nodes":0}]},"training":{"global_batch_size":8,"seq_length":4096}}', 'cluster.groups[0].nodes'],
    ['{"model":"nope","cluster":"16-1","training":{"global_batch_size":8,"seq_length":4096}}', 'model'],
  ];
  for (const [text, field] of cases) {
    for (const fn of [M.validate, M.evaluate, M.planQuiet]) {
      const r = JSON.parse(fn(text));
      assert.equal(r.ok, false);
      assert.equal(r.error.field, field);
      assert.ok(r.error.message.length > 0);
    }
  }
});

test('evaluate matches the native CLI for calibration examples', () => {
  for (const f of examples.filter((x) => x.startsWith('c'))) {
    const text = fs.readFileSync(path.join(REPO, 'examples', f), 'utf8');
    const native = execFileSync(CLI, ['evaluate', path.join(REPO, 'examples', f), '--json'], { encoding: 'utf8' });
    assert.equal(M.evaluate(text), native.trimEnd());
  }
});

test('timeline matches the native CLI and ends at the plan\'s iteration time', () => {
  for (const f of examples.filter((x) => x.startsWith('c')).slice(0, 3)) {
    const text = fs.readFileSync(path.join(REPO, 'examples', f), 'utf8');
    const native = execFileSync(CLI, ['timeline', path.join(REPO, 'examples', f)], { encoding: 'utf8', maxBuffer: 1 << 28 });
    const out = M.timeline(text);
    assert.equal(out, native.trimEnd());
    const r = JSON.parse(out);
    assert.equal(r.timeline.iteration_s, r.metrics.iteration_time_s, f);
    assert.equal(r.timeline.bubble_fraction, r.metrics.bubble_fraction, f);
  }
});

test('nodeLoss (the N-1 re-plan) matches the native CLI, reports progress, and returns errors as values', () => {
  const file = path.join(REPO, 'examples', 'mixtral-8x7b-priced.json');
  const text = fs.readFileSync(file, 'utf8');
  const native = execFileSync(CLI, ['node-loss', file, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const seen = [];
  const out = M.nodeLoss(text, (fraction) => seen.push(fraction));
  assert.equal(out, native.trimEnd());
  const r = JSON.parse(out);
  assert.equal(r.format, 'hapmoe.node_loss/1');
  assert.ok(r.losses.length >= 1);
  for (const l of r.losses) {
    assert.ok(l.entry === null || l.slowdown > 0, JSON.stringify(l).slice(0, 200));
  }
  assert.ok(seen.length >= 1 && seen.every((f) => f >= 0 && f <= 1));
  const bad = JSON.parse(M.nodeLoss('{"model": "mixtral-8x7b"', null));
  assert.equal(bad.ok, false);
  assert.equal(bad.error.field, '$');
});

test('a priced plan: cost metrics, the Pareto front and checkpoint figures', () => {
  const r = JSON.parse(M.planQuiet(fs.readFileSync(path.join(REPO, 'examples', 'mixtral-8x7b-priced.json'), 'utf8')));
  assert.equal(r.stats.objective, 'cost');
  assert.ok(r.pareto.length >= 1);
  for (const p of r.pareto) {
    assert.ok(p.cost_per_million_tokens > 0 && p.iteration_time_s > 0);
    assert.ok(p.plan_index === null ? p.entry.metrics.cost_per_hour > 0 : r.plans[p.plan_index]);
  }
  const m = r.plans[0].metrics;
  assert.ok(m.cost_per_hour > 0 && m.train_cost > 0);
  assert.ok(m.resilience.expected_goodput > 0.5 && m.resilience.expected_goodput < 1);
});
