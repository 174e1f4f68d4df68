// Writes DIR/core-data.json: the version, presets and schema that DIR/hapmoe.wasm itself returns
// (the same calls the page would make), so the page builds its form from a static file fetched
// beside the module instead of waiting for the worker to compile the module and answer them.
// usage: node scripts/core-data.mjs DIR   (DIR holds hapmoe.js + hapmoe.wasm; run by scripts/setup)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const dir = path.resolve(process.argv[2] || 'dist');
// The glue is a classic script and the repo's package.json says "type": "module": load it as .cjs,
// with the wasm bytes handed over (Emscripten 3.1.6 glue would fetch() a file path under node).
const cjs = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-')), 'hapmoe.cjs');
fs.copyFileSync(path.join(dir, 'hapmoe.js'), cjs);
const M = await createRequire(import.meta.url)(cjs)({ wasmBinary: fs.readFileSync(path.join(dir, 'hapmoe.wasm')) });
const data = { version: JSON.parse(M.version()), presets: JSON.parse(M.presets()), schema: JSON.parse(M.schema()) };
for (const [key, value] of Object.entries(data)) {
  if (value && value.ok === false) throw new Error(`core-data: ${key}() failed: ${JSON.stringify(value.error)}`);
}
fs.writeFileSync(path.join(dir, 'core-data.json'), JSON.stringify(data));
fs.rmSync(path.dirname(cjs), { recursive: true, force: true });
console.log(`core-data.json: core ${data.version.version}, ${Object.keys(data.presets.gpus || {}).length} GPUs, ` +
  `${Object.keys(data.presets.models || {}).length} models`);
