// A test-side checker for emitted Megatron-LM arguments (no Megatron code): it parses an args
// string as the shell and argparse would and applies the validate_args / TransformerConfig /
// parallel_state / scheduler rules that concern the flags the planner emits (megatron.md §2).
// Every flag name the planner may emit is listed in KNOWN_FLAGS with its arity; each was checked
// to exist in Megatron-LM's parser (arguments.py and the dataclasses its ArgumentGroupFactory
// turns into flags) at commit d98e8a6 while this file was written.

// flag -> 0 (store_true), 1 (one value) or '+' (one or more values).
export const KNOWN_FLAGS = new Map(Object.entries({
  // parallelism, batch, sequence
  '--tensor-model-parallel-size': 1, '--pipeline-model-parallel-size': 1, '--context-parallel-size': 1,
  '--expert-model-parallel-size': 1, '--expert-tensor-parallel-size': 1, '--sequence-parallel': 0,
  '--pipeline-model-parallel-layout': 1, '--num-virtual-stages-per-pipeline-rank': 1,
  '--micro-batch-size': 1, '--global-batch-size': 1, '--seq-length': 1, '--max-position-embeddings': 1,
  // model
  '--num-layers': 1, '--hidden-size': 1, '--ffn-hidden-size': 1, '--num-attention-heads': 1,
  '--group-query-attention': 0, '--num-query-groups': 1, '--kv-channels': 1, '--multi-latent-attention': 0,
  '--q-lora-rank': 1, '--kv-lora-rank': 1, '--qk-head-dim': 1, '--qk-pos-emb-head-dim': 1, '--v-head-dim': 1,
  '--qk-layernorm': 0, '--softmax-type': 1, '--window-size': 1, '--window-attn-skip-freq': 1,
  '--swiglu': 0, '--quick-geglu': 0, '--glu-linear-offset': 1, '--activation-func-clamp-value': 1,
  '--disable-bias-linear': 0, '--add-qkv-bias': 0, '--untie-embeddings-and-output-weights': 0,
  '--normalization': 1, '--norm-epsilon': 1, '--position-embedding-type': 1, '--rotary-base': 1,
  '--rotary-percent': 1, '--attention-dropout': 1, '--hidden-dropout': 1, '--mtp-num-layers': 1, '--mtp-loss-scaling-factor': 1, '--vocab-size': 1,
  // MoE
  '--num-experts': 1, '--moe-ffn-hidden-size': 1, '--moe-shared-expert-intermediate-size': 1,
  '--moe-shared-expert-gate': 0, '--moe-layer-freq': 1, '--moe-router-topk': 1, '--moe-router-score-function': 1,
  '--moe-router-pre-softmax': 0, '--moe-router-enable-expert-bias': 0, '--moe-router-topk-scaling-factor': 1,
  '--moe-router-num-groups': 1, '--moe-router-group-topk': 1, '--moe-router-load-balancing-type': '+',
  '--moe-aux-loss-coeff': '+', '--moe-token-dispatcher-type': 1, '--moe-flex-dispatcher-backend': 1,
  '--moe-grouped-gemm': 0, '--overlap-moe-expert-parallel-comm': 0, '--delay-wgrad-compute': 0,
  '--moe-expert-capacity-factor': 1, '--moe-pad-expert-input-to-capacity': 0, '--moe-expert-rank-capacity-factor': 1,
  '--moe-use-grouped-tensor': 0, '--moe-paged-stash': 0,
  // optimizer, precision, overlap, CUDA graphs
  '--use-distributed-optimizer': 0, '--overlap-grad-reduce': 0, '--overlap-param-gather': 0, '--bf16': 0,
  '--fp8-format': 1, '--fp8-recipe': 1, '--fp8-param-gather': 0, '--grad-reduce-in-bf16': 0,
  '--use-precision-aware-optimizer': 0, '--main-grads-dtype': 1, '--main-params-dtype': 1, '--exp-avg-dtype': 1,
  '--exp-avg-sq-dtype': 1, '--optimizer-cpu-offload': 0, '--optimizer-offload-fraction': 1,
  '--overlap-cpu-optimizer-d2h-h2d': 0, '--cuda-graph-impl': 1, '--cuda-graph-modules': '+',
  '--no-check-for-nan-in-loss-and-grad': 0,
  '--te-rng-tracker': 0,
  // recompute
  '--recompute-granularity': 1, '--recompute-method': 1, '--recompute-num-layers': 1, '--recompute-modules': '+',
  // training length, schedule, logging, data
  '--train-iters': 1, '--lr': 1, '--min-lr': 1, '--lr-decay-style': 1, '--lr-warmup-iters': 1, '--weight-decay': 1,
  '--clip-grad': 1, '--log-interval': 1, '--log-throughput': 0, '--eval-iters': 1, '--mock-data': 0,
  '--tokenizer-type': 1, '--tokenizer-model': 1, '--data-path': '+', '--split': 1,
}));

