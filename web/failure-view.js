// "If a node fails" under the selected plan: its checkpoint figures (metrics.resilience, with
// training.checkpoint_write_gbps) and, on request, the N-1 re-plan (the core's nodeLoss: for each
// group the plan uses, the best plan without one node of it).
import { esc, fixed, int, percent, usd } from './format.js';
import { planLabel } from './plans-table.js';

/** Seconds as "532 s" below 100 s, else "1.5 h" from an hour, else "35 min". */
export function duration(s) {
  if (!Number.isFinite(s)) return '—';
  if (s < 100) return `${fixed(s, 1)} s`;
  if (s < 3600) return `${fixed(s / 60, 0)} min`;
  return `${fixed(s / 3600, 1)} h`;
}

/** The plan's checkpoint figures, or a hint naming the field that adds them. */
export function resilienceMarkup(metrics) {
  const x = metrics?.resilience;
  if (!x) {
    return '<p class="hint">Add <em>Checkpoint write bandwidth</em> (More training options) for the checkpoint size, ' +
      'the interval that loses least to failures and the expected goodput.</p>';
  }
  const rows = [
    ['Checkpoint size', `${fixed(x.checkpoint_gib, 1)} GiB`, 'bf16 parameters and optimizer state of every parameter'],
    ['Checkpoint write', duration(x.checkpoint_write_s), 'size / checkpoint write bandwidth, training waiting'],
    ['Nodes used', int(x.nodes_used), ''],
    ['Job MTBF', `${fixed(x.job_mtbf_hours, 1)} h`, 'one year / (node failures per year × nodes used)'],
    ['Checkpoint every', `${duration(x.checkpoint_interval_s)} (--save-interval ${int(x.save_interval_iterations)})`,
      "Daly's optimum (2006) for this write time and MTBF"],
    ['Expected goodput', `${percent(x.expected_goodput, 1)} %`, 'useful time / wall time, with the restart time per failure'],
  ];
  return '<table class="resilience"><caption>Checkpoints and failures (predicted)</caption><tbody>' +
    rows.map(([k, v, why]) => `<tr><th scope="row">${esc(k)}</th><td>${esc(v)}</td><td class="hint">${esc(why)}</td></tr>`).join('') +
    '</tbody></table>';
}

/** The N-1 answer ({plan, losses}) as a table: per group, the best plan left and its slowdown. */
export function nodeLossMarkup(r) {
  if (!r?.ok) return `<p class="error" role="alert">${esc(r?.error?.message || 'The re-plan failed.')}</p>`;
  const priced = r.losses.some((l) => Number.isFinite(l.cost_per_million_tokens));
  const head = ['Node lost from', 'Nodes left', 'Best plan left', 'Time (s/iter)', 'Slowdown', ...(priced ? ['$/M tokens'] : [])];
  const rows = r.losses.map((l) => {
    const from = `group ${l.group + 1} (${l.gpu})`;
    const left = l.group_removed ? 'none (group gone)' : int(l.nodes_left);
    if (!l.entry) {
      return `<tr><td>${esc(from)}</td><td>${esc(left)}</td><td colspan="${head.length - 2}">No plan fits: ${esc(l.message || '')}</td></tr>`;
    }
    const shape = `${planLabel(l.entry.plan)} · ${int(l.entry.metrics.gpus_used)} GPUs`;
    return `<tr><td>${esc(from)}</td><td>${esc(left)}</td><td>${esc(shape)}${l.budget_reached ? ' (search budget reached: best found)' : ''}</td>` +
      `<td>${fixed(l.iteration_time_s, 3)}</td><td>×${fixed(l.slowdown, 2)}</td>` +
      (priced ? `<td>${esc(usd(l.cost_per_million_tokens))}</td>` : '') + '</tr>';
  }).join('');
  return `<div class="table-wrap" tabindex="0" role="region" aria-label="Plans without one node (scrolls sideways)">` +
    `<table class="node-loss"><caption>Without one node (plan now: ${fixed(r.plan.iteration_time_s, 3)} s per iteration on ` +
    `${int(r.plan.gpus_used)} GPUs)</caption><thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows}</tbody></table></div>` +
    '<p class="hint">Each row is a fresh search of the cluster minus one node of that group, same model, training and objective.</p>';
}

/**
 * Fills container for a plan entry: its checkpoint figures and the re-plan button, whose answer
 * loadNodeLoss(plan) gives (a promise of the core's node-loss JSON).
 */
export function renderFailure(container, entry, loadNodeLoss) {
  container.innerHTML = '<h3>If a node fails</h3>' + resilienceMarkup(entry.metrics) +
    '<p><button type="button" class="secondary" id="node-loss-btn">Re-plan without one node of each group</button> ' +
    '<span class="hint" id="node-loss-status" role="status"></span></p><div id="node-loss-out"></div>';
  const btn = container.querySelector('#node-loss-btn');
  const status = container.querySelector('#node-loss-status');
  const out = container.querySelector('#node-loss-out');
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    status.textContent = 'Re-planning…';
    out.innerHTML = '';
    try {
      const r = await loadNodeLoss(entry.plan);
      if (!container.contains(btn)) return;  // another plan was selected meanwhile
      out.innerHTML = nodeLossMarkup(r);
      status.textContent = r?.ok ? `${r.losses.length} re-plan${r.losses.length === 1 ? '' : 's'} done.` : '';
    } catch (err) {
      if (!container.contains(btn)) return;
      out.innerHTML = nodeLossMarkup({ ok: false, error: { message: String(err?.message || err) } });
      status.textContent = '';
    } finally {
      btn.disabled = container.closest('.stale') != null;
    }
  });
}
