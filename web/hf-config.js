// Hugging Face config.json -> ModelSpec (pure). Covers the Llama(-4), Mixtral, Qwen2/3(-MoE),
// DeepSeek-V2/V3, GLM-4.5, OLMoE and GPT-OSS field names: shared experts, which layers are MoE,
// dense vs expert FFN widths, router score function and expert bias, MTP, sliding windows, and the
// Megatron flag fields (rope_theta, norms, q/k norm, biases, GPT-OSS activation and sinks); fields
// the config lacks are left out. Refuses non-model JSON and models the core cannot cost (linear
// attention, Mamba hybrids) with the reason, and lists the fields it ignored.

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
function flagFields(c, experts, mla, used = new Set()) {
  const type = String(c.model_type ?? '');
  const out = {};
  ['rope_theta', 'partial_rotary_factor', 'rms_norm_eps', 'layer_norm_eps', 'layer_norm_epsilon', 'use_qk_norm', 'attention_bias', 'qkv_bias',
    'swiglu_limit', 'scoring_func', 'topk_method', 'routed_scaling_factor', 'norm_topk_prob', 'seq_aux', 'router_aux_loss_coef',
    'aux_loss_alpha', 'e_score_correction_bias', 'shared_moe_mode'].forEach((k) => used.add(k));
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
    // GLM-4.5 (glm4_moe) routes like DeepSeek-V3 without saying so in its config: sigmoid scores
    // plus the e_score_correction_bias of its router; Llama-4 scores its top-1 expert by sigmoid.
    const glm = /^glm4_moe/.test(type);
    if (c.scoring_func === 'sigmoid' || glm || /^llama4/.test(type)) out.moe_router_score_function = 'sigmoid';
    if (c.topk_method === 'noaux_tc' || c.e_score_correction_bias != null || glm) out.moe_router_enable_expert_bias = true;
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

/** Why the core cannot model this config (a reason sentence), or '' when it can. */
function unsupported(c) {
  const type = String(c.model_type ?? '');
  if (Array.isArray(c.attn_type_list) && c.attn_type_list.some((t) => t === 0)) {
    const linear = c.attn_type_list.filter((t) => t === 0).length;
    return `${linear} of its ${c.attn_type_list.length} layers use linear ("lightning") attention (attn_type_list), which the planner's cost model does not have (it models softmax attention only)`;
  }
  if (Array.isArray(c.layer_types) && c.layer_types.some((t) => /linear|mamba|ssm|recurrent/i.test(String(t)))) {
    return `its layer_types include ${[...new Set(c.layer_types.filter((t) => /linear|mamba|ssm|recurrent/i.test(String(t))))].join(', ')} layers, which the planner's cost model does not have`;
  }
  if (/mamba|jamba|nemotron_h|falcon_h|zamba|rwkv|recurrent_gemma/i.test(type) || c.hybrid_override_pattern || c.layers_block_type || c.mamba_d_state || c.ssm_cfg) {
    return `it is a state-space (Mamba) or hybrid model (${type || 'hybrid layers'}), which the planner's cost model does not have`;
  }
  if (c.index_topk != null) return 'it uses sparse attention with a token indexer (index_topk), which the planner does not model';
  return '';
}

/** Keys read from a config that carry no model shape (ids, dtypes, versions): never listed as ignored. */
const META = new Set(['architectures', 'model_type', '_name_or_path', 'transformers_version', 'torch_dtype', 'dtype', 'bos_token_id',
  'eos_token_id', 'pad_token_id', 'use_cache', 'auto_map', 'initializer_range', 'output_router_logits', 'text_config', 'vision_config',
  'boi_token_index', 'eoi_token_index', 'image_token_index', 'attention_dropout', 'router_jitter_noise', 'pretraining_tp']);

/** Which layers are MoE as a ModelSpec moe_layer_freq (1 = all, else a 0/1 list), from every HF convention. */
function moeLayers(c, layers) {
  const isMoe = Array.from({ length: layers }, () => true);
  const dense = c.first_k_dense_replace ?? 0;  // DeepSeek, GLM-4.5, Kimi: the first k layers are dense
  const every = c.moe_layer_freq ?? 1;          // DeepSeek: i % freq == 0 (after the dense ones)
  const step = c.interleave_moe_layer_step ?? c.decoder_sparse_step ?? 1;  // Llama-4 / Qwen-MoE: (i + 1) % step == 0
  const mlpOnly = new Set(Array.isArray(c.mlp_only_layers) ? c.mlp_only_layers : []);
  const moeList = Array.isArray(c.moe_layers) ? new Set(c.moe_layers) : null;  // Llama-4 explicit list
  for (let i = 0; i < layers; i++) {
    if (i < dense || (Number.isInteger(every) && every > 1 && i % every !== 0) || (step > 1 && (i + 1) % step !== 0) || mlpOnly.has(i)) isMoe[i] = false;
    if (moeList) isMoe[i] = moeList.has(i);
  }
  return isMoe.every(Boolean) ? 1 : isMoe.map((m) => (m ? 1 : 0));
}

/** A display name: the user's, else _name_or_path, else the architecture ("Qwen3Moe"), never a bare model_type. */
function modelName(cfg, c, given) {
  if (given && String(given).trim()) return String(given).trim().slice(0, 120);
  const path = cfg._name_or_path ?? c._name_or_path;
  if (path && String(path).trim()) return String(path).trim().slice(0, 120);
  const arch = (cfg.architectures ?? c.architectures)?.[0];
  if (arch) return `${String(arch).replace(/For(CausalLM|ConditionalGeneration)$/, '')} (imported)`.slice(0, 120);
  return 'Imported model';
}

/**
 * Maps a parsed HF config object to {spec, ignored, notes}: spec a ModelSpec object, ignored the
 * config's keys that change nothing here, notes what was assumed. Throws, before anything is built,
 * on what is not a model config (an Error whose message says what it is) or a model the core
 * cannot model (the reason). options.name: the name the user gave.
 */
export function importHfConfig(cfg, { name } = {}) {
  if (!cfg || typeof cfg !== 'object' || Array.isArray(cfg)) throw new Error('config.json must be a JSON object');
  const c = cfg.text_config && !cfg.num_hidden_layers ? cfg.text_config : cfg;
  checkLimits(c);
  if (!Number.isInteger(c.num_hidden_layers) || !Number.isInteger(c.hidden_size)) {
    const what = 'tokenizer_class' in cfg || 'added_tokens_decoder' in cfg || 'chat_template' in cfg ? 'a tokenizer_config.json'
      : 'do_sample' in cfg || 'max_new_tokens' in cfg ? 'a generation_config.json'
      : Object.keys(cfg).length === 0 ? 'an empty object' : 'not a model config';
    throw new Error(`this is ${what}: a model's config.json has num_hidden_layers and hidden_size`);
  }
  const why = unsupported(c);
  if (why) throw new Error(`the planner cannot model ${modelName(cfg, c, name)}: ${why}`);
  const used = new Set();
  const get = (...keys) => { keys.forEach((k) => used.add(k)); for (const k of keys) if (c[k] != null) return c[k]; return undefined; };
  const layers = get('num_hidden_layers');
  const experts = get('num_local_experts', 'n_routed_experts', 'num_experts') ?? 0;
  const type = String(c.model_type ?? cfg.model_type ?? '');
  const llama4 = /^llama4/.test(type);
  // Dense-layer FFN width: Llama-4 names it intermediate_size_mlp (its intermediate_size is the experts').
  const denseFfn = llama4 ? get('intermediate_size_mlp', 'intermediate_size') : get('intermediate_size');
  const spec = {
    name: modelName(cfg, c, name),
    num_layers: layers,
    hidden_size: get('hidden_size'),
    ffn_hidden_size: denseFfn,
    num_attention_heads: get('num_attention_heads'),
    num_query_groups: get('num_key_value_heads', 'num_attention_heads'),
    kv_channels: get('head_dim'),
    vocab_size: get('vocab_size'),
    swiglu: ['silu', 'swiglu', 'swish'].includes(String(get('hidden_act') ?? 'silu')),
    untie_embeddings_and_output_weights: (cfg.tie_word_embeddings ?? c.tie_word_embeddings) === undefined ? true : !(c.tie_word_embeddings ?? cfg.tie_word_embeddings),
    num_experts: experts,
  };
  used.add('tie_word_embeddings');
  const notes = [];
  if (experts > 0) {
    const width = llama4 ? get('intermediate_size') : get('moe_intermediate_size', 'intermediate_size');
    spec.moe_router_topk = get('num_experts_per_tok', 'experts_per_token', 'moe_topk');
    spec.moe_ffn_hidden_size = width;
    // Shared experts: DeepSeek/GLM n_shared_experts x expert width; Qwen-MoE a width of its own;
    // Llama-4 always one shared expert of the expert width; MiniMax shared_intermediate_size.
    const nShared = get('n_shared_experts');
    const sharedWidth = get('shared_expert_intermediate_size', 'shared_intermediate_size');
    spec.moe_shared_expert_intermediate_size = nShared ? nShared * width : sharedWidth ? sharedWidth : llama4 ? width : 0;
    if (llama4) notes.push('Llama-4: one shared expert of the expert width (intermediate_size) in every MoE layer, top-1 sigmoid routing');
    spec.moe_layer_freq = moeLayers(c, layers);
    ['first_k_dense_replace', 'moe_layer_freq', 'interleave_moe_layer_step', 'decoder_sparse_step', 'mlp_only_layers', 'moe_layers'].forEach((k) => used.add(k));
    if (get('n_group') > 1) { spec.moe_router_num_groups = c.n_group; spec.moe_router_group_topk = get('topk_group'); }
    used.add('topk_group');
  }
  if (c.kv_lora_rank != null) {
    Object.assign(spec, {
      multi_latent_attention: true, q_lora_rank: get('q_lora_rank') ?? null, kv_lora_rank: get('kv_lora_rank'),
      qk_head_dim: get('qk_nope_head_dim'), qk_pos_emb_head_dim: get('qk_rope_head_dim'), v_head_dim: get('v_head_dim'),
    });
  }
  if (get('num_nextn_predict_layers')) spec.mtp_num_layers = c.num_nextn_predict_layers;
  const window = get('sliding_window');
  const types = get('layer_types');
  if (window && (get('use_sliding_window') !== false || Array.isArray(types))) {
    spec.window_size = window;
    if (Array.isArray(types)) {
      const fullEvery = types.findIndex((t) => t === 'full_attention') + 1;
      if (fullEvery > 0) spec.window_attn_skip_freq = fullEvery;
    }
  } else if (window && c.use_sliding_window === false) notes.push(`sliding_window ${window} is off (use_sliding_window false): full attention on every layer`);
  used.add('use_sliding_window').add('max_window_layers');
  if (llama4 && c.attention_chunk_size) notes.push(`chunked attention (attention_chunk_size ${c.attention_chunk_size}) on 3 of 4 layers is costed as full attention (an upper bound)`);
  Object.assign(spec, flagFields(c, experts, spec.multi_latent_attention === true, used));
  const ignored = Object.keys(c).filter((k) => !used.has(k) && !META.has(k));
  if (c !== cfg && cfg.vision_config) notes.push('the vision encoder (vision_config) is not planned: text model only');
  return { spec: Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined)), ignored, notes };
}

/** Maps a parsed HF config object to a ModelSpec object (throws as importHfConfig does). */
export function modelSpecFromHfConfig(cfg, options) {
  return importHfConfig(cfg, options).spec;
}
