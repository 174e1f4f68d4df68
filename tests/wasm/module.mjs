// The wasm module under node, shared by the wasm tests and bench/wasm_memory.mjs. Paths:
// HAPMOE_WASM_DIR (default dist/) holds hapmoe.js + hapmoe.wasm; HAPMOE_CLI (default
// build/hapmoe) is the native CLI the tests compare against.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const WASM_DIR = path.resolve(REPO, process.env.HAPMOE_WASM_DIR || 'dist');
export const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');

/** Instantiates the module (the Embind API object). */
export async function loadModule() {
  // The repo's package.json says "type": "module"; the glue is a classic script: load it as .cjs.
  const cjs = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-')), 'hapmoe.cjs');
  fs.copyFileSync(path.join(WASM_DIR, 'hapmoe.js'), cjs);
  // Emscripten 3.1.6 glue would fetch() a file path under node: hand it the bytes.
  return createRequire(import.meta.url)(cjs)({ wasmBinary: fs.readFileSync(path.join(WASM_DIR, 'hapmoe.wasm')) });
}
