// Megatron-LM arguments, environment, launch script and hostfile for one plan, with Copy buttons.
import { esc } from './format.js';
import { copyWithFeedback } from './clipboard.js';

/** Escaped text with each "--flag value" kept on one line when wrapping (text is unchanged). */
function flagsMarkup(text) {
  return text.split('\n').map((line) => line.split(' ')
    .reduce((groups, tok) => { if (tok.startsWith('--') || !groups.length) groups.push([tok]); else groups.at(-1).push(tok); return groups; }, [])
    .map((g) => `<span class="flag">${esc(g.join(' '))}</span>`).join(' ')).join('\n');
}

/** Markup for a hetero plan's FlagScale config ({yaml, experiment_yaml, hostfile}) and its warnings. */
function flagscaleMarkup(fs, warnings = []) {
  const block = (title, id, text) => text ? `<div class="code-block"><div class="code-head"><h4>${title}</h4>` +
    `<button type="button" class="secondary copy" data-copy="${id}">Copy</button></div>` +
    `<pre id="${id}" tabindex="0"><code>${esc(text)}</code></pre></div>` : '';
  const notes = warnings.length ? `<ul class="plan-warnings">${warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul>` : '';
  return notes + block('FlagScale train config (conf/train/hapmoe.yaml)', 'flagscale-yaml', fs.yaml) +
    block('FlagScale experiment config (conf/hapmoe.yaml)', 'flagscale-experiment', fs.experiment_yaml) +
    block('Hostfile (pipeline-stage order)', 'flagscale-hostfile', fs.hostfile);
}

/** Markup for the megatron block ({args, env, launch, hostfile}); a hetero plan entry (with `flagscale`) shows its FlagScale config. */
export function megatronMarkup(megatron = {}, entry = {}) {
  if (entry.flagscale) return flagscaleMarkup(entry.flagscale, entry.warnings);
  const env = Object.entries(megatron.env || {}).map(([k, v]) => `export ${k}=${v}`).join('\n');
  const block = (title, id, text) => text ? `<div class="code-block"><div class="code-head"><h4>${title}</h4>` +
    `<button type="button" class="secondary copy" data-copy="${id}">Copy</button></div>` +
    `<pre id="${id}" tabindex="0"><code>${flagsMarkup(text)}</code></pre></div>` : '';
  return block('Arguments', 'megatron-args', megatron.args) +
    block('Environment', 'megatron-env', env) +
    block('Launch script (run on every host)', 'megatron-launch', megatron.launch) +
    block('Hostfile (pipeline-stage order)', 'megatron-hostfile', megatron.hostfile);
}

/** Wires the Copy buttons inside container (once). */
export function wireCopyButtons(container) {
  container.addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-copy]');
    if (!btn) return;
    const pre = container.querySelector(`#${btn.dataset.copy}`);
    if (pre) copyWithFeedback(btn, pre.textContent);
  });
}
