// Per-stage table for one plan: GPU type, layers, memory used vs capacity (bar), times.
import { esc, fixed, ms, params, recomputeText } from './format.js';

const COMM_KEYS = ['tp_comm_s', 'cp_comm_s', 'ep_comm_s', 'pp_comm_s', 'dp_comm_s'];
/** Short names of the terms a profile can supply (breakdown "measured" / "extrapolated"). */
const TERM_NAMES = { forward_s: 'Fwd', backward_s: 'Bwd', tp_comm_s: 'TP', ep_comm_s: 'EP', dp_comm_s: 'DP' };

/** Which of a stage's terms came from the scenario's profile: measured, or extrapolated from its points. */
function profileText(b) {
  const names = (list) => (list || []).map((t) => TERM_NAMES[t] || t).join(' ');
  const parts = [];
  if (b.measured?.length) parts.push(`measured: ${names(b.measured)}`);
  if (b.extrapolated?.length) parts.push(`extrapolated: ${names(b.extrapolated)}`);
  return parts.length ? parts.join('; ') : 'model';
}

/** Markup for the stage table of planEntry ({plan, metrics, breakdown}). */
export function stageTableMarkup({ plan, metrics, breakdown }, margin = 0.05) {
  const stages = plan.stages || [];
  const bd = breakdown?.stages || [];
  // Hetero plans: each stage carries its own mesh (FlagScale process mesh).
  const hetero = stages.some((s) => s.tp !== undefined);
  const meshCell = (s) => hetero ? `<td>tp${esc(s.tp)} ep${esc(s.ep)} etp${esc(s.etp)} dp${esc(s.dp)}</td>` : '';
  // With a profile: a column naming each stage's terms taken from its measured points.
  const profiled = bd.some((b) => b.measured?.length || b.extrapolated?.length);
  const rows = stages.map((s, i) => {
    const b = bd[i] || {};
    const used = metrics.peak_memory_gib?.[i];
    const cap = metrics.memory_capacity_gib?.[i];
    const frac = Number.isFinite(used) && cap > 0 ? used / cap : NaN;
    const level = frac > 1 - margin ? 'high' : frac > 0.8 ? 'mid' : 'ok';
    const gpus = (s.tp ?? plan.tp ?? 1) * (s.cp ?? plan.cp ?? 1) * (s.dp ?? plan.dp ?? 1);
    const comm = COMM_KEYS.reduce((a, k) => a + (Number.isFinite(b[k]) ? b[k] : 0), 0);
    return `<tr><td>${i}</td><td>${esc(s.gpu)}</td><td>${esc(s.group ?? '')}</td><td>${gpus}</td>${meshCell(s)}` +
      `<td>${esc(s.layers)}</td><td>${esc(recomputeText(s.recompute))}</td>` +
      `<td class="membar-cell"><div class="membar ${level}" role="meter" aria-valuemin="0" aria-valuemax="${fixed(cap, 2)}"` +
      ` aria-valuenow="${fixed(used, 2)}" aria-label="Stage ${i} memory"><span style="width:${Number.isFinite(frac) ? Math.min(100, frac * 100).toFixed(1) : 0}%"></span></div>` +
      `<span class="membar-text">${fixed(used, 2)} / ${fixed(cap, 2)}${level === 'high' ? ` <span class="flag-tight">⚠ &gt;${fixed((1 - margin) * 100, 0)}%</span>` : ''}</span></td>` +
      `<td>${fixed(b.reserved_gib, 2)}</td><td class="c-params">${params(b.parameters)}</td><td>${ms(b.forward_s)}</td><td>${ms(b.backward_s)}</td><td>${ms(comm)}</td>` +
      (profiled ? `<td class="profile-terms">${esc(profileText(b))}</td>` : '') + '</tr>';
  }).join('');
  return `<table class="data stages"><caption>Pipeline stages (stage 0 holds the embedding)</caption><thead><tr>` +
    '<th scope="col">Stage</th><th scope="col">GPU</th><th scope="col">Group</th><th scope="col">GPUs</th>' +
    (hetero ? '<th scope="col" title="This stage\'s FlagScale process mesh">Mesh</th>' : '') +
    '<th scope="col">Layers</th><th scope="col">Recompute</th><th scope="col" class="mem-col">Memory <span class="unit">GiB used / capacity</span></th>' +
    '<th scope="col">Reserved <span class="unit">GiB (runtime, NCCL)</span></th>' +
    '<th scope="col" title="Parameters this stage holds (its layers; the embedding on the first stage, the output layer and MTP on the last), all ranks of the stage together">Params <span class="unit">count</span></th>' +
    '<th scope="col" title="Forward compute per micro-batch">Fwd <span class="unit">ms</span></th>' +
    '<th scope="col" title="Backward compute per micro-batch">Bwd <span class="unit">ms</span></th>' +
    '<th scope="col" title="Exposed TP+CP+EP+PP+DP communication per iteration">Comm <span class="unit">ms / iter</span></th>' +
    (profiled ? '<th scope="col" title="Terms taken from the scenario\'s profile: measured at a profiled point, or extrapolated from the nearest one (scaled by the model); the rest come from the analytical model">From profile</th>' : '') +
    `</tr></thead><tbody>${rows}</tbody></table>`;
}
