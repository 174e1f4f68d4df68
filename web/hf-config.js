// Hugging Face config.json -> ModelSpec (pure). Covers the Llama, Mixtral, Qwen2/3(-MoE),
// DeepSeek-V2/V3 and GPT-OSS field names, including the Megatron flag fields (rope_theta,
// norms, q/k norm, biases, GPT-OSS activation and sinks, router scoring); fields the config lacks
// are left out.

const first = (cfg, ...keys) => { for (const k of keys) if (cfg[k] != null) return cfg[k]; return undefined; };

/** Limits on the sizes a config may claim, checked before anything is built from them. */
export const HF_LIMITS = { num_hidden_layers: 10000, first_k_dense_replace: 10000, num_local_experts: 65536, n_routed_experts: 65536, num_experts: 65536 };

function checkLimits(c) {
  for (const [key, max] of Object.entries(HF_LIMITS)) {
    const v = c[key];
    if (v == null) continue;
    if (!Number.isInteger(v) || v < 0 || v > max) throw new Error(`${key} must be an integer from 0 to ${max} (got ${String(v).slice(0, 40)})`);
  }
}

/** The Megatron flag fields of a config: normalization, rotary, biases, activation, router. */
function flagFields(c, experts, mla) {
  const type = String(c.model_type ?? '');
  const out = {};
  if (c.rope_theta != null) out.rotary_base = Math.round(c.rope_theta);
  if (c.partial_rotary_factor != null) out.rotary_percent = c.partial_rotary_factor;
  const eps = first(c, 'rms_norm_eps', 'layer_norm_eps', 'layer_norm_epsilon');
  if (eps != null) out.norm_epsilon = eps;
  if (c.rms_norm_eps == null && (c.layer_norm_eps != null || c.layer_norm_epsilon != null)) out.normalization = 'LayerNorm';
  // Qwen3 and OLMoE normalize q and k; GLM-4.5 says use_qk_norm; MLA has latent norms.
  if (c.use_qk_norm || /^qwen3/.test(type) || type === 'olmoe' || mla) out.qk_layernorm = true;
  if (c.attention_bias === true || c.qkv_bias === true || /^qwen2/.test(type)) out.add_qkv_bias = true;
  if (type === 'gpt_oss') {  // Megatron-LM's GPT-OSS configuration (examples/gptoss)
    Object.assign(out, { add_bias_linear: true, quick_geglu: true, glu_linear_offset: 1,
      activation_func_clamp_value: c.swiglu_limit ?? 7, softmax_type: 'learnable' });
    delete out.add_qkv_bias;
  }
  if (experts > 0) {
    if (c.scoring_func === 'sigmoid') out.moe_router_score_function = 'sigmoid';
    if (c.topk_method === 'noaux_tc') out.moe_router_enable_expert_bias = true;
    if (c.routed_scaling_factor != null && c.routed_scaling_factor !== 1) out.moe_router_topk_scaling_factor = c.routed_scaling_factor;
    if (c.norm_topk_prob === false) out.moe_router_pre_softmax = true;
    if (c.seq_aux) out.moe_router_load_balancing_type = 'seq_aux_loss';
    const aux = first(c, 'router_aux_loss_coef', 'aux_loss_alpha');
    if (aux != null && type !== 'gpt_oss') out.moe_aux_loss_coeff = aux;
    if (/^qwen2_moe/.test(type) && c.shared_expert_intermediate_size) out.moe_shared_expert_gate = true;
  }
  if (/^[\w.-]+\/[\w.-]+$/.test(String(c._name_or_path ?? ''))) out.tokenizer_model = c._name_or_path;
  return out;
}

/** Maps a parsed HF config object to a ModelSpec object (throws on a non-object). */
export function modelSpecFromHfConfig(cfg) {
  if (!cfg || typeof cfg !== 'object' || Array.isArray(cfg)) throw new Error('config.json must be a JSON object');
  const c = cfg.text_config && !cfg.num_hidden_layers ? cfg.text_config : cfg;
  checkLimits(c);
  const layers = c.num_hidden_layers;
  const experts = first(c, 'num_local_experts', 'n_routed_experts', 'num_experts') ?? 0;
  const spec = {
    name: first(c, '_name_or_path', 'model_type') ?? 'custom model',
    num_layers: layers,
    hidden_size: c.hidden_size,
    ffn_hidden_size: c.intermediate_size,
    num_attention_heads: c.num_attention_heads,
    num_query_groups: first(c, 'num_key_value_heads', 'num_attention_heads'),
    kv_channels: c.head_dim,
    vocab_size: c.vocab_size,
    swiglu: ['silu', 'swiglu', 'swish'].includes(String(c.hidden_act ?? 'silu')),
    untie_embeddings_and_output_weights: c.tie_word_embeddings === undefined ? true : !c.tie_word_embeddings,
    num_experts: experts,
  };
  if (experts > 0) {
    const width = first(c, 'moe_intermediate_size', 'intermediate_size');
    spec.moe_router_topk = first(c, 'num_experts_per_tok', 'experts_per_token', 'moe_topk');
    spec.moe_ffn_hidden_size = width;
    const shared = c.n_shared_experts ? c.n_shared_experts * width : c.shared_expert_intermediate_size ?? 0;
    spec.moe_shared_expert_intermediate_size = shared;
    const dense = c.first_k_dense_replace ?? 0;
    spec.moe_layer_freq = dense > 0 && layers ? Array.from({ length: layers }, (_, i) => (i < dense ? 0 : 1)) : 1;
    if (c.n_group > 1) { spec.moe_router_num_groups = c.n_group; spec.moe_router_group_topk = c.topk_group; }
  }
  if (c.kv_lora_rank != null) {
    Object.assign(spec, {
      multi_latent_attention: true, q_lora_rank: c.q_lora_rank ?? null, kv_lora_rank: c.kv_lora_rank,
      qk_head_dim: c.qk_nope_head_dim, qk_pos_emb_head_dim: c.qk_rope_head_dim, v_head_dim: c.v_head_dim,
    });
  }
  if (c.num_nextn_predict_layers) spec.mtp_num_layers = c.num_nextn_predict_layers;
  if (c.sliding_window && (c.use_sliding_window !== false || Array.isArray(c.layer_types))) {
    spec.window_size = c.sliding_window;
    const types = c.layer_types;
    if (Array.isArray(types)) {
      const fullEvery = types.findIndex((t) => t === 'full_attention') + 1;
      if (fullEvery > 0) spec.window_attn_skip_freq = fullEvery;
    }
  }
  Object.assign(spec, flagFields(c, experts, spec.multi_latent_attention === true));
  return Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
}
