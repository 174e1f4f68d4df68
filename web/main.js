// Wiring only: worker client, form, results, URL state, history, files and run controls.
import { PlannerClient, CancelledError, PlannerFailure, DEFAULT_BUDGET_MS, describeCrash } from './planner-client.js';
import { createScenarioForm } from './form.js';
import { createResultsView } from './results-view.js';
import { createRunStatus } from './run-status.js';
import { encodeScenario, decodeHash } from './url-state.js';
import { showBanner, markFieldError, clearFieldErrors } from './errors.js';
import { downloadJson, copyWithFeedback } from './clipboard.js';
import { unknownPresets, scenarioFromFile, BUNDLE_FORMAT } from './scenario-check.js';
import { checkJsonShape } from './json-limits.js';
import { downloadChart } from './chart-download.js';
import { registerServiceWorker } from './sw-register.js';
import { createProfileForm } from './profile-form.js';
import { createReproduceView } from './reproduce-view.js';
import { wireSkipLinks, jumpText } from './skip-links.js';
import { causeFields, highlightCause, smallestFit } from './no-fit.js';

/** Quiet time after an edit before the page re-plans by itself, in milliseconds. */
const LIVE_DELAY_MS = 600;
/** Largest scenario file accepted, in bytes. */
const MAX_FILE_BYTES = 1024 * 1024;

const $ = (sel) => document.querySelector(sel);
/** Start-up milestones as performance marks ("hapmoe:<name>"), read by the tests and the bench. */
const mark = (name) => performance.mark(`hapmoe:${name}`);
mark('modules');

/** What boot.js started before the modules loaded ({worker, messages, plan}; once), or null. */
function takeBoot() {
  const boot = self.hapmoeBoot || null;
  self.hapmoeBoot = null;
  return boot;
}
const budgetS = Number(new URLSearchParams(location.search).get('budget_s'));
const client = new PlannerClient('worker.js', { budgetMs: budgetS >= 0.5 && budgetS <= 600 ? budgetS * 1000 : DEFAULT_BUDGET_MS,
  boot: takeBoot() });
const banner = $('#banner');
const formEl = $('#scenario-form');
const status = createRunStatus({ plan: $('#plan-btn'), cancel: $('#cancel-btn'), progress: $('#progress'), status: $('#run-status') });
const results = createResultsView({
  root: $('#results'), summary: $('#summary'), plans: $('#plans'), compare: $('#compare'), baselines: $('#baselines'),
  pareto: $('#pareto'), paretoChart: $('#pareto-chart'), paretoTable: $('#pareto-table'),
  detail: $('#plan-detail'), detailTitle: $('#detail-title'), stages: $('#stages'), memory: $('#memory-chart'),
  timeline: $('#timeline-chart'), megatron: $('#megatron'), actions: $('#result-actions'), failure: $('#failure'),
}, {
  onView: (view) => writeUrl(lastScenario, view, false),
  loadTimeline: (plan) => client.timeline({ ...lastScenario, plan }),
  loadNodeLoss: (plan) => client.nodeLoss({ ...lastScenario, plan }),
});

let form = null;
let presets = null;
let defaults = null;
let runId = 0;
let liveTimer = 0;
let lastScenario = null; // the scenario of the shown result
let shownHash = '';      // scenario part of the hash this page wrote or restored
let stickyError = '';    // a link or file error that stays visible until the next successful run

let carried = {};       // parts of a loaded scenario that have no field in the form, sent along unchanged

const scenarioPart = (hash) => (hash || '').split('&')[0];

/** The parts of scenario the form has no input for: whole unknown sections, unknown training/search keys. */
function partsWithoutField(scenario) {
  const out = {};
  for (const [key, value] of Object.entries(scenario)) {
    if (['format', 'model', 'cluster'].includes(key)) continue;
    if ((key === 'training' || key === 'search') && value && typeof value === 'object' && !Array.isArray(value)) {
      const extra = Object.entries(value).filter(([f]) => !formEl.querySelector(`[data-field="${CSS.escape(`${key}.${f}`)}"]`));
      if (extra.length) out[key] = Object.fromEntries(extra);
    } else if (key !== 'training' && key !== 'search') out[key] = value;
  }
  return out;
}

/** What the page plans when opened without a link: boot.js's, which already asked the worker to plan it. */
const DEFAULT_SCENARIO = self.hapmoeDefaultScenario;

/** DEFAULT_SCENARIO with an absent preset replaced by the first one. */
function defaultScenario(presets) {
  const pick = (ids, wanted) => (wanted in ids ? wanted : Object.keys(ids)[0]);
  return { ...DEFAULT_SCENARIO, model: pick(presets.models, DEFAULT_SCENARIO.model), cluster: pick(presets.clusters, DEFAULT_SCENARIO.cluster) };
}

