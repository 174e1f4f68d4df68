// The scenario form: model, cluster, training and search sections. getScenario() builds the
// scenario the core reads (preset ids plus only changed fields); setScenario() restores it.
import { TRAINING_FIELDS, TRAINING_ADVANCED, SEARCH_FIELDS, makeField, readInput, writeInput } from './fields.js';
import { createModelForm } from './model-form.js';
import { createClusterForm } from './cluster-form.js';

export const FORMAT = 'hapmoe.scenario/1';
const RECOMPUTE = ['none', 'selective', 'full'];
const DEFAULT_TOP_K = 5;

function section(title, extraClass = '') {
  const el = document.createElement('fieldset');
  el.className = `section ${extraClass}`;
  el.innerHTML = `<legend>${title}</legend>`;
  return el;
}

function addFields(parent, defs, prefix, inputs) {
  const box = document.createElement('div');
  box.className = 'field-grid';
  for (const def of defs) {
    const field = makeField(def, `${prefix}.${def.key}`);
    inputs.set(def.key, field.querySelector('input,select'));
    box.append(field);
  }
  parent.append(box);
  return box;
}

/** Builds the form inside root from presets {gpus, models, clusters}. */
export function createScenarioForm(root, presets) {
  const model = createModelForm(presets.models);
  const cluster = createClusterForm(presets.clusters, presets.gpus);
  const training = new Map();
  const search = new Map();

  const trainingEl = section('Training');
  addFields(trainingEl, TRAINING_FIELDS, 'training', training);
  const adv = document.createElement('details');
  adv.innerHTML = '<summary>More training options</summary>';
  addFields(adv, TRAINING_ADVANCED, 'training', training);
  trainingEl.append(adv);

  const searchEl = section('Search');
  const searchBody = document.createElement('details');
  searchBody.innerHTML = '<summary>Constraints <span class="hint">(empty = let the planner choose)</span></summary>';
  addFields(searchBody, SEARCH_FIELDS, 'search', search);
  const rc = document.createElement('div');
  rc.className = 'field checks';
  rc.dataset.field = 'search.recompute';
  rc.setAttribute('role', 'group');
  rc.setAttribute('aria-label', 'Recompute options');
  rc.innerHTML = '<span class="label">Recompute</span>' + RECOMPUTE.map((r) =>
    `<label><input type="checkbox" name="recompute" value="${r}" checked> ${r}</label>`).join('');
  searchBody.append(rc);
  addFields(searchBody, [
    { key: 'mode', label: 'Mode', kind: 'select', options: ['megatron', 'hetero'] },
    { key: 'top_k', label: 'Plans to keep', kind: 'int', unit: 'plans' },
  ], 'search', search);
  searchEl.append(searchBody);

  root.replaceChildren(model.element, cluster.element, trainingEl, searchEl);

  function getTraining() {
    const out = {};
    for (const def of TRAINING_FIELDS) {
      const v = readInput(training.get(def.key));
      if (v != null || def.key === 'global_batch_size' || def.key === 'seq_length') out[def.key] = v;
    }
    for (const def of TRAINING_ADVANCED) {
      const v = readInput(training.get(def.key));
      if (v !== def.default) out[def.key] = v;
    }
    return out;
  }

  function getSearch() {
    const out = {};
    for (const def of SEARCH_FIELDS) {
      const v = readInput(search.get(def.key));
      if (v != null && !(Array.isArray(v) && !v.length)) out[def.key] = v;
    }
    const checked = [...rc.querySelectorAll('input:checked')].map((i) => i.value);
    if (checked.length !== RECOMPUTE.length) out.recompute = checked;
    const mode = readInput(search.get('mode'));
    if (mode !== 'megatron') out.mode = mode;
    const topK = readInput(search.get('top_k'));
    if (topK !== DEFAULT_TOP_K) out.top_k = topK;
    return out;
  }

  return {
    /** The scenario object for the core. */
    getScenario() {
      const s = { format: FORMAT, model: model.get(), cluster: cluster.get(), training: getTraining() };
      const srch = getSearch();
      if (Object.keys(srch).length) s.search = srch;
      return s;
    },
    /** Restores every field from a (possibly partial) scenario; missing parts take defaults. */
    setScenario(s, defaults) {
      model.set(s.model ?? defaults.model);
      cluster.set(s.cluster ?? defaults.cluster);
      const t = { ...defaults.training, ...(s.training || {}) };
      for (const def of [...TRAINING_FIELDS, ...TRAINING_ADVANCED]) {
        writeInput(training.get(def.key), t[def.key] ?? def.default ?? (def.key === 'moe_load_imbalance' ? 1 : null));
      }
      const sr = s.search || {};
      for (const def of SEARCH_FIELDS) writeInput(search.get(def.key), sr[def.key]);
      const rec = sr.recompute == null ? RECOMPUTE : [].concat(sr.recompute);
      rc.querySelectorAll('input').forEach((i) => { i.checked = rec.includes(i.value); });
      writeInput(search.get('mode'), sr.mode ?? 'megatron');
      writeInput(search.get('top_k'), sr.top_k ?? DEFAULT_TOP_K);
    },
  };
}
