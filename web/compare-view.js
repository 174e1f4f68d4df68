// Side-by-side comparison of two entries (plans or baselines) with the per-term differences
// taken from the core's breakdowns: what makes one faster or smaller than the other.
import { esc, fixed, ms, percent, maxOf } from './format.js';
import { planLabel, baselineName, memoryHeadroom } from './plans-table.js';

const stageMax = (e, key) => maxOf((e.breakdown?.stages || []).map((s) => s[key]));
const stageMaxOf = (e, fn) => maxOf((e.breakdown?.stages || []).map(fn));

/** Terms compared: label, unit, value(entry), text(value), lowerIsBetter. */
export const TERMS = [
  { label: 'Iteration time', unit: 's', value: (e) => e.metrics?.iteration_time_s, text: (v) => fixed(v, 3) },
  { label: 'Pipeline (forward + backward of all micro-batches)', unit: 's', value: (e) => e.breakdown?.pipeline_s, text: (v) => fixed(v, 3) },
  { label: 'Tail after the pipeline (gradient sync, optimizer)', unit: 's', value: (e) => e.breakdown?.tail_s, text: (v) => fixed(v, 3) },
  { label: 'Compute per micro-batch, slowest stage', unit: 'ms', value: (e) => stageMaxOf(e, (s) => (s.forward_s ?? 0) + (s.backward_s ?? 0)), text: (v) => ms(v) },
  ...[['tp', 'TP'], ['cp', 'CP'], ['ep', 'EP all-to-all'], ['pp', 'PP send/receive'], ['dp', 'DP gradient']].map(([k, name]) => (
    { label: `${name} communication, slowest stage (exposed, per iteration)`, unit: 'ms', value: (e) => stageMax(e, `${k}_comm_s`), text: (v) => ms(v) })),
  { label: 'Optimizer step, slowest stage', unit: 'ms', value: (e) => stageMax(e, 'optimizer_s'), text: (v) => ms(v) },
  { label: 'Pipeline bubble', unit: '%', value: (e) => e.metrics?.bubble_fraction, text: (v) => percent(v) },
  { label: 'Peak memory per GPU, fullest stage', unit: 'GiB', value: (e) => maxOf(e.metrics?.peak_memory_gib), text: (v) => fixed(v, 2) },
  { label: 'Memory headroom, tightest stage', unit: 'GiB', value: (e) => memoryHeadroom(e.metrics).freeGib, text: (v) => fixed(v, 2), higherIsBetter: true },
];

/** The entries one may compare: plans then baselines, as [{id, label, entry}]. */
export function compareChoices(result) {
  const plans = (result.plans || []).map((p, i) => ({ id: `p${i}`, label: `Plan #${i + 1}: ${planLabel(p.plan)}`, entry: p }));
  const base = Object.entries(result.baselines || {}).filter(([, b]) => b?.metrics)
    .map(([name, b]) => ({ id: `b:${name}`, label: `Baseline: ${baselineName(name)}`, entry: b }));
  return [...plans, ...base];
}

/** Table markup comparing entries a and b term by term (difference b - a). */
export function compareTableMarkup(a, b) {
  const rows = TERMS.map((t) => {
    const va = t.value(a), vb = t.value(b);
    const d = Number.isFinite(va) && Number.isFinite(vb) ? vb - va : NaN;
    const better = t.higherIsBetter ? d > 0 : d < 0;
    const cls = !Number.isFinite(d) || Math.abs(d) < 1e-12 ? '' : better ? 'better' : 'worse';
    const sign = d > 0 ? '+' : '';
    return `<tr><th scope="row">${esc(t.label)} <span class="unit">${esc(t.unit)}</span></th><td>${t.text(va)}</td><td>${t.text(vb)}</td>` +
      `<td class="${cls}">${Number.isFinite(d) ? sign + t.text(d) : '—'}</td></tr>`;
  }).join('');
  return `<table class="data compare-terms"><caption>Per-term comparison (B − A; green: B better)</caption><thead><tr>` +
    '<th scope="col">Term</th><th scope="col">A</th><th scope="col">B</th><th scope="col">B − A</th></tr></thead>' +
    `<tbody>${rows}</tbody></table>`;
}

/** Creates the compare panel in container; render(result) fills it, pick(a, b) sets entries. */
export function createCompareView(container) {
  let choices = [];
  container.classList.add('compare');
  container.innerHTML = '<h3>Compare</h3><div class="plans-tools">' +
    '<label>A <select class="cmp-a" aria-label="Compare A"></select></label>' +
    '<label>B <select class="cmp-b" aria-label="Compare B"></select></label></div><div class="table-wrap cmp-table" tabindex="0" role="region" aria-label="Comparison (scrolls sideways)"></div>';
  const [selA, selB] = [container.querySelector('.cmp-a'), container.querySelector('.cmp-b')];
  const table = container.querySelector('.cmp-table');
  const draw = () => {
    const a = choices.find((c) => c.id === selA.value), b = choices.find((c) => c.id === selB.value);
    table.innerHTML = a && b ? compareTableMarkup(a.entry, b.entry) : '';
  };
  selA.addEventListener('change', draw);
  selB.addEventListener('change', draw);
  return {
    render(result) {
      choices = compareChoices(result);
      container.hidden = choices.length < 2;
      for (const sel of [selA, selB]) sel.replaceChildren(...choices.map((c) => new Option(c.label, c.id)));
      selA.value = 'p0';
      selB.value = choices.find((c) => c.id === 'b:megatron_default')?.id ?? choices[1]?.id ?? 'p0';
      draw();
    },
    /** Compares plan indexes [i] (against B as is) or [i, j]. */
    pick(indexes) {
      if (indexes[0] != null) selA.value = `p${indexes[0]}`;
      if (indexes[1] != null) selB.value = `p${indexes[1]}`;
      draw();
    },
  };
}
