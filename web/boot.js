// Classic script run first, from <head>: starts the planner worker, and with it the download and
// compilation of hapmoe.wasm, while the page's module graph is still loading. PlannerClient
// adopts this worker (takeBootWorker) instead of starting its own.
'use strict';
try {
  self.hapmoeBootWorker = new Worker('worker.js');
} catch (err) {
  self.hapmoeBootWorker = null; // PlannerClient starts one itself and reports what fails
}
