// The bounded searches of tests/hostile/limits.mjs (class 1) in wasm under node: each ends within
// the limit, its progress never goes back and moves while it runs (more than 10 distinct
// values when it takes 0.5 s or more, ending at 1), and its output is byte-identical to the
// native CLI's (the budget is counted work, so both stop at the same point). Prints the slowest
// case's time. Needs dist/ and build/hapmoe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { limitCases, judge } from '../hostile/limits.mjs';
import { CLI, loadModule } from './module.mjs';

const M = await loadModule();
const WASM_LIMIT_S = 60;  // wall time on a loaded 2-core machine; about 5 s when idle
const MOVING_S = 0.5;     // searches at least this long must move their progress visibly

test('bounded searches end, move their progress and match native output in wasm', (t) => {
  const failures = [];
  let slowest = { s: 0, name: '' };
  for (const c of limitCases().filter((k) => k.class === 1)) {
    const seen = [];
    const t0 = performance.now();
    const wasm = M.plan(c.text, (fraction) => seen.push(fraction));
    const s = (performance.now() - t0) / 1000;
    if (s > slowest.s) slowest = { s, name: c.name };
    const r = JSON.parse(wasm);
    const why = judge(c, r, null);
    if (why) failures.push(`${c.name}: ${why}`);
    if (s > WASM_LIMIT_S) failures.push(`${c.name}: ${s.toFixed(1)} s`);
    if ((r.stats?.budget?.limits_reached || []).includes('seconds')) failures.push(`${c.name}: ended by the clock`);
    const back = seen.findIndex((f, i) => i > 0 && f < seen[i - 1]);
    if (back >= 0) failures.push(`${c.name}: progress went back at report ${back}`);
    // A search the user waits for moves through more than 10 values; one that ends within
    // MOVING_S (6 one-node groups, hetero: exact in 0.05 s natively) through a few.
    const values = new Set(seen).size;
    if (values <= (s >= MOVING_S ? 10 : 1) || seen.at(-1) !== 1) failures.push(`${c.name}: progress ${values} values in ${s.toFixed(2)} s, last ${seen.at(-1)}`);
    const native = spawnSync(CLI, ['plan', '-', '--json'], { input: c.text, maxBuffer: 1 << 28 });
    // With its progress callback, the output is still the CLI's byte for byte.
    if (native.stdout.toString('utf8').trimEnd() !== wasm) failures.push(`${c.name}: native and wasm output differ`);
    t.diagnostic(`${c.name}: ${s.toFixed(2)} s in wasm`);
  }
  t.diagnostic(`slowest in wasm: ${slowest.name}, ${slowest.s.toFixed(2)} s`);
  assert.deepEqual(failures, []);
});
