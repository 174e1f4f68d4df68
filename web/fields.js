// Form fields from the core's field table (wasm schema(), the same table the parser validates
// with): kind, unit, range, default, allowed values and help text come from there; this module
// adds only presentation (which fields, in what order, with what label). Also one input
// builder/reader/writer for every kind of field. Empty inputs read as null ("unset").

/** Model fields shown, by group: [key under "model.", label]. */
export const MODEL_GROUPS = [
  { title: 'Shape', fields: [
    ['name', 'Name'], ['num_layers', 'Layers'], ['hidden_size', 'Hidden size'],
    ['ffn_hidden_size', 'Dense FFN size'], ['num_attention_heads', 'Attention heads'],
    ['num_query_groups', 'Query groups (GQA)'], ['kv_channels', 'Head dim (kv_channels)'],
    ['vocab_size', 'Vocabulary'], ['swiglu', 'SwiGLU (gated MLP)'],
    ['untie_embeddings_and_output_weights', 'Untied embeddings'], ['mtp_num_layers', 'MTP layers'],
  ] },
  { title: 'Mixture of experts', fields: [
    ['num_experts', 'Routed experts'], ['moe_router_topk', 'Router top-k'],
    ['moe_ffn_hidden_size', 'Expert FFN size'], ['moe_shared_expert_intermediate_size', 'Shared expert size'],
    ['moe_layer_freq', 'MoE layer freq'], ['moe_router_num_groups', 'Router groups'],
    ['moe_router_group_topk', 'Groups per token'],
  ] },
  { title: 'Attention variants', fields: [
    ['multi_latent_attention', 'Multi-latent attention'], ['q_lora_rank', 'MLA q LoRA rank'],
    ['kv_lora_rank', 'MLA kv LoRA rank'], ['qk_head_dim', 'MLA qk head dim'],
    ['qk_pos_emb_head_dim', 'MLA rope head dim'], ['v_head_dim', 'MLA v head dim'],
    ['window_size', 'Sliding window'], ['window_attn_skip_freq', 'Full attention every'],
  ] },
  { title: 'Megatron flags (emitted, not costed)', fields: [
    ['normalization', 'Normalization'], ['norm_epsilon', 'Norm epsilon'],
    ['position_embedding_type', 'Position embedding'], ['rotary_base', 'Rotary base'],
    ['rotary_percent', 'Rotary fraction'], ['qk_layernorm', 'QK layernorm'], ['add_bias_linear', 'Linear biases'],
    ['add_qkv_bias', 'QKV bias'], ['quick_geglu', 'Quick-GeGLU'], ['glu_linear_offset', 'GLU linear offset'],
    ['activation_func_clamp_value', 'Activation clamp'], ['softmax_type', 'Attention softmax'],
    ['moe_router_score_function', 'Router score'], ['moe_router_pre_softmax', 'Router pre-softmax'],
    ['moe_router_enable_expert_bias', 'Router expert bias'], ['moe_router_topk_scaling_factor', 'Router scaling'],
    ['moe_router_load_balancing_type', 'Balancing loss'], ['moe_aux_loss_coeff', 'Aux loss coefficient'],
    ['moe_shared_expert_gate', 'Shared expert gate'], ['mtp_loss_scaling_factor', 'MTP loss weight'],
    ['tokenizer_model', 'HF tokenizer'],
  ] },
];

/** Keys in presets that describe the preset itself, not the spec (never shown or sent). */
export const META_KEYS = new Set(['source', 'sources', 'notes', 'verified', 'description']);

