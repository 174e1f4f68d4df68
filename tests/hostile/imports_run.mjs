// Runs the importer cases (imports.mjs) through the native CLI: `node imports_run.mjs HAPMOE`.
// A refused case exits 2 with its needle in stderr (valid UTF-8); an imported one exits 0,
// passes its check, and what it printed passes `hapmoe validate` once merged into a scenario.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importCases, mergedScenario } from './imports.mjs';
import { finish, refusalProblem, spawnArgs } from './spawn_args.mjs';

const bin = process.argv[2];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-imports-'));

function run(c) {
  const args = ['profile'];
  if (c.kind === 'nccl') {
    args.push('import-nccl');
    c.files.forEach((text, i) => {
      const f = path.join(dir, `file${i}.txt`);
      fs.writeFileSync(f, text);
      args.push(f);
    });
    if (!c.args.includes('--gpu')) args.push('--gpu', 'h100-sxm');
  } else {
    const log = path.join(dir, 'run.log'), scenario = path.join(dir, 'run.json');
    fs.writeFileSync(log, c.log);
    fs.writeFileSync(scenario, JSON.stringify(c.scenario));
    args.push('import-log', log, '--scenario', scenario);
  }
  return spawnArgs(bin, args.concat(c.args));
}

function why(c, r) {
  if (c.expect === 'refused') return refusalProblem(r, c.needle);
  const stderr = r.stderr.toString('utf8');
  if (r.status !== 0) return `exit ${r.status}: ${stderr.slice(0, 300)}`;
  const out = JSON.parse(r.stdout.toString('utf8'));
  const bad = c.check(out);
  if (bad) return bad;
  const f = path.join(dir, 'merged.json');
  fs.writeFileSync(f, JSON.stringify(mergedScenario(c, out)));
  const v = spawnSync(bin, ['validate', f], { encoding: 'utf8' });
  return v.status === 0 ? '' : `printed what validate refuses: ${v.stderr.slice(0, 300)}`;
}

const cases = importCases();
const failures = [];
for (const c of cases) {
  const w = why(c, run(c));
  if (w) failures.push(`${c.name}: ${w}`);
}
fs.rmSync(dir, { recursive: true, force: true });
finish(cases.length, failures);
