// The hostile corpus (tests/hostile/corpus.mjs) through the wasm API under node: every invalid
// case is ok:false naming the field from validate, evaluate and plan, and every small case (valid
// or not) gives byte-identical plan output natively and in wasm. Needs dist/ and build/hapmoe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { corpus, asBuffer, PENDING_ON_OTHER_BRANCHES } from '../hostile/corpus.mjs';
import { CLI, loadModule } from './module.mjs';

const M = await loadModule();
const cases = corpus().filter((c) => c.expect !== 'large');
const utf8 = new TextDecoder('utf-8', { fatal: true });

test(`${cases.filter((c) => c.expect === 'invalid').length} invalid cases: ok:false naming the field, valid UTF-8, under 1 s`, () => {
  const failures = [];
  for (const c of cases.filter((k) => k.expect === 'invalid')) {
    for (const [name, fn] of [['validate', M.validate], ['evaluate', M.evaluate], ['plan', M.planQuiet]]) {
      const t0 = performance.now();
      const out = fn(asBuffer(c.text));  // Embind copies a Uint8Array byte for byte
      const ms = performance.now() - t0;
      utf8.decode(Buffer.from(out, 'utf8'));
      const r = JSON.parse(out);
      const ok = r.ok === false && r.error.field.startsWith(c.field) && r.error.code !== 'internal' && ms < 1000;
      if (ok === PENDING_ON_OTHER_BRANCHES.has(c.name)) {
        failures.push(`${c.name} (${name}): ${ok ? 'passes: drop it from PENDING_ON_OTHER_BRANCHES' : `${ms.toFixed(0)} ms, ${out.slice(0, 200)}`}`);
      }
    }
  }
  assert.deepEqual(failures, []);
});

test('native and wasm plan output are byte-identical on every small corpus case', () => {
  const differ = [];
  for (const c of cases) {
    const wasm = M.planQuiet(asBuffer(c.text));
    const native = spawnSync(CLI, ['plan', '-', '--json'], { input: asBuffer(c.text), maxBuffer: 1 << 28 });
    if (native.stdout.toString('utf8').trimEnd() !== wasm) differ.push(c.name);
    if (c.expect === 'valid') assert.equal(JSON.parse(wasm).ok, true, c.name);
  }
  assert.deepEqual(differ, []);
});
