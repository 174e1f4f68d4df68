// Promise API over the planner worker. Each call sends one JSON scenario string and
// resolves with the parsed JSON answer. cancel() terminates the worker (the only way to
// stop a synchronous wasm search), rejects what was pending, and starts a fresh worker.
// A call that outlives its time budget, and any crash of the module (abort, bad_alloc,
// RangeError, trap), also replace the worker, so a broken or endless module never answers again.

export class CancelledError extends Error {
  constructor() { super('cancelled'); this.name = 'CancelledError'; }
}

/** The planner stopped abnormally (crash or time budget); the worker has been replaced. */
export class PlannerFailure extends Error {
  constructor(message) { super(message); this.name = 'PlannerFailure'; }
}

/** Default longest a single call may run, in milliseconds. */
export const DEFAULT_BUDGET_MS = 60_000;

/** A sentence saying what a worker error means (kind is the error's constructor name). */
export function describeCrash(kind, message) {
  const text = String(message || '');
  if (/bad_alloc|out of memory|Cannot enlarge memory|OOM|allocation failed/i.test(text)) {
    return `The planner ran out of memory (${text.slice(0, 120)}). The scenario is too large for the browser; the planner was restarted.`;
  }
  if (kind === 'RangeError') return `The planner hit a browser limit (RangeError: ${text.slice(0, 120)}); the planner was restarted.`;
  return `The planner stopped with an internal error (${kind || 'Error'}: ${text.slice(0, 160)}); the planner was restarted.`;
}

/** JSON text of value with object keys sorted, without the top-level "format" (a cache key). */
export function scenarioKey(value) {
  const sort = (v) => (Array.isArray(v) ? v.map(sort) : v && typeof v === 'object'
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v);
  const { format: _f, ...rest } = value || {};
  return JSON.stringify(sort(rest));
}

export class PlannerClient {
  /**
   * boot: boot.js's {worker, messages, plan} to adopt: its worker of workerUrl, the messages it
   * answered before this client existed, and the plan request it sent with id 0 (taken as the
   * prefetched plan); else a worker is started.
   */
  constructor(workerUrl = 'worker.js', { budgetMs = DEFAULT_BUDGET_MS, boot = null } = {}) {
    this.workerUrl = workerUrl;
    this.budgetMs = budgetMs;
    this.nextId = 1;  // id 0: boot.js's plan request
    this.pending = new Map(); // id -> {resolve, reject, onProgress, timer}
    this.prefetched = null;
    this.#start(boot?.worker);
    if (!boot?.worker) return;
    if (boot.plan) {
      const promise = this.#track(boot.plan.id);
      promise.catch(() => {});  // a failed prefetch only means plan() searches itself
      this.prefetched = { key: scenarioKey(boot.plan.scenario), promise };
    }
    for (const m of boot.messages) this.#onMessage(m);
    boot.messages.length = 0;
  }

  #start(adopt = null) {
    this.worker = adopt || new Worker(this.workerUrl);
    this.worker.onmessage = (e) => this.#onMessage(e.data);
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.#replace(new PlannerFailure(`The planner worker failed: ${e.message || 'could not load hapmoe.js'}; it was restarted.`));
    };
  }

  /** The answer to request id: settles on its result or error, or fails after the time budget. */
  #track(id, onProgress = null) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.has(id)) return;
        const secs = Math.round(this.budgetMs / 100) / 10;
        this.#replace(new PlannerFailure(`The search was stopped after ${secs} s, its time budget in this page. ` +
          'Narrow the search (fix TP, PP, EP, VPP or micro-batch under Constraints) or use the command-line planner.'));
      }, this.budgetMs);
      this.pending.set(id, { resolve, reject, onProgress, timer });
    });
  }

  #replace(err) {
    this.prefetched = null;
    this.worker.terminate();
    this.#rejectAll(err);
    this.#start();
  }

  #onMessage({ id, type, json, message, kind, fatal, fraction, evaluated }) {
    const p = this.pending.get(id);
    if (!p) return;
    if (type === 'progress') { p.onProgress?.(fraction, evaluated); return; }
    if (type === 'error' && fatal) { this.#replace(new PlannerFailure(describeCrash(kind, message))); return; }
    this.#settle(id);
    if (type === 'error') { p.reject(new Error(message)); return; }
    try { p.resolve(JSON.parse(json)); } catch (err) { p.reject(new Error(`bad JSON from planner: ${err.message}`)); }
  }

  #settle(id) {
    clearTimeout(this.pending.get(id)?.timer);
    this.pending.delete(id);
  }

  #rejectAll(err) {
    for (const p of this.pending.values()) { clearTimeout(p.timer); p.reject(err); }
    this.pending.clear();
  }

  /** Calls method ('version'|'presets'|'schema'|'validate'|'evaluate'|'timeline'|'plan'|'reproduce') with a
   * scenario object (for 'reproduce': its options). */
  call(method, scenario = null, onProgress = null) {
    const id = this.nextId++;
    const payload = scenario == null ? '' : JSON.stringify(scenario);
    const answer = this.#track(id, onProgress);  // registered before the worker can answer
    this.worker.postMessage({ id, method, scenario: payload });
    return answer;
  }

  version() { return this.call('version'); }
  presets() { return this.call('presets'); }
  schema() { return this.call('schema'); }
  validate(scenario) { return this.call('validate', scenario); }
  /**
   * Plans scenario. The answer of boot.js's prefetched plan of the same scenario (same fields and
   * values) is used once instead of searching again.
   */
  plan(scenario, onProgress) {
    const pre = this.prefetched;
    this.prefetched = null;
    if (pre && pre.key === scenarioKey(scenario)) return pre.promise;
    return this.call('plan', scenario, onProgress);
  }

  /** Whether plan(scenario) would take a prefetched answer (which reports input errors itself). */
  hasPrefetch(scenario) {
    return this.prefetched != null && this.prefetched.key === scenarioKey(scenario);
  }

  /** The core's schedule of scenario.plan (docs/scenario.md "Timeline"). */
  timeline(scenario) { return this.call('timeline', scenario); }

  /** If a node fails: the N-1 re-plan of scenario.plan (docs/scenario.md "Node loss"). */
  nodeLoss(scenario, onProgress) { return this.call('nodeLoss', scenario, onProgress); }

  /** Replaces the worker with a fresh one (after the module reported an internal failure). */
  restart() {
    this.#replace(new PlannerFailure('The planner was restarted.'));
  }

  /** Stops whatever is running; pending calls reject with CancelledError. */
  cancel() {
    this.#replace(new CancelledError());
  }
}
