// The scenario form: model, cluster, training and search sections, built from the core's field
// schema (kinds, units, ranges, defaults, allowed values, help). getScenario() builds the
// scenario the core reads (preset ids plus only fields that differ from their default);
// setScenario() restores it.
import {
  TRAINING_MAIN, TRAINING_MORE, SEARCH_MAIN, SEARCH_MORE, SEARCH_MODE, MODE_LABELS, SEARCH_GOAL, OBJECTIVE_LABELS,
  BUDGET_OBJECTIVE, indexSchema, fieldDef, fieldDefs,
  makeField, makeHelp, readInput, writeInput, sameValue,
} from './fields.js';
import { createModelForm } from './model-form.js';
import { createClusterForm } from './cluster-form.js';

function section(title, extraClass = '') {
  const el = document.createElement('fieldset');
  el.className = `section ${extraClass}`;
  el.innerHTML = `<legend>${title}</legend>`;
  return el;
}

function addFields(parent, defs, inputs) {
  const box = document.createElement('div');
  box.className = 'field-grid';
  for (const def of defs) {
    const field = makeField(def, def.path);
    inputs.set(def.key, { def, input: field.querySelector('input,select') });
    box.append(field);
  }
  parent.append(box);
  return box;
}

/** A group of checkboxes for an enum-list field (search.recompute); all checked = unset. */
function makeChecks(def) {
  const box = document.createElement('div');
  box.className = 'field checks';
  box.dataset.field = def.path;
  box.setAttribute('role', 'group');
  box.setAttribute('aria-label', `${def.label} options`);
  const label = document.createElement('span');
  label.className = 'label';
  label.textContent = def.label;
  const help = makeHelp(def.help, def.label);
  box.append(label, help.button);
  for (const option of def.options) {
    const l = document.createElement('label');
    const cb = document.createElement('input');
    Object.assign(cb, { type: 'checkbox', name: def.key, value: option, checked: true });
    l.append(cb, ` ${option}`);
    box.append(l);
  }
  box.append(help.note);
  return box;
}

/** Values of the inputs that the core needs: required ones, and others that differ from the default. */
/** {"a.b": v} -> {a: {b: v}}: dotted keys (training.optimizer.*) become nested objects. */
function nest(flat) {
  const out = {};
  for (const [key, v] of Object.entries(flat)) {
    const parts = key.split('.');
    let at = out;
    for (const p of parts.slice(0, -1)) at = at[p] ??= {};
    at[parts[parts.length - 1]] = v;
  }
  return out;
}

/** The inverse of nest for one level of nesting: {a: {b: v}} -> {"a.b": v}. */
function flatten(obj) {
  const out = {};
  for (const [key, v] of Object.entries(obj || {})) {
    if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k, w] of Object.entries(v)) out[`${key}.${k}`] = w;
    else out[key] = v;
  }
  return out;
}

function readChanged(inputs) {
  const out = {};
  for (const [key, { def, input }] of inputs) {
    const v = readInput(input);
    const emptyList = Array.isArray(v) && !v.length && def.kind !== 'words';
    if (def.required || (v != null && !emptyList && !sameValue(v, def.default))) out[key] = v;
  }
  return out;
}

