// "Measured profile" section: nccl-tests outputs and a Megatron-LM log, dropped on the section or
// picked, go through the core's importers (importNccl / importLog in the worker). The imported
// `profile` points, or the GPU spec fitted to the log, are merged into the scenario, which is then
// planned; what was imported is listed. Every file string is shown as text.

/** Largest file read, in bytes (core/include/hapmoe/profile_import.hpp kMaxImportTextBytes). */
export const MAX_PROFILE_FILE_BYTES = 8 * 1024 * 1024;

const el = (tag, props = {}, children = []) => {
  const e = Object.assign(document.createElement(tag), props);
  for (const c of children) e.append(c);
  return e;
};

/** GPU ids of the scenario's cluster (a preset cluster is looked up in presets). */
export function clusterGpuIds(scenario, presets) {
  const c = typeof scenario.cluster === 'string' ? presets.clusters?.[scenario.cluster] : scenario.cluster;
  const ids = (c?.groups || []).map((g) => (typeof g.gpu === 'string' ? g.gpu : g.gpu?.preset || g.gpu?.id || 'custom'));
  return [...new Set(ids)];
}

/** Merges imported profile points into scenario.profile (lists of one GPU are appended). */
export function mergeProfile(scenario, imported) {
  const gpus = { ...(scenario.profile?.gpus || {}) };
  for (const [id, add] of Object.entries(imported.gpus || {})) {
    const old = gpus[id] || {};
    gpus[id] = {
      ...old,
      layers: [...(old.layers || []), ...(add.layers || [])],
      collectives: [...(old.collectives || []), ...(add.collectives || [])],
      source: [old.source, add.source].filter(Boolean).join('; '),
    };
  }
  return { ...scenario, profile: { gpus } };
}

/** One line per imported nccl-tests file. */
export function ncclSummary(imported) {
  return imported.map((f) => `${f.file}: ${f.op}, ${f.ranks} ranks, ${f.placement} (${f.hosts.length} host(s)), ` +
    `${f.device || 'device not named'}, ${f.points} sizes, busbw up to ${f.max_busbw_gbps} GB/s (nccl-tests busbw)`);
}

/** Lines describing a log fit. */
export function logSummary(fit) {
  const r = (x, d = 3) => Number(x).toFixed(d);
  const lines = [`${fit.log.name}: median ${r(fit.log.median_iteration_ms, 1)} ms per iteration over ${fit.log.iterations_used} ` +
    `logged line(s), ${fit.log.iterations_skipped} warm-up line(s) skipped (Megatron-LM log)`,
  `${fit.gpu}: efficiency factors x${fit.scale}; iteration ${r(fit.analytical_iteration_s)} s (model) -> ` +
    `${r(fit.fitted_iteration_s)} s (fitted; logged ${r(fit.logged_iteration_s)} s)${fit.reached ? '' : ' - not reached within the allowed factors'}`];
  if (fit.reserved_memory_gib !== undefined) lines.push(`reserved memory ${fit.reserved_memory_gib} GiB (from the log's max reserved)`);
  return lines;
}

/**
 * Builds the section in root. deps: call(method, request) -> Promise of the importer's JSON,
 * getScenario(), getPlan() (the run's plan for a log fit, or null), presets, apply(scenario, what).
 */
export function createProfileForm(root, deps) {
  const gpu = el('select', { id: 'profile-gpu' });
  const placement = el('select', { id: 'profile-placement' },
    ['auto', 'intra_node', 'inter_node', 'inter_group'].map((v) => el('option', { value: v, textContent: v === 'auto' ? 'from the hosts' : v })));
  const nccl = el('input', { type: 'file', multiple: true, id: 'profile-nccl', accept: '.txt,.log,.out,text/plain' });
  const log = el('input', { type: 'file', id: 'profile-log', accept: '.txt,.log,.out,text/plain' });
  const summary = el('ul', { className: 'profile-summary' });
  const note = el('p', { className: 'hint', role: 'status' });
  const refreshGpus = () => {
    const ids = clusterGpuIds(deps.getScenario(), deps.presets);
    const keep = gpu.value;
    gpu.replaceChildren(...ids.map((id) => el('option', { value: id, textContent: id })));
    if (ids.includes(keep)) gpu.value = keep;
  };
  root.append(el('summary', { textContent: 'Measured profile (nccl-tests, Megatron-LM log)' }),
    el('p', { className: 'hint', textContent: 'Drop nccl-tests outputs or a Megatron-LM log here. nccl-tests points are added to the scenario\'s profile for the GPU below; a log fits that GPU\'s efficiency factors to the run\'s plan (the opened scenario file\'s plan, else the best plan shown).' }),
    el('label', {}, ['GPU type ', gpu]), ' ', el('label', {}, ['placement ', placement]), ' ',
    el('label', { className: 'file-button secondary' }, ['nccl-tests outputs…', nccl]), ' ',
    el('label', { className: 'file-button secondary' }, ['Megatron-LM log…', log]), note, summary);
  root.addEventListener('toggle', refreshGpus);
  gpu.addEventListener('focus', refreshGpus);

  const show = (lines) => summary.replaceChildren(...lines.map((t) => el('li', { textContent: t })));
  const readAll = async (files) => {
    for (const f of files) if (f.size > MAX_PROFILE_FILE_BYTES) throw new Error(`${f.name} is larger than 8 MiB`);
    return Promise.all([...files].map(async (f) => ({ name: f.name, text: await f.text() })));
  };
  async function importNccl(files) {
    refreshGpus();
    const request = { gpu: gpu.value, files: await readAll(files) };
    if (placement.value !== 'auto') request.placement = placement.value;
    const r = await deps.call('importNccl', request);
    if (!r.ok) throw new Error(`${r.error.field}: ${r.error.message}`);
    deps.apply(mergeProfile(deps.getScenario(), r.profile), 'the imported nccl-tests points');
    show(ncclSummary(r.imported));
  }
  async function importLog(file) {
    refreshGpus();
    const plan = deps.getPlan();
    if (!plan) throw new Error('no plan to fit the log to: open the run\'s scenario file (with its plan) or plan first');
    const [f] = await readAll([file]);
    const request = { scenario: { ...deps.getScenario(), plan }, log: f.text, log_name: f.name, gpu: gpu.value };
    const r = await deps.call('importLog', request);
    if (!r.ok) throw new Error(`${r.error.field}: ${r.error.message}`);
    const { plan: _run, ...withoutPlan } = r.scenario;  // keep a plan only if the scenario had one
    deps.apply(deps.getScenario().plan ? r.scenario : withoutPlan, `the GPU fitted to ${f.name}`);
    show(logSummary(r.fit));
  }
  const guard = (p) => p.then(() => { note.textContent = ''; }, (err) => { note.textContent = `Not imported: ${err.message}`; });
  nccl.addEventListener('change', () => { if (nccl.files.length) guard(importNccl(nccl.files)); nccl.value = ''; });
  log.addEventListener('change', () => { if (log.files[0]) guard(importLog(log.files[0])); log.value = ''; });
  root.addEventListener('dragover', (e) => e.preventDefault());
  root.addEventListener('drop', async (e) => {
    e.preventDefault();
    const files = [...(e.dataTransfer?.files || [])];
    if (!files.length) return;
    const head = await files[0].slice(0, 65536).text();
    guard(/elapsed time per iteration/.test(head) ? importLog(files[0]) : importNccl(files));
  });
  refreshGpus();
}
