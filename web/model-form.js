// Model section: preset select plus every ModelSpec field (kinds, units, ranges, defaults and
// help from the field schema). get() returns the preset id when nothing was changed, else
// {preset, ...changed fields}; a custom spec is sent in full.
import { MODEL_GROUPS, META_KEYS, fieldDefs, makeField, readInput, writeInput, sameValue } from './fields.js';
import { createPresetSelect } from './preset-select.js';
import { importHfConfig } from './hf-config.js';
import { checkJsonShape } from './json-limits.js';
import { esc } from './format.js';

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
    <span class="hint">or drop it here, or paste it:</span>
    <details class="hf-paste"><summary>Paste config.json text</summary>
      <label>Model name <span class="unit">(optional; else _name_or_path or the architecture)</span>
        <input type="text" class="hf-name" maxlength="120" autocomplete="off"></label>
      <label>config.json text<textarea class="hf-text" rows="6" spellcheck="false"></textarea></label>
      <button type="button" class="secondary hf-apply">Import pasted config</button></details>
    <div class="import-note" role="status"></div>`;
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

  /** Imports config text; what is refused (not JSON, not a model config, a model the core cannot
   *  cost) leaves every field as it was. name: the user's, source: where the text came from. */
  function importText(text, source, name = '') {
    const note = importer.querySelector('.import-note');
    try {
      const shape = checkJsonShape(text);
      if (shape) throw new Error(shape);
      let cfg;
      try { cfg = JSON.parse(text); } catch (err) { throw new Error(`it is not JSON (${err.message})`); }
      const fileName = /^(config)?(\.json)?$/i.test(source) ? '' : source.replace(/\.json$/i, '');
      const { spec, ignored, notes } = importHfConfig(cfg, { name: name || (source === 'pasted text' ? '' : fileName) });
      api.set(spec);
      details.open = true;
      note.innerHTML = `<p>Loaded ${esc(spec.name)} from ${esc(source)}: check the fields, then Plan.</p>` +
        (notes.length ? `<p>Assumed: ${notes.map(esc).join('; ')}.</p>` : '') +
        `<p>Ignored (no effect on the plan): ${ignored.length ? ignored.map((k) => `<code>${esc(k)}</code>`).join(', ') : 'none'}.</p>`;
      note.className = 'import-note';
      element.dispatchEvent(new Event('input', { bubbles: true }));
      return true;
    } catch (err) {
      note.textContent = `${source} was not imported: ${err.message}. The model fields are unchanged.`;
      note.className = 'import-note error';
      return false;
    }
  }
  async function importFile(file) {
    if (file.size > 8 * 1024 * 1024) {
      Object.assign(importer.querySelector('.import-note'), { className: 'import-note error',
        textContent: `${file.name} was not imported: it is ${Math.round(file.size / 1048576)} MB, a config.json is a few KB (is it the weights?). The model fields are unchanged.` });
      return;
    }
    importText(await file.text(), file.name, importer.querySelector('.hf-name').value.trim());
  }
  importer.querySelector('.hf-apply').addEventListener('click', () =>
    importText(importer.querySelector('.hf-text').value, 'pasted text', importer.querySelector('.hf-name').value.trim()));
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
