// Field definitions and one input builder/reader/writer for every kind of form field.
// A field def: {key, label, kind: 'int'|'num'|'bool'|'text'|'json'|'list'|'select', unit?,
// options?, step?, placeholder?, hint?}. Empty inputs read as null ("unset").

export const MODEL_GROUPS = [
  { title: 'Shape', fields: [
    { key: 'name', label: 'Name', kind: 'text' },
    { key: 'num_layers', label: 'Layers', kind: 'int', unit: 'layers' },
    { key: 'hidden_size', label: 'Hidden size', kind: 'int', unit: 'dims' },
    { key: 'ffn_hidden_size', label: 'Dense FFN size', kind: 'int', unit: 'dims' },
    { key: 'num_attention_heads', label: 'Attention heads', kind: 'int', unit: 'heads' },
    { key: 'num_query_groups', label: 'Query groups (GQA)', kind: 'int', unit: 'groups' },
    { key: 'kv_channels', label: 'Head dim (kv_channels)', kind: 'int', unit: 'dims', placeholder: 'hidden / heads' },
    { key: 'vocab_size', label: 'Vocabulary', kind: 'int', unit: 'tokens' },
    { key: 'swiglu', label: 'SwiGLU (gated MLP)', kind: 'bool' },
    { key: 'untie_embeddings_and_output_weights', label: 'Untied embeddings', kind: 'bool' },
    { key: 'mtp_num_layers', label: 'MTP layers', kind: 'int', unit: 'layers', placeholder: '0' },
  ] },
  { title: 'Mixture of experts', fields: [
    { key: 'num_experts', label: 'Routed experts', kind: 'int', unit: 'experts' },
    { key: 'moe_router_topk', label: 'Router top-k', kind: 'int', unit: 'experts' },
    { key: 'moe_ffn_hidden_size', label: 'Expert FFN size', kind: 'int', unit: 'dims' },
    { key: 'moe_shared_expert_intermediate_size', label: 'Shared expert size', kind: 'int', unit: 'dims', placeholder: '0 = none' },
    { key: 'moe_layer_freq', label: 'MoE layer freq', kind: 'json', unit: '1 or [0,1,…]' },
    { key: 'moe_router_num_groups', label: 'Router groups', kind: 'int', unit: 'groups', placeholder: 'none' },
    { key: 'moe_router_group_topk', label: 'Groups per token', kind: 'int', unit: 'groups', placeholder: 'none' },
  ] },
  { title: 'Attention variants', fields: [
    { key: 'multi_latent_attention', label: 'Multi-latent attention', kind: 'bool' },
    { key: 'q_lora_rank', label: 'MLA q LoRA rank', kind: 'int', unit: 'dims', placeholder: 'none' },
    { key: 'kv_lora_rank', label: 'MLA kv LoRA rank', kind: 'int', unit: 'dims' },
    { key: 'qk_head_dim', label: 'MLA qk head dim', kind: 'int', unit: 'dims' },
    { key: 'qk_pos_emb_head_dim', label: 'MLA rope head dim', kind: 'int', unit: 'dims' },
    { key: 'v_head_dim', label: 'MLA v head dim', kind: 'int', unit: 'dims' },
    { key: 'window_size', label: 'Sliding window', kind: 'int', unit: 'tokens', placeholder: 'full attention' },
    { key: 'window_attn_skip_freq', label: 'Full attention every', kind: 'int', unit: 'layers', placeholder: 'none' },
  ] },
];

/** Keys in presets that describe the preset itself, not the spec (never shown or sent). */
export const META_KEYS = new Set(['source', 'sources', 'notes', 'verified', 'description']);

export const TRAINING_FIELDS = [
  { key: 'global_batch_size', label: 'Global batch', kind: 'int', unit: 'sequences' },
  { key: 'seq_length', label: 'Sequence length', kind: 'int', unit: 'tokens' },
  { key: 'precision', label: 'Precision', kind: 'select', options: ['bf16', 'fp8'] },
  { key: 'moe_load_imbalance', label: 'MoE load imbalance', kind: 'num', unit: 'max/mean', step: 0.05 },
];

/** Optional training fields with the defaults the core assumes (sent only when changed). */
export const TRAINING_ADVANCED = [
  { key: 'use_distributed_optimizer', label: 'Distributed optimizer', kind: 'bool', default: true },
  { key: 'moe_token_dispatcher_type', label: 'Token dispatcher', kind: 'select', options: ['alltoall', 'allgather', 'flex'], default: 'alltoall' },
  { key: 'overlap_grad_reduce', label: 'Overlap grad reduce', kind: 'bool', default: true },
  { key: 'overlap_param_gather', label: 'Overlap param gather', kind: 'bool', default: true },
];

export const SEARCH_FIELDS = [
  { key: 'tp', label: 'TP', kind: 'list', unit: 'ways' },
  { key: 'pp', label: 'PP', kind: 'list', unit: 'stages' },
  { key: 'ep', label: 'EP', kind: 'list', unit: 'ways' },
  { key: 'etp', label: 'ETP', kind: 'list', unit: 'ways' },
  { key: 'cp', label: 'CP', kind: 'list', unit: 'ways' },
  { key: 'vpp', label: 'VPP', kind: 'list', unit: 'chunks' },
  { key: 'micro_batch_size', label: 'Micro-batch', kind: 'list', unit: 'sequences' },
];

let uid = 0;

/** Builds a labelled input for def; its data-field is `path`. Returns the wrapper element. */
export function makeField(def, path) {
  const id = `in-${++uid}`;
  const wrap = document.createElement('div');
  wrap.className = `field field-${def.kind}`;
  let input;
  if (def.kind === 'select') {
    input = document.createElement('select');
    for (const o of def.options) input.add(new Option(o, o));
  } else {
    input = document.createElement('input');
    input.type = { int: 'number', num: 'number', bool: 'checkbox' }[def.kind] || 'text';
    if (def.kind === 'int') input.step = '1';
    if (def.kind === 'num') input.step = String(def.step ?? 'any');
    if (def.kind === 'list') { input.placeholder = 'auto'; input.inputMode = 'numeric'; }
    if (def.placeholder) input.placeholder = def.placeholder;
  }
  input.id = id;
  input.name = path;
  input.dataset.field = path;
  input.dataset.kind = def.kind;
  const label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = def.label;
  if (def.hint) label.title = def.hint;
  wrap.append(label, input);
  if (def.unit) {
    const unit = document.createElement('span');
    unit.className = 'unit';
    unit.textContent = def.unit;
    wrap.append(unit);
  }
  return wrap;
}

/** Reads an input's value by its kind; empty -> null; unparsable text is returned as typed. */
export function readInput(input) {
  const kind = input.dataset.kind;
  if (kind === 'bool') return input.checked;
  const raw = input.value.trim();
  if (kind === 'select' || kind === 'text') return raw === '' && kind === 'text' ? null : raw;
  if (raw === '') return null;
  if (kind === 'int' || kind === 'num') return Number(raw);
  if (kind === 'json') { try { return JSON.parse(raw); } catch { return raw; } }
  if (kind === 'list') {
    const items = raw.split(/[\s,]+/).filter(Boolean).map((s) => (/^-?\d+(\.\d+)?$/.test(s) ? Number(s) : s));
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
  else input.value = String(value);
}

/** Deep equality for JSON values, treating undefined as null. */
export function sameValue(a, b) {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
