// Importer inputs that made up or doubled data, or printed what `validate` refuses (issue 23,
// class 4), and option values the importers read as a prefix. Each case:
//   { name, kind: 'nccl', files: [text...], args?, expect: 'refused', needle }   exit 2, stderr
//                                                                                 contains needle
//   { name, kind: 'nccl', files, args?, expect: 'imported', check(out) -> '' | why }
//   { name, kind: 'log', log, scenario, args?, expect, needle | check }
// Imported output must also pass `validate` once merged into a scenario (imports_run.mjs).
// Run natively by imports_run.mjs (ctest hostile_imports); tests/wasm/profile.test.mjs runs
// the nccl cases through importNccl and compares.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROFILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../profile');
const read = (f) => fs.readFileSync(path.join(PROFILE, f), 'utf8');
const a2a = read('nccl-alltoall-h100-2x8.txt');
const ar = read('nccl-all-reduce-h100-1x8.txt');
const runLog = read('qwen3-30b-a3b-h100-16-fp8-run-b.log');
const runScenario = JSON.parse(read('qwen3-30b-a3b-h100-16-fp8-run-b.json'));
// The last table row of the all-to-all output (line 37), with its busbw and size replaced.
const LAST = '  1073741824     268435456     float    none      -1 24643.49   43.57   40.85';
const row = (text, to) => text.replace(LAST, to);
const points = (out) => out.profile.gpus['h100-sxm'].collectives;

function ncclCases() {
  const ok = (name, files, check, args = []) => ({ name, kind: 'nccl', files, args, expect: 'imported', check });
  const no = (name, files, needle, args = []) => ({ name, kind: 'nccl', files, args, expect: 'refused', needle });
  return [
    ok('the same output twice in one file', [a2a + a2a], (o) =>
      points(o).length !== 11 ? `${points(o).length} points, 11 rows`
        : o.imported.some((r) => r.ranks !== 16) ? 'ranks doubled'
          : o.imported[1].repeated !== 11 || !(o.notes || []).length ? 'repeat not reported' : ''),
    ok('the same file given twice', [a2a, a2a], (o) => (points(o).length !== 11 || o.notes?.length !== 1 ? 'repeat not kept once with a note' : '')),
    ok('an all-to-all output followed by an all-reduce one', [a2a + ar], (o) => {
      const mine = points(o).filter((p) => p.op === 'all_to_all');
      if (mine.length !== 11 || Math.max(...mine.map((p) => p.busbw_gbps)) !== 40.85) return 'all-reduce points went to the all-to-all';
      return points(o).every((p) => p.ranks === (p.op === 'all_to_all' ? 16 : 8)) ? '' : 'ranks mixed';
    }),
    ok('an all-reduce file and an all-to-all file', [ar, a2a], (o) => (points(o).length === 22 ? '' : `${points(o).length} points`)),
    no('another run of the same test with another busbw', [a2a, row(a2a, LAST.replace('40.85', '39.10'))], 'measured 40.85'),
    no('a size of 1e29 bytes', [row(a2a, LAST.replace('  1073741824', '100000000000000000000000000000'))], 'line 37: size'),
    no('a busbw of 1e308 GB/s', [row(a2a, LAST.replace('40.85', '1e308'))], 'line 37: busbw'),
    no('a busbw below 0.001 GB/s', [row(a2a, LAST.replace('40.85', '0.0001'))], 'line 37: busbw'),
    no('a size twice in one run', [row(a2a, LAST.replace('  1073741824', '   268435456'))], 'appears again in the same run'),
    no('a rank listed twice in one run', [a2a.replace('#  Rank 15 Group', '#  Rank 14 Group')], 'rank 14 is listed again'),
    no('an op the output contradicts', [a2a], 'the output runs alltoall_perf', ['--op', 'all_reduce']),
    no('rows without their header', [a2a.split('\n').filter((l) => !l.startsWith('#')).join('\n')], 'no size/.../busbw column header'),
    no('a --gpu value that is not UTF-8', [a2a], '--gpu needs UTF-8 text', ['--gpu', Buffer.from([0x68, 0xff])]),
  ];
}

function logCases() {
  const iter = (n, ms, extra = '') => ` iteration ${n}/ 50 | consumed samples: ${n * 1024} | elapsed time per iteration (ms): ${ms} |${extra} global batch size:  1024 |\n`;
  const ok = (name, log, check, scenario = runScenario, args = []) => ({ name, kind: 'log', log, scenario, args, expect: 'imported', check });
  const no = (name, log, needle, args = [], scenario = runScenario) => ({ name, kind: 'log', log, scenario, args, expect: 'refused', needle });
  const hostLimit = structuredClone(runScenario);
  hostLimit.cluster = { groups: [{ gpu: { preset: 'h100-sxm', host_launch_us: 1e5 }, nodes: 2 }] };
  const out = [
    no('an iteration of 1e308 ms', iter(1, 30000) + iter(2, '1e308'), 'line 2: expected an elapsed time per iteration'),
    no('a throughput of 1e300 TFLOP/s', iter(1, 30000) + iter(2, 30000, ' throughput per GPU (TFLOP/s/GPU): 1e300 |'), 'line 2: expected a throughput'),
    no('memory of 1e300 MB', iter(1, 30000) + iter(2, 30000) +
      '[Rank 0] (after 2 iterations) memory (MB) | allocated: 1 | max allocated: 1e300 | reserved: 1 | max reserved: 1\n', 'line 3: expected max allocated'),
    no('an iteration logged again with another time', runLog + runLog.replace('(ms): 68032.0', '(ms): 98032.0'), 'is logged again with other numbers'),
    ok('the log given twice', runLog + runLog, (o) =>
      (o.fit.log.iterations_used !== 11 || o.fit.log.iterations_repeated !== 12 || !(o.notes || []).length ? 'iterations doubled or not reported' : '')),
    ok('host times at their limit, a log far slower than the model', iter(1, 9e7) + iter(2, 9e7) + iter(3, 9e7), (o) =>
      (o.fit.fitted.host_launch_us > 1e5 || o.fit.reached ? `host_launch_us ${o.fit.fitted.host_launch_us}, reached ${o.fit.reached}` : ''), hostLimit),
  ];
  for (const w of ['1e3', '0x10', '3abc', '-1', '+5', '99999999999999999999', '']) {
    out.push(no(`--warmup ${JSON.stringify(w)}`, runLog, '--warmup needs an integer from 0 to', ['--warmup', w]));
  }
  return out;
}

export function importCases() {
  return [ncclCases(), logCases()].flat();
}

// The scenario that the imported output is merged into (import-nccl) or is (import-log).
export function mergedScenario(c, out) {
  if (c.kind === 'log') return out.scenario;
  return { format: 'hapmoe.scenario/1', model: 'mixtral-s', cluster: { groups: [{ gpu: 'h100-sxm', nodes: 2 }] },
    training: { global_batch_size: 64, seq_length: 2048 }, profile: out.profile };
}
