// "auto" mode never ranks a slower plan first (issue 21), on every example and the paper's bench
// cases (Mixtral-S and Mixtral-L on HAPMoE Table 1's nine clusters): the plans within the memory
// margin come first, each side ordered by the objective (time, or cost per token for
// search.objective "cost"); a FlagScale plan first carries the best upstream plan with a gain of
// at least 1; and, when neither engine reached its budget, auto's first plan
// is the better of the two modes' first plans (upstream on ties; the margin first).
// Usage: node tests/plan/auto_order.mjs HAPMOE_BINARY [REPO]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const bin = process.argv[2];
const repo = process.argv[3] || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
if (!bin) {
  console.error('usage: node tests/plan/auto_order.mjs HAPMOE_BINARY [REPO]');
  process.exit(2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-auto-'));

function plan(doc, mode) {
  const file = path.join(tmp, 'scenario.json');
  fs.writeFileSync(file, JSON.stringify({ ...doc, search: { ...(doc.search || {}), mode } }));
  return JSON.parse(execFileSync(bin, ['plan', file, '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

// What a result ranks by (stats.objective): the time per iteration, or the cost per token.
const rankValue = (result, m) => (result.stats.objective === 'cost' ? m.cost_per_million_tokens : m.iteration_time_s);

// Best objective value among the plans within the margin (all plans when none is).
function bestWithin(result, plans) {
  const within = plans.filter((p) => p.metrics.within_memory_margin);
  const from = within.length ? within : plans;
  return Math.min(...from.map((p) => rankValue(result, p.metrics)));
}

const cases = [];
for (const f of fs.readdirSync(path.join(repo, 'examples')).filter((f) => f.endsWith('.json')).sort()) {
  cases.push({ name: `examples/${f}`, doc: JSON.parse(fs.readFileSync(path.join(repo, 'examples', f), 'utf8')) });
}
for (const [model, gbs, dispatcher] of [['mixtral-s', 256, 'allgather'], ['mixtral-l', 512, 'alltoall']]) {
  for (const cluster of ['16-1', '16-2', '16-3', '24-1', '24-2', '24-3', '32-1', '32-2', '32-3']) {
    cases.push({
      name: `${model} on ${cluster}`,
      doc: {
        format: 'hapmoe.scenario/1', model, cluster,
        training: { global_batch_size: gbs, seq_length: 4096, moe_token_dispatcher_type: dispatcher },
        search: { top_k: 5 },
      },
    });
  }
}

const failures = [];
let exactChecked = 0;
for (const { name, doc } of cases) {
  const fail = (what) => failures.push(`${name}: ${what}`);
  const a = plan(doc, 'auto');
  if (!a.plans.length) {
    fail('auto found no plan');
    continue;
  }
  a.plans.forEach((p, i) => {
    if (!p.plan.runtime) fail(`plan ${i} has no runtime`);
    if (i === 0) return;
    const prev = a.plans[i - 1].metrics, cur = p.metrics;
    if (!prev.within_memory_margin && cur.within_memory_margin) fail(`plan ${i} within the margin ranked below plan ${i - 1} above it`);
    if (prev.within_memory_margin === cur.within_memory_margin && rankValue(a, prev) > rankValue(a, cur)) {
      fail(`plan ${i} (${rankValue(a, cur)}) better than plan ${i - 1} (${rankValue(a, prev)}) above it`);
    }
  });
  const up = a.baselines && a.baselines.upstream;
  if (a.plans[0].plan.runtime === 'flagscale' && up && !(up.speedup >= 1)) fail(`FlagScale first with a gain of ${up.speedup}`);
  if (!a.stats.budget_reached) {
    const m = plan(doc, 'megatron'), h = plan(doc, 'hetero');
    if (!m.stats.budget_reached && !h.stats.budget_reached) {
      // Within the margin first: the best plan within it of either mode, else the fastest.
      const want = bestWithin(a, [...m.plans, ...h.plans]);
      const got = rankValue(a, a.plans[0].metrics);
      if (Math.abs(got - want) > 1e-9 * want) fail(`auto's best ${got}, the better mode's ${want}`);
      ++exactChecked;
    }
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${cases.length} cases, ${exactChecked} compared with both modes, ${failures.length} failures`);
for (const f of failures) console.log(`FAIL ${f}`);
process.exit(failures.length ? 1 : 0);