/** The form's scenario plus what a link or file carried that the form cannot show. */
function formScenario() {
  const s = form.getScenario();
  for (const [key, value] of Object.entries(carried)) {
    s[key] = key === 'training' || key === 'search' ? { ...value, ...(s[key] || {}) } : value;
  }
  return s;
}

function showCarried() {
  const names = Object.entries(carried).flatMap(([k, v]) => (k === 'training' || k === 'search' ? Object.keys(v).map((f) => `${k}.${f}`) : [k]));
  $('#carried-note').textContent = names.length ? `Kept from the link or file (no field here, sent as is): ${names.join(', ')}.` : '';
}

/** Puts scenario (+ view) in the URL: a new history entry when push and the scenario changed. */
async function writeUrl(scenario, view, push) {
  if (!scenario) return;
  const hash = await encodeScenario(scenario, view);
  const changed = scenarioPart(hash) !== scenarioPart(location.hash);
  shownHash = scenarioPart(hash);
  if (push && changed && history.state?.ran) history.pushState({ ran: true }, '', hash);
  else history.replaceState({ ran: push || history.state?.ran || false }, '', hash);
}

/** An internal failure of the core (e.g. std::bad_alloc): a fresh module, and a message saying so. */
function showInternal(error) {
  client.restart();
  showBanner(banner, describeCrash('InternalError', error.message));
  status.idle('Stopped.');
}

function showInvalid(error, live = false) {
  const msg = error?.message || 'Invalid input';
  if (!markFieldError(formEl, error?.field, msg, { focus: !live })) showBanner(banner, `${error?.field ? `${error.field}: ` : ''}${msg}`);
  else showBanner(banner, 'Please fix the highlighted field.');
}

function showSticky(text) {
  stickyError = text;
  showBanner(banner, text);
}

/** The search mode a scenario runs in (the page's default is "auto", boot.js). */
function effectiveMode(s) { return s.search?.mode ?? 'megatron'; }

/** The scenario in upstream mode: the first, fast half of an "auto" search. */
function upstreamOnly(s) { return { ...s, search: { ...(s.search || {}), mode: 'megatron' } }; }

/** Runs the scenario (default: the form's); view restores a link's plan and sort. */
async function run({ scenario = null, view = null, scrollToResults = false, live = false } = {}) {
  const id = ++runId;
  clearTimeout(liveTimer);
  if (document.body.dataset.state === 'running') client.cancel();
  clearFieldErrors(formEl);
  highlightCause(formEl, []);
  showBanner(banner, stickyError);
  const s = scenario || formScenario();
  status.running('Checking inputs…');
  results.setStale(true);
  try {
    const urlWritten = writeUrl(s, view, true);  // compresses while the worker checks the inputs
    // A prefetched plan of this scenario is already under way: its answer reports input errors
    // as validate() would, so the worker is not asked twice.
    const check = client.hasPrefetch(s) ? { ok: true } : await client.validate(s);
    await urlWritten;
    if (id !== runId) return;
    if (!check.ok && check.error?.code === 'internal') { showInternal(check.error); return; }
    if (!check.ok) { showInvalid(check.error, live); status.idle('Input needs attention.'); return; }
    status.running('Searching…');
    mark('search-sent');
    // "auto": the upstream plans first (a fraction of the time), then both runtimes ranked together.
    const both = effectiveMode(s) === 'auto';
    const progress = (f, n) => { if (id === runId) status.progress(f, n); };
    let result = await client.plan(both ? upstreamOnly(s) : s, progress);
    if (id !== runId) return;
    if (!result.ok && result.error?.code === 'internal') { showInternal(result.error); return; }
    if (!result.ok) { showInvalid(result.error, live); status.idle('Input needs attention.'); return; }
    stickyError = '';
    showBanner(banner, '');
    lastScenario = s;
    results.setStale(false);
    const shown = results.render(result, view, s.training?.train_tokens);
    mark('plan-shown');
    Object.assign($('#jump-plans'), { textContent: jumpText(result), hidden: false });
    await shown;
    if (id !== runId) return;
    if (both) {
      status.running('Upstream Megatron-LM plans shown; searching FlagScale plans to rank with them…');
      document.body.dataset.phase = 'flagscale';
      const full = await client.plan(s, progress);
      if (id !== runId) return;
      delete document.body.dataset.phase;
      if (full.ok) {
        result = full;
        await results.render(result, view, s.training?.train_tokens);
        if (id !== runId) return;
        $('#jump-plans').textContent = jumpText(result);
      } else if (full.error?.code === 'internal') { showInternal(full.error); return; }
      else showBanner(banner, `FlagScale plans were not searched: ${full.error?.message || 'error'}; the upstream plans stand.`);
    }
    if (!result.plans.length) await explainNoFit(s, result, id);
    if (id !== runId) return;
    status.idle(result.plans.length ? `Done: ${result.plans.length} plan(s).` : 'Done: no feasible plan.');
    if (scrollToResults && matchMedia('(max-width: 1000px)').matches) $('#results').scrollIntoView({ block: 'start' });
  } catch (err) {
    if (id !== runId) return;
    if (err instanceof CancelledError) status.idle('Search cancelled.');
    else if (err instanceof PlannerFailure) { showBanner(banner, err.message); status.idle('Stopped.'); }
    else { showBanner(banner, `Planner error: ${err.message}`); status.idle('Failed.'); }
  }
}

