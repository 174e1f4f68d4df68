// Wiring only: worker client, form, results, URL state and run controls.
import { PlannerClient, CancelledError } from './planner-client.js';
import { createScenarioForm } from './form.js';
import { createResultsView } from './results-view.js';
import { createRunStatus } from './run-status.js';
import { encodeScenario, decodeHash } from './url-state.js';
import { showBanner, markFieldError, clearFieldErrors } from './errors.js';
import { downloadJson, copyWithFeedback } from './clipboard.js';

const $ = (sel) => document.querySelector(sel);
const client = new PlannerClient('worker.js');
const banner = $('#banner');
const formEl = $('#scenario-form');
const status = createRunStatus({ plan: $('#plan-btn'), cancel: $('#cancel-btn'), progress: $('#progress'), status: $('#run-status') });
const results = createResultsView({
  root: $('#results'), summary: $('#summary'), plans: $('#plans'), baselines: $('#baselines'), detail: $('#plan-detail'),
  detailTitle: $('#detail-title'), stages: $('#stages'), memory: $('#memory-chart'), timeline: $('#timeline-chart'),
  megatron: $('#megatron'), actions: $('#result-actions'),
});

let form = null;
let defaults = null;
let runId = 0;
let ownHash = '';

function defaultScenario(presets) {
  const pick = (ids, wanted) => (wanted in ids ? wanted : Object.keys(ids)[0]);
  return {
    model: pick(presets.models, 'mixtral-s'),
    cluster: pick(presets.clusters, '16-1'),
    training: { global_batch_size: 256, seq_length: 4096 },  // the rest: the schema's defaults
  };
}

function showInvalid(error) {
  const msg = error?.message || 'Invalid input';
  if (!markFieldError(formEl, error?.field, msg)) showBanner(banner, `${error?.field ? `${error.field}: ` : ''}${msg}`);
  else showBanner(banner, 'Please fix the highlighted field.');
}

async function run() {
  const id = ++runId;
  if (document.body.dataset.state === 'running') client.cancel();
  clearFieldErrors(formEl);
  showBanner(banner, '');
  const scenario = form.getScenario();
  status.running('Checking inputs…');
  results.setStale(true);
  try {
    const check = await client.validate(scenario);
    if (id !== runId) return;
    if (!check.ok) { showInvalid(check.error); status.idle('Input needs attention.'); return; }
    ownHash = await encodeScenario(scenario);
    history.replaceState(null, '', ownHash);
    status.running('Searching…');
    const result = await client.plan(scenario, (f, n) => { if (id === runId) status.progress(f, n); });
    if (id !== runId) return;
    if (!result.ok) { showInvalid(result.error); status.idle('Input needs attention.'); return; }
    results.render(result);
    results.setStale(false);
    status.idle(result.plans.length ? `Done: ${result.plans.length} plan(s).` : 'Done: no feasible plan.');
  } catch (err) {
    if (id !== runId) return;
    if (err instanceof CancelledError) status.idle('Search cancelled.');
    else { showBanner(banner, `Planner error: ${err.message}`); status.idle('Failed.'); }
  }
}

function cancel() {
  runId++;
  client.cancel();
  status.idle('Search cancelled.');
}

async function restoreFromHash() {
  const decoded = await decodeHash(location.hash);
  if (decoded?.error) showBanner(banner, decoded.error);
  form.setScenario(decoded?.scenario || defaults, defaults);
}

async function start() {
  document.body.dataset.state = 'loading';
  let presets, schema;
  try {
    const [p, v, s] = await Promise.all([client.presets(), client.version(), client.schema()]);
    presets = p;
    schema = s;
    $('#version').textContent = `core ${v.version ?? ''}`;
  } catch (err) {
    showBanner(banner, `Could not load the planner module (hapmoe.js / hapmoe.wasm): ${err.message}`);
    status.idle('Planner unavailable.');
    $('#plan-btn').disabled = true;
    return;
  }
  defaults = defaultScenario(presets);
  form = createScenarioForm(formEl.querySelector('.fields'), presets, schema);
  await restoreFromHash();
  formEl.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  formEl.addEventListener('input', (e) => {
    results.setStale(true);
    if (e.target.classList.contains('invalid')) {
      e.target.classList.remove('invalid');
      e.target.removeAttribute('aria-invalid');
      const note = formEl.querySelector(`.field-error[data-error-for="${CSS.escape(e.target.dataset.field)}"]`);
      (note?.closest('tr.error-row') || note)?.remove();
    }
  });
  $('#cancel-btn').addEventListener('click', cancel);
  $('#download-btn').addEventListener('click', () => results.result && downloadJson('hapmoe-result.json', results.result));
  $('#link-btn').addEventListener('click', (e) => copyWithFeedback(e.currentTarget, location.href));
  window.addEventListener('hashchange', async () => {
    if (location.hash === ownHash) return;
    await restoreFromHash();
    run();
  });
  run();
}

start();
