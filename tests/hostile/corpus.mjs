// Generated corpus of malformed and extreme scenarios (issue 11). Each case:
//   { name, text, expect: 'invalid', field }   exit 2 / ok:false; error.field starts with `field`
//   { name, text, expect: 'valid' }            small valid input: a plan (also used for native/wasm identity)
//   { name, text, expect: 'large' }            valid but large: plans within 10 s and 2 GB (ctest large_inputs)
// Text is a JS string (UTF-16) or a Buffer (raw bytes, for invalid UTF-8).

export const MAX_TEXT_BYTES = 1 << 20;  // core/include/hapmoe/json_text.hpp
export const MAX_DEPTH = 64;

// Cases whose expected result is implemented on another branch (the search budget);
// the runners report them as pending while they fail, and fail if one passes (then drop it here).
export const PENDING_ON_OTHER_BRANCHES = new Set([]);

const training = { global_batch_size: 64, seq_length: 2048 };
const base = () => ({ format: 'hapmoe.scenario/1', model: 'mixtral-s', cluster: '16-1', training: { ...training } });
const customGpu = () => ({ preset: 'h100-sxm' });
const withGroups = (groups) => ({ ...base(), cluster: { groups } });

// Sets obj at the dotted/indexed path (e.g. 'cluster.groups[0].nodes') to value; creates objects.
function setPath(doc, path, value) {
  const keys = path.replace(/\[(\d+)\]/g, '.$1').split('.');
  let o = doc;
  for (const k of keys.slice(0, -1)) {
    if (o[k] === undefined || typeof o[k] !== 'object') o[k] = {};
    o = o[k];
  }
  o[keys.at(-1)] = value;
  return doc;
}

// A scenario whose `path` holds raw JSON text `rawValue` (numbers JSON.stringify cannot write).
function withRaw(path, rawValue, doc = base()) {
  const marker = '"@@RAW@@"';
  return JSON.stringify(setPath(doc, path, '@@RAW@@')).replace(marker, rawValue);
}

const docWithGpu = () => withGroups([{ gpu: customGpu(), nodes: 2 }]);

function invalid(name, text, field) { return { name, text, expect: 'invalid', field }; }

function deepNesting() {
  const out = [];
  for (const depth of [MAX_DEPTH + 1, 100, 1000, 10000, 150000]) {
    const arr = '['.repeat(depth) + ']'.repeat(depth);
    out.push(invalid(`deep array ${depth} at root`, arr, '$'));
    out.push(invalid(`deep array ${depth} in model`, withRaw('model.num_layers', arr), 'model.num_layers'));
    out.push(invalid(`deep array ${depth} in search.tp`, withRaw('search.tp', arr), 'search.tp'));
    const objs = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    out.push(invalid(`deep object ${depth} in cluster`, withRaw('cluster', objs), 'cluster'));
  }
  // model override object: the preset resolution copies it (formerly a recursive copy)
  out.push(invalid('deep override in gpu preset object', withRaw('cluster.groups[0].gpu.x',
    '['.repeat(3000) + ']'.repeat(3000), docWithGpu()), 'cluster.groups[0].gpu.x'));
  return out;
}

function hugeText() {
  const n = MAX_TEXT_BYTES + 1;
  return [
    invalid('whitespace past the size limit', ' '.repeat(n) + '{}', '$'),
    invalid('2 MB model name', JSON.stringify({ ...base(), model: { preset: 'mixtral-s', name: 'x'.repeat(2 * n) } }), '$'),
    invalid('600k-entry search list', JSON.stringify(setPath(base(), 'search.tp', Array(600000).fill(1))), '$'),
    invalid('8 MB of digits', '9'.repeat(8 * n), '$'),
    invalid('just over the limit', JSON.stringify(base()) + ' '.repeat(n - JSON.stringify(base()).length), '$'),
  ];
}

