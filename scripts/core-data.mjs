// Writes DIR/core-data.json: the version, presets and schema that DIR/hapmoe.wasm itself returns
// (the same calls the page would make), so the page builds its form from a static file fetched
// beside the module instead of waiting for the worker to compile the module and answer them.
// usage: node scripts/core-data.mjs DIR   (DIR holds hapmoe.js + hapmoe.wasm; run by scripts/setup)
import fs from 'node:fs';
import path from 'node:path';
import { loadWasmModule } from './wasm-module.mjs';

const dir = path.resolve(process.argv[2] || 'dist');
const M = await loadWasmModule(dir);
const data = { version: JSON.parse(M.version()), presets: JSON.parse(M.presets()), schema: JSON.parse(M.schema()) };
for (const [key, value] of Object.entries(data)) {
  if (value && value.ok === false) throw new Error(`core-data: ${key}() failed: ${JSON.stringify(value.error)}`);
}
fs.writeFileSync(path.join(dir, 'core-data.json'), JSON.stringify(data));
console.log(`core-data.json: core ${data.version.version}, ${Object.keys(data.presets.gpus || {}).length} GPUs, ` +
  `${Object.keys(data.presets.models || {}).length} models`);
