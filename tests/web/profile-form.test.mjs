// The pure parts of the page's profile section (web/profile-form.js): GPU ids of the cluster,
// merging imported points into the scenario, and the lines that say what was imported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterGpuIds, mergeProfile, ncclSummary, logSummary } from '../../web/profile-form.js';

test('cluster GPU ids: preset cluster, inline groups, custom GPUs', () => {
  const presets = { clusters: { c: { groups: [{ gpu: 'h800-sxm' }, { gpu: 'ascend-910b' }, { gpu: 'h800-sxm' }] } } };
  assert.deepEqual(clusterGpuIds({ cluster: 'c' }, presets), ['h800-sxm', 'ascend-910b']);
  assert.deepEqual(clusterGpuIds({ cluster: { groups: [{ gpu: { preset: 'h100-sxm', memory_gib: 94 } }, { gpu: { name: 'x' } }] } }, presets),
    ['h100-sxm', 'custom']);
  assert.deepEqual(clusterGpuIds({ cluster: 'missing' }, presets), []);
});

test('mergeProfile appends points per GPU and keeps the rest of the scenario', () => {
  const p = (n) => ({ op: 'all_to_all', ranks: 16, placement: 'inter_node', bytes: n, busbw_gbps: 40 });
  const s = { model: 'm', profile: { gpus: { a: { collectives: [p(1)], source: 'one' } } } };
  const merged = mergeProfile(s, { gpus: { a: { collectives: [p(2)], source: 'two' }, b: { layers: [{ kind: 'moe' }] } } });
  assert.equal(merged.model, 'm');
  assert.deepEqual(merged.profile.gpus.a.collectives.map((c) => c.bytes), [1, 2]);
  assert.equal(merged.profile.gpus.a.source, 'one; two');
  assert.equal(merged.profile.gpus.b.layers.length, 1);
  assert.equal(s.profile.gpus.a.collectives.length, 1);  // the input is not changed
});

test('summaries name the file, the measured quantities and their units', () => {
  const [line] = ncclSummary([{ file: 'a.txt', op: 'all_to_all', ranks: 16, placement: 'inter_node', hosts: ['h1', 'h2'], device: 'NVIDIA H100', points: 11, max_busbw_gbps: 40.9 }]);
  assert.match(line, /a\.txt: all_to_all, 16 ranks, inter_node \(2 host\(s\)\), NVIDIA H100, 11 sizes, busbw up to 40\.9 GB\/s/);
  const lines = logSummary({ gpu: 'h100-sxm', scale: 1.036, reached: true, analytical_iteration_s: 30.5, fitted_iteration_s: 29.46,
    logged_iteration_s: 29.46, reserved_memory_gib: 5.7, log: { name: 'run.log', median_iteration_ms: 29459.9, iterations_used: 11, iterations_skipped: 1 } });
  assert.match(lines[0], /run\.log: median 29459\.9 ms per iteration over 11/);
  assert.match(lines[1], /x1\.036; iteration 30\.500 s \(model\) -> 29\.460 s \(fitted; logged 29\.460 s\)/);
  assert.match(lines[2], /reserved memory 5\.7 GiB/);
});
