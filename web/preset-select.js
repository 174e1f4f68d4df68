// A labelled preset <select> with a "source" note for the chosen preset.
import { esc } from './format.js';

const CUSTOM = '__custom__';

/** Escapes text and turns http(s) URLs in it into links (opened only when clicked). */
export function linkify(text) {
  return esc(text).replace(/https?:\/\/[^\s<>")]+[^\s<>").,;]/g, (u) => `<a href="${u}" target="_blank" rel="noopener noreferrer">${u}</a>`);
}

/** The "source" note for a preset: a short disclosure holding the full text. */
export function sourceMarkup(source) {
  if (!source) return '';
  const text = Array.isArray(source) ? source.join('; ') : String(source);
  return `<details class="source-note"><summary>source</summary><p>${linkify(text)}</p></details>`;
}

/**
 * Creates {element, select, value, setValue(id|null), onChange(fn)} for presets {id: spec}.
 * path is the data-field for errors (e.g. "model"); null value means a custom spec.
 */
export function createPresetSelect(label, path, presets) {
  const element = document.createElement('div');
  element.className = 'preset-select field';
  const id = `preset-${path}`;
  element.innerHTML = `<label for="${id}">${esc(label)}</label>
    <select id="${id}" data-field="${esc(path)}"></select><div class="source"></div>`;
  const select = element.querySelector('select');
  const sourceEl = element.querySelector('.source');
  for (const [pid, spec] of Object.entries(presets)) {
    const name = spec.name || '';
    select.add(new Option(!name || name === pid ? pid : name.startsWith(pid) ? name : `${pid} — ${name}`, pid));
  }
  const showSource = () => { sourceEl.innerHTML = sourceMarkup(presets[select.value]?.source); };
  const api = {
    element, select,
    get value() { return select.value === CUSTOM ? null : select.value; },
    setValue(pid) {
      if (pid != null && presets[pid]) select.value = pid;
      else {
        if (!select.querySelector(`option[value="${CUSTOM}"]`)) select.add(new Option('(custom)', CUSTOM));
        select.value = CUSTOM;
      }
      showSource();
    },
    onChange(fn) { select.addEventListener('change', () => { showSource(); fn(api.value); }); },
  };
  showSource();
  return api;
}