/**
 * A no-fit result: highlights the form fields behind it; over memory, asks the core for the
 * smallest larger cluster (same groups, more nodes) with a plan, which "Use this cluster" loads.
 */
async function explainNoFit(s, result, id) {
  // Within a budget, the budget may be what no plan meets (the core's diagnosis names memory or rules only).
  const budget = s.search?.objective === 'time_within_budget' ? ['search.budget_per_hour'] : [];
  const labels = highlightCause(formEl, [...budget, ...causeFields(result)]);
  results.showNoFit({ labels });
  if (!(result.diagnosis?.shortfall_gib > 0)) return;
  status.running('No plan fits: trying larger clusters…');
  results.showNoFit({ labels, fit: 'searching' });
  let fit = null;
  try {
    fit = await smallestFit(s, presets.clusters, (scenario) => client.plan(scenario));
  } catch (err) {
    if (err instanceof CancelledError) throw err;  // an edit or Cancel: run() handles it
    // A larger cluster that crashed or outran the budget says nothing about the shown result.
  }
  if (id !== runId) return;
  const useCluster = (f) => {
    const next = { ...s, cluster: f.cluster };
    if (loadScenario(next, 'The larger cluster')) run({ scenario: next });
  };
  results.showNoFit({ labels, fit, onUse: useCluster });
}

function cancel() {
  runId++;
  clearTimeout(liveTimer);
  client.cancel();
  status.idle('Search cancelled.');
}

/** Loads a scenario from outside into the form unless it names unknown presets; returns ok. */
function loadScenario(scenario, origin) {
  const unknown = unknownPresets(scenario, presets);
  if (unknown.length) {
    showSticky(`${origin} names what this planner does not have (${unknown.join('; ')}); nothing was loaded from it.`);
    return false;
  }
  form.setScenario(scenario, defaults);
  carried = partsWithoutField(scenario);
  showCarried();
  return true;
}

/** Restores the form from location.hash and plans it; a bad link keeps its error and the URL. */
async function restoreFromHash() {
  const decoded = await decodeHash(location.hash);
  if (!decoded) { form.setScenario(defaults, defaults); carried = {}; showCarried(); run(); return; }
  shownHash = scenarioPart(location.hash);
  if (decoded.error) { form.setScenario(defaults, defaults); carried = {}; showCarried(); showSticky(decoded.error); status.idle('The link was not loaded.'); return; }
  if (!loadScenario(decoded.scenario, 'The link')) { status.idle('The link was not loaded.'); return; }
  run({ scenario: decoded.scenario, view: decoded.view });
}

async function openFile(file) {
  const note = $('#file-note');
  const refuse = (why) => { note.textContent = ''; showSticky(`${file.name} was not opened: ${why}. The form is unchanged.`); };
  if (file.size > MAX_FILE_BYTES) return refuse(`it is ${Math.round(file.size / 1024)} KB, more than the ${MAX_FILE_BYTES / 1024} KB a scenario may be`);
  let scenario;
  try {
    const text = await file.text();
    const shape = checkJsonShape(text);
    if (shape) throw new Error(shape);
    let value;
    try { value = JSON.parse(text); } catch (err) { throw new Error(`it is not JSON (${err.message})`); }
    scenario = scenarioFromFile(value);
  } catch (err) { return refuse(err.message); }
  if (!loadScenario(scenario, file.name)) return;
  stickyError = '';
  note.textContent = `Opened ${file.name}.`;
  run({ scenario });
}

/** Scrolls so that the focused field is not hidden under the sticky run bar. */
function keepAboveRunBar(el) {
  const bar = $('.run-bar');
  if (!bar || bar.contains(el)) return;
  const overlap = el.getBoundingClientRect().bottom - bar.getBoundingClientRect().top;
  if (overlap > 0) window.scrollBy(0, overlap + 12);
}

