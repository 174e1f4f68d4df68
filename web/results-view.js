// Results area: summary, ranked plans, comparison, baselines, and the selected plan's details
// (stage table, memory chart, timeline chart, Megatron command lines), or the core's diagnosis.
import { createPlansTable, baselinesMarkup, memoryHeadroom, planLabel, marginOf, marginText, RUNTIMES } from './plans-table.js';
import { createCompareView } from './compare-view.js';
import { stageTableMarkup } from './stage-table.js';
import { memoryChartSvg } from './memory-chart.js';
import { timelineChartSvg } from './timeline-chart.js';
import { megatronMarkup, wireCopyButtons, slug } from './megatron-view.js';
import { esc, fixed, int, params, usd } from './format.js';
import { fitMarkup, closestMarkup } from './no-fit.js';
import { paretoChartSvg, paretoTableMarkup } from './pareto-chart.js';
import { renderFailure } from './failure-view.js';

/**
 * A core note or diagnosis in the page's words: the JSON path of the runtime becomes the control's
 * label, and rule ids (snake_case names in backquotes or alone) become words.
 */
export function pageWords(text) {
  return String(text ?? '')
    .replace(/search\.mode\s*"hetero"/g, 'Runtime "FlagScale heterogeneous" (Search section)')
    .replace(/search\.mode\s*"megatron"/g, 'Runtime "Upstream Megatron-LM" (Search section)')
    .replace(/`?\b([a-z]+(?:_[a-z0-9]+){2,})\b`?/g, (m, id) => id.replace(/_/g, ' '));
}

/**
 * The search's counters: candidates, evaluated and, per pruning rule with a count, the core's
 * sentence for it (stats.rules) with the count; never a bare rule id.
 */
function statsMarkup(stats = {}, tail = '') {
  const pruned = Object.entries(stats.pruned || {}).filter(([, n]) => n > 0)
    .map(([rule, n]) => `<li><span class="count">${int(n)}</span> ${esc(stats.rules?.[rule] || pageWords(rule))}</li>`).join('');
  return `<p class="stats">Searched ${int(stats.candidates)} candidates, evaluated ${int(stats.evaluated)}` +
    (Number.isFinite(stats.elapsed_ms) ? ` in ${int(stats.elapsed_ms)} ms` : '') + `.${tail}</p>` +
    (pruned ? `<details class="pruned"><summary>Candidates pruned, by rule</summary><ul>${pruned}</ul></details>` : '');
}

/** The model's size as the core counts it (result.model), total and active per token. */
export function sizeKpi(model) {
  if (!Number.isFinite(model?.parameters_total)) return '';
  return `<div class="kpi model-size" title="${esc(model.parameters_basis || '')}"><span class="kpi-value">${params(model.parameters_total)}</span>` +
    `<span class="kpi-label">parameters, ${params(model.parameters_active)} active per token</span></div>`;
}

/**
 * The first plan's cost at your prices (metrics.cost_per_hour, cost_per_million_tokens) and, with
 * training.train_tokens, its run totals (train_hours, train_cost); '' for what the result lacks.
 */
export function costKpis(m, trainTokens) {
  const kpi = (value, label) => `<div class="kpi cost"><span class="kpi-value">${value}</span><span class="kpi-label">${label}</span></div>`;
  let out = '';
  if (Number.isFinite(m.cost_per_hour)) out += kpi(`${usd(m.cost_per_hour)} <small>per hour</small>`, 'GPUs billed, at your prices');
  if (Number.isFinite(m.cost_per_million_tokens)) out += kpi(`${usd(m.cost_per_million_tokens)} <small>per M tokens</small>`, 'cost per million tokens, at your prices');
  if (Number.isFinite(m.train_hours)) {
    const run = Number.isFinite(trainTokens) ? `${params(trainTokens)} tokens` : 'the training tokens';
    out += kpi(`${fixed(m.train_hours, 1)} h <small>(${fixed(m.train_hours / 24, 1)} days)</small>`, `to train ${run}`);
  }
  if (Number.isFinite(m.train_cost)) out += kpi(usd(m.train_cost), 'the whole run, at your prices');
  return out;
}

