// Classic script run first, from <head>: starts the planner worker, and with it the download and
// compilation of hapmoe.wasm, while the page's modules are still loading. Without a scenario in
// the link it also asks that worker, at once, to plan the default scenario, so the first search
// starts the moment the module is ready. PlannerClient adopts this worker, its early messages
// and that request (main.js, takeBoot) instead of starting its own.
'use strict';

/** The scenario the page opens with (the rest: the schema's defaults). */
self.hapmoeDefaultScenario = { model: 'mixtral-s', cluster: '16-1', training: { global_batch_size: 256, seq_length: 4096 } };

self.hapmoeBoot = null;
try {
  const worker = new Worker('worker.js');
  const boot = { worker, messages: [], plan: null };
  // Kept until PlannerClient takes the worker over (a message with no listener would be lost).
  worker.onmessage = (e) => boot.messages.push(e.data);
  if (!location.hash) {
    boot.plan = { id: 0, scenario: self.hapmoeDefaultScenario };
    worker.postMessage({ id: 0, method: 'plan', scenario: JSON.stringify(boot.plan.scenario) });
  }
  self.hapmoeBoot = boot;
} catch (err) {
  self.hapmoeBoot = null; // PlannerClient starts a worker itself and reports what fails
}