/** Training fields shown up front, then under "More training options". */
export const TRAINING_MAIN = [
  ['global_batch_size', 'Global batch'], ['seq_length', 'Sequence length'],
  ['precision', 'Precision'], ['moe_load_imbalance', 'MoE load imbalance', { step: 0.05 }],
  ['train_tokens', 'Training tokens'],
];
export const TRAINING_MORE = [
  ['use_distributed_optimizer', 'Distributed optimizer'], ['moe_token_dispatcher_type', 'Token dispatcher'],
  ['moe_flex_dispatcher_backend', 'Flex dispatcher backend'],
  ['moe_expert_capacity_factor', 'Expert capacity factor', { step: 0.05 }],
  ['moe_pad_expert_input_to_capacity', 'Pad experts to capacity'],
  ['moe_expert_rank_capacity_factor', 'HybridEP rank budget', { step: 0.05 }],
  ['moe_paged_stash', 'Paged stash'],
  ['cuda_graph_impl', 'CUDA graphs'], ['cuda_graph_modules', 'CUDA graph modules', { placeholder: 'searched; e.g. attn moe_router, [] = whole layer' }],
  ['overlap_grad_reduce', 'Overlap grad reduce'], ['overlap_param_gather', 'Overlap param gather'],
  ['fp8_recipe', 'FP8 recipe'], ['fp8_param_gather', 'FP8 parameter gather'],
  ['fp8_dot_product_attention', 'FP8 attention'], ['cuda_graphs', 'Full-iteration graphs (deprecated)'],
  ['grad_reduce_in_bf16', 'Gradient reduce in BF16'],
  ['checkpoint_write_gbps', 'Checkpoint write bandwidth'], ['node_failures_per_year', 'Node failures per year'],
  ['restart_s', 'Restart time'],
  ['optimizer.precision_aware', 'Precision-aware optimizer'], ['optimizer.main_grads_dtype', 'Main grads dtype'],
  ['optimizer.main_params_dtype', 'Master weights dtype'], ['optimizer.exp_avg_dtype', 'Adam m dtype'],
  ['optimizer.exp_avg_sq_dtype', 'Adam v dtype'],
];

/** The runtime choice (search.mode), shown as radio buttons at the top of the Search section. */
export const SEARCH_MODE = [['mode', 'Runtime']];
/** What each search.mode value means to a user (values the schema adds later show as they are). */
export const MODE_LABELS = {
  megatron: ['Upstream Megatron-LM', 'one parallel layout for every stage'],
  hetero: ['FlagScale heterogeneous', 'a layout per GPU type; plans can span vendors'],
  auto: ['Auto', 'whichever of the two plans faster'],
};

/** Beside the runtime: the memory margin, what the plans are ranked by and its budget. */
export const SEARCH_GOAL = [['memory_margin_fraction', 'Memory margin'], ['objective', 'Objective'], ['budget_per_hour', 'Budget']];
/** What each search.objective value means to a user (values the schema adds later show as they are). */
export const OBJECTIVE_LABELS = { time: 'Fastest', cost: 'Cheapest per token', time_within_budget: 'Fastest within budget' };
/** The objective that reads search.budget_per_hour (the budget field is shown only with it). */
export const BUDGET_OBJECTIVE = 'time_within_budget';

/** Search constraints: [key under "search.", label]. */
export const SEARCH_MAIN = [
  ['tp', 'TP'], ['pp', 'PP'], ['ep', 'EP'], ['etp', 'ETP'], ['cp', 'CP'], ['vpp', 'VPP'],
  ['micro_batch_size', 'Micro-batch'],
];
export const SEARCH_MORE = [
  ['ep_comm_overlap', 'EP comm overlap'], ['optimizer_offload_fraction', 'Optimizer offload'],
  ['top_k', 'Plans to keep'],
];

const KIND = {
  int: 'int', number: 'num', bool: 'bool', string: 'text', enum: 'select', int_choices: 'list',
  enum_choices: 'checks', layer_freq: 'json', layer_split: 'list', spec: 'json',
  bool_choices: 'list', number_choices: 'list', recompute_choices: 'checks', enum_list: 'words',
};

/** Index of the schema's fields by path pattern ("cluster.groups[].gpu.memory_gib"). */
export function indexSchema(schema) {
  if (!schema || !Array.isArray(schema.fields)) throw new Error('the planner module returned no field schema');
  return new Map(schema.fields.map((f) => [f.path, f]));
}

/**
 * The form definition of the schema field at `path`: {key, path, label, kind, unit, min, max,
 * options, default (only for fixed defaults), required, placeholder, help} plus `extra`.
 */
export function fieldDef(index, path, label, extra = {}) {
  const row = index.get(path);
  if (!row) throw new Error(`the field schema has no "${path}"`);
  const fixed = row.default_kind === 'value';
  return {
    key: path.slice(path.lastIndexOf('.') + 1), path, label, kind: KIND[row.type] || 'json',
    unit: row.unit || '', min: row.min, max: row.max, options: row.allowed,
    default: fixed ? row.default : undefined, required: row.default_kind === 'required',
    placeholder: fixed ? undefined : row.default_text, help: row.help, ...extra,
  };
}

/** fieldDef for each [key, label, extra?] under prefix ("training", "model", ...). */
export function fieldDefs(index, prefix, entries) {
  return entries.map(([key, label, extra]) => fieldDef(index, `${prefix}.${key}`, label, { key, ...extra }));
}

