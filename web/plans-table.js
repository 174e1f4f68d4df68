// Ranked plans table: sortable columns (the header is one tab stop: the sorted column's button,
// arrow keys reach the others; one toggle explains every column), click (or Enter) on a row
// selects a plan, a tick box per row picks plans to compare, and an option lists only plans with
// distinct meshes. Also renders the baselines summary. Input is the core's result object.
import { esc, fixed, int, percent, maxOf, usd } from './format.js';
import { wireHelpToggle } from './column-help.js';

const baseTime = (result, name) => result.baselines?.[name]?.metrics?.iteration_time_s;
const speedup = (t, p) => (Number.isFinite(t) && p.metrics.iteration_time_s > 0 ? t / p.metrics.iteration_time_s : NaN);
const split = (p) => (p.plan.stages || []).map((s) => s.layers).join('/');

/** The memory margin the core ranks by when a result does not say (search.memory_margin_fraction's default). */
export const DEFAULT_MARGIN = 0.05;

/** The result's memory margin (stats.memory_margin_fraction), as a fraction of GPU memory. */
export const marginOf = (result) => (Number.isFinite(result?.stats?.memory_margin_fraction) ? result.stats.memory_margin_fraction : DEFAULT_MARGIN);

/** "5 %": a margin as the page words it. */
export const marginText = (margin) => `${+(margin * 100).toFixed(1)} %`;

/**
 * Smallest free GiB over the stages (capacity - peak), the largest used fraction, and tight: the
 * core's metrics.within_memory_margin is false (or, without it, a stage is above 1 - margin).
 */
export function memoryHeadroom(metrics, margin = DEFAULT_MARGIN) {
  const peak = metrics?.peak_memory_gib || [], cap = metrics?.memory_capacity_gib || [];
  let freeGib = Infinity, usedFraction = 0;
  peak.forEach((used, i) => {
    if (!Number.isFinite(used) || !(cap[i] > 0)) return;
    freeGib = Math.min(freeGib, cap[i] - used);
    usedFraction = Math.max(usedFraction, used / cap[i]);
  });
  const tight = typeof metrics?.within_memory_margin === 'boolean' ? !metrics.within_memory_margin : usedFraction > 1 - margin;
  return Number.isFinite(freeGib) ? { freeGib, usedFraction, tight } : { freeGib: NaN, usedFraction: NaN, tight: false };
}

/** Mesh key: plans with the same key differ only in layer split, micro-batch, recompute or VPP. */
export const meshKey = (p) => ['tp', 'cp', 'pp', 'dp', 'ep', 'etp'].map((k) => p.plan[k]).join('-');

/** The runtime that runs a plan (plan.runtime, set in "auto" mode): [short, full name]. */
export const RUNTIMES = { megatron: ['MLM', 'Megatron-LM'], flagscale: ['FS', 'FlagScale'] };

/** The rank cell's runtime tag ('' when the result does not say). */
export function runtimeTag(plan) {
  const r = RUNTIMES[plan?.runtime];
  return r ? ` <abbr class="runtime-tag rt-${plan.runtime}" title="runs on ${r[1]}">${r[0]}</abbr>` : '';
}

/** Short plan label, e.g. "TP2 CP1 PP4 DP2 EP8 ETP1 VPP2, mbs 1" (+ ", on FlagScale"). */
export function planLabel(plan) {
  return `TP${plan.tp} CP${plan.cp ?? 1} PP${plan.pp} DP${plan.dp} EP${plan.ep} ETP${plan.etp ?? 1}` +
    `${plan.vpp > 1 ? ` VPP${plan.vpp}` : ''}, mbs ${plan.micro_batch_size}` +
    `${plan.ep_comm_overlap ? ', EP overlap' : ''}${plan.optimizer_offload_fraction > 0 ? `, optimizer ${plan.optimizer_offload_fraction * 100}% on host` : ''}` +
    `${RUNTIMES[plan.runtime] ? `, on ${RUNTIMES[plan.runtime][1]}` : ''}`;
}