function invalidUtf8() {
  const bads = [[0xff], [0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82],
    [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xfe], [0xe0, 0x80, 0xaf]];
  const out = [];
  bads.forEach((bytes, i) => {
    const bad = Buffer.from(bytes);
    const at = (before, after) => Buffer.concat([Buffer.from(before), bad, Buffer.from(after)]);
    out.push(invalid(`bad utf8 #${i} in model id`, at('{"model": "mix', '", "cluster": "16-1"}'), 'model'));
    out.push(invalid(`bad utf8 #${i} in gpu name`,
      at('{"model": "mixtral-s", "cluster": {"groups": [{"gpu": {"preset": "h100-sxm", "name": "', '"}, "nodes": 1}]}}'),
      'cluster.groups[0].gpu.name'));
    out.push(invalid(`bad utf8 #${i} in a key`, at('{"model": "mixtral-s", "', '": 1}'), '$'));
  });
  out.push(invalid('bad utf8 outside strings', Buffer.from([0x7b, 0xff, 0x7d]), '$'));
  return out;
}

function numbersBeyondDouble() {
  const nums = ['1e999', '-1e999', '1e309', '9'.repeat(10000), '-' + '9'.repeat(10000), '1' + '0'.repeat(400)];
  const fields = ['training.global_batch_size', 'training.seq_length', 'cluster.groups[0].nodes',
    'search.tp', 'model.num_layers'];
  const out = [];
  for (const num of nums) {
    for (const f of fields) {
      const doc = f.startsWith('cluster') ? withGroups([{ gpu: 'h100-sxm', nodes: 1 }]) :
        f.startsWith('model') ? { ...base(), model: { preset: 'mixtral-s' } } : base();
      out.push(invalid(`${num.slice(0, 12)} (${num.length} chars) at ${f}`, withRaw(f, num, doc), f));
    }
  }
  return out;
}

function bigInDoubleRange() {
  const out = [];
  const fields = [['training.global_batch_size', base()], ['cluster.groups[0].nodes', withGroups([{ gpu: 'h100-sxm', nodes: 1 }])],
    ['model.hidden_size', { ...base(), model: { preset: 'mixtral-s' } }], ['search.pp', base()]];
  for (const raw of ['1e300', '9223372036854775808', '18446744073709551616', '1e20', '2147483648']) {
    for (const [f, doc] of fields) out.push(invalid(`${raw} at ${f}`, withRaw(f, raw, structuredClone(doc)), f));
  }
  return out;
}

function tinyPositive() {
  const out = [];
  for (const raw of ['5e-324', '1e-300', '1e-12']) {
    for (const key of ['bf16_tflops', 'hbm_gbps', 'intra_node_gbps', 'inter_node_gbps', 'memory_gib']) {
      const f = `cluster.groups[0].gpu.${key}`;
      // a tiny memory_gib may be reported through reserved_memory_gib, which must stay below it
      out.push(invalid(`${raw} ${key}`, withRaw(f, raw, docWithGpu()), key === 'memory_gib' ? 'cluster.groups[0].gpu.' : f));
    }
    out.push(invalid(`${raw} group inter_node_gbps`, withRaw('cluster.groups[0].inter_node_gbps', raw, docWithGpu()),
      'cluster.groups[0].inter_node_gbps'));
  }
  return out;
}