let uid = 0;

/** A "?" button that shows and hides the help text (keyboard and touch, not only hover). */
export function makeHelp(text, topic) {
  const id = `help-${++uid}`;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'help-toggle';
  button.textContent = '?';
  button.setAttribute('aria-label', `About ${topic}`);
  button.setAttribute('aria-expanded', 'false');
  button.setAttribute('aria-controls', id);
  const note = document.createElement('p');
  note.className = 'help-text';
  note.id = id;
  note.hidden = true;
  note.textContent = text;
  button.addEventListener('click', () => {
    note.hidden = !note.hidden;
    button.setAttribute('aria-expanded', String(!note.hidden));
  });
  return { button, note };
}

function makeInput(def) {
  if (def.kind === 'select') {
    const select = document.createElement('select');
    // No fixed default (the core decides): an empty first option, so nothing is sent until chosen.
    if (def.default === undefined && !def.required) select.add(new Option(def.placeholder ? `(${def.placeholder})` : '(default)', ''));
    for (const o of def.options || []) select.add(new Option(o, o));
    return select;
  }
  const input = document.createElement('input');
  input.type = { int: 'number', num: 'number', bool: 'checkbox' }[def.kind] || 'text';
  if (def.kind === 'int') input.step = '1';
  if (def.kind === 'num') input.step = String(def.step ?? 'any');
  if ((def.kind === 'int' || def.kind === 'num') && def.min != null) { input.min = String(def.min); input.max = String(def.max); }
  if (def.kind === 'list') input.inputMode = 'numeric';
  if (def.placeholder) input.placeholder = def.placeholder;
  if (def.required) input.setAttribute('aria-required', 'true');
  return input;
}

/** Builds a labelled input for def; its data-field is `path`. Returns the wrapper element. */
export function makeField(def, path) {
  const id = `in-${++uid}`;
  const wrap = document.createElement('div');
  wrap.className = `field field-${def.kind}`;
  const input = makeInput(def);
  input.id = id;
  input.name = path;
  input.dataset.field = path;
  input.dataset.kind = def.kind;
  const head = document.createElement('div');
  head.className = 'field-label';
  const label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = def.label;
  head.append(label);
  const help = def.help ? makeHelp(def.help, def.label) : null;
  if (help) {
    head.append(help.button);
    input.setAttribute('aria-describedby', help.note.id);
  }
  wrap.append(head, input);
  if (def.unit) {
    const unit = document.createElement('span');
    unit.className = 'unit';
    unit.textContent = def.unit;
    wrap.append(unit);
  }
  if (help) wrap.append(help.note);
  return wrap;
}

/** Reads an input's value by its kind; empty -> null; unparsable text is returned as typed. */
export function readInput(input) {
  const kind = input.dataset.kind;
  if (kind === 'bool') return input.checked;
  const raw = input.value.trim();
  if (kind === 'select' || kind === 'text') return raw === '' ? null : raw;
  if (raw === '') return null;
  if (kind === 'int' || kind === 'num') return Number(raw);
  if (kind === 'json') { try { return JSON.parse(raw); } catch { return raw; } }
  // A list of names, always an array: "attn moe_router"; "[]" is the empty list.
  if (kind === 'words') return raw === '[]' ? [] : raw.split(/[\s,]+/).filter(Boolean);
  if (kind === 'list') {
    const items = raw.split(/[\s,]+/).filter(Boolean)
      .map((s) => (/^-?\d+(\.\d+)?$/.test(s) ? Number(s) : s === 'true' || s === 'false' ? s === 'true' : s));
    return items.length === 1 ? items[0] : items;
  }
  return raw;
}

/** Writes value into an input by its kind; null/undefined clears it. */
export function writeInput(input, value) {
  const kind = input.dataset.kind;
  if (kind === 'bool') { input.checked = Boolean(value); return; }
  if (value == null) { input.value = kind === 'select' ? input.options[0]?.value ?? '' : ''; return; }
  if (kind === 'json') input.value = JSON.stringify(value);
  else if (kind === 'list') input.value = Array.isArray(value) ? value.join(', ') : String(value);
  else if (kind === 'words') input.value = Array.isArray(value) ? (value.length ? value.join(' ') : '[]') : String(value);
  else input.value = String(value);
}

/** Deep equality for JSON values, treating undefined as null. */
export function sameValue(a, b) {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