/** What the plans are ranked by (result.stats.objective; "time" when the result does not say). */
export function rankingText(result) {
  const objective = result?.stats?.objective;
  if (objective === 'cost') return 'Cheapest plans, ranked by predicted cost per million tokens at your prices';
  if (objective === 'time_within_budget') return 'Fastest plans within your budget per hour (your prices), ranked by predicted iteration time';
  return 'Best plans, ranked by predicted iteration time';
}

/** Column defs: key, header, unit, value(plan, result), text(value). */
export const COLUMNS = [
  { key: 'rank', header: '#', value: (p) => p.rank, text: String },
  ...['tp', 'cp', 'pp', 'dp', 'ep', 'etp', 'vpp'].map((k) => ({ key: k, header: k.toUpperCase(), value: (p) => p.plan[k], text: String })),
  { key: 'mbs', header: 'mbs', value: (p) => p.plan.micro_batch_size, text: String },
  { key: 'split', header: 'Layers', value: split, text: String },
  { key: 'time', header: 'Iteration', unit: 's', value: (p) => p.metrics.iteration_time_s, text: (v) => fixed(v, 3) },
  { key: 'tps', header: 'Tokens', unit: 'per s', value: (p) => p.metrics.tokens_per_s, text: int },
  { key: 'costHour', header: 'Cost', unit: '$/hour', value: (p) => p.metrics.cost_per_hour, text: usd },
  { key: 'costTok', header: 'Cost', unit: '$/M tokens', value: (p) => p.metrics.cost_per_million_tokens, text: usd },
  { key: 'tflops', header: 'Per GPU', unit: 'TFLOPS', value: (p) => p.metrics.tflops_per_gpu, text: (v) => fixed(v, 1) },
  { key: 'mfu', header: 'MFU', unit: '%', value: (p) => p.metrics.mfu, text: (v) => percent(v) },
  { key: 'bubble', header: 'Bubble', unit: '%', value: (p) => p.metrics.bubble_fraction, text: (v) => percent(v) },
  { key: 'mem', header: 'Peak mem', unit: 'GiB', value: (p) => maxOf(p.metrics.peak_memory_gib), text: (v) => fixed(v, 2) },
  { key: 'head', header: 'Headroom', unit: 'GiB', value: (p) => memoryHeadroom(p.metrics).freeGib, text: (v) => fixed(v, 2) },
  { key: 'vsMd', header: 'vs Megatron', unit: '×', value: (p, r) => speedup(baseTime(r, 'megatron_default'), p), text: (v) => fixed(v, 2) },
  { key: 'vsUni', header: 'vs uniform', unit: '×', value: (p, r) => speedup(baseTime(r, 'uniform'), p), text: (v) => fixed(v, 2) },
];

/**
 * A hetero plan's meshes, one per block of consecutive stages on one GPU group, in pipeline order:
 * [{group, gpu, stages, text: "TP2 EP8 DP4"}] (CP and ETP named when not 1); [] for an upstream plan.
 */
export function groupMeshes(plan) {
  const blocks = [];
  for (const s of plan.stages || []) {
    if (s.tp === undefined) return [];
    const text = `TP${s.tp}${(s.cp ?? 1) > 1 ? ` CP${s.cp}` : ''} EP${s.ep}${(s.etp ?? 1) > 1 ? ` ETP${s.etp}` : ''} DP${s.dp}`;
    const last = blocks.at(-1);
    if (last && last.group === s.group && last.text === text) last.stages += 1;
    else blocks.push({ group: s.group, gpu: s.gpu, stages: 1, text });
  }
  return blocks;
}

