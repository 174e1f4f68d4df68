// Hugging Face config.json -> ModelSpec (pure). Covers the Llama, Mixtral, Qwen2/3(-MoE),
// DeepSeek-V2/V3 and GPT-OSS field names; fields the config lacks are left out.

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
  return Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
}