function nanLikeAndWrongTypes() {
  const out = [];
  const values = ['"NaN"', '"Infinity"', '"-Infinity"', '"1e999"', '""', 'NaN', 'Infinity', 'true', 'null', '{}', '[]', '[[1]]'];
  const fields = [['training.global_batch_size', base()], ['cluster.groups[0].nodes', withGroups([{ gpu: 'h100-sxm', nodes: 1 }])],
    ['cluster.groups[0].gpu.bf16_tflops', docWithGpu()]];
  for (const v of values) {
    for (const [f, doc] of fields) {
      // bare NaN / Infinity are not JSON at all: a syntax error for the whole text
      const field = v === 'NaN' || v === 'Infinity' ? '$' : f;
      out.push(invalid(`${v} at ${f}`, withRaw(f, v, structuredClone(doc)), field));
    }
  }
  for (const [f, v, field = f] of [['model', 1], ['cluster', true], ['training', []], ['search', 'x'], ['plan', 3],
    ['model', { preset: 'mixtral-s', swiglu: 1 }, 'model.swiglu'], ['search.recompute', 7], ['cluster.groups', {}], ['format', 1],
    ['search.recompute', [{ modules: ['<script>'] }], 'search.recompute[0].modules[0]'],
    ['search.recompute', { modules: 'moe_act' }, 'search.recompute.modules'],
    ['search.ep_comm_overlap', [1], 'search.ep_comm_overlap[0]']]) {
    out.push(invalid(`wrong type at ${field}`, JSON.stringify(setPath(base(), f, v)), field));
  }
  return out;
}

function nonPositiveSizes() {
  const out = [];
  const modelFields = ['num_layers', 'hidden_size', 'moe_ffn_hidden_size', 'num_attention_heads', 'vocab_size', 'moe_router_topk'];
  for (const v of [0, -1, -2147483648, 0.5]) {
    for (const k of modelFields) {
      out.push(invalid(`${v} model.${k}`, JSON.stringify({ ...base(), model: { preset: 'mixtral-s', [k]: v } }), `model.${k}`));
    }
    for (const f of ['training.global_batch_size', 'training.seq_length']) {
      out.push(invalid(`${v} ${f}`, JSON.stringify(setPath(base(), f, v)), f));
    }
    out.push(invalid(`${v} nodes`, JSON.stringify(withGroups([{ gpu: 'h100-sxm', nodes: v }])), 'cluster.groups[0].nodes'));
  }
  return out;
}

function unknownPresetsAndFields() {
  return [
    invalid('unknown model preset', JSON.stringify({ ...base(), model: 'nope' }), 'model'),
    invalid('unknown cluster preset', JSON.stringify({ ...base(), cluster: 'nope' }), 'cluster'),
    invalid('unknown gpu preset', JSON.stringify(withGroups([{ gpu: 'nope', nodes: 1 }])), 'cluster.groups[0].gpu'),
    invalid('unknown preset in override', JSON.stringify({ ...base(), model: { preset: 'nope' } }), 'model.preset'),
    invalid('100 KB preset id', JSON.stringify({ ...base(), model: 'm'.repeat(100000) }), 'model'),
    invalid('preset id with NUL', JSON.stringify({ ...base(), model: 'mixtral-s\u0000' }), 'model'),
    invalid('script preset id', JSON.stringify({ ...base(), model: '<script>alert(1)</script>' }), 'model'),
    invalid('unknown top-level field', JSON.stringify({ ...base(), modle: 'x' }), 'modle'),
    invalid('unknown training field', JSON.stringify(setPath(base(), 'training.global_batch', 8)), 'training.global_batch'),
    invalid('wrong format', JSON.stringify({ ...base(), format: 'hapmoe.scenario/9' }), 'format'),
    invalid('empty text', '', '$'),
    invalid('null document', 'null', '$'),
    invalid('array document', '[]', '$'),
    invalid('number document', '0', '$'),
    invalid('truncated document', JSON.stringify(base()).slice(0, 40), '$'),
    invalid('two documents', JSON.stringify(base()) + JSON.stringify(base()), '$'),
    invalid('lone surrogate escape', JSON.stringify(base()).replace('"mixtral-s"', '"\\ud800"'), '$'),
    invalid('missing training', JSON.stringify({ model: 'mixtral-s', cluster: '16-1' }), 'training'),
  ];
}