const CHOICES = {
  '--normalization': ['LayerNorm', 'RMSNorm'],
  '--position-embedding-type': ['learned_absolute', 'rope', 'yarn', 'mrope', 'relative', 'none'],
  '--softmax-type': ['vanilla', 'off-by-one', 'learnable'],
  '--moe-router-score-function': ['softmax', 'sigmoid', 'sqrtsoftplus'],
  '--moe-router-load-balancing-type': ['aux_loss', 'seq_aux_loss', 'global_aux_loss', 'sinkhorn', 'quantile_balancing', 'none'],
  '--moe-token-dispatcher-type': ['allgather', 'alltoall', 'flex'],
  '--moe-flex-dispatcher-backend': ['deepep', 'hybridep', 'ncclep'],
  '--fp8-format': ['e4m3', 'hybrid'],
  '--fp8-recipe': ['tensorwise', 'delayed', 'mxfp8', 'blockwise', 'custom'],
  '--recompute-granularity': ['full', 'selective'],
  '--recompute-method': ['uniform', 'block'],
  '--recompute-modules': ['core_attn', 'moe_act', 'layernorm', 'mla_up_proj', 'mlp', 'moe', 'shared_experts'],
  '--lr-decay-style': ['constant', 'linear', 'cosine', 'inverse-square-root', 'WSD'],
  '--cuda-graph-impl': ['none', 'local', 'transformer_engine', 'full_iteration'],
  '--cuda-graph-modules': ['attn', 'mlp', 'moe', 'moe_router', 'moe_preprocess', 'mamba'],
  '--main-grads-dtype': ['fp32', 'bf16'], '--main-params-dtype': ['fp32', 'fp16'],
  '--exp-avg-dtype': ['fp32', 'fp16', 'bf16', 'fp8'], '--exp-avg-sq-dtype': ['fp32', 'fp16', 'bf16', 'fp8'],
};

/** Shell words of a string (double quotes group and are removed; no other shell syntax). */
export function shellWords(text) {
  const words = [];
  let cur = null, quoted = false;
  for (const ch of text) {
    if (ch === '"') { quoted = !quoted; cur = cur ?? ''; continue; }
    if (!quoted && /\s/.test(ch)) { if (cur !== null) words.push(cur); cur = null; continue; }
    cur = (cur ?? '') + ch;
  }
  if (quoted) throw new Error('unbalanced double quote');
  if (cur !== null) words.push(cur);
  return words;
}

