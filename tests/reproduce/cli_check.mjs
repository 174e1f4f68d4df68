// `node tests/reproduce/cli_check.mjs HAPMOE`: runs `hapmoe reproduce` (every model and cluster)
// and checks the JSON's structure and invariants (invariants.mjs), the readable table, the
// --model/--cluster filters and the error for an unknown model.
import { spawnSync } from 'node:child_process';
import { checkReproduce } from './invariants.mjs';

const bin = process.argv[2];
const run = (...args) => spawnSync(bin, ['reproduce', ...args], { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 300000 });
const failures = [];

const full = run('--json');
if (full.status !== 0) failures.push(`reproduce --json exited ${full.status}: ${full.stderr}`);
const r = JSON.parse(full.stdout);
const models = r.setups.map((s) => s.model);
const clusters = [...new Set(r.rows.map((row) => row.cluster))];
if (JSON.stringify(models) !== '["mixtral-s","mixtral-l"]') failures.push(`models ${models}`);
if (clusters.length !== 12) failures.push(`clusters ${clusters}`);
failures.push(...checkReproduce(r, { models, clusters }));
if (!r.rows.some((row) => row.ours !== null && row.heterogeneous)) failures.push('no heterogeneous plan at all');

const text = run();
if (text.status !== 0) failures.push(`reproduce exited ${text.status}`);
for (const want of ['geometric mean', 'Megatron-default', 'Metis-style', 'Best uniform split', 'Best even split', ...clusters]) {
  if (!text.stdout.includes(want)) failures.push(`table lacks "${want}"`);
}

const one = run('--json', '--model', 'mixtral-s', '--cluster', '16-1');
const oneResult = JSON.parse(one.stdout);
if (oneResult.rows.length !== 1 || oneResult.rows[0].cluster !== '16-1') failures.push('filters');
const sameRow = r.rows.find((row) => row.model === 'mixtral-s' && row.cluster === '16-1');
if (JSON.stringify(sameRow) !== JSON.stringify(oneResult.rows[0])) failures.push('a filtered row differs from the full run');

const bad = run('--model', 'mixtral-x');
if (bad.status !== 2 || !bad.stderr.includes('models[0]')) failures.push(`unknown model: exit ${bad.status}, ${bad.stderr}`);

if (failures.length) {
  console.error(failures.join('\n'));
  process.exit(1);
}
console.log(`reproduce: ${r.rows.length} rows, ${r.geomeans.length} geometric means, invariants hold`);
