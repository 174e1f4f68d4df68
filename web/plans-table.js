// Ranked plans table: sortable columns, click (or Enter) on a row selects a plan.
// Also renders the baselines summary. Input is the core's result object.
import { esc, fixed, int, percent, maxOf } from './format.js';

const baseTime = (result, name) => result.baselines?.[name]?.metrics?.iteration_time_s;
const speedup = (t, p) => (Number.isFinite(t) && p.metrics.iteration_time_s > 0 ? t / p.metrics.iteration_time_s : NaN);
const split = (p) => (p.plan.stages || []).map((s) => s.layers).join('/');

/** Column defs: key, header, unit, value(plan, result), text(value). */
export const COLUMNS = [
  { key: 'rank', header: '#', value: (p) => p.rank, text: String },
  ...['tp', 'cp', 'pp', 'dp', 'ep', 'etp', 'vpp'].map((k) => ({ key: k, header: k.toUpperCase(), value: (p) => p.plan[k], text: String })),
  { key: 'mbs', header: 'mbs', value: (p) => p.plan.micro_batch_size, text: String },
  { key: 'split', header: 'Layers', title: 'Layers per pipeline stage', value: split, text: String },
  { key: 'time', header: 'Iteration', unit: 's', value: (p) => p.metrics.iteration_time_s, text: (v) => fixed(v, 3) },
  { key: 'tps', header: 'Throughput', unit: 'tokens/s', value: (p) => p.metrics.tokens_per_s, text: int },
  { key: 'tflops', header: 'Per GPU', unit: 'TFLOPS', value: (p) => p.metrics.tflops_per_gpu, text: (v) => fixed(v, 1) },
  { key: 'mfu', header: 'MFU', unit: '%', value: (p) => p.metrics.mfu, text: (v) => percent(v) },
  { key: 'mem', header: 'Peak mem', unit: 'GiB', value: (p) => maxOf(p.metrics.peak_memory_gib), text: (v) => fixed(v, 1) },
  { key: 'vsMd', header: 'vs Megatron', unit: '×', title: 'Speedup over the Megatron default baseline', value: (p, r) => speedup(baseTime(r, 'megatron_default'), p), text: (v) => fixed(v, 2) },
  { key: 'vsUni', header: 'vs uniform', unit: '×', title: 'Speedup over the best uniform-split plan', value: (p, r) => speedup(baseTime(r, 'uniform'), p), text: (v) => fixed(v, 2) },
];

const NUMERIC_DESC = new Set(['tps', 'tflops', 'mfu', 'vsMd', 'vsUni']);

/** Creates the table in container; onSelect(index into result.plans) fires on row choice. */
export function createPlansTable(container, onSelect) {
  let result = null;
  let sort = { key: 'rank', dir: 1 };
  let selected = 0;

  function rows() {
    const col = COLUMNS.find((c) => c.key === sort.key);
    const items = result.plans.map((p, i) => ({ ...p, rank: i + 1, index: i }));
    const val = (p) => { const v = col.value(p, result); return Number.isFinite(v) ? v : typeof v === 'string' ? v : -Infinity; };
    return items.sort((a, b) => (val(a) < val(b) ? -1 : val(a) > val(b) ? 1 : a.index - b.index) * sort.dir);
  }

  function draw() {
    const head = COLUMNS.map((c) => {
      const aria = c.key === sort.key ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none';
      return `<th scope="col" aria-sort="${aria}"${c.title ? ` title="${esc(c.title)}"` : ''}>` +
        `<button type="button" data-sort="${c.key}">${esc(c.header)}${c.unit ? ` <span class="unit">${esc(c.unit)}</span>` : ''}</button></th>`;
    }).join('');
    const body = rows().map((p) => `<tr tabindex="0" data-index="${p.index}" class="${p.index === selected ? 'selected' : ''}"` +
      ` aria-selected="${p.index === selected}">` +
      COLUMNS.map((c) => `<td class="c-${c.key}">${esc(c.text(c.value(p, result)))}</td>`).join('') + '</tr>').join('');
    container.innerHTML = `<table class="plans data"><caption>Best plans, ranked by predicted iteration time</caption>` +
      `<thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
  }

  container.addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-sort]');
    if (btn) {
      const key = btn.dataset.sort;
      sort = { key, dir: sort.key === key ? -sort.dir : NUMERIC_DESC.has(key) ? -1 : 1 };
      draw();
      return;
    }
    const tr = e.target.closest('tr[data-index]');
    if (tr) choose(Number(tr.dataset.index));
  });
  container.addEventListener('keydown', (e) => {
    const tr = e.target.closest('tr[data-index]');
    if (tr && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); choose(Number(tr.dataset.index)); }
  });

  function choose(index) {
    selected = index;
    draw();
    container.querySelector(`tr[data-index="${index}"]`)?.focus();
    onSelect(index);
  }

  return {
    /** Shows result.plans (must be non-empty); selects the best plan. */
    render(newResult) { result = newResult; selected = 0; sort = { key: 'rank', dir: 1 }; draw(); },
  };
}

const BASELINE_NAMES = { megatron_default: 'Megatron default (uniform split, type-blind)', uniform: 'Best uniform layer split' };

/** Markup for the baselines summary; '' when the result has none. */
export function baselinesMarkup(result) {
  const best = result.plans?.[0];
  const entries = Object.entries(result.baselines || {});
  if (!best || !entries.length) return '';
  const rowsHtml = entries.map(([name, b]) => {
    if (!b || !b.metrics) return `<tr><th scope="row">${esc(BASELINE_NAMES[name] || name)}</th><td colspan="4">no feasible plan</td></tr>`;
    const p = b.plan || {};
    const sp = b.speedup ?? speedup(b.metrics.iteration_time_s, best);
    return `<tr><th scope="row">${esc(BASELINE_NAMES[name] || name)}</th>` +
      `<td>TP${p.tp ?? '?'} PP${p.pp ?? '?'} DP${p.dp ?? '?'} EP${p.ep ?? '?'}</td>` +
      `<td>${fixed(b.metrics.iteration_time_s, 3)}</td><td>${int(b.metrics.tokens_per_s)}</td>` +
      `<td class="speedup">${fixed(sp, 2)}×</td></tr>`;
  }).join('');
  return `<table class="data baselines"><caption>Baselines</caption><thead><tr><th scope="col">Baseline</th>` +
    `<th scope="col">Mesh</th><th scope="col">Iteration <span class="unit">s</span></th>` +
    `<th scope="col">Throughput <span class="unit">tokens/s</span></th><th scope="col">Best plan speedup</th></tr></thead>` +
    `<tbody>${rowsHtml}</tbody></table>`;
}
