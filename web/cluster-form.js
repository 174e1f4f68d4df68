// Cluster section: preset select, a table of GPU groups (add/remove), inter-group bandwidth.
// Units, ranges, defaults and help come from the field schema. get() returns the preset id
// when unchanged, else {preset, ...changed fields}; a changed group list is sent whole as
// "groups".
import { fieldDef, makeField, makeHelp, readInput, writeInput, sameValue } from './fields.js';
import { createPresetSelect } from './preset-select.js';

/** Group table columns: [schema path, label]. */
export const COLUMNS = [
  ['cluster.groups[].nodes', 'Nodes'],
  ['cluster.groups[].gpus_per_node', 'GPUs / node'],
  ['cluster.groups[].gpus_per_host', 'GPUs / host'],
  ['cluster.groups[].inter_node_gbps', 'Inter-node'],
  ['cluster.groups[].gpu.memory_gib', 'Memory'],
  ['cluster.groups[].gpu.reserved_memory_gib', 'Reserved'],
  ['cluster.groups[].price_per_gpu_hour', 'Price'],
  ['cluster.groups[].billed', 'Billed'],
];

/** Columns on the row's third line (what a group costs: the user's own prices). */
const COST_COLUMNS = ['price_per_gpu_hour', 'billed'];

/** What each cluster.groups[].billed value means (values the schema adds later show as they are). */
const BILLED_LABELS = { used: 'GPUs used', all: 'whole group' };

/** The groups with no price or billing fields: the hardware alone (what makes a preset cluster custom). */
const hardware = (groups) => groups.map(({ price_per_gpu_hour: _p, billed: _b, ...g }) => g);

/** Columns that override a field of the group's GPU (not of the group). */
const GPU_COLUMNS = ['memory_gib', 'reserved_memory_gib'];

/** A custom GPU's own fields (the inline GpuSpec; its memory is the table's Memory column): [key, label]. */
export const CUSTOM_GPU_FIELDS = [
  ['name', 'Name'], ['vendor', 'Vendor'], ['bf16_tflops', 'Dense BF16'], ['fp8_tflops', 'Dense FP8'],
  ['hbm_gbps', 'HBM bandwidth'], ['intra_node_gbps', 'Scale-up bandwidth'], ['inter_node_gbps', 'Scale-out bandwidth'],
  ['gpus_per_node', 'GPUs per node (usual system)'],
];

function gpuTitle(id, g) {
  if (!g) return id;
  const src = Array.isArray(g.source) ? g.source.join('; ') : g.source;
  return `${g.name || id}: ${g.memory_gib} GiB, ${g.bf16_tflops} TFLOPS bf16` + (g.fp8_tflops ? `, ${g.fp8_tflops} TFLOPS fp8` : '') +
    `, ${g.intra_node_gbps} GB/s scale-up, ${g.inter_node_gbps} GB/s scale-out per GPU` + (src ? `\n\nsource: ${src}` : '');
}

function headerCell(def) {
  const th = document.createElement('th');
  th.scope = 'col';
  if (COST_COLUMNS.includes(def.key)) th.className = `c-${def.key}`;
  th.append(def.label);
  const help = makeHelp(def.help, def.label);
  th.append(help.button);
  if (def.unit) {
    const unit = document.createElement('span');
    unit.className = 'unit';
    unit.textContent = def.unit;
    th.append(unit);
  }
  th.append(help.note);
  return th;
}

