// "Paper's evaluation": the core's reproduce() (the HAPMoE paper's Table 1 runs on this planner's
// cost model) shown per model: our best plan's throughput against each baseline per cluster and
// as geometric means, the paper's Table 2/3 figures beside them, and the computed reasons for
// gaps over 30%. Cells carry the JSON values in data-* attributes (the browser test reads them).
import { esc, fixed, int } from './format.js';

const ratio = (v) => (Number.isFinite(v) ? `${fixed(v, 2)}×` : '—');

/** The paper's figure: a button (tap, click or keyboard) that shows how it follows from the paper's tables. */
function paperNote(paper) {
  return paper ? `<button type="button" class="paper" aria-expanded="false" title="${esc(paper.basis)}">paper ${ratio(paper.value)}</button>` +
    `<span class="paper-basis" hidden>${esc(paper.basis)}</span>` : '';
}

function cellMarkup(row, col) {
  const cell = row.columns[col.id];
  if (!row.ours) return `<td data-column="${esc(col.id)}">—${paperNote(cell.paper)}</td>`;
  if (!cell.result) {
    return `<td data-column="${esc(col.id)}" class="no-plan" title="${esc(cell.no_plan)}">no plan${paperNote(cell.paper)}</td>`;
  }
  const note = cell.note ? ` title="${esc(cell.note)}"` : '';
  return `<td data-column="${esc(col.id)}" data-ratio="${cell.throughput_ratio}"${note}>${ratio(cell.throughput_ratio)}` +
    `${paperNote(cell.paper)}</td>`;
}

function rowMarkup(row, columns) {
  const ours = row.ours;
  const oursCells = ours
    ? `<td>${fixed(ours.iteration_time_s, 2)}</td><td>${int(ours.tokens_per_s)}</td>`
    : `<td class="no-plan" title="${esc(row.ours_no_plan)}" colspan="2">no plan</td>`;
  return `<tr data-cluster="${esc(row.cluster)}"><th scope="row" title="${esc(row.cluster_name)}">${esc(row.cluster)}` +
    `${row.heterogeneous ? '' : ' <span class="hint">(homogeneous)</span>'}</th>${oursCells}` +
    `${columns.map((c) => cellMarkup(row, c)).join('')}</tr>`;
}

function geomeanMarkup(r, model) {
  const cells = r.columns.map((c) => {
    const g = r.geomeans.find((x) => x.model === model && x.column === c.id);
    const value = g.value === null ? '' : ` data-geomean="${g.value}"`;
    return `<td data-column="${esc(c.id)}"${value}>${ratio(g.value)} <span class="hint">(${g.clusters.length}/${g.of})</span>` +
      `${paperNote(g.paper)}</td>`;
  }).join('');
  return `<tr class="geomean"><th scope="row" colspan="3">Geometric mean, heterogeneous clusters <span class="hint">(with both plans / run)</span></th>${cells}</tr>`;
}

function setupText(s) {
  const assumed = s.assumed.length ? ` Assumed (not stated for this model): ${s.assumed.join(', ')}.` : '';
  return `Global batch ${int(s.global_batch_size)} sequences of ${int(s.seq_length)} tokens, micro-batch ${s.micro_batch_size}, ` +
    `${esc(s.moe_token_dispatcher_type)} dispatcher, ${esc(s.precision)}, ` +
    `${s.use_distributed_optimizer ? 'distributed optimizer' : 'no distributed optimizer'} (paper §5.1).${esc(assumed)}`;
}

function modelMarkup(r, setup) {
  const rows = r.rows.filter((x) => x.model === setup.model);
  const head = r.columns.map((c) => `<th scope="col" title="${esc(c.rule)}">vs ${esc(c.label)} <span class="unit">× (${esc(c.ratio)})</span></th>`).join('');
  return `<h3>${esc(setup.model)}</h3><p class="hint">${setupText(setup)}</p>` +
    `<div class="table-wrap" tabindex="0" role="region" aria-label="${esc(setup.model)} results (scrolls sideways)">` +
    `<table class="data reproduce" data-model="${esc(setup.model)}"><caption>${esc(setup.model)} on the paper's Table 1 clusters</caption>` +
    '<thead><tr><th scope="col">Cluster</th><th scope="col">Ours: iteration <span class="unit">s</span></th>' +
    `<th scope="col">Ours: throughput <span class="unit">tokens/s</span></th>${head}</tr></thead>` +
    `<tbody>${rows.map((x) => rowMarkup(x, r.columns)).join('')}</tbody>` +
    `<tfoot>${geomeanMarkup(r, setup.model)}</tfoot></table></div>`;
}