/** Hetero (FlagScale) results: every GPU group has its own mesh, so one column lists them all. */
const MESHES_COLUMN = {
  key: 'meshes', header: 'Mesh per GPU group',
  value: (p) => groupMeshes(p.plan).map((b) => `${b.gpu} ×${b.stages}: ${b.text}`).join('; '),
  html: (p) => groupMeshes(p.plan).map((b) => `<span class="group-mesh"><span class="gpu">${esc(b.gpu)}</span> ×${b.stages}: ${esc(b.text)}</span>`).join(''),
};
const UNIFORM_MESH = new Set(['tp', 'cp', 'dp', 'ep', 'etp']);
const HETERO_COLUMNS = [COLUMNS[0], MESHES_COLUMN, ...COLUMNS.slice(1).filter((c) => !UNIFORM_MESH.has(c.key))];

/** Columns shown only when some plan has a value (a result without that baseline has none). */
const OPTIONAL = new Set(['vsMd', 'vsUni', 'costHour', 'costTok']);

/** The columns for a result: hetero plans show each group's mesh instead of one TP/CP/DP/EP/ETP. */
function columnsFor(result) {
  const all = result.plans.some((p) => groupMeshes(p.plan).length) ? HETERO_COLUMNS : COLUMNS;
  return all.filter((c) => !OPTIONAL.has(c.key) || result.plans.some((p) => Number.isFinite(c.value(p, result))));
}

const MESH_KEYS = new Set(['tp', 'cp', 'pp', 'dp', 'ep', 'etp', 'vpp', 'mbs', 'meshes']);
const NUMERIC_DESC = new Set(['tps', 'tflops', 'mfu', 'head', 'vsMd', 'vsUni']);
export const SORT_KEYS = new Set(HETERO_COLUMNS.concat(COLUMNS).map((c) => c.key));

/**
 * Creates the table in container. handlers: onSelect(index into result.plans),
 * onView({plan, sort, dir}) after any selection or sort change, onCompare([i, j]).
 */
