// reproduce() in wasm: the same bytes as `hapmoe reproduce --json`, the invariants of
// tests/reproduce/invariants.mjs, progress per case, and bad options as error values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { CLI, loadModule } from './module.mjs';
import { checkReproduce } from '../reproduce/invariants.mjs';

const M = await loadModule();

test('reproduce(): byte-identical to the native CLI, invariants hold', () => {
  const seen = [];
  const wasm = M.reproduce('', (fraction, done) => seen.push([fraction, done]));
  const native = execFileSync(CLI, ['reproduce', '--json'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(wasm, native.trimEnd());
  const r = JSON.parse(wasm);
  const clusters = [...new Set(r.rows.map((row) => row.cluster))];
  assert.deepEqual(checkReproduce(r, { models: ['mixtral-s', 'mixtral-l'], clusters }), []);
  assert.equal(seen.length, r.rows.length);
  assert.deepEqual(seen.at(-1), [1, r.rows.length]);
});

test('reproduce(): options select models and clusters; bad options name the field', () => {
  const one = JSON.parse(M.reproduce('{"models": ["mixtral-s"], "clusters": ["16-1", "32-3"]}', null));
  assert.deepEqual(one.rows.map((row) => row.cluster), ['16-1', '32-3']);
  const bad = JSON.parse(M.reproduce('{"models": ["gpt-5"]}', null));
  assert.equal(bad.ok, false);
  assert.equal(bad.error.field, 'models[0]');
  const notJson = JSON.parse(M.reproduce('{"models": [', null));
  assert.equal(notJson.ok, false);
});
