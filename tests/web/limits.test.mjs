// Node tests of the page's pure guards and helpers: JSON shape limits, link limits and view state,
// scenario-file checks, crash messages, memory headroom, compare terms, the offline file list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { checkJsonShape, MAX_DEPTH, MAX_LIST } from '../../web/json-limits.js';
import { decodeHash, encodeScenario, encodeView, decodeView, inflateLimited } from '../../web/url-state.js';
import { unknownPresets, scenarioFromFile } from '../../web/scenario-check.js';
import { describeCrash } from '../../web/planner-client.js';
import { memoryHeadroom, meshKey } from '../../web/plans-table.js';
import { compareTableMarkup, TERMS } from '../../web/compare-view.js';
import { modelSpecFromHfConfig } from '../../web/hf-config.js';

const WEB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web');

test('JSON shape: nesting and list length limits, strings and escapes skipped', () => {
  assert.equal(checkJsonShape('{"a":[1,2,3],"b":{"c":"[[[[,,,,"}}'), null);
  assert.equal(checkJsonShape('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH)), null);
  assert.match(checkJsonShape('['.repeat(MAX_DEPTH + 1)), /nests deeper than 64/);
  assert.equal(checkJsonShape(`[${Array(MAX_LIST).fill(0).join(',')}]`), null);
  assert.match(checkJsonShape(`[${Array(MAX_LIST + 1).fill(0).join(',')}]`), /list longer than/);
  assert.equal(checkJsonShape(`{${Array(MAX_LIST + 5).fill(0).map((_, i) => `"k${i}":1`).join(',')}}`), null, 'object keys are not a list');
  assert.equal(checkJsonShape('["a\\"],[", 1]'), null);
});

test('links: inflation stops at the limit; lists, depth and foreign text refused; view state round-trips', async () => {
  await assert.rejects(inflateLimited(deflateRawSync(Buffer.alloc(4 << 20, 32)), 256 * 1024), /inflates past 256 KB/);
  const bomb = '#s=v1.' + deflateRawSync(Buffer.alloc(8 << 20, 32)).toString('base64url');
  assert.match((await decodeHash(bomb)).error, /inflates past/);
  const deep = '#s=v1.' + deflateRawSync(Buffer.from('{"a":' + '['.repeat(100) + ']'.repeat(100) + '}')).toString('base64url');
  assert.match((await decodeHash(deep)).error, /nests deeper/);
  assert.match((await decodeHash('#s=v1.' + 'A'.repeat(70_000))).error, /more than the 64 KB/);
  assert.match((await decodeHash('#s=v1.<script>')).error, /not base64url/);
  const bad = '#s=v1.' + deflateRawSync(Buffer.from([0xff, 0xfe, 0x7b])).toString('base64url');
  assert.ok((await decodeHash(bad)).error, 'invalid UTF-8 is refused');
  const s = { format: 'hapmoe.scenario/1', model: 'mixtral-s', cluster: '16-1', training: { global_batch_size: 64, seq_length: 2048 } };
  const hash = await encodeScenario(s, { plan: 3, sort: 'mem', dir: -1 });
  assert.match(hash, /&v=3\.mem\.d$/);
  assert.deepEqual(await decodeHash(hash), { scenario: s, view: { plan: 3, sort: 'mem', dir: -1 } });
  assert.deepEqual(decodeView(encodeView({ plan: 0, sort: 'rank', dir: 1 })), { plan: 0, sort: 'rank', dir: 1 });
  assert.equal(decodeView('1.<x>.a'), null);
});

test('scenario files and links: unknown presets named, non-scenarios refused with the reason', () => {
  const presets = { models: { 'mixtral-s': {} }, clusters: { '16-1': {} }, gpus: { 'h100-sxm': {} } };
  assert.deepEqual(unknownPresets({ model: 'mixtral-s', cluster: '16-1' }, presets), []);
  const found = unknownPresets({ model: { preset: 'nope' }, cluster: { groups: [{ gpu: 'h100-sxm' }, { gpu: { preset: 'zzz' } }, { gpu: { name: 'custom' } }] } }, presets);
  assert.deepEqual(found, ['model: unknown model preset "nope"', 'cluster.groups[1].gpu: unknown GPU preset "zzz"']);
  assert.deepEqual(unknownPresets({ model: 'toString', cluster: '16-1' }, presets), ['model: unknown model preset "toString"']);
  const s = { format: 'hapmoe.scenario/1', model: 'm', cluster: 'c', training: {} };
  assert.equal(scenarioFromFile(s), s);
  assert.equal(scenarioFromFile({ format: 'hapmoe.bundle/1', scenario: s, result: {} }), s);
  assert.throws(() => scenarioFromFile({ format: 'hapmoe.result/1', ok: true }), /"format": "hapmoe.result\/1", a scenario has/);
  assert.throws(() => scenarioFromFile({ model: 'm' }), /no "format" field/);
  assert.throws(() => scenarioFromFile({ format: 'hapmoe.scenario/1', model: 'm' }), /no "cluster", "training"/);
  assert.throws(() => scenarioFromFile([1]), /not a JSON object/);
});

test('crash messages say what happened', () => {
  assert.match(describeCrash('RuntimeError', 'Aborted(std::bad_alloc)'), /ran out of memory/);
  assert.match(describeCrash('RangeError', 'Maximum call stack size exceeded'), /browser limit \(RangeError/);
  assert.match(describeCrash('RuntimeError', 'unreachable executed'), /internal error \(RuntimeError: unreachable/);
});

test('Hugging Face configs claiming absurd sizes are refused before anything is built', () => {
  const t0 = Date.now();
  assert.throws(() => modelSpecFromHfConfig({ num_hidden_layers: 5e7, first_k_dense_replace: 3, n_routed_experts: 8 }), /num_hidden_layers must be an integer from 0 to 10000/);
  assert.throws(() => modelSpecFromHfConfig({ num_hidden_layers: 61, first_k_dense_replace: 1e9, n_routed_experts: 8 }), /first_k_dense_replace/);
  assert.throws(() => modelSpecFromHfConfig({ num_hidden_layers: 1.5 }), /num_hidden_layers/);
  assert.ok(Date.now() - t0 < 100);
});

test('memory headroom is the tightest stage; above 95% is flagged', () => {
  const h = memoryHeadroom({ peak_memory_gib: [32.82, 77.89], memory_capacity_gib: [59.6, 79.65] });
  assert.ok(Math.abs(h.freeGib - 1.76) < 1e-9);
  assert.equal(h.tight, true);
  assert.equal(memoryHeadroom({ peak_memory_gib: [50], memory_capacity_gib: [80] }).tight, false);
  assert.ok(Number.isNaN(memoryHeadroom({}).freeGib));
  assert.equal(meshKey({ plan: { tp: 1, cp: 2, pp: 2, dp: 4, ep: 8, etp: 1, vpp: 2 } }), '1-2-2-4-8-1');
});

test('compare: differences are B - A per term, the better side marked', () => {
  const a = { metrics: { iteration_time_s: 2, bubble_fraction: 0.1, peak_memory_gib: [70], memory_capacity_gib: [80] },
    breakdown: { pipeline_s: 1.8, tail_s: 0.2, stages: [{ forward_s: 0.01, backward_s: 0.02, ep_comm_s: 0.5, optimizer_s: 0.05 }] } };
  const b = { metrics: { iteration_time_s: 3, bubble_fraction: 0.05, peak_memory_gib: [60], memory_capacity_gib: [80] },
    breakdown: { pipeline_s: 2.7, tail_s: 0.3, stages: [{ forward_s: 0.02, backward_s: 0.04, ep_comm_s: 0.25, optimizer_s: 0.05 }] } };
  const html = compareTableMarkup(a, b);
  assert.equal((html.match(/<tr><th scope="row">/g) || []).length, TERMS.length);
  assert.match(html, /Iteration time <span class="unit">s<\/span><\/th><td>2.000<\/td><td>3.000<\/td><td class="worse">\+1.000<\/td>/);
  assert.match(html, /EP all-to-all[^]*?<td>500.0<\/td><td>250.0<\/td><td class="better">-250.0<\/td>/);
  assert.match(html, /Memory headroom[^]*?<td class="better">\+10.00<\/td>/);
});

test('the service worker pre-caches every file of the page', () => {
  const sw = fs.readFileSync(path.join(WEB, 'sw.js'), 'utf8');
  const listed = new Set([...sw.matchAll(/'([\w.-]+\.(?:js|css|html|wasm))'/g)].map((m) => m[1]));
  for (const f of fs.readdirSync(WEB).filter((n) => /\.(js|css|html)$/.test(n) && n !== 'sw.js')) assert.ok(listed.has(f), `${f} missing from sw.js FILES`);
  for (const f of ['hapmoe.js', 'hapmoe.wasm']) assert.ok(listed.has(f));
});

test('index.html preloads exactly the modules main.js imports, directly or not', () => {
  // A module missing here is found only once its importer has loaded: one more round trip before
  // the page can run (profile-form.js was, and cost 200-280 ms of a first visit under load).
  const html = fs.readFileSync(path.join(WEB, 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([\w.-]+)">/g)].map((m) => m[1]);
  const graph = new Set();
  const visit = (file) => {
    const src = fs.readFileSync(path.join(WEB, file), 'utf8');
    for (const m of src.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s*'\.\/([\w.-]+\.js)'/gm)) {
      if (!graph.has(m[1])) { graph.add(m[1]); visit(m[1]); }
    }
  };
  visit('main.js');
  assert.ok(graph.size > 10, `import graph of main.js: ${[...graph].join(', ')}`);
  assert.deepEqual([...preloaded].sort(), [...graph].sort());
});
