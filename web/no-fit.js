// When no plan fits: the core's rule ids in a sentence, the form fields behind the cause
// (highlighted), and the smallest cluster the core does find a plan on (the same groups with
// 2, 4, 8 or 16 times their nodes), with its best plan. Pure except highlightCause().
import { esc, fixed, int } from './format.js';

/**
 * What a rule the core names in a diagnosis means, in the page's words, and the form fields it
 * depends on ("cluster.groups[].x": that field of every group). Rule names are the core's
 * (core/src/evaluate/rules.cpp); a rule not listed here gets a general sentence.
 */
export const RULES = {
  tp_in_scale_up_domain: ['TP must divide the GPUs of one node (its NVLink or scale-up domain): tensor-parallel GPUs exchange activations in every layer.',
    ['search.tp', 'cluster.groups[].gpus_per_node']],
  heads_divisible_by_tp: ['The attention heads must split evenly over the TP GPUs.', ['search.tp', 'model.num_attention_heads']],
  query_groups_vs_tp: ['The key/value head groups and TP must divide one another.', ['search.tp', 'model.num_query_groups']],
  sp_seq_divisible: ['With sequence parallelism the sequence must split evenly over the TP GPUs.', ['search.tp', 'training.seq_length']],
  cp_seq_divisible: ['The sequence must split evenly over the CP GPUs (two chunks each).', ['search.cp', 'training.seq_length']],
  expert_parallel_requires_experts: ['EP and ETP above 1 need a model with experts.', ['search.ep', 'search.etp']],
  experts_divisible_by_ep: ['The experts must split evenly over the EP GPUs.', ['search.ep', 'model.num_experts']],
  expert_grid: ['EP × ETP must divide the GPUs of a pipeline stage (TP × CP × DP): the expert layers re-use the same GPUs.', ['search.ep', 'search.etp']],
  moe_bias_needs_etp1: ['Linear biases on an MoE model need ETP 1.', ['search.etp']],
  batch_divisible: ['The global batch must split into micro-batches for every data-parallel copy.', ['training.global_batch_size', 'search.micro_batch_size']],
  pp_within_layers: ['There can be no more pipeline stages than layers.', ['search.pp', 'model.num_layers']],
  vpp_requires_pp: ['The interleaved schedule (VPP above 1) needs more than one pipeline stage.', ['search.vpp', 'search.pp']],
  vpp_microbatches: ['The interleaved schedule needs the micro-batches to be a multiple of PP.', ['search.vpp', 'training.global_batch_size']],
  stage_layers_at_least_vpp: ['Every pipeline stage must hold at least VPP layers.', ['search.vpp', 'model.num_layers']],
  stage_node_alignment: ['A pipeline stage\'s GPUs (TP × CP × DP) must fill whole nodes or divide one node evenly.',
    ['cluster.groups[].gpus_per_node', 'cluster.groups[].nodes']],
  fp8_needs_hardware: ['FP8 training needs GPUs with FP8 tensor cores.', ['training.precision', 'cluster.groups[].gpu']],
  fp8_recipe_supported: ['The FP8 recipe must be one each stage\'s GPU runs.', ['training.fp8_recipe', 'cluster.groups[].gpu']],
  fp8_common_recipe: ['All stages\' GPUs must share one FP8 recipe: one --fp8-recipe runs on every GPU.', ['training.fp8_recipe', 'cluster.groups[].gpu']],
  same_collective_library: ['Upstream Megatron-LM uses one collective library (NCCL, RCCL or HCCL), so its stages use one vendor\'s GPUs; the FlagScale heterogeneous runtime spans vendors.',
    ['search.mode']],
};

/** The rule ids a diagnosis text names (snake_case words of three parts or more, or quoted). */
export function ruleIds(text) {
  return [...new Set([...String(text ?? '').matchAll(/\b([a-z][a-z0-9]*(?:_[a-z0-9]+){2,})\b/g)].map((m) => m[1]))];
}

/** A sentence for a rule id: RULES' own, or a general one naming the rule in words. */
export function ruleSentence(id) {
  return RULES[id]?.[0] ?? `It is one of the Megatron-LM rules the planner checks every plan against ("${id.replace(/_/g, ' ')}").`;
}

/** The form fields behind a no-fit result: those of the rules it names, else (over memory) the group sizes. */
export function causeFields(result) {
  const d = result?.diagnosis || {};
  const fields = ruleIds(d.message).flatMap((id) => RULES[id]?.[1] || []);
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
