// Node tests of the page's pure modules (no browser): charts, URL state, HF import. The pipeline
// schedule itself is the core's (tests/cost/timeline_test.cpp).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryChartSvg } from '../../web/memory-chart.js';
import { timelineChartSvg, stageOps } from '../../web/timeline-chart.js';
import { encodeScenario, decodeHash } from '../../web/url-state.js';
import { modelSpecFromHfConfig } from '../../web/hf-config.js';
import { pathPrefixes } from '../../web/errors.js';
import { int, usd } from '../../web/format.js';
import { paretoChartSvg, paretoTableMarkup, pointLabel } from '../../web/pareto-chart.js';

test('the Pareto chart: one focusable button per point of the front, named by its figures; the table the same', () => {
  const front = [
    { iteration_time_s: 7.742, tokens_per_s: 135442, cost_per_hour: 67.2, cost_per_million_tokens: 0.13782, gpus_used: 32, plan_index: null },
    { iteration_time_s: 10.2915, tokens_per_s: 101888, cost_per_hour: 48, cost_per_million_tokens: 0.130863, gpus_used: 16, plan_index: 0 },
  ];
  const svg = paretoChartSvg(front, 1, { width: 320 });
  assert.match(svg, /^<svg[^>]*role="group"[^>]*>.*<\/svg>$/s);
  assert.match(svg, /viewBox="0 0 320 300"/);
  assert.equal((svg.match(/role="button" tabindex="0"/g) || []).length, 2);
  assert.equal((svg.match(/aria-current="true"/g) || []).length, 1);
  assert.match(svg, /class="pt selected" role="button" tabindex="0" data-point="1"/);
  assert.equal(pointLabel(front[0], 0), 'Pareto point 1: 7.742 s per iteration, $0.1378 per million tokens, $67.20 per hour, 32 GPUs; not in the top k');
  assert.match(pointLabel(front[1], 1), /plan #1 in the table$/);
  assert.match(svg, /iteration time \(s\)/);
  assert.match(svg, /USD per million tokens \(your prices\)/);
  // One point alone still gets axes (a range around it), no NaN anywhere.
  assert.doesNotMatch(paretoChartSvg(front.slice(0, 1)), /NaN|Infinity/);
  const table = paretoTableMarkup(front, 0);
  assert.equal((table.match(/<button/g) || []).length, 2);
  assert.match(table, /<tr class="selected" data-point-row="0">/);
  assert.deepEqual([13086.3, 48, 0.130863, 0, NaN].map(usd), ['$13,086', '$48.00', '$0.1309', '$0.00', '—']);
});

test('charts are SVG strings with one bar or row per stage', () => {
  const stages = [{ gpu: 'h800-sxm', weights_gib: 10, gradients_gib: 5, optimizer_state_gib: 3, activations_gib: 20, reserved_gib: 5, forward_s: 0.01, backward_s: 0.02 },
    { gpu: 'ascend-910b', weights_gib: 8, gradients_gib: 4, optimizer_state_gib: 3, activations_gib: 10, reserved_gib: 6, forward_s: 0.02, backward_s: 0.04 }];
  const mem = memoryChartSvg(stages, [80, 64]);
  assert.match(mem, /^<svg[^>]*>.*<\/svg>$/s);
  assert.equal((mem.match(/class="capacity"/g) || []).length, 3); // two stages + legend
  // A core timeline (api timeline()): 2 stages, 4 micro-batches, 1F1B.
  const stage = (gpu, r, f, b) => ({ gpu, forward_op_s: f, backward_op_s: b, forward_comm_op_s: f / 10, backward_comm_op_s: 0,
    kinds: 'FFFFBBBB', chunks: Array(8).fill(0), microbatches: [0, 1, 2, 3, 0, 1, 2, 3],
    starts_s: [0, 1, 2, 3].map((k) => r * f + k * f).concat([0, 1, 2, 3].map((k) => r * f + 4 * f + k * b)) });
  const timeline = { iteration_s: 0.5, pipeline_s: 0.4, bubble_fraction: 0.123456, num_microbatches: 4, vpp: 1,
    stages: [{ ...stage('h800-sxm', 0, 0.01, 0.02), tail: { start_s: 0.4, dp_s: 0.05, optimizer_s: 0.05, end_s: 0.5 } },
      { ...stage('ascend-910b', 1, 0.02, 0.04), tail: { start_s: 0.4, dp_s: 0.02, optimizer_s: 0.03, end_s: 0.45 } }] };
  assert.deepEqual(stageOps(timeline.stages[1])[4], ['B', 0, 0, 0.1, 0.14, 0]);
  const tl = timelineChartSvg(timeline);
  assert.match(tl, /^<svg/);
  assert.equal((tl.match(/<title>Forward/g) || []).length, 8);
  assert.equal((tl.match(/<title>Optimizer step/g) || []).length, 2);
  assert.match(tl, /data-iteration-s="0.5" data-bubble-fraction="0.123456"/);
  assert.match(tl, /bubble 12.3%/);
  const n = 1024;
  const many = { ...timeline, num_microbatches: 512, stages: timeline.stages.map((s) => ({ ...s, forward_op_s: 0.0002,
    kinds: 'F'.repeat(n), chunks: Array(n).fill(0), microbatches: [...Array(n).keys()], starts_s: [...Array(n).keys()].map((k) => k * 0.0003) })) };
  assert.match(timelineChartSvg(many), /<path d="M/); // many ops: busy runs
});

test('scenario survives the URL hash round trip; bad hashes are reported, not thrown', async () => {
  const s = { format: 'hapmoe.scenario/1', model: { preset: 'mixtral-s', num_layers: 12 }, cluster: '16-1',
    training: { global_batch_size: 256, seq_length: 4096 }, search: { tp: [1, 2], recompute: ['none'] } };
  const hash = await encodeScenario(s);
  assert.match(hash, /^#s=v1\.[A-Za-z0-9_-]+$/);
  assert.deepEqual((await decodeHash(hash)).scenario, s);
  assert.equal(await decodeHash(''), null);
  assert.equal(await decodeHash('#section-2'), null);
  assert.ok((await decodeHash('#s=v1.garbage!!')).error);
  assert.ok((await decodeHash('#s=v9.abc')).error);
});

test('Hugging Face configs map to ModelSpec fields', () => {
  const ds = modelSpecFromHfConfig({ num_hidden_layers: 61, hidden_size: 7168, intermediate_size: 18432, moe_intermediate_size: 2048,
    num_attention_heads: 128, num_key_value_heads: 128, n_routed_experts: 256, n_shared_experts: 1, num_experts_per_tok: 8,
    first_k_dense_replace: 3, n_group: 8, topk_group: 4, q_lora_rank: 1536, kv_lora_rank: 512, qk_nope_head_dim: 128,
    qk_rope_head_dim: 64, v_head_dim: 128, num_nextn_predict_layers: 1, vocab_size: 129280, tie_word_embeddings: false });
  assert.equal(ds.num_experts, 256);
  assert.equal(ds.moe_shared_expert_intermediate_size, 2048);
  assert.deepEqual(ds.moe_layer_freq.slice(0, 4), [0, 0, 0, 1]);
  assert.equal(ds.moe_layer_freq.length, 61);
  assert.equal(ds.multi_latent_attention, true);
  assert.equal(ds.moe_router_group_topk, 4);
  assert.equal(ds.mtp_num_layers, 1);
  const llama = modelSpecFromHfConfig({ num_hidden_layers: 32, hidden_size: 4096, intermediate_size: 11008, num_attention_heads: 32, vocab_size: 32000 });
  assert.equal(llama.num_experts, 0);
  assert.equal(llama.num_query_groups, 32);
  assert.throws(() => modelSpecFromHfConfig([1, 2]));
});

test('HF config import carries the Megatron flag fields (DeepSeek-V3 routing, Qwen3 qk norm, GPT-OSS)', () => {
  const ds = modelSpecFromHfConfig({ num_hidden_layers: 4, hidden_size: 64, intermediate_size: 128, moe_intermediate_size: 32,
    num_attention_heads: 4, n_routed_experts: 8, num_experts_per_tok: 2, kv_lora_rank: 16, qk_nope_head_dim: 16,
    qk_rope_head_dim: 8, v_head_dim: 16, vocab_size: 1000, rope_theta: 10000, rms_norm_eps: 1e-6, scoring_func: 'sigmoid',
    topk_method: 'noaux_tc', routed_scaling_factor: 2.5, seq_aux: true, aux_loss_alpha: 0.0001, norm_topk_prob: true });
  assert.equal(ds.moe_router_score_function, 'sigmoid');
  assert.equal(ds.moe_router_enable_expert_bias, true);
  assert.equal(ds.moe_router_topk_scaling_factor, 2.5);
  assert.equal(ds.moe_router_load_balancing_type, 'seq_aux_loss');
  assert.equal(ds.qk_layernorm, true);  // MLA latent norms
  assert.equal(ds.norm_epsilon, 1e-6);
  const qwen = modelSpecFromHfConfig({ model_type: 'qwen3_moe', num_hidden_layers: 4, hidden_size: 64, intermediate_size: 128,
    num_attention_heads: 4, num_experts: 8, num_experts_per_tok: 2, vocab_size: 1000, rope_theta: 1000000.0 });
  assert.equal(qwen.qk_layernorm, true);
  assert.equal(qwen.rotary_base, 1000000);
  assert.equal(qwen.moe_router_enable_expert_bias, undefined);
  const oss = modelSpecFromHfConfig({ model_type: 'gpt_oss', num_hidden_layers: 4, hidden_size: 64, intermediate_size: 64,
    num_attention_heads: 4, num_local_experts: 8, experts_per_token: 4, vocab_size: 1000, swiglu_limit: 7.0, sliding_window: 128,
    layer_types: ['sliding_attention', 'full_attention'] });
  assert.deepEqual([oss.add_bias_linear, oss.quick_geglu, oss.glu_linear_offset, oss.activation_func_clamp_value, oss.softmax_type],
    [true, true, 1, 7, 'learnable']);
  assert.equal(oss.window_attn_skip_freq, 2);
});

test('error paths fall back from the most to the least specific', () => {
  assert.deepEqual(pathPrefixes('cluster.groups[1].gpu.memory_gib'),
    ['cluster.groups[1].gpu.memory_gib', 'cluster.groups[1].gpu', 'cluster.groups[1]', 'cluster.groups', 'cluster']);
  assert.deepEqual(pathPrefixes('search.tp[2]'), ['search.tp[2]', 'search.tp', 'search']);
});

test('errorBand shows the core\'s prediction band next to the iteration time', async () => {
  const { errorBand } = await import('../../web/results-view.js');
  const band = errorBand({ iteration_time_s: 13.2, iteration_time_error_fraction: 0.06,
    iteration_time_range_s: [12.4493, 14.0386], iteration_time_error_calibrated: false });
  assert.match(band, /±6 % \(12\.45–14\.04 s\)/);
  assert.match(band, /not calibrated/);
  assert.equal(errorBand({ iteration_time_s: 1 }), '');
});

test('int() groups thousands as en-US does, without the locale data', () => {
  for (const v of [0, 7, 999, 1000, 65536, 1234567, -1000, -1234567.4, 12345.6, 2 ** 53]) {
    assert.equal(int(v), Math.round(v).toLocaleString('en-US'), String(v));
  }
  assert.equal(int(1e21), '1,000,000,000,000,000,000,000');
  assert.equal(int(-0.4), '0');
  assert.equal(int(NaN), '—');
  assert.equal(int(Infinity), '—');
});