function summaryMarkup(result, trainTokens) {
  const best = result.plans[0];
  const m = best.metrics;
  const md = result.baselines?.megatron_default;
  const gain = md?.metrics ? md.speedup ?? md.metrics.iteration_time_s / m.iteration_time_s : NaN;
  const margin = marginOf(result);
  const head = memoryHeadroom(m, margin);
  return `<div class="kpis">` +
    // elementtiming: when the best plan is painted (the figure tests/web/timeline.test.mjs prints).
    `<div class="kpi"><span class="kpi-value" elementtiming="plan-summary">${fixed(m.iteration_time_s, 3)} s</span><span class="kpi-label">iteration time${errorBand(m)}</span></div>` +
    `<div class="kpi"><span class="kpi-value">${int(m.tokens_per_s)}</span><span class="kpi-label">tokens/s</span></div>` +
    costKpis(m, trainTokens) +
    `<div class="kpi"><span class="kpi-value">${fixed(m.tflops_per_gpu, 1)}</span><span class="kpi-label">TFLOPS/GPU (MFU ${fixed(m.mfu * 100, 1)} %)</span></div>` +
    `<div class="kpi"><span class="kpi-value">${int(m.gpus_used)}${m.gpus_idle ? ` <small>+${int(m.gpus_idle)} idle</small>` : ''}</span><span class="kpi-label">GPUs used</span></div>` +
    `<div class="kpi${head.tight ? ' tight' : ''}"><span class="kpi-value">${fixed(head.freeGib, 2)} GiB</span><span class="kpi-label">memory headroom` +
    `${head.tight ? ` <span class="flag-tight">⚠ less than ${marginText(margin)} free</span>` : ''}</span></div>` +
    (RUNTIMES[best.plan.runtime] ? `<div class="kpi"><span class="kpi-value">${RUNTIMES[best.plan.runtime][1]}</span><span class="kpi-label">runtime of the best plan</span></div>` : '') +
    sizeKpi(result.model) +
    (Number.isFinite(gain) ? `<div class="kpi accent"><span class="kpi-value">${fixed(gain, 2)}×</span><span class="kpi-label">vs Megatron default</span></div>` : '') +
    `</div>${(result.notes || []).map((n) => `<p class="note" role="note">${esc(pageWords(n))}</p>`).join('')}` +
    statsMarkup(result.stats, " All figures are the core's cost-model predictions.");
}

/** " ±6% (12.4-14.0 s)": the prediction's error band as the core reports it; '' without one. */
export function errorBand(m) {
  const f = m.iteration_time_error_fraction, r = m.iteration_time_range_s;
  if (!Number.isFinite(f) || !Array.isArray(r)) return '';
  const basis = m.iteration_time_error_calibrated ? 'calibration spread' : 'calibration spread; this GPU is not calibrated';
  return ` <span class="band" title="${esc(basis)}">±${fixed(f * 100, 0)} % (${fixed(r[0], 2)}–${fixed(r[1], 2)} s)</span>`;
}

/**
 * The core's diagnosis when no plan fits: its message (each rule it names with a sentence),
 * shortfall and suggestions, as text; slots for the fields behind it and the smallest cluster
 * that fits (showNoFit).
 */
export function diagnosisMarkup(result) {
  const d = result.diagnosis || {};
  const tips = (d.suggestions || []).map((s) => `<li>${esc(pageWords(s))}</li>`).join('');
  const why = (d.rules || []).map((r) => `<p class="rule-why">${esc(r.sentence)}</p>`).join('');
  return `<div class="diagnosis" role="status"><h3>No feasible plan</h3><p class="cause">${esc(pageWords(d.message || 'The planner gave no reason.'))}</p>${why}` +
    '<p class="cause-fields" hidden></p>' + closestMarkup(d.closest_plan) + '<div class="fit-slot"></div>' +
    (Number.isFinite(d.shortfall_gib) && d.shortfall_gib > 0 ? `<p>Smallest memory shortfall: <strong>${fixed(d.shortfall_gib, 2)} GiB</strong> per GPU on the fullest stage.</p>` : '') +
    (tips ? `<h4>Try</h4><ul>${tips}</ul>` : '') + `</div>${statsMarkup(result.stats)}`;
}

/**
 * Resolves once the browser has painted what the page holds now (the task after the next frame),
 * or after 50 ms where no frame comes (a hidden tab draws none).
 */
const afterNextPaint = () => new Promise((resolve) => {
  requestAnimationFrame(() => setTimeout(resolve, 0));
  setTimeout(resolve, 50);
});