/** argparse over KNOWN_FLAGS: {flag: true | value | [values]}; errors for unknown or repeated flags. */
export function parseFlags(words, errors) {
  const out = {};
  for (let i = 0; i < words.length; ++i) {
    const flag = words[i];
    if (!KNOWN_FLAGS.has(flag)) { errors.push(`unknown flag ${flag}`); continue; }
    if (flag in out) errors.push(`${flag} given twice`);
    const arity = KNOWN_FLAGS.get(flag);
    if (arity === 0) { out[flag] = true; continue; }
    const vals = [];
    while (i + 1 < words.length && !words[i + 1].startsWith('--') && (arity === '+' || vals.length < 1)) vals.push(words[++i]);
    if (vals.length === 0) errors.push(`${flag} needs a value`);
    out[flag] = arity === '+' ? vals : vals[0];
  }
  return out;
}

/** Python-list expression of --moe-layer-freq ("([0]*3+[1]*58)") evaluated to a list. */
export function evalLayerList(expr) {
  if (!/^[\d\[\](),+*\s]+$/.test(expr)) throw new Error(`bad characters in ${expr}`);
  let i = 0;
  const s = expr.replace(/\s/g, '');
  const int = () => { const m = /^\d+/.exec(s.slice(i)); if (!m) throw new Error(`number expected at ${i}`); i += m[0].length; return Number(m[0]); };
  const atom = () => {
    if (s[i] === '(') { ++i; const v = sum(); if (s[i++] !== ')') throw new Error(') expected'); return v; }
    if (s[i] === '[') { ++i; const v = []; while (s[i] !== ']') { v.push(int()); if (s[i] === ',') ++i; } ++i; return v; }
    throw new Error(`list expected at ${i}`);
  };
  const term = () => { let v = atom(); while (s[i] === '*') { ++i; const n = int(); v = Array.from({ length: n }, () => v).flat(); } return v; };
  const sum = () => { let v = term(); while (s[i] === '+') { ++i; v = v.concat(term()); } return v; };
  const v = sum();
  if (i !== s.length) throw new Error(`trailing text in ${expr}`);
  return v;
}

/** Stages of a --pipeline-model-parallel-layout string (Megatron's parse_str_to_list). */
export function parseLayout(text) {
  let s = text.replace(/,/g, '');
  s = s.replace(/\(([^()]*)\)\*(\d+)/g, (_, body, n) => body.repeat(Number(n)));
  s = s.replace(/([Etm L|])\*(\d+)/g, (_, c, n) => c.repeat(Number(n)));
  return s.split('|').map((stage) => [...stage]);
}

const int = (f, k, d) => (f[k] === undefined ? d : Number(f[k]));

/**
 * Errors of one emitted args string for a world of `worldSize` ranks ([] when it passes).
 * env: the emitted environment; minCudaArch: the lowest compute capability among the GPUs.
 */
