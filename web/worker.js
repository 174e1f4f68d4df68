// Classic Web Worker: loads the hapmoe wasm module lazily, once, and answers
// {id, method, scenario} messages with {id, type: 'result', json} or {id, type: 'error', message, kind, fatal}.
// During `plan` it also posts {id, type: 'progress', fraction, evaluated} (throttled).
'use strict';

let modulePromise = null;

/**
 * Emscripten's instantiateWasm hook: instantiates the already requested hapmoe.wasm (streaming
 * compilation when it is served as application/wasm, else from its bytes); fail(error) on error.
 */
function instantiateFrom(wasm, fail) {
  return (imports, receive) => {
    wasm.then(async (response) => {
      if (!response.ok) throw new Error(`could not load hapmoe.wasm (HTTP ${response.status})`);
      const streaming = /^application\/wasm\b/.test(response.headers.get('content-type') || '');
      return streaming ? WebAssembly.instantiateStreaming(response, imports)
        : WebAssembly.instantiate(await response.arrayBuffer(), imports);
    }).then((r) => receive(r.instance, r.module), fail);
    return {};  // exports arrive through receive()
  };
}

function loadModule() {
  if (!modulePromise) {
    // Request the wasm before fetching and running the glue, so that both download (and the
    // wasm compiles) at the same time instead of one after the other.
    const wasm = fetch('hapmoe.wasm', { credentials: 'same-origin' });
    wasm.catch(() => {});  // reported through fail() when used
    let fail;
    const failed = new Promise((resolve, reject) => { fail = reject; });
    importScripts('hapmoe.js');
    // eslint-disable-next-line no-undef
    modulePromise = Promise.race([createHapmoe({ instantiateWasm: instantiateFrom(wasm, fail) }), failed]);
  }
  return modulePromise;
}

// Start loading at once (the page starts this worker before its own modules): a failure here is
// reported by the first call, which tries again.
try { loadModule().catch(() => { modulePromise = null; }); } catch (err) { modulePromise = null; }

const PROGRESS_INTERVAL_MS = 100;

function progressReporter(id) {
  let last = 0;
  return (fraction, evaluated) => {
    const now = Date.now();
    if (now - last < PROGRESS_INTERVAL_MS && fraction < 1) return;
    last = now;
    self.postMessage({ id, type: 'progress', fraction: Number(fraction), evaluated: Number(evaluated) });
  };
}

function call(M, id, method, scenario) {
  switch (method) {
    case 'version': return M.version();
    case 'presets': return M.presets();
    case 'schema': return M.schema();
    case 'validate': return M.validate(scenario);
    case 'evaluate': return M.evaluate(scenario);
    case 'timeline': return M.timeline(scenario);
    case 'plan': return M.plan(scenario, progressReporter(id));
    case 'nodeLoss': return M.nodeLoss(scenario, progressReporter(id));  // the N-1 re-plan of scenario.plan
    case 'importNccl': return M.importNccl(scenario);  // an importer request (profile-form.js)
    case 'importLog': return M.importLog(scenario);
    case 'reproduce': return M.reproduce(scenario, progressReporter(id)); // scenario: the options JSON
    default: throw new Error(`unknown method "${method}"`);
  }
}

/** Answers one request ({id, method, scenario}) with a 'result' or an 'error' message. */
async function answer({ id, method, scenario }) {
  try {
    const M = await loadModule();
    const json = call(M, id, method, scenario);
    self.postMessage({ id, type: 'result', json });
  } catch (err) {
    // A trap, abort, bad_alloc or RangeError leaves the module unusable: the page replaces
    // this whole worker (fatal: true); other errors are ordinary failures of one call.
    const message = String((err && err.message) || err);
    const kind = (err && err.constructor && err.constructor.name) || typeof err;
    // (A C++ exception that escaped the module arrives as a WebAssembly.Exception.)
    const fatal = err instanceof WebAssembly.RuntimeError || err instanceof RangeError ||
      (typeof WebAssembly.Exception === 'function' && err instanceof WebAssembly.Exception) ||
      /abort|bad_alloc|out of memory/i.test(message);
    if (fatal) modulePromise = null;
    self.postMessage({ id, type: 'error', message, kind, fatal });
  }
}

self.onmessage = (event) => answer(event.data);

// boot.js names this worker after its first request ({"boot": {id, method, scenario}}), which
// is handled as a message, once the module is ready. A message posted to a worker before its
// script has run is held until the page's main thread hears that the script ran, and on a first
// visit that thread is busy building the form: a posted request waited about 130 ms there.
try {
  const first = self.name ? JSON.parse(self.name).boot : null;
  const go = () => self.onmessage({ data: first });
  if (first) Promise.resolve(modulePromise).then(go, go);
} catch (err) { /* another name: no first request */ }