function scheduleLive() {
  results.setStale(true);
  clearTimeout(liveTimer);
  liveTimer = setTimeout(() => run({ live: true }), LIVE_DELAY_MS);
}

function wire() {
  formEl.addEventListener('submit', (e) => { e.preventDefault(); run({ scrollToResults: true }); });
  for (const type of ['input', 'change']) {
    formEl.addEventListener(type, (e) => {
      if (e.target.closest('.file-actions, .profile-import, .hf-import') || e.target.type === 'file') return;
      if (e.target.classList.contains('invalid')) {
        e.target.classList.remove('invalid');
        e.target.removeAttribute('aria-invalid');
        const note = formEl.querySelector(`.field-error[data-error-for="${CSS.escape(e.target.dataset.field || '')}"]`);
        (note?.closest('tr.error-row') || note)?.remove();
      }
      scheduleLive();
    });
  }
  formEl.addEventListener('click', (e) => { if (e.target.closest('.remove-group, .add-group')) scheduleLive(); });
  formEl.addEventListener('focusin', (e) => keepAboveRunBar(e.target));
  $('#open-file').addEventListener('change', (e) => { if (e.target.files[0]) openFile(e.target.files[0]); e.target.value = ''; });
  $('#cancel-btn').addEventListener('click', cancel);
  $('#download-btn').addEventListener('click', () => results.result &&
    downloadJson('hapmoe-plan.json', { format: BUNDLE_FORMAT, scenario: lastScenario, result: results.result }));
  $('#link-btn').addEventListener('click', (e) => copyWithFeedback(e.currentTarget, location.href));
  document.querySelectorAll('.svg-btn').forEach((b) => b.addEventListener('click', () => downloadChart($(`#${b.dataset.chart}`), `hapmoe-${b.dataset.chart}.svg`)));
  const onNavigate = () => {
    if (scenarioPart(location.hash) === shownHash) return; // popstate and hashchange both fire for one Back
    shownHash = scenarioPart(location.hash);
    stickyError = '';
    restoreFromHash();
  };
  window.addEventListener('popstate', onNavigate);
  window.addEventListener('hashchange', onNavigate);
}

/**
 * The core's presets, version and schema: core-data.json, written at build time from what the
 * module itself returns (scripts/core-data.mjs), so the form is built while the worker is still
 * compiling the module; asked of the worker where that file is missing (e.g. serving web/ as is).
 */
async function coreData() {
  try {
    const res = await fetch('core-data.json');
    if (res.ok) {
      const d = await res.json();
      if (d?.presets && d?.version && d?.schema) return [d.presets, d.version, d.schema];
    }
  } catch { /* ask the worker */ }
  return Promise.all([client.presets(), client.version(), client.schema()]);
}

async function start() {
  document.body.dataset.state = 'loading';
  let schema;
  try {
    const [p, v, s] = await coreData();
    mark('core-ready');
    presets = p;
    $('#version').textContent = `core ${v.version ?? '?'}`;
    $('#core-version').textContent = `planner core ${v.version ?? '?'} (WebAssembly)`;
    schema = s;
  } catch (err) {
    showBanner(banner, `Could not load the planner module (hapmoe.js / hapmoe.wasm): ${err.message}`);
    status.idle('Planner unavailable.');
    $('#plan-btn').disabled = true;
    return;
  }
  createReproduceView({ button: $('#reproduce-btn'), root: $('#reproduce'), status: $('#reproduce-status'), client });
  defaults = defaultScenario(presets);
  form = createScenarioForm(formEl.querySelector('.fields'), presets, schema);
  createProfileForm($('#profile-import'), {
    call: (method, request) => client.call(method, request), getScenario: formScenario, presets,
    getPlan: () => formScenario().plan || results.result?.plans?.[0]?.plan || null,
    apply: (scenario, what) => { if (loadScenario(scenario, `The scenario with ${what}`)) run({ scenario }); },
  });
  wire();
  mark('form');
  await restoreFromHash();
}

wireSkipLinks();  // at once: a skip link followed before the form is built must not reach the hash
registerServiceWorker({
  onOfflineReady: () => { $('#app-notice').textContent = 'Ready to work offline.'; },
  onUpdate: (reload) => {
    const button = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary', textContent: 'Reload' });
    button.addEventListener('click', reload);
    $('#app-notice').replaceChildren('Update available — ', button);
  },
});
start();  // the form from core-data.json (or the worker's answers), then the link or the default scenario
// Without a link the page plans the default scenario: boot.js asked the worker to (adopted as the
// client's prefetch); run() takes that answer when the form's scenario is the same.
