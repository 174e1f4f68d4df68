// Native and wasm give byte-identical plan output on the fuzz corpus (fuzz/corpus/, written by
// fuzz/run.sh; the first byte of each file picks the fuzzed entry point, the rest is the text).
// Up to 400 files, sorted by name; skipped when no fuzz run has made the corpus yet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO, CLI, loadModule } from './module.mjs';

const CORPUS = path.join(REPO, 'fuzz/corpus');
const MAX_FILES = 400;

const files = fs.existsSync(CORPUS) ? fs.readdirSync(CORPUS).sort().slice(0, MAX_FILES) : [];

test(`native and wasm plan output identical on ${files.length} fuzz corpus inputs`, { skip: files.length === 0 && 'no fuzz/corpus yet (fuzz/run.sh)' }, async (t) => {
  const M = await loadModule();
  const differ = [];
  let valid = 0;
  for (const f of files) {
    const text = fs.readFileSync(path.join(CORPUS, f)).subarray(1);
    const wasm = M.planQuiet(text);
    const native = spawnSync(CLI, ['plan', '-', '--json'], { input: text, maxBuffer: 1 << 28, timeout: 60000 });
    if (native.stdout.toString('utf8').trimEnd() !== wasm) differ.push(f);
    const r = JSON.parse(wasm);
    if (r.ok) valid++;
    assert.notEqual(r.error?.code, 'internal', `${f}: ${wasm.slice(0, 200)}`);
  }
  t.diagnostic(`${valid} of ${files.length} inputs valid (ok: true)`);
  assert.ok(valid > 0, 'no valid input in the corpus');
  assert.deepEqual(differ, []);
});
