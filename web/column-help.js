// Short explanations of the results columns, shown together by one toggle above the plans table
// (a real button: reachable by keyboard and touch, not only on hover; one tab stop, not one per column).
import { esc } from './format.js';

export const COLUMN_HELP = {
  tp: ['TP (tensor parallel)', 'GPUs that split each layer\'s matrices; they exchange activations every layer, so TP stays inside a node.'],
  cp: ['CP (context parallel)', 'GPUs that split the sequence of each sample; useful for long sequences.'],
  pp: ['PP (pipeline parallel)', 'Number of pipeline stages; each stage holds a run of consecutive layers.'],
  dp: ['DP (data parallel)', 'Copies of the model that each take a share of the global batch and average gradients.'],
  ep: ['EP (expert parallel)', 'GPUs that share the experts of an MoE layer; tokens travel to their experts by all-to-all.'],
  etp: ['ETP (expert tensor parallel)', 'Tensor parallelism inside each expert.'],
  vpp: ['VPP (virtual pipeline)', 'Layer chunks per stage in the interleaved schedule; more chunks mean a smaller bubble and more pipeline messages.'],
  mbs: ['Micro-batch size', 'Samples per micro-batch: larger ones use the GPU better but need more activation memory.'],
  split: ['Layers per stage', 'How many transformer layers each pipeline stage holds, stage 0 first.'],
  time: ['Iteration time', 'Predicted time of one training step (one global batch), by the core\'s cost model.'],
  tps: ['Throughput', 'Training tokens processed per second: global batch x sequence length / iteration time.'],
  costHour: ['Cost per hour', 'What the GPUs this plan is billed for cost per hour at your prices (Price column of the GPU groups): the GPUs it uses, or the whole group where Billed is "whole group".'],
  costTok: ['Cost per million tokens', 'USD per million training tokens at your prices: cost per hour divided by the million tokens trained per hour.'],
  tflops: ['TFLOPS per GPU', 'Model FLOPs per second per GPU, by Megatron-LM\'s formula, comparable with published Megatron numbers.'],
  mfu: ['MFU (model FLOPs utilisation)', 'Model FLOPs per second as a share of the GPUs\' peak dense TFLOPS.'],
  bubble: ['Bubble', 'Share of the pipeline\'s time a stage waits idle for its neighbours (fill, drain, unequal stages).'],
  mem: ['Peak memory', 'Largest predicted memory per GPU over the stages: weights, gradients, optimizer state, activations and the reserved part.'],
  head: ['Memory headroom', 'Smallest free memory per GPU over the stages (capacity minus predicted peak). Plans using more than 95% of a GPU are flagged: real runs vary by a few GiB.'],
  vsMd: ['vs Megatron', 'Speedup of this plan over the Megatron default baseline (uniform layer split, GPU types ignored).'],
  vsUni: ['vs uniform', 'Speedup over the best plan whose layers are spread as evenly as possible over the stages, remainder by the core\'s fixed rule (GPU speed not considered).'],
  mesh: ['Parallel mesh', 'TP splits each layer\'s matrices (inside a node); CP splits each sample\'s sequence; PP is the number of pipeline stages; DP the copies that share the batch; EP the GPUs sharing an MoE layer\'s experts (all-to-all); ETP tensor parallelism inside each expert; VPP layer chunks per stage (interleaved schedule, smaller bubble); mbs samples per micro-batch.'],
  meshes: ['Mesh per GPU group', 'Hetero (FlagScale) plans: each GPU group\'s own process mesh, in pipeline order; ×N is how many pipeline stages the group holds (PP counts all of them).'],
  cmp: ['Compare', 'Tick two plans to see them side by side with the terms that make one faster.'],
};

/** Markup of the explanations of the given column keys (those with help), in that order. */
export function glossaryMarkup(keys) {
  return `<dl class="glossary">${keys.filter((k) => COLUMN_HELP[k]).map((k) => `<dt>${esc(COLUMN_HELP[k][0])}</dt><dd>${esc(COLUMN_HELP[k][1])}</dd>`).join('')}</dl>`;
}

/**
 * Wires one toggle button (one tab stop for the whole table header, keyboard and touch) to show
 * and hide, in box, the explanations of the columns keys() names.
 */
export function wireHelpToggle(button, box, keys) {
  box.classList.add('help-pop');
  box.hidden = true;
  box.id ||= `column-help-${Math.random().toString(36).slice(2)}`;
  button.setAttribute('aria-expanded', 'false');
  button.setAttribute('aria-controls', box.id);
  const show = (open) => {
    box.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
    if (open) box.innerHTML = glossaryMarkup(keys());
  };
  button.addEventListener('click', () => show(box.hidden));
  return { refresh() { if (!box.hidden) show(true); } };
}