export function checkMegatronArgs(argsText, { worldSize, env = {}, minCudaArch = 9 }) {
  const errors = [];
  let words;
  try { words = shellWords(argsText); } catch (e) { return [e.message]; }
  const f = parseFlags(words, errors);
  const need = (ok, msg) => { if (!ok) errors.push(msg); };
  for (const [flag, allowed] of Object.entries(CHOICES)) {
    const v = f[flag];
    if (v === undefined) continue;
    for (const x of Array.isArray(v) ? v : [v]) need(allowed.includes(x), `${flag} ${x}: not one of ${allowed.join(', ')}`);
  }
  for (const flag of ['--num-layers', '--hidden-size', '--num-attention-heads', '--seq-length', '--max-position-embeddings',
    '--micro-batch-size', '--global-batch-size']) need(f[flag] !== undefined, `${flag} is required`);
  // Training length, data and tokenizer.
  need(f['--train-iters'] !== undefined, '--train-iters is required (a run needs a length)');
  need(f['--mock-data'] || f['--data-path'], 'a data source is required (--mock-data or --data-path)');
  need(f['--tokenizer-type'] !== undefined, '--tokenizer-type is required');
  if (f['--tokenizer-type'] === 'NullTokenizer') need(f['--vocab-size'] !== undefined, 'NullTokenizer needs --vocab-size');
  if (f['--tokenizer-type'] === 'HuggingFaceTokenizer') need(f['--tokenizer-model'] !== undefined, 'HuggingFaceTokenizer needs --tokenizer-model');
  if (f['--lr'] !== undefined && f['--min-lr'] !== undefined) need(Number(f['--min-lr']) <= Number(f['--lr']), '--min-lr above --lr');
  need(int(f, '--max-position-embeddings', 0) >= int(f, '--seq-length', 0), 'max_position_embeddings < seq_length');

  // World size and the two rank grids [VA:432, PS].
  const tp = int(f, '--tensor-model-parallel-size', 1), pp = int(f, '--pipeline-model-parallel-size', 1);
  const cp = int(f, '--context-parallel-size', 1), ep = int(f, '--expert-model-parallel-size', 1);
  const etp = int(f, '--expert-tensor-parallel-size', tp);
  if (worldSize % (tp * pp * cp) !== 0) { errors.push(`world ${worldSize} not divisible by tp*pp*cp ${tp * pp * cp}`); return errors; }
  const dp = worldSize / (tp * pp * cp);
  need(worldSize % (etp * ep * pp) === 0, `world ${worldSize} not divisible by etp*ep*pp ${etp * ep * pp} (expert grid)`);
  // Batch [VA:715, MB] and the interleaved schedule [SCH].
  const mbs = int(f, '--micro-batch-size', 1), gbs = int(f, '--global-batch-size', mbs * dp);
  need(gbs % (mbs * dp) === 0, `global batch ${gbs} not divisible by micro-batch x dp ${mbs * dp}`);
  const m = gbs / (mbs * dp);

  // Layers, PP, VPP and the layout [VA:929-1006, TC].
  const L = int(f, '--num-layers', 0), mtp = int(f, '--mtp-num-layers', 0);
  let vpp = int(f, '--num-virtual-stages-per-pipeline-rank', 1);
  if (f['--pipeline-model-parallel-layout'] !== undefined) {
    need(f['--num-virtual-stages-per-pipeline-rank'] === undefined, 'layout and --num-virtual-stages-per-pipeline-rank together');
    const stages = parseLayout(f['--pipeline-model-parallel-layout']);
    const flat = stages.flat();
    need(stages.length % pp === 0, `layout has ${stages.length} stages, not a multiple of pp ${pp}`);
    vpp = stages.length / pp;
    need(flat[0] === 'E' && flat.filter((c) => c === 'E').length === 1, 'layout must open with the only E');
    need(flat.at(-1) === 'L' && flat.filter((c) => c === 'L').length === 1, 'layout must close with the only L');
    need(flat.filter((c) => c === 't').length === L, `layout has ${flat.filter((c) => c === 't').length} t, num_layers is ${L}`);
    need(flat.filter((c) => c === 'm').length === mtp, 'layout m count differs from --mtp-num-layers');
    const firstM = flat.indexOf('m');
    need(firstM < 0 || flat.indexOf('t', firstM) < 0, 'a t after the first m');
  } else {
    need(L % pp === 0, `num_layers ${L} not divisible by pp ${pp} without a layout`);
    if (vpp > 1) need((L / pp) % vpp === 0, 'layers per pipeline rank not divisible by vpp');
  }
  if (vpp > 1) {
    need(pp > 1, 'virtual pipeline needs pp > 1');
    need(m >= pp && m % pp === 0, `interleaved schedule needs micro-batches ${m} to be a multiple of pp ${pp}`);
  }

  // Attention [TC:1446, 1462, VA:1332, 1973].
  const heads = int(f, '--num-attention-heads', 1), h = int(f, '--hidden-size', 0);
  need(heads % tp === 0, `heads ${heads} not divisible by tp ${tp}`);
  const g = f['--group-query-attention'] ? int(f, '--num-query-groups', 1) : heads;
  need(g % tp === 0 || tp % g === 0, `query groups ${g} and tp ${tp} must divide one another`);
  if (f['--kv-channels'] === undefined && !f['--multi-latent-attention']) need(h % heads === 0, 'hidden not divisible by heads');
  need(!(f['--multi-latent-attention'] && f['--group-query-attention']), 'MLA and GQA together');
  if (f['--window-size'] !== undefined) need(/^\d+,\d+$/.test(f['--window-size']), '--window-size must be "left,right"');
  // Sequence [VA:1336, 1439; runtime].
  const seq = int(f, '--seq-length', 0);
  if (cp > 1) need(seq % (2 * cp) === 0, `seq ${seq} not divisible by 2*cp`);
  if (f['--sequence-parallel']) {
    need(tp > 1, 'sequence parallel with tp 1');
    need((seq / cp) % tp === 0, 'seq/cp not divisible by tp with sequence parallel');
  }
  // Activation [argument_utils, TC].
  need(!(f['--swiglu'] && f['--quick-geglu']), '--swiglu and --quick-geglu together');
  if (Number(f['--glu-linear-offset'] ?? 0) !== 0) need(f['--quick-geglu'], '--glu-linear-offset needs --quick-geglu (bias activation fusion)');

  // MoE [VA:1657, TC].
  const E = int(f, '--num-experts', 0);
  if (E === 0) {
    need(ep === 1, 'expert parallelism without experts');
  } else {
    need(E % ep === 0, `experts ${E} not divisible by ep ${ep}`);
    const k = int(f, '--moe-router-topk', 2);
    need(k >= 1 && k <= E, 'topk outside 1..num_experts');
    const score = f['--moe-router-score-function'] ?? 'softmax';
    if (k === 1 && score === 'softmax') need(f['--moe-router-pre-softmax'], 'top-1 softmax routing needs --moe-router-pre-softmax');
    if (f['--moe-router-enable-expert-bias']) need(score !== 'softmax', 'expert bias needs sigmoid scores');
    if (f['--moe-router-num-groups'] !== undefined) {
      const ng = int(f, '--moe-router-num-groups', 1);
      need(E % ng === 0 && int(f, '--moe-router-group-topk', 0) <= ng, 'group-limited routing sizes');
    }
    need(f['--disable-bias-linear'] || etp === 1, `MoE with biases (no --disable-bias-linear) needs etp 1, got ${etp}`);
    if (f['--moe-layer-freq'] !== undefined) {
      try { need(evalLayerList(f['--moe-layer-freq']).length === L, '--moe-layer-freq length differs from num_layers'); }
      catch (e) { errors.push(`--moe-layer-freq: ${e.message}`); }
    }
    const disp = f['--moe-token-dispatcher-type'] ?? 'allgather';
    if (disp === 'flex') need(tp * ep > 1, 'flex dispatcher needs tp*ep > 1');
    const backend = f['--moe-flex-dispatcher-backend'] ?? 'deepep';
    if (f['--moe-flex-dispatcher-backend'] !== undefined) need(disp === 'flex', '--moe-flex-dispatcher-backend without the flex dispatcher');
    // Token dropping and static budgets [TC: moe_expert_capacity_factor, *_rank_capacity_factor, paged stash].
    const cf = f['--moe-expert-capacity-factor'];
    if (f['--moe-pad-expert-input-to-capacity']) need(cf !== undefined, 'padding to capacity needs --moe-expert-capacity-factor');
    if (f['--moe-pad-expert-input-to-capacity'] && disp === 'flex') need(backend !== 'deepep', 'the deepep backend cannot pad to capacity');
    if (cf !== undefined) {
      for (const b of f['--moe-router-load-balancing-type'] ?? ['aux_loss']) {
        need(['aux_loss', 'seq_aux_loss', 'global_aux_loss', 'none'].includes(b), `capacity factor with ${b} balancing`);
      }
    }
    if (f['--moe-expert-rank-capacity-factor'] !== undefined) {
      need(disp === 'flex' && ['hybridep', 'ncclep'].includes(backend), 'rank capacity needs the hybridep or ncclep backend');
      if (backend === 'hybridep') need(f['--moe-use-grouped-tensor'], 'hybridep rank capacity needs --moe-use-grouped-tensor');
    }
    if (f['--moe-paged-stash']) need(f['--moe-expert-rank-capacity-factor'] !== undefined, 'paged stash needs --moe-expert-rank-capacity-factor');
    const balance = f['--moe-router-load-balancing-type'] ?? ['aux_loss'];
    const coeff = f['--moe-aux-loss-coeff'];
    if (coeff !== undefined && balance.length > 1) need(coeff.length === balance.length, 'aux coeff list length');
  }
  if (f['--overlap-moe-expert-parallel-comm']) {
    need(ep > 1, 'EP overlap needs ep > 1');
    need(pp === 1 || vpp > 1, 'EP overlap needs vpp when pp > 1');
    need(['alltoall', 'flex'].includes(f['--moe-token-dispatcher-type']), 'EP overlap needs alltoall or flex');
    need(f['--recompute-granularity'] !== 'full', 'EP overlap with full recompute');
    need(!(f['--recompute-modules'] ?? []).includes('moe'), 'EP overlap with moe recompute');
    need(mtp <= 1, 'EP overlap needs mtp <= 1');
  }
  if (f['--delay-wgrad-compute']) need(f['--overlap-moe-expert-parallel-comm'], '--delay-wgrad-compute needs EP overlap');

  // Precision [2.8] and the optimizer [VA:1024].
  if (f['--fp8-format'] !== undefined || f['--fp8-recipe'] !== undefined) {
    need(f['--fp8-format'] !== undefined, 'an FP8 recipe without --fp8-format');
    need(f['--bf16'], 'FP8 training here runs with --bf16');
    // The block-scaled recipes run E4M3 everywhere in the planner's recipes (DeepSeek-V3, MXFP8).
    if (['mxfp8', 'blockwise'].includes(f['--fp8-recipe'])) need(f['--fp8-format'] === 'e4m3', `${f['--fp8-recipe']} with ${f['--fp8-format']}`);
  }
  if (f['--fp8-param-gather']) need(f['--use-distributed-optimizer'], '--fp8-param-gather needs the distributed optimizer');
  if (f['--overlap-param-gather']) need(f['--use-distributed-optimizer'] && f['--overlap-grad-reduce'], '--overlap-param-gather needs DistOpt and --overlap-grad-reduce');
  for (const flag of ['--main-grads-dtype', '--main-params-dtype', '--exp-avg-dtype', '--exp-avg-sq-dtype']) {
    if (f[flag] !== undefined && f[flag] !== 'fp32') need(f['--use-precision-aware-optimizer'], `${flag} needs --use-precision-aware-optimizer`);
  }
  if (f['--optimizer-offload-fraction'] !== undefined) need(f['--optimizer-cpu-offload'], 'offload fraction without --optimizer-cpu-offload');
  // CUDA graphs [VA:1235, TC: cuda_graph_modules].
  const impl = f['--cuda-graph-impl'] ?? 'none';
  const gmods = f['--cuda-graph-modules'] ?? [];
  if (gmods.length) need(['local', 'transformer_engine'].includes(impl), `--cuda-graph-modules with --cuda-graph-impl ${impl}`);
  if (['local', 'transformer_engine'].includes(impl)) {
    const has = (x) => gmods.includes(x);
    need(!(has('moe') && has('moe_router')), 'cuda_graph_modules must not contain both moe and moe_router');
    if (impl === 'transformer_engine' && has('moe_preprocess')) need(has('moe_router'), 'moe_preprocess graph needs moe_router');
    const E = int(f, '--num-experts', 0);
    if (E === 0) need(!has('moe') && !has('moe_router'), 'moe graphs need an MoE model');
    const freq = f['--moe-layer-freq'] === undefined ? null : evalLayerList(f['--moe-layer-freq']);
    if (E > 0 && (freq === null || !freq.includes(0))) need(!has('mlp'), 'mlp graph without dense layers');
    const dropPad = f['--moe-expert-capacity-factor'] !== undefined && f['--moe-pad-expert-input-to-capacity'];
    if (E > 0 && !dropPad) {
      need(!has('moe') && gmods.length > 0, 'capturing the MoE block (moe, or the whole layer) needs drop-and-pad');
      if (f['--moe-token-dispatcher-type'] === 'alltoall' && f['--moe-expert-capacity-factor'] !== undefined) {
        need(!has('moe_preprocess'), 'moe_preprocess graph with alltoall host copies');
      }
    }
    if (f['--recompute-granularity'] === 'full') errors.push('full recompute needs full-iteration graphs');
    if (impl === 'transformer_engine' && (f['--recompute-modules'] ?? []).includes('moe')) need(!has('moe_router'), 'moe recompute with a TE moe_router graph');
    if (f['--overlap-moe-expert-parallel-comm'] && impl === 'transformer_engine') need(!has('moe') && !has('mlp'), 'TE graphs of moe/mlp with EP overlap');
    // [VA:1925] delayed wgrad inside an attention graph: no attention biases.
    if (f['--delay-wgrad-compute'] && f['--overlap-grad-reduce'] && has('attn')) {
      need(f['--disable-bias-linear'] && !f['--add-qkv-bias'], 'attn CUDA graph with delay_wgrad_compute and attention biases');
    }
  }
  if (impl === 'full_iteration' && int(f, '--num-experts', 0) > 0) {
    // Runtime: capture needs static MoE shapes (no dispatcher host sync).
    const dropPad = f['--moe-expert-capacity-factor'] !== undefined && f['--moe-pad-expert-input-to-capacity'];
    need(dropPad || f['--moe-expert-rank-capacity-factor'] !== undefined, 'full-iteration graphs need static MoE shapes');
  }
  if (impl === 'full_iteration') {
    need(f['--no-check-for-nan-in-loss-and-grad'], 'full-iteration CUDA graphs need --no-check-for-nan-in-loss-and-grad');
    // [TC:2878] graphed core_attn recompute cannot replay dropout's random numbers.
    if ((f['--recompute-modules'] ?? []).includes('core_attn')) {
      need(Number(f['--attention-dropout'] ?? 0.1) === 0, 'graphed core_attn recompute needs --attention-dropout 0');
    }
  }
  // Recompute [VA:1426, TC].
  const gran = f['--recompute-granularity'];
  if (gran === 'full') need(f['--recompute-method'] !== undefined && f['--recompute-num-layers'] !== undefined, 'full recompute needs method and num-layers');
  if (gran === 'selective') need(f['--recompute-method'] === undefined && f['--recompute-num-layers'] === undefined, 'selective recompute with method/num-layers');
  const mods = f['--recompute-modules'] ?? [];
  if (mods.length) need(gran === 'selective', '--recompute-modules without selective granularity');
  if (mods.includes('moe_act')) need(f['--moe-grouped-gemm'], 'moe_act recompute needs --moe-grouped-gemm');
  if (mods.includes('mla_up_proj')) need(f['--multi-latent-attention'], 'mla_up_proj recompute needs MLA');
  // Environment [VA:1477].
  if ((tp > 1 || cp > 1) && minCudaArch < 10 && !f['--overlap-moe-expert-parallel-comm']) {
    need(env.CUDA_DEVICE_MAX_CONNECTIONS === '1', 'tp or cp > 1 before Blackwell needs CUDA_DEVICE_MAX_CONNECTIONS=1');
  }
  if (f['--overlap-moe-expert-parallel-comm']) {
    need(env.CUDA_DEVICE_MAX_CONNECTIONS !== '1', 'EP overlap needs CUDA_DEVICE_MAX_CONNECTIONS > 1 (MoE README)');
  }
  return errors;
}
