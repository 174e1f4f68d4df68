// Command lines the CLI must refuse (issue 23, class 5): `node cli_args.mjs HAPMOE`. Each case
// exits 2 (never 1, an internal error) with its needle in a valid UTF-8 stderr: option integers
// read strictly, preset ids that are not UTF-8, and an `evaluate` of a plan that breaks a rule
// (a hetero plan with EP overlap at pp 2 without VPP). Arguments given as Buffers are raw bytes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { finish, refusalProblem, spawnArgs } from './spawn_args.mjs';

const bin = process.argv[2];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-cli-'));
const example = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../examples/mixtral-s-16-1.json');
const scenario = (name, doc) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, JSON.stringify(doc));
  return f;
};

// A two-mesh hetero plan of Mixtral-S on 16-1 (H800 + 910B): pp 2, no virtual pipeline.
const hetero = (plan) => scenario(`hetero-${Object.keys(plan).join('-')}.json`, {
  format: 'hapmoe.scenario/1', model: 'mixtral-s', cluster: '16-1', training: { global_batch_size: 64, seq_length: 2048 },
  search: { mode: 'hetero' },
  plan: { pp: 2, dp: 8, ep: 8, micro_batch_size: 1,
    stages: [{ group: 0, layers: 12, tp: 1, dp: 8, ep: 8 }, { group: 1, layers: 12, tp: 1, dp: 8, ep: 8 }], ...plan },
});

function cases() {
  const out = [];
  const c = (name, args, needle) => out.push({ name, args, needle });
  for (const v of ['1e9', '5abc', '0x10', '1e1', '-3', '0', '101', '+5', ' 5', '99999999999999999999', '']) {
    c(`--top ${JSON.stringify(v)}`, ['plan', example, '--top', v], '--top needs an integer from 1 to 100');
  }
  c('--top without a value', ['plan', example, '--top'], '--top needs an integer');
  const bad = [[0xff], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x6d, 0x69, 0x78, 0xf8, 0x88, 0x80, 0x80, 0x80]];
  for (const bytes of bad) {
    c(`reproduce --model ${Buffer.from(bytes).toString('hex')}`, ['reproduce', '--model', Buffer.from(bytes)], '--model needs a preset id in UTF-8');
    c(`reproduce --cluster ${Buffer.from(bytes).toString('hex')}`, ['reproduce', '--cluster', Buffer.concat([Buffer.from('16-1'), Buffer.from(bytes)])],
      '--cluster needs a preset id in UTF-8');
  }
  c('evaluate a hetero plan with EP overlap at pp 2 without VPP', ['evaluate', hetero({ ep_comm_overlap: true })], 'rule:hetero_no_ep_overlap');
  c('evaluate --json of the same', ['evaluate', hetero({ ep_comm_overlap: true }), '--json'], 'plan.ep_comm_overlap');
  c('evaluate a hetero plan with VPP', ['evaluate', hetero({ vpp: 2 })], 'rule:hetero_no_vpp');
  return out;
}

const all = cases();
const failures = [];
for (const k of all) {
  const why = refusalProblem(spawnArgs(bin, k.args), k.needle);
  if (why) failures.push(`${k.name}: ${why}`);
}
fs.rmSync(dir, { recursive: true, force: true });
finish(all.length, failures);
