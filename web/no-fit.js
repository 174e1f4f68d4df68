// When no plan fits: the form fields behind the cause (highlighted; the core names them with
// its rules), the core's closest plan with its memory per stage, and the smallest cluster the
// core does find a plan on (the same groups with 2, 4, 8 or 16 times their nodes), with its best
// plan. Pure except highlightCause().
import { esc, fixed, int } from './format.js';

/**
 * The form fields behind a no-fit result: those of the rules the core's diagnosis names
 * (diagnosis.rules[].fields, the core's table next to its rules), else (over memory) the group sizes.
 */
export function causeFields(result) {
  const d = result?.diagnosis || {};
  const fields = (d.rules || []).flatMap((r) => r.fields || []);
  if (!fields.length && d.shortfall_gib > 0) fields.push('cluster.groups[].nodes');
  return [...new Set(fields)];
}

/** Marks the inputs of fields (see causeFields) inside form as the cause; returns their labels. */
export function highlightCause(form, fields) {
  form.querySelectorAll('.is-cause').forEach((el) => { el.classList.remove('is-cause'); el.removeAttribute('data-cause'); });
  const labels = [];
  for (const f of fields) {
    const sel = f.includes('[]') ? `[data-field^="${f.split('[]')[0]}["][data-field$="]${f.split('[]')[1]}"]` : `[data-field="${f}"]`;
    const inputs = [...form.querySelectorAll(sel)];
    for (const input of inputs) {
      input.classList.add('is-cause');
      input.dataset.cause = 'true';
      for (let d = input.closest('details'); d; d = d.parentElement?.closest('details')) d.open = true;
    }
    const first = inputs[0];
    if (!first) continue;
    const label = first.labels?.[0]?.textContent || first.closest('table')?.querySelector(`thead th:nth-child(${first.closest('td').cellIndex + 1})`)?.firstChild?.textContent || f;
    labels.push(`${label.trim()}${inputs.length > 1 ? ` (${inputs.length} groups)` : ''}`);
  }
  return labels;
}

/** cluster's groups (an id, {preset, ...} or a full spec), or null when it has none. */
function groupsOf(cluster, presets) {
  const spec = typeof cluster === 'string' ? presets[cluster] : cluster?.groups ? cluster : presets[cluster?.preset];
  return Array.isArray(spec?.groups) && spec.groups.length ? spec.groups : null;
}

const gpusOf = (groups) => groups.reduce((n, g) => n + (g.nodes || 0) * (g.gpus_per_node || 0), 0);

/** cluster with each group's nodes times factor (a preset keeps what it sets beyond its groups). */
export function scaledCluster(cluster, presets, factor) {
  const groups = groupsOf(cluster, presets);
  if (!groups) return null;
  const scaled = groups.map((g) => ({ ...g, nodes: (g.nodes || 1) * factor }));
  if (typeof cluster === 'string') return { preset: cluster, groups: scaled };
  return { ...cluster, groups: scaled };
}

/**
 * The smallest of the cluster scaled by 2, 4, 8 and 16 on which plan(scenario) returns a plan:
 * {factor, gpus, before (the GPUs of the last size tried without one), cluster, plan} or
 * {factor: null, gpus: largest tried} when none fits; null when the cluster has no groups.
 */
export async function smallestFit(scenario, presets, plan, factors = [2, 4, 8, 16]) {
  const groups = groupsOf(scenario.cluster, presets);
  if (!groups) return null;
  let before = gpusOf(groups);
  for (const factor of factors) {
    const cluster = scaledCluster(scenario.cluster, presets, factor);
    const answer = await plan({ ...scenario, cluster, search: { ...(scenario.search || {}), top_k: 1 } });
    if (!answer.ok) return null;
    if (answer.plans?.length) return { factor, gpus: gpusOf(cluster.groups), before, cluster, plan: answer.plans[0] };
    before = gpusOf(cluster.groups);
  }
  return { factor: null, gpus: before };
}

/** Markup of smallestFit()'s answer for the diagnosis box (a "Use this cluster" button when one fits). */
export function fitMarkup(fit) {
  if (!fit) return '';
  if (!fit.factor) return `<p class="fit">No plan fits on up to <strong>${int(fit.gpus)} GPUs</strong> either (16 times the nodes of each group).</p>`;
  const m = fit.plan.metrics;
  const peak = Math.max(...(m.peak_memory_gib || [NaN]));
  const cap = Math.min(...(m.memory_capacity_gib || [NaN]));
  return `<p class="fit">It fits on <strong>${int(fit.gpus)} GPUs</strong>: each group with ${fit.factor}× its nodes ` +
    `(${int(fit.before)} GPUs did not). Best plan there: ${fixed(m.iteration_time_s, 3)} s per iteration, TP${esc(fit.plan.plan.tp)} ` +
    `PP${esc(fit.plan.plan.pp)} DP${esc(fit.plan.plan.dp)} EP${esc(fit.plan.plan.ep)}, peak memory ${fixed(peak, 1)} of ${fixed(cap, 1)} GiB per GPU.</p>` +
    '<button type="button" class="secondary use-fit">Use this cluster</button>';
}

/**
 * Markup of the core's closest plan (result.diagnosis.closest_plan) when nothing fits: its mesh
 * and, per stage, the memory terms against the GPU's memory (GiB per GPU), the fullest stage's
 * row marked; '' without one.
 */
export function closestMarkup(c) {
  if (!c || !Array.isArray(c.stages) || !c.stages.length) return '';
  const p = c.plan || {};
  const cols = [['weights_gib', 'Weights'], ['gradients_gib', 'Gradients'], ['optimizer_state_gib', 'Optimizer state'],
    ['activations_gib', 'Activations'], ['reserved_gib', 'Reserved'], ['total_gib', 'Total'], ['capacity_gib', 'GPU memory'],
    ['shortfall_gib', 'Over by']];
  const head = `<tr><th scope="col">Stage</th><th scope="col">GPU</th><th scope="col">Layers</th>${cols.map(([, l]) => `<th scope="col">${l} (GiB)</th>`).join('')}</tr>`;
  const rows = c.stages.map((st) => `<tr${st.stage === c.fullest_stage ? ' class="fullest"' : ''}><td>${int(st.stage)}</td><td>${esc(st.gpu)}</td><td>${int(st.layers)}</td>` +
    cols.map(([k]) => `<td>${fixed(st[k], 1)}</td>`).join('') + '</tr>').join('');
  return '<div class="closest-plan"><h4>Closest plan</h4>' +
    `<p>TP${esc(p.tp)} PP${esc(p.pp)} DP${esc(p.dp)} EP${esc(p.ep)} ETP${esc(p.etp)}, micro-batch ${esc(p.micro_batch_size)}` +
    `${p.optimizer_offload_fraction > 0 ? `, optimizer offload ${fixed(p.optimizer_offload_fraction * 100, 0)} %` : ''}: ` +
    `<strong>${fixed(c.shortfall_gib, 1)} GiB</strong> per GPU over on stage ${int(c.fullest_stage)}.</p>` +
    '<div class="table-wrap" tabindex="0" role="region" aria-label="Closest plan memory per stage">' +
    `<table class="closest"><caption>Memory per GPU of each stage, GiB (the core's memory model)</caption><thead>${head}</thead><tbody>${rows}</tbody></table></div>` +
    (c.basis ? `<p class="hint">How it was found: ${esc(c.basis)}.</p>` : '') + '</div>';
}
