// The profile importers in wasm (importNccl / importLog): same answers as the native CLI, on the
// test inputs of tests/profile/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { loadModule, REPO, CLI } from './module.mjs';

const input = (name) => path.join(REPO, 'tests/profile', name);
const text = (name) => fs.readFileSync(input(name), 'utf8');

test('importNccl: the nccl-tests points the CLI imports', async () => {
  const M = await loadModule();
  const files = ['nccl-all-reduce-h100-1x8.txt', 'nccl-alltoall-h100-2x8.txt'];
  const r = JSON.parse(M.importNccl(JSON.stringify({ gpu: 'h100-sxm', files: files.map((f) => ({ name: input(f), text: text(f) })) })));
  assert.equal(r.ok, true);
  assert.equal(r.profile.gpus['h100-sxm'].collectives.length, 22);
  const cli = JSON.parse(execFileSync(CLI, ['profile', 'import-nccl', ...files.map(input), '--gpu', 'h100-sxm'], { encoding: 'utf8' }));
  assert.deepEqual(r, cli);
  const bad = JSON.parse(M.importNccl(JSON.stringify({ gpu: 'h100-sxm', placement: 'rack', files: [{ name: 'x', text: text(files[0]) }] })));
  assert.equal(bad.ok, false);
  assert.equal(bad.error.field, 'placement');
});

test('importLog: the fit the CLI makes, and its scenario validates', async () => {
  const M = await loadModule();
  const log = 'qwen3-30b-a3b-h100-16-fp8-run-b.log', scen = 'qwen3-30b-a3b-h100-16-fp8-run-b.json';
  const r = JSON.parse(M.importLog(JSON.stringify({ scenario: JSON.parse(text(scen)), log: text(log), log_name: input(log) })));
  assert.equal(r.ok, true);
  assert.ok(Math.abs(r.fit.fitted_iteration_s / r.fit.logged_iteration_s - 1) < 0.01);
  const cli = JSON.parse(execFileSync(CLI, ['profile', 'import-log', input(log), '--scenario', input(scen)], { encoding: 'utf8' }));
  assert.deepEqual(r, cli);
  assert.equal(JSON.parse(M.validate(JSON.stringify(r.scenario))).ok, true);
  assert.equal(JSON.parse(M.importLog('{')).error.code, 'bad_json');
});
