// dist/core-data.json (scripts/core-data.mjs, run by scripts/setup build) is exactly what the
// shipped module returns for version(), presets() and schema(): the page builds its form from
// that file instead of asking the worker, so the two must never differ.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadModule, WASM_DIR } from './module.mjs';

test('core-data.json equals the module\'s version, presets and schema', async () => {
  const file = path.join(WASM_DIR, 'core-data.json');
  assert.ok(fs.existsSync(file), `${file} missing: run scripts/setup build (node scripts/core-data.mjs dist)`);
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  const M = await loadModule();
  assert.deepEqual(data.version, JSON.parse(M.version()));
  assert.deepEqual(data.presets, JSON.parse(M.presets()));
  assert.deepEqual(data.schema, JSON.parse(M.schema()));
  assert.ok(Object.keys(data.presets.gpus).length >= 20 && data.schema.fields.length > 50);
});