/**
 * els: {root, summary, plans, pareto, paretoChart, paretoTable, compare, baselines, detail, detailTitle, stages, memory,
 * timeline, megatron, actions}.
 * loadTimeline(plan) resolves with the core's answer to timeline() for that plan ({ok, timeline} or {ok: false, error});
 * loadNodeLoss(plan) with its N-1 re-plan (nodeLoss: {ok, plan, losses} or {ok: false, error}).
 */
export function createResultsView(els, { onView = () => {}, loadTimeline = null, loadNodeLoss = null } = {}) {
  let result = null;
  let stale = false;
  let timelineSeq = 0;
  /** Copy and Download of a stale result are off (what they hold no longer matches the form). */
  function applyStale() {
    els.root.classList.toggle('stale', stale);
    for (const b of els.root.querySelectorAll('#megatron button[data-copy], #result-actions button, #failure button')) b.disabled = stale;
    const note = els.root.querySelector('#stale-note');
    if (note) note.hidden = !stale || !result;
  }
  let renderSeq = 0;
  const compare = createCompareView(els.compare);
  const table = createPlansTable(els.plans, { onSelect: (i) => showPlan(i), onView, onCompare: (ix) => compare.pick(ix) });
  wireCopyButtons(els.megatron);
  wirePareto();

  /** Shows result.plans[i] (a row of the plans table) and marks its point on the Pareto chart. */
  function showPlan(i) {
    const p = result.plans[i];
    markPoint(result.pareto?.findIndex((pt) => pt.plan_index === i) ?? -1);
    return showEntry(p, `Plan #${i + 1}: ${planLabel(p.plan)}`, `plan${i + 1}`);
  }

  /**
   * The selected plan's details: a plan entry ({plan, metrics, breakdown, megatron | flagscale}),
   * under title; file names of its commands end in stem.
   */
  function showEntry(p, title, stem) {
    const bd = p.breakdown?.stages || [];
    const stagesWithGpu = bd.map((s, k) => ({ gpu: p.plan.stages?.[k]?.gpu, ...s }));
    // The core's figures for the shown plan, for the schedule chart to be checked against.
    els.detail.dataset.iterationTimeS = p.metrics.iteration_time_s;
    els.detail.dataset.bubbleFraction = p.metrics.bubble_fraction;
    els.detailTitle.textContent = `${title}${p.plan.sequence_parallel ? ', SP' : ''}` +
      (Number.isFinite(result.model?.parameters_total) ? ` · ${result.model.name ? `${result.model.name}, ` : ''}${params(result.model.parameters_total)} parameters (${params(result.model.parameters_active)} active)` : '');
    els.stages.innerHTML = stageTableMarkup(p, marginOf(result));
    els.memory.innerHTML = bd.length ? memoryChartSvg(stagesWithGpu, p.metrics.memory_capacity_gib || []) : '';
    els.megatron.innerHTML = megatronMarkup(p.megatron, p, `hapmoe-${slug(result.model?.name)}-${stem}`);
    if (els.failure) {
      renderFailure(els.failure, p, (plan) => (loadNodeLoss ? loadNodeLoss(plan) : Promise.resolve({ ok: false, error: { message: 'no planner' } })));
    }
    applyStale();
    return drawTimeline(p);
  }

  /**
   * A point of the Pareto front chosen (chart or table): its plan, selected in the plans table
   * when it is there, else its own entry shown as "Pareto plan (not in the top k)".
   */
  function choosePoint(k) {
    const pt = result?.pareto?.[k];
    if (!pt) return;
    if (Number.isInteger(pt.plan_index) && result.plans[pt.plan_index]) { table.select(pt.plan_index); return; }
    if (!pt.entry?.plan || !pt.entry.metrics) return;
    table.select(null);
    markPoint(k);
    showEntry(pt.entry, `Pareto plan (not in the top k), point ${k + 1}: ${planLabel(pt.entry.plan)}`, `pareto${k + 1}`);
  }

  /** Marks point k (-1: none) as the selected plan's, in the chart and its table, without redrawing (the focus stays). */
  function markPoint(k) {
    for (const el of els.pareto.querySelectorAll('[data-point]')) {
      const on = Number(el.dataset.point) === k;
      el.classList.toggle('selected', on && el.tagName.toLowerCase() === 'g');
      if (on) el.setAttribute('aria-current', 'true'); else el.removeAttribute('aria-current');
    }
    for (const tr of els.pareto.querySelectorAll('tr[data-point-row]')) tr.classList.toggle('selected', Number(tr.dataset.pointRow) === k);
  }

  /** Clicks, Enter and Space on the chart's points and the table's Show buttons choose a point. */
  function wirePareto() {
    els.pareto.addEventListener('click', (e) => {
      const el = e.target.closest('[data-point]');
      if (el) choosePoint(Number(el.dataset.point));
    });
    els.pareto.addEventListener('keydown', (e) => {
      const el = e.target.closest('g[data-point]');
      if (el && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); choosePoint(Number(el.dataset.point)); }
    });
  }

  /** The Pareto chart and table of a priced result (hidden without a front). */
  function drawPareto() {
    const points = (result.pareto || []).filter((pt) => Number.isFinite(pt.iteration_time_s) && Number.isFinite(pt.cost_per_million_tokens));
    els.pareto.hidden = !points.length || points.length !== (result.pareto || []).length;
    if (els.pareto.hidden) { els.paretoChart.innerHTML = ''; els.paretoTable.innerHTML = ''; return; }
    // As wide as its box (from 320 to 640 px), so that its text stays legible on a phone.
    const width = Math.round(Math.min(640, Math.max(320, els.paretoChart.clientWidth || 640)));
    els.paretoChart.innerHTML = paretoChartSvg(points, -1, { width });
    els.paretoTable.innerHTML = paretoTableMarkup(points);
  }

  /** Asks the core for the plan's schedule and draws it (a newer selection wins). */
  async function drawTimeline(p) {
    const seq = ++timelineSeq;
    els.timeline.dataset.state = 'pending';
    els.timeline.innerHTML = '<p class="hint">Drawing the schedule…</p>';
    let markup;
    try {
      const answer = loadTimeline ? await loadTimeline(p.plan) : { ok: false, error: { message: 'no planner' } };
      markup = answer.ok ? timelineChartSvg(answer.timeline)
        : `<p class="note">The schedule was not drawn: ${esc(answer.error?.message || 'unknown error')}</p>`;
    } catch (err) {
      markup = `<p class="note">The schedule was not drawn: ${esc(err.message)}</p>`;
    }
    if (seq !== timelineSeq) return;
    els.timeline.innerHTML = markup;
    els.timeline.dataset.state = 'drawn';
  }

  return {
    /** Shows a result (ok: true); view {plan, sort, dir} restores a link's selection and sort;
     *  trainTokens: the scenario's training.train_tokens (named beside the run totals).
     *  Resolves once the selected plan's schedule is drawn. */
    async render(newResult, view = null, trainTokens = null) {
      result = newResult;
      const has = result.plans?.length > 0;
      els.root.hidden = false;
      els.detail.hidden = !has;
      els.plans.hidden = !has;
      els.compare.hidden = !has;
      els.actions.hidden = false;
      els.summary.innerHTML = has ? summaryMarkup(result, trainTokens) : diagnosisMarkup(result);
      els.baselines.innerHTML = '';
      els.pareto.hidden = true;
      if (!has) return;
      const selected = table.render(result, view);
      // The summary and the ranked plans are painted first; the rest follows a frame later.
      const seq = ++renderSeq;
      await afterNextPaint();
      if (seq !== renderSeq) return;
      els.baselines.innerHTML = baselinesMarkup(result);
      drawPareto();
      compare.render(result);
      await showPlan(selected);
    },
    /**
     * Adds to a no-fit diagnosis the form fields highlighted as its cause (labels), and
     * smallestFit()'s answer (fit: undefined = not looked for, 'searching' = under way) whose
     * "Use this cluster" calls onUse(fit).
     */
    showNoFit({ labels = [], fit, onUse = () => {} }) {
      const box = els.summary.querySelector('.diagnosis');
      if (!box) return;
      const fields = box.querySelector('.cause-fields');
      fields.textContent = labels.length ? `Highlighted in the form: ${labels.join(', ')}.` : '';
      fields.hidden = !labels.length;
      const slot = box.querySelector('.fit-slot');
      if (fit === 'searching') slot.innerHTML = '<p class="hint">Trying the same groups with 2, 4, 8 and 16 times their nodes…</p>';
      else if (fit !== undefined) {
        slot.innerHTML = fitMarkup(fit);
        slot.querySelector('.use-fit')?.addEventListener('click', () => onUse(fit));
      }
    },
    /** Marks the shown result as stale (inputs changed or a new search is running). */
    setStale(value) { stale = value; applyStale(); },
    get result() { return result; },
  };
}
