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

test('the importer corpus (tests/hostile/imports.mjs) gets the same answers in wasm as from the CLI', async () => {
  const { importCases } = await import('../hostile/imports.mjs');
  const { spawnArgs } = await import('../hostile/spawn_args.mjs');
  const M = await loadModule();
  const dir = fs.mkdtempSync(path.join(REPO, 'build', 'imports-'));
  const differ = [];
  for (const c of importCases().filter((k) => !k.args.some(Buffer.isBuffer))) {
    const opt = (name) => (c.args.includes(`--${name}`) ? c.args[c.args.indexOf(`--${name}`) + 1] : undefined);
    let request, args;
    if (c.kind === 'nccl') {
      const names = c.files.map((t, i) => { const f = path.join(dir, `f${i}.txt`); fs.writeFileSync(f, t); return f; });
      request = { gpu: 'h100-sxm', files: names.map((n, i) => ({ name: n, text: c.files[i] })) };
      if (opt('op')) request.op = opt('op');
      args = ['profile', 'import-nccl', ...names, '--gpu', 'h100-sxm', ...c.args];
    } else {
      if (c.args.length) continue;  // --warmup values are the CLI's to parse
      const log = path.join(dir, 'run.log'), scen = path.join(dir, 'run.json');
      fs.writeFileSync(log, c.log);
      fs.writeFileSync(scen, JSON.stringify(c.scenario));
      request = { scenario: c.scenario, log: c.log, log_name: log };
      args = ['profile', 'import-log', log, '--scenario', scen];
    }
    const wasm = JSON.parse(c.kind === 'nccl' ? M.importNccl(JSON.stringify(request)) : M.importLog(JSON.stringify(request)));
    const native = spawnArgs(CLI, args);
    const same = wasm.ok ? native.status === 0 && JSON.stringify(wasm) === JSON.stringify(JSON.parse(native.stdout))
      : native.status === 2 && native.stderr.toString().includes(wasm.error.message.slice(0, 60));
    if (!same || wasm.ok !== (c.expect === 'imported')) differ.push(c.name);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(differ, []);
});