/** presets: cluster presets by id; gpus: GPU presets by id; schema: indexSchema() result. */
export function createClusterForm(presets, gpus, schema) {
  const columns = COLUMNS.map(([path, label]) => fieldDef(schema, path, label));
  const gpuDef = fieldDef(schema, 'cluster.groups[].gpu', 'GPU');
  // A new group starts at the smallest valid size; its node size is the GPU's usual one.
  const minNodes = fieldDef(schema, 'cluster.groups[].nodes', '').min;
  const defaultGpusPerNode = fieldDef(schema, 'cluster.groups[].gpu.gpus_per_node', '').default;
  const defaultReserved = fieldDef(schema, 'cluster.groups[].gpu.reserved_memory_gib', '').default;
  const billedDefault = fieldDef(schema, 'cluster.groups[].billed', '').default;
  const element = document.createElement('fieldset');
  element.className = 'section';
  element.innerHTML = `<legend>Cluster</legend>
    <table class="groups"><caption>GPU groups (identical nodes)</caption><thead><tr></tr></thead><tbody></tbody></table>
    <button type="button" class="secondary add-group">+ Add group</button>`;
  const headRow = element.querySelector('thead tr');
  const removeHead = document.createElement('th');
  removeHead.innerHTML = '<span class="sr-only">Remove</span>';
  headRow.append(headerCell(gpuDef), ...columns.map(headerCell), removeHead);
  const picker = createPresetSelect('Preset', 'cluster', presets);
  element.querySelector('legend').after(picker.element);
  const tbody = element.querySelector('tbody');
  const interGroup = makeField(fieldDef(schema, 'cluster.inter_group_gbps', 'Between groups'), 'cluster.inter_group_gbps');
  element.append(interGroup);
  const interGroupInput = interGroup.querySelector('input');
  const firstGpu = Object.keys(gpus)[0];
  // Out-of-range values are refused like any field's (the core's message beside the input).
  const customDefs = CUSTOM_GPU_FIELDS.map(([key, label]) => fieldDef(schema, `cluster.groups[].gpu.${key}`, label));
  const editors = document.createElement('div');
  editors.className = 'custom-gpus';
  element.querySelector('.add-group').before(editors);

  function renumber() {
    [...tbody.rows].forEach((row, i) => {
      row.querySelectorAll('[data-col]').forEach((el) => {
        const col = el.dataset.col;
        el.dataset.field = `cluster.groups[${i}].${GPU_COLUMNS.includes(col) ? `gpu.${col}` : col}`;
        el.setAttribute('aria-label', `Group ${i + 1} ${col.replace(/_/g, ' ')}`);
      });
      row.editor.querySelector('legend').textContent = `Custom GPU of group ${i + 1} (its memory: the table's Memory column)`;
      row.editor.querySelectorAll('[data-key]').forEach((el) => { el.dataset.field = `cluster.groups[${i}].gpu.${el.dataset.key}`; });
    });
  }

  /** The custom GPU editor of a row: one labelled field per CUSTOM_GPU_FIELDS, each with unit, range and help. */
  function makeEditor(row) {
    const box = document.createElement('fieldset');
    box.className = 'custom-gpu';
    box.hidden = true;
    box.append(document.createElement('legend'));
    const grid = document.createElement('div');
    grid.className = 'fields';
    for (const def of customDefs) {
      const f = makeField(def, '');
      const input = f.querySelector('input, select');
      input.dataset.key = def.key;
      if (def.min != null) f.querySelector('.field-label label').title = `${def.min} to ${def.max} ${def.unit}`;
      const range = document.createElement('small');
      range.className = 'range';
      range.textContent = def.min != null ? `${def.min}–${def.max}` : '';
      f.append(range);
      input.addEventListener('input', () => {
        const v = readInput(input);
        if (v == null) delete row.custom[def.key]; else row.custom[def.key] = v;
      });
      grid.append(f);
    }
    box.append(grid);
    return box;
  }

  /** Shows the editor when the row's GPU is custom, filled from its spec. */
  function showEditor(row) {
    const custom = !row.gpu.value;
    row.editor.hidden = !custom;
    if (!custom) return;
    const from = gpus[row.custom.preset] || {};
    for (const def of customDefs) writeInput(row.editor.querySelector(`[data-key="${def.key}"]`), row.custom[def.key] ?? from[def.key]);
  }

  function onGpuChange(row) {
    if (!row.gpu.value && !row.custom) {
      // A new custom GPU starts from the preset the row had (its figures, no preset id).
      const from = gpus[row.lastPreset] || gpus[firstGpu];
      row.custom = { name: 'Custom GPU' };
      for (const [k] of CUSTOM_GPU_FIELDS) if (k !== 'name' && from[k] != null) row.custom[k] = from[k];
      row.custom.memory_gib = from.memory_gib;
      row.gpu.options[row.gpu.options.length - 1].text = 'Custom GPU (edit below)';
    }
    if (row.gpu.value) row.lastPreset = row.gpu.value;
    showEditor(row);
    const g = gpus[row.gpu.value] || (!row.gpu.value ? row.custom : undefined);
    row.gpu.title = gpuTitle(row.gpu.value, g);
    // The id in full (the select may cut a long name): "a100-sxm-40gb" and "-80gb" stay apart.
    row.spec.textContent = g ? `${row.gpu.value || 'custom'} · ${g.bf16_tflops ?? '?'} TFLOPS bf16 · ${g.intra_node_gbps ?? '?'} GB/s in node` : '';
    writeInput(row.inputs.memory_gib, g?.memory_gib);
    writeInput(row.inputs.reserved_memory_gib, g?.reserved_memory_gib ?? defaultReserved);
    row.inputs.inter_node_gbps.placeholder = g?.inter_node_gbps != null ? String(g.inter_node_gbps) : '';
  }

  function addRow(group = {}) {
    const row = tbody.insertRow();
    row.inputs = {};
    const gpuCell = row.insertCell();
    row.gpu = document.createElement('select');
    row.gpu.dataset.col = 'gpu';
    // Vendor, name and memory in the list: "a100-sxm" alone does not say 40 or 80 GB.
    for (const [id, g] of Object.entries(gpus)) {
      row.gpu.add(new Option(`${g.name || id}${Number.isFinite(g.memory_gib) ? `, ${Math.round(g.memory_gib)} GiB` : ''} (${id})`, id));
    }
    row.spec = document.createElement('small');
    row.spec.className = 'gpu-spec';
    gpuCell.append(row.gpu, row.spec);
    for (const c of columns) {
      const input = makeField({ ...c, help: null }, '').querySelector('input, select');
      input.dataset.col = c.key;
      row.inputs[c.key] = input;
      const cell = row.insertCell();
      if (COST_COLUMNS.includes(c.key)) cell.className = `c-${c.key}`;
      cell.append(input);
    }
    for (const o of row.inputs.billed.options) o.text = BILLED_LABELS[o.value] || o.value;
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'icon remove-group';
    del.setAttribute('aria-label', 'Remove group');
    del.textContent = '×';
    del.addEventListener('click', () => { if (tbody.rows.length > 1) { row.remove(); row.editor.remove(); renumber(); becameCustom(); } });
    row.insertCell().append(del);
    const gpu = typeof group.gpu === 'object' && group.gpu ? group.gpu : { preset: group.gpu ?? firstGpu };
    // A custom GPU (no preset, or a preset with changed specs) from a link or file is kept as given.
    if (!gpus[gpu.preset] || Object.keys(gpu).some((k) => k !== 'preset' && !GPU_COLUMNS.includes(k))) row.custom = { ...gpu };
    row.gpu.add(new Option(row.custom ? `custom: ${gpu.name || 'GPU'}` : 'Custom GPU…', ''));
    row.editor = makeEditor(row);
    editors.append(row.editor);
    row.gpu.value = row.custom ? '' : gpu.preset;
    row.lastPreset = row.gpu.value || gpu.preset;
    row.gpu.addEventListener('change', () => onGpuChange(row));
    renumber();
    onGpuChange(row);
    for (const k of GPU_COLUMNS) if (gpu[k] != null) writeInput(row.inputs[k], gpu[k]);
    writeInput(row.inputs.nodes, group.nodes ?? minNodes);
    writeInput(row.inputs.gpus_per_node, group.gpus_per_node ?? gpus[row.gpu.value]?.gpus_per_node ?? defaultGpusPerNode);
    writeInput(row.inputs.inter_node_gbps, group.inter_node_gbps);
    writeInput(row.inputs.gpus_per_host, group.gpus_per_host);  // blank: the core's default (help)
    row.inputs.gpus_per_host.placeholder = 'auto';
    writeInput(row.inputs.price_per_gpu_hour, group.price_per_gpu_hour);  // blank: no price
    row.inputs.price_per_gpu_hour.placeholder = 'none';
    writeInput(row.inputs.billed, group.billed ?? billedDefault);
    // A "billed" the scenario spelled out is kept even at its default, so a link reads back as it was.
    row.billedGiven = group.billed != null;
    renumber();
  }

  function readGroups() {
    return [...tbody.rows].map((row) => {
      const id = row.gpu.value;
      const changed = {};
      for (const k of GPU_COLUMNS) {
        const v = readInput(row.inputs[k]);
        const preset = k === 'reserved_memory_gib' ? gpus[id]?.[k] ?? defaultReserved : gpus[id]?.[k];
        if (v != null && (!id || v !== preset)) changed[k] = v;
      }
      const out = { gpu: !id && row.custom ? { ...row.custom, ...changed }
        : Object.keys(changed).length ? { preset: id, ...changed } : id };
      out.nodes = readInput(row.inputs.nodes);
      out.gpus_per_node = readInput(row.inputs.gpus_per_node);
      const bw = readInput(row.inputs.inter_node_gbps);
      if (bw != null) out.inter_node_gbps = bw;
      const perHost = readInput(row.inputs.gpus_per_host);
      if (perHost != null) out.gpus_per_host = perHost;
      const price = readInput(row.inputs.price_per_gpu_hour);
      if (price != null) out.price_per_gpu_hour = price;
      const billed = readInput(row.inputs.billed);
      if (billed != null && (row.billedGiven || billed !== billedDefault)) out.billed = billed;
      return out;
    });
  }

  let base = { groups: [], inter_group_gbps: null };

  /**
   * Edited groups are no longer the preset: the selector says "custom" and the scenario carries
   * the groups in full, without what the preset held beyond the form (a cross-group link the
   * edited cluster may not have); the between-groups bandwidth shown stays, as it is editable.
   * Prices and billing change what a plan costs, not the hardware: the cluster stays the preset
   * (sent as {preset, groups}).
   */
  function becameCustom() {
    if (!picker.value || sameValue(hardware(readGroups()), hardware(base.groups))) return;
    picker.setValue(null);
  }

  function fill(spec, overrides = {}) {
    tbody.replaceChildren();
    editors.replaceChildren();
    (spec.groups || [{}]).forEach(addRow);
    writeInput(interGroupInput, spec.inter_group_gbps);
    base = { groups: readGroups(), inter_group_gbps: readInput(interGroupInput) };
    if (overrides.groups) { tbody.replaceChildren(); editors.replaceChildren(); overrides.groups.forEach(addRow); }
    if ('inter_group_gbps' in overrides) writeInput(interGroupInput, overrides.inter_group_gbps);
  }

  element.querySelector('.add-group').addEventListener('click', () => {
    const last = readGroups().at(-1) || {};
    const gpu = typeof last.gpu === 'string' ? last.gpu : last.gpu?.preset ?? firstGpu;
    // Same GPU as the last group, so the same price and billing (prices go on every group or none).
    addRow({ gpu, nodes: minNodes, gpus_per_node: gpus[gpu]?.gpus_per_node ?? last.gpus_per_node ?? defaultGpusPerNode,
      price_per_gpu_hour: last.price_per_gpu_hour, billed: last.billed });
    becameCustom();
  });
  tbody.addEventListener('change', becameCustom);
  tbody.addEventListener('input', becameCustom);
  editors.addEventListener('input', becameCustom);
  picker.onChange((pid) => { if (pid) fill(presets[pid]); });

  return {
    element,
    /** Scenario "cluster" value. */
    get() {
      const groups = readGroups();
      const ig = readInput(interGroupInput);
      const pid = picker.value;
      if (!pid) return ig == null ? { groups } : { groups, inter_group_gbps: ig };
      const diff = {};
      if (!sameValue(groups, base.groups)) diff.groups = groups;
      if (!sameValue(ig, base.inter_group_gbps)) diff.inter_group_gbps = ig;
      return Object.keys(diff).length ? { preset: pid, ...diff } : pid;
    },
    /** Loads a scenario "cluster" value (id, {preset, ...overrides} or a full spec). */
    set(value) {
      const obj = typeof value === 'string' ? { preset: value } : (value || {});
      const preset = presets[obj.preset];
      picker.setValue(preset ? obj.preset : null);
      const { preset: _p, ...overrides } = obj;
      fill(preset || overrides, preset ? overrides : {});
    },
    /** Total GPUs currently described (for display). */
    totalGpus() { return readGroups().reduce((a, g) => a + (g.nodes || 0) * (g.gpus_per_node || 0), 0); },
  };
}