export function createPlansTable(container, { onSelect, onView = () => {}, onCompare = () => {} }) {
  let result = null;
  let sort = { key: 'rank', dir: 1 };
  let selected = 0;
  let distinctOnly = false;
  let ticked = [];
  let columns = COLUMNS;
  const tools = document.createElement('div');
  tools.className = 'plans-tools';
  tools.innerHTML = '<label><input type="checkbox" class="distinct-only"> Distinct meshes only</label>' +
    '<button type="button" class="secondary help-all">What the columns mean</button>' +
    '<span class="hint">Tick two plans in the last column to compare them.</span>';
  const tableBox = document.createElement('div');
  tableBox.className = 'table-wrap';
  Object.assign(tableBox, { tabIndex: 0 });
  tableBox.setAttribute('role', 'region');
  tableBox.setAttribute('aria-label', 'Plans (scrolls sideways)');
  const helpBox = document.createElement('div');
  container.replaceChildren(tools, helpBox, tableBox);
  // The mesh columns share one explanation, then every other column in table order.
  const helpKeys = () => ['mesh', ...columns.filter((c) => !MESH_KEYS.has(c.key) || c.key === 'meshes').map((c) => c.key), 'cmp'];
  const help = wireHelpToggle(tools.querySelector('.help-all'), helpBox, helpKeys);

  function rows() {
    const col = columns.find((c) => c.key === sort.key) || columns[0];
    let items = result.plans.map((p, i) => ({ ...p, rank: i + 1, index: i }));
    if (distinctOnly) {
      const seen = new Set();
      items = items.filter((p) => !seen.has(meshKey(p)) && seen.add(meshKey(p)));
    }
    const val = (p) => { const v = col.value(p, result); return Number.isFinite(v) ? v : typeof v === 'string' ? v : -Infinity; };
    return items.sort((a, b) => (val(a) < val(b) ? -1 : val(a) > val(b) ? 1 : a.index - b.index) * sort.dir);
  }

  function rowMarkup(p) {
    const margin = marginOf(result);
    const head = memoryHeadroom(p.metrics, margin);
    const name = `Plan ${p.rank}: ${planLabel(p.plan)}, ${fixed(p.metrics.iteration_time_s, 3)} s per iteration` +
      (head.tight ? `, less than ${marginText(margin)} of a GPU's memory free (ranked after the plans within the memory margin)` : '');
    const cells = columns.map((c) => {
      const tight = c.key === 'head' && head.tight;
      return `<td class="c-${c.key}${tight ? ' tight' : ''}">${c.html ? c.html(p) : esc(c.text(c.value(p, result)))}${c.key === 'rank' ? runtimeTag(p.plan) : ''}${tight ? ` <span class="flag-tight" title="less than ${esc(marginText(margin))} of a GPU's memory free: ranked after the plans within the memory margin">⚠ &lt;${esc(marginText(margin))} free</span>` : ''}</td>`;
    }).join('');
    const tick = `<td class="c-cmp"><input type="checkbox" data-compare="${p.index}"${ticked.includes(p.index) ? ' checked' : ''} aria-label="Compare plan ${p.rank}"></td>`;
    return `<tr tabindex="0" data-index="${p.index}" class="${p.index === selected ? 'selected' : ''}" aria-selected="${p.index === selected}"` +
      ` aria-label="${esc(name)}">${cells}${tick}</tr>`;
  }

  function draw(focusSort = null) {
    if (result) columns = columnsFor(result);
    // Only the sorted column's button is a tab stop (roving tabindex; arrow keys move along the header).
    const stop = columns.some((c) => c.key === sort.key) ? sort.key : columns[0].key;
    const head = columns.map((c) => {
      const aria = c.key === sort.key ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none';
      return `<th scope="col" aria-sort="${aria}"><button type="button" data-sort="${c.key}" tabindex="${c.key === stop ? 0 : -1}">${esc(c.header)}` +
        `${c.unit ? ` <span class="unit">${esc(c.unit)}</span>` : ''}</button></th>`;
    }).join('') + '<th scope="col">Compare</th>';
    const meshColumns = columns.filter((c) => MESH_KEYS.has(c.key)).length;
    const group = `<tr class="group-row"><td></td><th scope="colgroup" colspan="${meshColumns}" class="mesh-group">Parallel mesh</th>` +
      `<td colspan="${columns.length - meshColumns}"></td></tr>`;
    tableBox.innerHTML = `<table class="plans data"><caption>${esc(rankingText(result))} (plans leaving less than ${esc(marginText(marginOf(result)))} of GPU memory free last)` +
      '<span class="sr-only">. Column headers sort the plans: Tab reaches the sorted column, the arrow keys the others.</span></caption>' +
      `<thead>${group}<tr>${head}</tr></thead><tbody>${rows().map(rowMarkup).join('')}</tbody></table>`;
    help.refresh();
    if (focusSort) tableBox.querySelector(`button[data-sort="${focusSort}"]`)?.focus();
  }

  tableBox.addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-sort]');
    if (btn) {
      const key = btn.dataset.sort;
      sort = { key, dir: sort.key === key ? -sort.dir : NUMERIC_DESC.has(key) ? -1 : 1 };
      draw(key); // focus stays on the header just used
      onView(view());
      return;
    }
    if (e.target.closest('button, input')) return;
    const tr = e.target.closest('tr[data-index]');
    if (tr) choose(Number(tr.dataset.index));
  });
  tableBox.addEventListener('change', (e) => {
    const box = e.target.closest('input[data-compare]');
    if (!box) return;
    const i = Number(box.dataset.compare);
    ticked = box.checked ? [...ticked.filter((t) => t !== i), i].slice(-2) : ticked.filter((t) => t !== i);
    tableBox.querySelectorAll('input[data-compare]').forEach((b) => { b.checked = ticked.includes(Number(b.dataset.compare)); });
    onCompare([...ticked]);
  });
  tableBox.addEventListener('keydown', (e) => {
    const sortButton = e.target.closest('button[data-sort]');
    if (sortButton && ['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) {
      e.preventDefault();
      const all = [...tableBox.querySelectorAll('button[data-sort]')];
      const at = all.indexOf(sortButton);
      const next = e.key === 'Home' ? 0 : e.key === 'End' ? all.length - 1 : Math.max(0, Math.min(all.length - 1, at + (e.key === 'ArrowRight' ? 1 : -1)));
      all.forEach((b, i) => { b.tabIndex = i === next ? 0 : -1; });
      all[next].focus();
      return;
    }
    const tr = e.target.closest('tr[data-index]');
    if (tr && e.target === tr && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); choose(Number(tr.dataset.index)); }
  });
  tools.querySelector('.distinct-only').addEventListener('change', (e) => { distinctOnly = e.target.checked; draw(); });

  function choose(index) {
    selected = index;
    draw();
    tableBox.querySelector(`tr[data-index="${index}"]`)?.focus();
    onSelect(index);
    onView(view());
  }

  // No row selected (a Pareto plan outside the table is shown): a link then opens on the first plan.
  const view = () => ({ plan: Math.max(0, selected), sort: sort.key, dir: sort.dir });

  return {
    /** Shows result.plans (must be non-empty); view {plan, sort, dir} restores a link's choice. */
    render(newResult, v = null) {
      result = newResult;
      ticked = [];
      const plan = v && v.plan < result.plans.length ? v.plan : 0;
      sort = v && SORT_KEYS.has(v.sort) ? { key: v.sort, dir: v.dir } : { key: 'rank', dir: 1 };
      selected = plan;
      draw();
      return plan;
    },
    /**
     * Selects result.plans[index] as a click on its row does, the focus left where it is (the
     * Pareto chart's point); null clears the selection (the plan shown is not in the table).
     */
    select(index) {
      if (index == null) { selected = -1; draw(); return; }
      selected = index;
      draw();
      onSelect(index);
      onView(view());
    },
  };
}

