// Classic script run first, from <head>: starts the planner worker, and with it the download and
// compilation of hapmoe.wasm, while the page's modules are still loading. Without a scenario in
// the link it also asks that worker, at once, to plan the default scenario, so the first search
// starts the moment the module is ready. PlannerClient adopts this worker, its early messages
// and that request (main.js, takeBoot) instead of starting its own.
'use strict';

/** The scenario the page opens with (the rest: the schema's defaults). */
// Mixtral 8x7B on H100 + A100 (2x8 each): a public model on a common mixed NVIDIA cluster, every GPU used.
// Runtime "auto": upstream Megatron-LM and FlagScale plans ranked together (main.js shows the
// upstream plans first, so the prefetched request below is the upstream half).
self.hapmoeDefaultScenario = { model: 'mixtral-8x7b', cluster: 'h100-a100-32', training: { global_batch_size: 256, seq_length: 4096 }, search: { mode: 'auto' } };

self.hapmoeBoot = null;
try {
  const d = self.hapmoeDefaultScenario;
  const plan = location.hash ? null : { id: 0, scenario: { ...d, search: { ...d.search, mode: 'megatron' } } };
  // The first request travels in the worker's name (worker.js says why), not as a message.
  const name = plan ? JSON.stringify({ boot: { id: 0, method: 'plan', scenario: JSON.stringify(plan.scenario) } }) : '';
  const worker = new Worker('worker.js', { name });
  const boot = { worker, messages: [], plan };
  // Kept until PlannerClient takes the worker over (a message with no listener would be lost).
  worker.onmessage = (e) => boot.messages.push(e.data);
  self.hapmoeBoot = boot;
} catch (err) {
  self.hapmoeBoot = null; // PlannerClient starts a worker itself and reports what fails
}
