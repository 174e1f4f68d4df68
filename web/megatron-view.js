// Megatron-LM arguments, environment, launch script and hostfile for one plan, with Copy and
// Download buttons (files named by model and plan), and the Megatron-LM release the flags need.
import { esc } from './format.js';
import { copyWithFeedback, downloadBlob } from './clipboard.js';

/** "mixtral-8x7b": a model name as a file-name part (letters, digits, dots and dashes). */
export const slug = (name) => String(name || 'model').toLowerCase().replace(/[^a-z0-9.]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'model';

/** The Copy and Download buttons of a code block; file: the download's name. */
function buttons(id, file) {
  return `<span class="code-buttons"><button type="button" class="secondary copy" data-copy="${id}">Copy</button>` +
    (file ? `<button type="button" class="secondary download" data-copy="${id}" data-filename="${esc(file)}">Download <span class="unit">${esc(file.split('-').pop())}</span></button>` : '') + '</span>';
}

/**
 * Escaped text with each "--flag value" group in a span that holds the space or newline after it,
 * each line in a span, so the text is unchanged and nothing lies between spans: wide screens wrap
 * only between groups; phones put one group per line (CSS).
 */
function flagsMarkup(text) {
  const lines = text.split('\n');
  return lines.map((line, i) => {
    const comment = line.trimStart().startsWith('#');  // a comment's "--flag" is prose, kept whole
    const groups = line.split(' ').reduce((gs, tok) => {
      if ((tok.startsWith('--') && !comment) || !gs.length) gs.push([tok]); else gs.at(-1).push(tok);
      return gs;
    }, []);
    const end = (k) => (k < groups.length - 1 ? ' ' : i < lines.length - 1 ? '\n' : '');
    return `<span class="line">${groups.map((g, k) => `<span class="flag">${esc(g.join(' '))}${end(k)}</span>`).join('')}</span>`;
  }).join('');
}

/** Markup for a hetero plan's FlagScale config ({yaml, experiment_yaml, hostfile}) and its warnings. */
function flagscaleMarkup(fs, warnings = [], stem = 'hapmoe-plan') {
  const files = { 'flagscale-yaml': `${stem}-train.yaml`, 'flagscale-experiment': `${stem}-experiment.yaml`, 'flagscale-hostfile': `${stem}-hostfile` };
  const block = (title, id, text) => text ? `<div class="code-block"><div class="code-head"><h4>${title}</h4>` +
    `${buttons(id, files[id])}</div>` +
    `<pre id="${id}" tabindex="0"><code>${esc(text)}</code></pre></div>` : '';
  const notes = warnings.length ? `<ul class="plan-warnings">${warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>` : '';
  return notes + block('FlagScale train config (conf/train/hapmoe.yaml)', 'flagscale-yaml', fs.yaml) +
    block('FlagScale experiment config (conf/hapmoe.yaml)', 'flagscale-experiment', fs.experiment_yaml) +
    block('Hostfile (pipeline-stage order)', 'flagscale-hostfile', fs.hostfile);
}

/** Markup for the megatron block ({args, env, launch, hostfile}); a hetero plan entry (with `flagscale`) shows its FlagScale config. */
export function megatronMarkup(megatron = {}, entry = {}, stem = 'hapmoe-plan') {
  if (entry.flagscale) return flagscaleMarkup(entry.flagscale, entry.warnings, stem);
  const files = { 'megatron-args': `${stem}-args.txt`, 'megatron-env': `${stem}-env.sh`, 'megatron-launch': `${stem}-launch.sh`, 'megatron-hostfile': `${stem}-hostfile` };
  const req = megatron.requires;
  const needs = req?.megatron_lm ? `<p class="requires">These flags need Megatron-LM <strong>${esc(req.megatron_lm)}</strong> or newer` +
    `${req.newest_flag ? ` (newest flag: <code>${esc(req.newest_flag)}</code>)` : ''}; the launch script's header says so too.</p>` : '';
  const env = Object.entries(megatron.env || {}).map(([k, v]) => `export ${k}=${v}`).join('\n');
  const block = (title, id, text) => text ? `<div class="code-block"><div class="code-head"><h4>${title}</h4>` +
    `${buttons(id, files[id])}</div>` +
    `<pre id="${id}" tabindex="0"><code>${flagsMarkup(text)}</code></pre></div>` : '';
  return needs + block('Arguments', 'megatron-args', megatron.args) +
    block('Environment', 'megatron-env', env) +
    block('Launch script (run on every host)', 'megatron-launch', megatron.launch) +
    block('Hostfile (pipeline-stage order)', 'megatron-hostfile', megatron.hostfile);
}

/** Wires the Copy buttons inside container (once). */
export function wireCopyButtons(container) {
  container.addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-copy]');
    if (!btn || btn.disabled) return;
    const pre = container.querySelector(`#${btn.dataset.copy}`);
    if (!pre) return;
    if (btn.classList.contains('download')) downloadBlob(btn.dataset.filename, new Blob([`${pre.textContent}\n`], { type: 'text/plain' }));
    else copyWithFeedback(btn, pre.textContent);
  });
}