const BASELINE_NAMES = { megatron_default: 'Megatron default (uniform split, type-blind)', uniform: 'Best uniform layer split' };
export const baselineName = (name) => BASELINE_NAMES[name] || name;

/** Markup for the baselines summary; '' when the result has none. */
export function baselinesMarkup(result) {
  const best = result.plans?.[0];
  const entries = Object.entries(result.baselines || {});
  if (!best || !entries.length) return '';
  const rowsHtml = entries.map(([name, b]) => {
    if (!b || !b.metrics) return `<tr><th scope="row">${esc(baselineName(name))}</th><td colspan="4">no feasible plan</td></tr>`;
    const p = b.plan || {};
    const sp = b.speedup ?? speedup(b.metrics.iteration_time_s, best);
    return `<tr><th scope="row">${esc(baselineName(name))}${b.rule ? `<br><span class="hint">${esc(b.rule)}</span>` : ''}</th>` +
      `<td>TP${esc(p.tp ?? '?')} PP${esc(p.pp ?? '?')} DP${esc(p.dp ?? '?')} EP${esc(p.ep ?? '?')} <span class="hint">layers ${esc(split({ plan: p }))}</span></td>` +
      `<td>${fixed(b.metrics.iteration_time_s, 3)}</td><td>${int(b.metrics.tokens_per_s)}</td>` +
      `<td class="speedup">${fixed(sp, 2)}×</td></tr>`;
  }).join('');
  return `<table class="data baselines"><caption>Baselines</caption><thead><tr><th scope="col">Baseline</th>` +
    `<th scope="col">Mesh</th><th scope="col">Iteration <span class="unit">s</span></th>` +
    `<th scope="col">Throughput <span class="unit">tokens/s</span></th><th scope="col">Best plan speedup <span class="unit">×</span></th></tr></thead>` +
    `<tbody>${rowsHtml}</tbody></table>`;
}
