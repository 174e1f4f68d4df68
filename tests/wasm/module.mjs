// The wasm module under node, shared by the wasm tests and bench/wasm_memory.mjs. Paths:
// HAPMOE_WASM_DIR (default dist/) holds hapmoe.js + hapmoe.wasm; HAPMOE_CLI (default
// build/hapmoe) is the native CLI the tests compare against.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadWasmModule } from '../../scripts/wasm-module.mjs';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const WASM_DIR = path.resolve(REPO, process.env.HAPMOE_WASM_DIR || 'dist');
export const CLI = path.resolve(REPO, process.env.HAPMOE_CLI || 'build/hapmoe');

/** Instantiates the module (the Embind API object). */
export function loadModule() {
  return loadWasmModule(WASM_DIR);
}
