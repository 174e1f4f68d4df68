// Model section: preset select plus every ModelSpec field (kinds, units, ranges, defaults and
// help from the field schema). get() returns the preset id when nothing was changed, else
// {preset, ...changed fields}; a custom spec is sent in full.
import { MODEL_GROUPS, META_KEYS, fieldDefs, makeField, readInput, writeInput, sameValue } from './fields.js';
import { createPresetSelect } from './preset-select.js';
import { modelSpecFromHfConfig } from './hf-config.js';

const KNOWN = new Set(MODEL_GROUPS.flatMap((g) => g.fields.map(([key]) => key)));

function guessDef(key, value) {
  const kind = typeof value === 'boolean' ? 'bool' : Number.isInteger(value) ? 'int' : typeof value === 'number' ? 'num' : typeof value === 'string' ? 'text' : 'json';
  return { key, label: key, kind };
}

/** presets: model presets by id; schema: indexSchema() of the core's field schema. */
export function createModelForm(presets, schema) {
  const element = document.createElement('fieldset');
  element.className = 'section';
  element.innerHTML = '<legend>Model</legend>';
  const picker = createPresetSelect('Preset', 'model', presets);
  const details = document.createElement('details');
  details.innerHTML = '<summary>Model fields</summary>';
  const extraBox = document.createElement('div');
  const inputs = new Map(); // key -> input
  const defaults = new Map(); // key -> the schema's fixed default (absent when none)

  const addGroup = (parent, title, defs) => {
    const box = document.createElement('div');
    box.className = 'field-group';
    box.innerHTML = `<h4>${title}</h4>`;
    for (const def of defs) {
      const field = makeField(def, `model.${def.key}`);
      inputs.set(def.key, field.querySelector('input,select'));
      box.append(field);
    }
    parent.append(box);
  };
  for (const g of MODEL_GROUPS) {
    const defs = fieldDefs(schema, 'model', g.fields);
    for (const d of defs) if (d.default !== undefined) defaults.set(d.key, d.default);
    addGroup(details, g.title, defs);
  }
  details.append(extraBox);
  const importer = document.createElement('div');
  importer.className = 'hf-import';
  importer.innerHTML = `<label class="file-button secondary">Import Hugging Face config.json
    <input type="file" accept=".json,application/json" class="hf-file"></label>
    <span class="hint">or drop it here</span><span class="import-note" role="status"></span>`;
  element.append(picker.element, importer, details);

  /** Shows fields a preset has that the form does not know (kept editable and sent as is). */
  function renderExtras(spec) {
    for (const key of [...inputs.keys()]) if (!KNOWN.has(key)) inputs.delete(key);
    extraBox.replaceChildren();
    const extra = Object.keys(spec).filter((k) => !KNOWN.has(k) && !META_KEYS.has(k) && k !== 'preset');
    if (extra.length) addGroup(extraBox, 'Other fields', extra.map((k) => guessDef(k, spec[k])));
  }

  let baseRead = {}; // the inputs' values as the selected preset alone fills them

  /** Fills the inputs from a preset spec plus overrides, remembering the preset's readback. */
  function fill(base, overrides = {}) {
    renderExtras({ ...base, ...overrides });
    for (const [key, input] of inputs) writeInput(input, base[key] ?? defaults.get(key));
    baseRead = current();
    for (const [key, value] of Object.entries(overrides)) if (inputs.has(key)) writeInput(inputs.get(key), value);
  }

  function current() {
    const out = {};
    for (const [key, input] of inputs) out[key] = readInput(input);
    return out;
  }

  picker.onChange((pid) => { if (pid) fill(presets[pid]); });

  async function importFile(file) {
    const note = importer.querySelector('.import-note');
    try {
      const spec = modelSpecFromHfConfig(JSON.parse(await file.text()));
      api.set(spec);
      details.open = true;
      note.textContent = `Loaded ${file.name}: check the fields, then Plan.`;
      note.className = 'import-note';
      element.dispatchEvent(new Event('input', { bubbles: true }));
    } catch (err) {
      note.textContent = `Could not read ${file.name}: ${err.message}`;
      note.className = 'import-note error';
    }
  }
  importer.querySelector('.hf-file').addEventListener('change', (e) => { if (e.target.files[0]) importFile(e.target.files[0]); e.target.value = ''; });
  element.addEventListener('dragover', (e) => { e.preventDefault(); element.classList.add('drop'); });
  element.addEventListener('dragleave', () => element.classList.remove('drop'));
  element.addEventListener('drop', (e) => {
    e.preventDefault();
    element.classList.remove('drop');
    if (e.dataTransfer.files[0]) importFile(e.dataTransfer.files[0]);
  });

  const api = {
    element,
    /** Scenario "model" value. */
    get() {
      const now = current();
      const pid = picker.value;
      if (!pid) return Object.fromEntries(Object.entries(now).filter(([, v]) => v != null));
      const diff = {};
      for (const [key, value] of Object.entries(now)) if (!sameValue(value, baseRead[key])) diff[key] = value;
      return Object.keys(diff).length ? { preset: pid, ...diff } : pid;
    },
    /** Loads a scenario "model" value (id, {preset, ...overrides} or a full spec). */
    set(value) {
      const obj = typeof value === 'string' ? { preset: value } : (value || {});
      const base = presets[obj.preset];
      picker.setValue(base ? obj.preset : null);
      const { preset, ...overrides } = obj;
      fill(base || {}, overrides);
    },
  };
  return api;
}
