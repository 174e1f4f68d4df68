// Promise API over the planner worker. Each call sends one JSON scenario string and
// resolves with the parsed JSON answer. cancel() terminates the worker (the only way to
// stop a synchronous wasm search), rejects what was pending, and starts a fresh worker.

export class CancelledError extends Error {
  constructor() { super('cancelled'); this.name = 'CancelledError'; }
}

export class PlannerClient {
  constructor(workerUrl = 'worker.js') {
    this.workerUrl = workerUrl;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, onProgress}
    this.#start();
  }

  #start() {
    this.worker = new Worker(this.workerUrl);
    this.worker.onmessage = (e) => this.#onMessage(e.data);
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.#rejectAll(new Error(`planner worker failed: ${e.message || 'could not load hapmoe.js'}`));
      this.worker.terminate();
      this.#start();
    };
  }

  #onMessage({ id, type, json, message, fraction, evaluated }) {
    const p = this.pending.get(id);
    if (!p) return;
    if (type === 'progress') { p.onProgress?.(fraction, evaluated); return; }
    this.pending.delete(id);
    if (type === 'error') { p.reject(new Error(message)); return; }
    try { p.resolve(JSON.parse(json)); } catch (err) { p.reject(new Error(`bad JSON from planner: ${err.message}`)); }
  }

  #rejectAll(err) {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Calls method ('version'|'presets'|'schema'|'validate'|'evaluate'|'plan') with a scenario object. */
  call(method, scenario = null, onProgress = null) {
    const id = this.nextId++;
    const payload = scenario == null ? '' : JSON.stringify(scenario);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, method, scenario: payload });
    });
  }

  version() { return this.call('version'); }
  presets() { return this.call('presets'); }
  schema() { return this.call('schema'); }
  validate(scenario) { return this.call('validate', scenario); }
  plan(scenario, onProgress) { return this.call('plan', scenario, onProgress); }

  /** Stops whatever is running; pending calls reject with CancelledError. */
  cancel() {
    this.worker.terminate();
    this.#rejectAll(new CancelledError());
    this.#start();
  }
}
