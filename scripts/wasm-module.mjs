// Loads the Emscripten module (the Embind API object) from DIR/hapmoe.js + DIR/hapmoe.wasm under
// node: used by scripts/core-data.mjs at build time and by the wasm tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

/** The module of dir's hapmoe.js / hapmoe.wasm. */
export async function loadWasmModule(dir) {
  // The repo's package.json says "type": "module"; the glue is a classic script: load it as .cjs.
  const cjs = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-')), 'hapmoe.cjs');
  fs.copyFileSync(path.join(dir, 'hapmoe.js'), cjs);
  try {
    // Emscripten 3.1.6 glue would fetch() a file path under node: hand it the bytes.
    return await createRequire(import.meta.url)(cjs)({ wasmBinary: fs.readFileSync(path.join(dir, 'hapmoe.wasm')) });
  } finally {
    fs.rmSync(path.dirname(cjs), { recursive: true, force: true });
  }
}
