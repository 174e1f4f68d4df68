// Runs the Megatron arguments checker (megatron_args_check.mjs) over what the CLI emits: the top
// plans of every example, and two evaluated plans of every preset model on 16 H100s (an uneven
// split with a layout; TP 2 with VPP, selective recompute and FP8 where the model allows). Also
// checks that the checker rejects broken strings, and that every launch script carries the args.
// Usage: node tests/megatron_args_run.mjs <hapmoe binary>
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkMegatronArgs } from './megatron_args_check.mjs';

const bin = process.argv[2];
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = (args, input) => JSON.parse(execFileSync(bin, args, { input, maxBuffer: 1 << 28 }).toString());
const gpus = run(['presets', 'gpus', '--json']);
const models = run(['presets', 'models', '--json']);
let failures = 0, checked = 0;

let hetero = 0;
function checkPlan(label, p) {
  if (p.flagscale) {  // hetero-mode plan: FlagScale's config, checked by tests/flagscale_checker.hpp
    ++hetero;
    return;
  }
  const { plan, megatron } = p;
  const world = plan.tp * plan.cp * plan.dp * plan.pp;
  const arch = Math.min(...plan.stages.map((s) => gpus[s.gpu]?.cuda_arch ?? 0));
  const errors = checkMegatronArgs(megatron.args, { worldSize: world, env: megatron.env, minCudaArch: arch });
  const dataless = megatron.args.replace(/ --mock-data .*$/, '');
  if (!megatron.launch.includes(`ARGS=(${dataless})`)) errors.push('launch does not carry the args');
  if (!megatron.hostfile.includes('slots=')) errors.push('no hostfile');
  ++checked;
  if (errors.length) {
    ++failures;
    console.log(`FAIL ${label}: ${errors.join('; ')}\n  ${megatron.args}`);
  }
}

// 1. Every example's top plans.
for (const f of readdirSync(path.join(root, 'examples')).filter((n) => n.endsWith('.json')).sort()) {
  const r = run(['plan', path.join(root, 'examples', f), '--json', '--top', '5']);
  r.plans.forEach((p, i) => checkPlan(`${f} plan ${i}`, p));
}

// 2. Every preset model on 16 H100s, two plans each (evaluate accepts plans that do not fit).
const gcd = (a, b) => (b ? gcd(b, a % b) : a);
for (const [id, m] of Object.entries(models)) {
  const experts = m.num_experts ?? 0;
  const groups = m.num_query_groups ?? m.num_attention_heads;
  const plans = [];
  const ep1 = experts ? gcd(experts, 8) : 1;
  const first = Math.ceil(m.num_layers / 2) + 1;  // uneven: needs a layout
  plans.push({ precision: 'bf16', plan: { tp: 1, pp: 2, dp: 8, ep: ep1, stages: [{ layers: first }, { layers: m.num_layers - first }] } });
  const tp2 = m.num_attention_heads % 2 === 0 && (m.multi_latent_attention || groups % 2 === 0 || 2 % groups === 0);
  if (tp2) {
    const ep2 = experts ? gcd(experts, 4) : 1;
    const half = Math.floor(m.num_layers / 2);
    plans.push({ precision: 'fp8', plan: { tp: 2, pp: 2, dp: 4, ep: ep2, vpp: 2, sequence_parallel: true,
      stages: [{ layers: half, recompute: 'selective' }, { layers: m.num_layers - half, recompute: 'selective' }] } });
  }
  for (const [i, { precision, plan }] of plans.entries()) {
    const doc = { format: 'hapmoe.scenario/1', model: id, cluster: 'h100-16',
      training: { global_batch_size: 64, seq_length: 4096, precision }, plan };
    const r = run(['evaluate', '-', '--json'], JSON.stringify(doc));
    if (!r.ok) { ++failures; console.log(`FAIL ${id} plan ${i}: evaluate refused: ${r.error.message}`); continue; }
    checkPlan(`${id} plan ${i}`, r.plans[0]);
  }
}

// 3. The checker itself rejects what Megatron rejects.
const good = '--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel --micro-batch-size 1 '
  + '--global-batch-size 64 --seq-length 4096 --max-position-embeddings 4096 --num-layers 8 --hidden-size 1024 '
  + '--num-attention-heads 16 --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 4 --expert-tensor-parallel-size 1 '
  + '--disable-bias-linear --moe-grouped-gemm --train-iters 10 --mock-data --tokenizer-type NullTokenizer --vocab-size 32000';