function hugeListsAndGroups() {
  const out = [];
  out.push(invalid('moe_layer_freq longer than num_layers', JSON.stringify({ ...base(),
    model: { preset: 'mixtral-s', moe_layer_freq: Array(100000).fill(1) } }), 'model.moe_layer_freq'));
  out.push(invalid('search.tp list of 50k out-of-range values', JSON.stringify(setPath(base(), 'search.tp',
    Array.from({ length: 50000 }, (_, i) => i + 1))), 'search.tp'));
  out.push(invalid('plan with 10k stages', JSON.stringify({ ...base(), plan: { tp: 1, pp: 10000, dp: 1, ep: 1,
    stages: Array.from({ length: 10000 }, () => ({ gpu: 'h800-sxm', group: 0, layers: 1, recompute: 'none' })) } }), 'plan'));
  out.push(invalid('20k groups', JSON.stringify(withGroups(Array(20000).fill({ gpu: 'h100-sxm', nodes: 1 }))), 'cluster.groups'));
  // UBSan finding: 4096 x 1048576 wrapped in 32-bit int (stage_cost.cpp attention_compute); the
  // field table bounds heads x head dim by the largest hidden size
  out.push(invalid('heads x kv_channels past 2^31', JSON.stringify({ ...base(), model: { preset: 'mixtral-s',
    num_attention_heads: 4096, num_query_groups: 4096, kv_channels: 1048576, hidden_size: 65536 } }),
  'model.kv_channels'));
  out.push(invalid('heads x kv_channels past the widest hidden size', JSON.stringify({ ...base(), model: {
    preset: 'mixtral-s', num_attention_heads: 4096, num_query_groups: 4096, kv_channels: 65536, hidden_size: 65536 } }),
  'model.num_attention_heads'));
  out.push(invalid('group without gpu', JSON.stringify(withGroups([{ nodes: 1 }])), 'cluster.groups[0].gpu'));
  out.push(invalid('empty groups', JSON.stringify(withGroups([])), 'cluster.groups'));
  out.push(invalid('1e6 nodes in one group', JSON.stringify(withGroups([{ gpu: 'h100-sxm', nodes: 1e7 }])), 'cluster.groups[0].nodes'));
  return out;
}

// Small valid inputs: script payloads in strings, duplicates in search lists, odd but legal JSON.
function validSmall() {
  const payload = '<img src=x onerror=alert(1)>"\'</script>\u2028\u{1F600}';
  const docs = [
    ['script payloads in names', { ...base(), model: { preset: 'mixtral-s', name: payload },
      cluster: { name: payload, groups: [{ gpu: { preset: 'h800-sxm', name: payload }, nodes: 1 },
        { gpu: 'ascend-910b', nodes: 1 }] } }],
    ['duplicated search values', setPath(base(), 'search', { tp: [1, 1, 2, 2], pp: [1, 1], micro_batch_size: [1, 1, 1] })],
    ['BOM and whitespace', null],
    ['depth at the limit in a name-free field', base()],
    ['exponent integers', JSON.parse(withRaw('training.global_batch_size', '6.4e1'))],
    ['underflow to zero where zero is allowed', JSON.parse(withRaw('cluster.groups[0].gpu.reserved_memory_gib', '1e-999',
      docWithGpu()))],
  ];
  return docs.map(([name, doc]) => ({
    name, expect: 'valid',
    text: doc === null ? '\uFEFF \n\t' + JSON.stringify(base()) + '\n ' : JSON.stringify(doc),
  }));
}