function reasonsMarkup(r) {
  const label = Object.fromEntries(r.columns.map((c) => [c.id, c.label]));
  const items = [];
  for (const row of r.rows) {
    for (const c of r.columns) {
      const why = row.columns[c.id].gap_reason;
      if (why) items.push(`<li><b>${esc(row.model)} ${esc(row.cluster)}, vs ${esc(c.label)}:</b> ${esc(why)}</li>`);
    }
  }
  for (const g of r.geomeans) {
    if (g.gap_reason) items.push(`<li><b>${esc(g.model)} geometric mean, vs ${esc(label[g.column])}:</b> ${esc(g.gap_reason)}</li>`);
  }
  return `<h3>Where ours differs from the paper by more than 30%</h3>${items.length ? `<ul class="reasons">${items.join('')}</ul>` : '<p>None.</p>'}`;
}

function noPlanMarkup(r) {
  const items = [];
  for (const row of r.rows) {
    if (!row.ours) { items.push(`<li><b>${esc(row.model)} ${esc(row.cluster)}, ours:</b> ${esc(row.ours_no_plan)}</li>`); continue; }
    for (const c of r.columns) {
      const cell = row.columns[c.id];
      if (!cell.result) items.push(`<li><b>${esc(row.model)} ${esc(row.cluster)}, ${esc(c.label)}:</b> ${esc(cell.no_plan)}</li>`);
    }
  }
  return items.length ? `<details><summary>Why some cells have no plan (${items.length})</summary><ul class="reasons">${items.join('')}</ul></details>` : '';
}

/** Markup of the whole view for a reproduce result (hapmoe.reproduce/1). */
export function reproduceMarkup(r) {
  const rules = r.columns.map((c) => `<dt>${esc(c.label)}</dt><dd>${esc(c.rule)}</dd>`).join('');
  return '<h2>The paper\'s evaluation, on this planner\'s model</h2>' +
    `<p class="hint">Ratios: our best plan's tokens/s over the baseline's (×; equal global batch, so the inverse ` +
    'iteration-time ratio). "paper" is the HAPMoE paper\'s figure in the same direction (tap or hover it for how it follows from its tables).</p>' +
    r.setups.map((s) => modelMarkup(r, s)).join('') + noPlanMarkup(r) + reasonsMarkup(r) +
    `<h3>Baselines</h3><dl class="rules">${rules}</dl>` +
    `<p class="hint source">Sources: paper figures from ${esc(r.paper.source)} (Table 3 does not name its model; it is shown ` +
    'beside both). Our figures are predictions of this planner\'s cost model with the presets\' hardware figures (each preset names its source).</p>';
}

/** Wires `button` to run reproduce() through `client` once and show the result in `root`;
 * later clicks hide and show it. `status` shows progress text. */
export function createReproduceView({ button, root, status, client }) {
  let state = 'empty'; // empty | running | done
  async function runOnce() {
    state = 'running';
    root.hidden = false;
    root.dataset.reproduce = 'running';
    root.innerHTML = '<p role="status">Running the paper\'s clusters…</p>';
    try {
      const r = await client.call('reproduce', {}, (fraction, done) => {
        status.textContent = `Paper's evaluation: ${Math.round(done)} case(s) done (${Math.round(100 * fraction)}%).`;
      });
      if (!r.ok) throw new Error(r.error?.message || 'reproduce failed');
      root.innerHTML = reproduceMarkup(r);
      root.dataset.reproduce = 'done';
      status.textContent = '';
      state = 'done';
    } catch (err) {
      root.innerHTML = `<p class="banner error">The paper's evaluation did not finish: ${esc(err.message)}. Click again to retry.</p>`;
      root.dataset.reproduce = 'failed';
      status.textContent = '';
      state = 'empty';
    }
  }
  root.addEventListener('click', (e) => {
    const paper = e.target.closest('button.paper');
    if (!paper) return;
    const basis = paper.nextElementSibling;
    basis.hidden = !basis.hidden;
    paper.setAttribute('aria-expanded', String(!basis.hidden));
  });
  button.addEventListener('click', () => {
    if (state === 'empty') runOnce();
    else if (state === 'done') root.hidden = !root.hidden;
    button.setAttribute('aria-expanded', String(!root.hidden));
    if (!root.hidden) root.scrollIntoView({ block: 'start' });
  });
}
