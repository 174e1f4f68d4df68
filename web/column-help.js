// Short explanations of the results columns, shown by a "?" button after each header
// (a real button: reachable by keyboard and touch, not only on hover).
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
  tflops: ['TFLOPS per GPU', 'Model FLOPs per second per GPU, by Megatron-LM\'s formula, comparable with published Megatron numbers.'],
  mfu: ['MFU (model FLOPs utilisation)', 'Model FLOPs per second as a share of the GPUs\' peak dense TFLOPS.'],
  bubble: ['Bubble', 'Share of the pipeline\'s time a stage waits idle for its neighbours (fill, drain, unequal stages).'],
  mem: ['Peak memory', 'Largest predicted memory per GPU over the stages: weights, gradients, optimizer state, activations and the reserved part.'],
  head: ['Memory headroom', 'Smallest free memory per GPU over the stages (capacity minus predicted peak). Plans using more than 95% of a GPU are flagged: real runs vary by a few GiB.'],
  vsMd: ['vs Megatron', 'Speedup of this plan over the Megatron default baseline (uniform layer split, GPU types ignored).'],
  vsUni: ['vs uniform', 'Speedup over the best plan whose layers are spread as evenly as possible over the stages, remainder by the core\'s fixed rule (GPU speed not considered).'],
  mesh: ['Parallel mesh', 'TP splits each layer\'s matrices (inside a node); CP splits each sample\'s sequence; PP is the number of pipeline stages; DP the copies that share the batch; EP the GPUs sharing an MoE layer\'s experts (all-to-all); ETP tensor parallelism inside each expert; VPP layer chunks per stage (interleaved schedule, smaller bubble); mbs samples per micro-batch.'],
  cmp: ['Compare', 'Tick two plans to see them side by side with the terms that make one faster.'],
};

/** Markup of a help button for column key (empty when there is no help for it). */
export function helpButton(key) {
  const h = COLUMN_HELP[key];
  return h ? `<button type="button" class="help-btn" data-help="${esc(key)}" aria-expanded="false" aria-label="What is ${esc(h[0])}?">?</button>` : '';
}

/** Wires the help buttons inside container to show their text in box (toggle, one at a time). */
export function wireHelp(container, box) {
  box.classList.add('help-pop');
  box.hidden = true;
  box.setAttribute('role', 'note');
  box.setAttribute('aria-live', 'polite');
  let open = null;
  container.addEventListener('click', (e) => {
    const btn = e.target.closest('button[data-help]');
    if (!btn) return;
    e.stopPropagation();
    const key = btn.dataset.help;
    const show = open !== key;
    container.querySelectorAll('button[data-help]').forEach((b) => b.setAttribute('aria-expanded', String(show && b.dataset.help === key)));
    open = show ? key : null;
    box.hidden = !show;
    if (show) box.innerHTML = `<h4>${esc(COLUMN_HELP[key][0])}</h4><p>${esc(COLUMN_HELP[key][1])}</p>`;
  });
  return { refresh() { container.querySelectorAll('button[data-help]').forEach((b) => b.setAttribute('aria-expanded', String(b.dataset.help === open))); } };
}