// Valid but large: the acceptance limits are 10 s and 2 GB each.
function validLarge() {
  const gpus = ['h100-sxm', 'h800-sxm', 'a100-sxm-80gb', 'h20', 'h200-sxm', 'mi300x', 'ascend-910b', 'b200', 'a800'];
  const big = (name, doc) => ({ name, expect: 'large', text: JSON.stringify(doc) });
  return [
    big('64 one-node groups of one GPU', withGroups(Array.from({ length: 64 }, () => ({ gpu: 'h100-sxm', nodes: 1 })))),
    big('31 groups', withGroups(Array.from({ length: 31 }, (_, i) => ({ gpu: gpus[i % 2], nodes: 1 })))),
    big('10 one-node groups of the same GPU', withGroups(Array.from({ length: 10 }, () => ({ gpu: 'h800-sxm', nodes: 1 })))),
    big('9 GPU types', withGroups(gpus.map((gpu) => ({ gpu, nodes: 2 })))),
    // 1024 layers of a small MoE (30B parameters): fits 32 GPUs, so the search really splits it.
    big('1024 layers', { ...base(), cluster: 'h100-a100-32', training: { global_batch_size: 256, seq_length: 4096 },
      model: { name: 'deep', num_layers: 1024, hidden_size: 1024, ffn_hidden_size: 4096, num_attention_heads: 16,
        num_query_groups: 4, vocab_size: 32000, num_experts: 8, moe_router_topk: 2, moe_ffn_hidden_size: 1024 } }),
    big('1M GPUs', { ...base(), model: 'deepseek-v3', training: { global_batch_size: 16384, seq_length: 4096 },
      cluster: { groups: [{ gpu: 'h100-sxm', nodes: 65536 }, { gpu: 'h800-sxm', nodes: 65536 }] } }),
    // One vendor: upstream mode never spans vendors, and tp 1 does not fit Mixtral-S on 8 H800s.
    big('300k duplicated search values', setPath({ ...base(), cluster: 'h100-a100-32' }, 'search.tp', Array(300000).fill(1))),
    big('1000 duplicated search values', setPath({ ...base(), cluster: 'h100-a100-32' }, 'search',
      { tp: Array(1000).fill(1), micro_batch_size: Array(1000).fill(1) })),
  ];
}

// The `profile` section (docs/scenario.md, "Profile"): bounded lists, positive finite numbers,
// GPU ids of the cluster, known keys; errors name the path.
function hostileProfiles() {
  const layer = { kind: 'moe', ep: 8, seq_length: 2048, forward_ms: 9, backward_ms: 18 };
  const coll = { op: 'all_to_all', ranks: 16, placement: 'inter_node', bytes: 1048576, busbw_gbps: 40 };
  const withProfile = (gpu) => ({ ...base(), profile: { gpus: { 'h800-sxm': gpu } } });
  const at = 'profile.gpus.h800-sxm';
  return [
    invalid('profile: 1025 layer points', JSON.stringify(withProfile({ layers: Array(1025).fill(layer) })), `${at}.layers`),
    invalid('profile: 4097 collective points', JSON.stringify(withProfile({ collectives: Array(4097).fill(coll) })), `${at}.collectives`),
    invalid('profile: GPU id not in the cluster', JSON.stringify({ ...base(), profile: { gpus: { 'h100-sxm': {} } } }), 'profile.gpus.h100-sxm'),
    invalid('profile: zero forward time', JSON.stringify(withProfile({ layers: [{ ...layer, forward_ms: 0 }] })), `${at}.layers[0].forward_ms`),
    invalid('profile: 1e300 ms', JSON.stringify(withProfile({ layers: [{ ...layer, backward_ms: 1e300 }] })), `${at}.layers[0].backward_ms`),
    invalid('profile: negative busbw', JSON.stringify(withProfile({ collectives: [{ ...coll, busbw_gbps: -1 }] })), `${at}.collectives[0].busbw_gbps`),
    invalid('profile: 1 rank', JSON.stringify(withProfile({ collectives: [{ ...coll, ranks: 1 }] })), `${at}.collectives[0].ranks`),
    invalid('profile: tp 0', JSON.stringify(withProfile({ layers: [{ ...layer, tp: 0 }] })), `${at}.layers[0].tp`),
    invalid('profile: string seq', JSON.stringify(withProfile({ layers: [{ ...layer, seq_length: '4096' }] })), `${at}.layers[0].seq_length`),
    invalid('profile: unknown op', JSON.stringify(withProfile({ collectives: [{ ...coll, op: 'broadcast' }] })), `${at}.collectives[0].op`),
    invalid('profile: unknown key', JSON.stringify(withProfile({ layers: [{ ...layer, flops: 1 }] })), `${at}.layers[0].flops`),
    invalid('profile: gpus a list', JSON.stringify({ ...base(), profile: { gpus: [] } }), 'profile.gpus'),
    ...profilesThatBrokeTheModel(),
  ];
}

