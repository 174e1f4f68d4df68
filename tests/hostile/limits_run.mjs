// Runs the search-limit cases (limits.mjs) through the native CLI: `node limits_run.mjs HAPMOE`.
// Every case plans (exit 0) within CPU_LIMIT_S of CPU time (WALL_LIMIT_S of wall time on a
// loaded machine) and keeps its promise (judge()); the counted budget, not the clock, must end
// it (stats.budget.limits_reached never "seconds" while it used less than the 20 s CPU backstop).
// Its peak memory stays below RSS_LIMIT_MB. Prints each case's wall and CPU time, peak memory and
// the slowest; under ASan/UBSan (HAPMOE_SANITIZED=1) the time limits are 10x, memory unchecked.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { limitCases, judge } from './limits.mjs';

const bin = process.argv[2];
const sanitized = process.env.HAPMOE_SANITIZED === '1';
const CPU_LIMIT_S = sanitized ? 150 : 15;  // README "Input limits": the slowest about 5 s natively
const WALL_LIMIT_S = sanitized ? 600 : 60;
const BACKSTOP_S = 20;                     // SearchBudget::max_seconds (CPU)
// Peak resident memory (unsanitized: the sanitizers' shadow memory is several times the heap);
// the wasm module may grow to 2 GB. The largest case takes about 360 MB.
const RSS_LIMIT_MB = sanitized ? Infinity : 640;
const haveTime = fs.existsSync('/usr/bin/time');

function plan(text) {
  const args = haveTime ? ['-f', 'cpu_s=%U+%S rss_kb=%M', bin, 'plan', '-', '--json'] : ['plan', '-', '--json'];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(haveTime ? '/usr/bin/time' : bin, args, { input: text, maxBuffer: 1 << 28, timeout: WALL_LIMIT_S * 2000 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = /cpu_s=([\d.]+)\+([\d.]+)/.exec(r.stderr ? r.stderr.toString() : '');
  const rss = /rss_kb=(\d+)/.exec(r.stderr ? r.stderr.toString() : '');
  let out = null;
  try { out = JSON.parse(r.stdout.toString()); } catch { /* reported below */ }
  return { status: r.status, signal: r.signal, wall, cpu: cpu ? Math.round((+cpu[1] + +cpu[2]) * 100) / 100 : null,
    rssMb: rss ? Math.round(+rss[1] / 1024) : null, out };
}

let failed = 0;
let slowest = { wall: 0, name: '' };
const baseCache = new Map();
for (const c of limitCases()) {
  const r = plan(c.text);
  let why = r.signal ? `killed by ${r.signal}` : r.status !== 0 ? `exit ${r.status}` : !r.out ? 'no JSON' : '';
  if (!why && (r.wall > WALL_LIMIT_S || (r.cpu !== null && r.cpu > CPU_LIMIT_S))) {
    why = `took ${r.wall.toFixed(1)} s wall, ${r.cpu} s CPU`;
  }
  if (!why && r.rssMb !== null && r.rssMb > RSS_LIMIT_MB) why = `peak memory ${r.rssMb} MB`;
  if (!why && (r.out.stats.budget?.limits_reached || []).includes('seconds') && (r.cpu ?? r.wall) < BACKSTOP_S) {
    why = 'the clock ended it although the counted budget should have';
  }
  if (!why) {
    let b = null;
    if (c.base) {
      if (!baseCache.has(c.base)) baseCache.set(c.base, plan(c.base).out);
      b = baseCache.get(c.base);
    }
    why = judge(c, r.out, b);
  }
  const limits = r.out?.stats?.budget?.limits_reached;
  console.log(`${c.name}: ${r.wall.toFixed(2)} s wall, ${r.cpu ?? '?'} s CPU, ${r.rssMb ?? '?'} MB, ` +
    `${r.out?.plans?.[0] ? `best ${r.out.plans[0].metrics.iteration_time_s} s` : 'no plan'}, ${limits ? `partial (${limits.join(', ')})` : 'complete'}`);
  if ((r.cpu ?? r.wall) > (slowest.cpu ?? slowest.wall)) slowest = { wall: r.wall, cpu: r.cpu, name: c.name };
  if (why) {
    failed++;
    console.log(`FAIL ${c.name}: ${why}`);
  }
}
console.log(`slowest: ${slowest.name}, ${slowest.wall.toFixed(2)} s wall, ${slowest.cpu ?? '?'} s CPU`);
const n = limitCases().length;
console.log(`${n} cases: ${n - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