/** Builds the form inside root from presets {gpus, models, clusters} and the core's schema(). */
export function createScenarioForm(root, presets, schemaJson) {
  const schema = indexSchema(schemaJson);
  const model = createModelForm(presets.models, schema);
  const cluster = createClusterForm(presets.clusters, presets.gpus, schema);
  const training = new Map();
  const search = new Map();

  const trainingEl = section('Training');
  addFields(trainingEl, fieldDefs(schema, 'training', TRAINING_MAIN), training);
  const adv = document.createElement('details');
  adv.innerHTML = '<summary>More training options</summary>';
  addFields(adv, fieldDefs(schema, 'training', TRAINING_MORE), training);
  trainingEl.append(adv);

  const searchEl = section('Search');
  // The runtime: radio buttons in view (the schema's values, so a mode the core adds appears),
  // driving the hidden select that the form reads and writes like any other field.
  const modeBox = document.createElement('div');
  modeBox.hidden = true;
  addFields(modeBox, fieldDefs(schema, 'search', SEARCH_MODE), search);
  const modeSelect = modeBox.querySelector('select');
  const modeGroup = document.createElement('fieldset');
  modeGroup.className = 'mode-choice';
  modeGroup.innerHTML = '<legend>Runtime</legend>' + [...(modeSelect?.options || [])].filter((o) => o.value).map((o) => {
    const [label, what] = MODE_LABELS[o.value] || [o.value, ''];
    return `<label><input type="radio" name="search-mode" value="${o.value}"> ${label}${what ? ` <span class="hint">(${what})</span>` : ''}</label>`;
  }).join('');
  const syncMode = () => { for (const r of modeGroup.querySelectorAll('input')) r.checked = r.value === (modeSelect.value || modeSelect.dataset.default); };
  if (modeSelect) {
    modeSelect.dataset.default = fieldDef(schema, 'search.mode', '').default ?? 'megatron';
    modeGroup.addEventListener('change', (e) => {
      modeSelect.value = e.target.value;
      modeSelect.dispatchEvent(new Event('change', { bubbles: true }));
    });
    searchEl.append(modeGroup, modeBox);
  }
  addFields(searchEl, fieldDefs(schema, 'search', SEARCH_GOAL), search);
  const objective = search.get('objective').input;
  for (const o of objective.options) if (OBJECTIVE_LABELS[o.value]) o.text = OBJECTIVE_LABELS[o.value];
  const budget = search.get('budget_per_hour').input;
  // The budget is asked for (and sent) only with the objective that reads it.
  const syncBudget = () => { budget.closest('.field').hidden = objective.value !== BUDGET_OBJECTIVE; };
  objective.addEventListener('change', syncBudget);
  if (modeSelect) syncMode();
  const searchBody = document.createElement('details');
  searchBody.innerHTML = '<summary>Constraints <span class="hint">(empty = let the planner choose)</span></summary>';
  addFields(searchBody, fieldDefs(schema, 'search', SEARCH_MAIN), search);
  const recompute = fieldDef(schema, 'search.recompute', 'Recompute');
  const rc = makeChecks(recompute);
  // Module sets ({"modules": [...]}), one per ';': "moe_act layernorm; mla_up_proj".
  const modulesDef = fieldDef(schema, 'search.recompute[].modules', 'Recompute module sets', {
    placeholder: 'e.g. moe_act layernorm; mla_up_proj',
  });
  const modulesField = makeField({ ...modulesDef, kind: 'text', required: false }, 'search.recompute_modules');
  const modulesInput = modulesField.querySelector('input');
  searchBody.append(rc, modulesField);
  addFields(searchBody, fieldDefs(schema, 'search', SEARCH_MORE), search);
  searchEl.append(searchBody);

  root.replaceChildren(model.element, cluster.element, trainingEl, searchEl);

  function getSearch() {
    const out = readChanged(search);
    if (objective.value !== BUDGET_OBJECTIVE) delete out.budget_per_hour;
    const checked = [...rc.querySelectorAll('input:checked')].map((i) => i.value);
    const sets = modulesInput.value.split(';').map((x) => x.split(/[\s,]+/).filter(Boolean)).filter((x) => x.length);
    if (checked.length !== recompute.options.length || sets.length) {
      out.recompute = [...checked, ...sets.map((modules) => ({ modules }))];
    }
    return out;
  }

  function writeAll(inputs, values) {
    for (const [key, { def, input }] of inputs) writeInput(input, values[key] ?? def.default);
  }

  return {
    /** The scenario object for the core. */
    getScenario() {
      const s = { format: schemaJson.scenario_format, model: model.get(), cluster: cluster.get(), training: nest(readChanged(training)) };
      const srch = getSearch();
      if (Object.keys(srch).length) s.search = srch;
      return s;
    },
    /** Restores every field from a (possibly partial) scenario; missing parts take defaults. */
    setScenario(s, defaults) {
      model.set(s.model ?? defaults.model);
      cluster.set(s.cluster ?? defaults.cluster);
      writeAll(training, flatten({ ...defaults.training, ...(s.training || {}) }));
      const sr = s.search || {};
      writeAll(search, sr);
      const rec = sr.recompute == null ? recompute.options : [].concat(sr.recompute);
      rc.querySelectorAll('input').forEach((i) => { i.checked = rec.includes(i.value); });
      modulesInput.value = rec.filter((r) => r && Array.isArray(r.modules)).map((r) => r.modules.join(' ')).join('; ');
      if (modeSelect) syncMode();
      syncBudget();
    },
  };
}