// Profiles that gave nulls, an internal error or absurd plans before issue 23: denormal and tiny
// bandwidths (every collective time infinite), repeated points with other values, layer points
// faster than the GPU's peak (plans above 100% MFU). Each is refused naming the point.
function profilesThatBrokeTheModel() {
  const at = 'profile.gpus.h800-sxm';
  const withProfile = (gpu) => ({ ...base(), profile: { gpus: { 'h800-sxm': gpu } } });
  const coll = (o = {}) => ({ op: 'all_to_all', ranks: 8, placement: 'intra_node', bytes: 1048576, busbw_gbps: 40, ...o });
  const layer = (o = {}) => ({ kind: 'moe', ep: 8, seq_length: 2048, forward_ms: 9, backward_ms: 18, ...o });
  const out = [];
  for (const op of ['all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all']) {
    out.push(invalid(`profile: denormal ${op} busbw`, withRaw(`profile.gpus.h800-sxm.collectives`,
      `[${JSON.stringify(coll({ op })).replace('"busbw_gbps":40', '"busbw_gbps":5e-324')}]`), `${at}.collectives[0].busbw_gbps`));
  }
  for (const raw of ['1e-300', '0.0009']) {
    out.push(invalid(`profile: busbw ${raw}`, withRaw('profile.gpus.h800-sxm.collectives',
      `[${JSON.stringify(coll()).replace('"busbw_gbps":40', `"busbw_gbps":${raw}`)}]`), `${at}.collectives[0].busbw_gbps`));
  }
  out.push(invalid('profile: half a byte', JSON.stringify(withProfile({ collectives: [coll({ bytes: 0.5 })] })), `${at}.collectives[0].bytes`));
  out.push(invalid('profile: 1e-7 ms forward', JSON.stringify(withProfile({ layers: [layer({ forward_ms: 1e-7 })] })), `${at}.layers[0].forward_ms`));
  out.push(invalid('profile: same size, other busbw', JSON.stringify(withProfile({ collectives: [coll(), coll({ busbw_gbps: 0.01 })] })),
    `${at}.collectives[1]`));
  out.push(invalid('profile: same layer point, other times', JSON.stringify(withProfile({ layers: [layer(), layer({ forward_ms: 9000 })] })),
    `${at}.layers[1]`));
  out.push(invalid('profile: layer faster than the peak', JSON.stringify(withProfile({ layers: [layer({ forward_ms: 1e-3 })] })),
    `${at}.layers[0].forward_ms`));
  out.push(invalid('profile: backward faster than the peak', JSON.stringify(withProfile({ layers: [layer({ backward_ms: 1e-3 })] })),
    `${at}.layers[0].backward_ms`));
  out.push(invalid('profile: another shape faster than the peak', JSON.stringify(withProfile({ layers: [layer(), layer({ tp: 8, ep: 1, forward_ms: 1e-4, backward_ms: 1e-4 })] })),
    `${at}.layers[1].forward_ms`));
  return out;
}

export function corpus() {
  return [deepNesting(), hugeText(), invalidUtf8(), numbersBeyondDouble(), bigInDoubleRange(), tinyPositive(),
    nanLikeAndWrongTypes(), nonPositiveSizes(), unknownPresetsAndFields(), hugeListsAndGroups(), hostileProfiles(), validSmall(),
    validLarge()].flat();
}

// The text as bytes for a child process or the wasm API (Embind copies a Uint8Array into a
// std::string byte for byte; a JS string would be re-encoded as UTF-8).
export const asBuffer = (text) => (Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'));
