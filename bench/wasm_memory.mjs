// Robustness figure: the wasm module answers N consecutive plan calls (default 10,000) with
// bounded memory. Cycles one valid example with hostile inputs (deep nesting, invalid UTF-8,
// 1e999, an unknown preset) and reports, after a warm-up and at the end, the wasm linear memory
// (bytes) and the heap top: the address malloc gives an 8 MiB block (it comes from the top of
// the heap, so any leak pushes it up). Exits 1 if either grew by more than 1 MiB after the warm-up.
// usage: node bench/wasm_memory.mjs [N] [--valid-only]   (needs dist/; scripts/setup build)
import fs from 'node:fs';
import path from 'node:path';
import { REPO, loadModule } from '../tests/wasm/module.mjs';

const N = Number(process.argv[2] || 10000);
const WARMUP = 100;
const MAX_GROWTH_BYTES = 1 << 20;

const M = await loadModule();

const valid = fs.readFileSync(path.join(REPO, 'examples/mixtral-s-16-1.json'), 'utf8');
const validOnly = process.argv.includes('--valid-only');
const allInputs = [
  Buffer.from(valid),
  Buffer.from('['.repeat(100000) + ']'.repeat(100000)),
  Buffer.concat([Buffer.from('{"model": "mix'), Buffer.from([0xff]), Buffer.from('"}')]),
  Buffer.from(valid.replace('"global_batch_size": 256', '"global_batch_size": 1e999')),
  Buffer.from(valid.replace('"mixtral-s"', '"no-such-model"')),
];
const inputs = validOnly ? allInputs.slice(0, 1) : allInputs;
const heapBytes = () => M.HEAP8.buffer.byteLength;
const heapTop = () => {
  const p = M._malloc(8 << 20);
  M._free(p);
  return p;
};

let okCount = 0, errorCount = 0, heapAfterWarmup = 0, topAfterWarmup = 0;
const t0 = performance.now();
for (let i = 0; i < N; ++i) {
  const r = JSON.parse(M.planQuiet(inputs[i % inputs.length]));
  if (r.ok) okCount++; else errorCount++;
  if (r.error?.code === 'internal') throw new Error(`call ${i}: ${r.error.message}`);
  if (i + 1 === WARMUP) [heapAfterWarmup, topAfterWarmup] = [heapBytes(), heapTop()];
}
const seconds = (performance.now() - t0) / 1000;
const growth = heapBytes() - heapAfterWarmup;
const topGrowth = heapTop() - topAfterWarmup;
console.log(`${N} plan calls in ${seconds.toFixed(1)} s (${okCount} plans, ${errorCount} error values)`);
console.log(`wasm heap: ${heapAfterWarmup} bytes after ${WARMUP} calls, ${heapBytes()} bytes after ${N} (growth ${growth} bytes)`);
console.log(`heap top: ${topAfterWarmup} after ${WARMUP} calls, moved by ${topGrowth} bytes after ${N}`);
console.log(`node RSS at the end: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
process.exit(growth > MAX_GROWTH_BYTES || topGrowth > MAX_GROWTH_BYTES ? 1 : 0);