const env = { CUDA_DEVICE_MAX_CONNECTIONS: '1' };
const broken = {
  'unknown flag': `${good} --not-a-megatron-flag`,
  'experts % ep': good.replace('--expert-model-parallel-size 4', '--expert-model-parallel-size 3'),
  'bias with etp 2': good.replace('--disable-bias-linear ', '').replace('--expert-tensor-parallel-size 1', '--expert-tensor-parallel-size 2'),
  'layout count': `${good} --pipeline-model-parallel-layout "Et*4|t*3L"`,
  'no training length': good.replace('--train-iters 10 ', ''),
  'no data': good.replace('--mock-data ', ''),
  'mxfp8 hybrid': `${good} --bf16 --fp8-format hybrid --fp8-recipe mxfp8`,
  'moe-layer-freq length': `${good} --moe-layer-freq "([0]*1+[1]*6)"`,
  'full recompute without method': `${good} --recompute-granularity full`,
  'heads % tp': good.replace('--num-attention-heads 16', '--num-attention-heads 15'),
  'full-iteration graphs with the NaN check': `${good} --cuda-graph-impl full_iteration`,
  'graphed attention recompute with dropout': `${good} --cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad `
    + '--recompute-granularity selective --recompute-modules core_attn',
  'graph modules with full_iteration': `${good} --cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad --cuda-graph-modules attn`,
  'moe and moe_router graphs': `${good} --cuda-graph-impl transformer_engine --cuda-graph-modules moe moe_router`,
  'TE moe_preprocess without moe_router': `${good} --cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_preprocess`,
  'moe graph without drop-and-pad': `${good} --cuda-graph-impl transformer_engine --cuda-graph-modules attn moe`,
  'whole-layer graph of a dropless MoE': `${good} --cuda-graph-impl transformer_engine`,
  'full-iteration graphs of a dropless MoE': `${good} --cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad`,
  'padding without a capacity factor': `${good} --moe-token-dispatcher-type alltoall --moe-pad-expert-input-to-capacity`,
  'deepep padding': `${good} --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep --moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity`,
  'rank capacity on deepep': `${good} --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep --moe-expert-rank-capacity-factor 1.5 --moe-use-grouped-tensor`,
  'hybridep rank capacity without the grouped tensor': `${good} --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-expert-rank-capacity-factor 1.5`,
  'paged stash without a rank budget': `${good} --moe-paged-stash`,
  'backend without flex': `${good} --moe-token-dispatcher-type alltoall --moe-flex-dispatcher-backend hybridep`,
};
// and accepts what Megatron accepts
const fine = {
  'TE graphs of the static parts': `${good} --moe-token-dispatcher-type alltoall --cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router moe_preprocess --te-rng-tracker`,
  'full-iteration graphs on the HybridEP budget': `${good} --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-expert-rank-capacity-factor 1.5 --moe-use-grouped-tensor --moe-paged-stash --cuda-graph-impl full_iteration --no-check-for-nan-in-loss-and-grad --te-rng-tracker`,
  'moe graph with drop-and-pad': `${good} --moe-token-dispatcher-type alltoall --moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity --cuda-graph-impl transformer_engine --cuda-graph-modules attn moe --te-rng-tracker`,
};
// A rule that needs a valid EP-overlap string around it: exactly the attention-bias error.
{
  const overlap = good.replace('--pipeline-model-parallel-size 2', '--pipeline-model-parallel-size 1')
    + ' --moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm --delay-wgrad-compute'
    + ' --use-distributed-optimizer --overlap-grad-reduce --cuda-graph-impl transformer_engine'
    + ' --cuda-graph-modules attn moe_router moe_preprocess --te-rng-tracker';
  const env32 = { CUDA_DEVICE_MAX_CONNECTIONS: '32' };
  const ok = checkMegatronArgs(overlap, { worldSize: 16, env: env32 });
  const biased = checkMegatronArgs(overlap.replace('--disable-bias-linear ', ''), { worldSize: 16, env: env32 });
  if (ok.length || biased.length !== 1 || !biased[0].includes('attention biases')) {
    ++failures;
    console.log(`FAIL attn-graph bias rule: valid -> ${ok.join('; ')}; biased -> ${biased.join('; ')}`);
  }
}
for (const [name, text] of Object.entries(fine)) {
  const e = checkMegatronArgs(text, { worldSize: 16, env });
  if (e.length) { ++failures; console.log(`FAIL checker rejects ${name}: ${e.join('; ')}`); }
}
const goodErrors = checkMegatronArgs(good, { worldSize: 16, env });
if (goodErrors.length) { ++failures; console.log(`FAIL checker rejects a valid string: ${goodErrors.join('; ')}`); }
if (!checkMegatronArgs(good, { worldSize: 16, env: {} }).some((e) => e.includes('CUDA_DEVICE_MAX_CONNECTIONS'))) {
  ++failures; console.log('FAIL checker misses the CUDA_DEVICE_MAX_CONNECTIONS rule');
}
for (const [name, text] of Object.entries(broken)) {
  if (checkMegatronArgs(text, { worldSize: 16, env }).length === 0) { ++failures; console.log(`FAIL checker accepts: ${name}`); }
}
console.log(`${checked} emitted commands checked (${hetero} hetero-mode plans left to the FlagScale checker), ${Object.keys(broken).length + Object.keys(fine).length + 3} checker self-tests, ${failures} failures`);
process.exit(failures ? 1 : 0);
