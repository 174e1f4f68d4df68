// Timeline chart: pure function from per-stage micro-batch times to an SVG string showing the
// 1F1B (or interleaved) schedule; idle gaps are the pipeline bubbles.
import { simulatePipeline } from './pipeline-schedule.js';
import { esc, fixed } from './format.js';
import { niceStep, stageLabel } from './memory-chart.js';

const COLORS = { F: ['#4e79a7', '#7aa0c8', '#a5c1de', '#cddcec'], B: ['#59a14f', '#83bf7a', '#aad4a3', '#d0e8cb'] };
const BUSY = '#8c8fa3';

/**
 * stages: [{gpu, forward_s, backward_s}] (per micro-batch), m micro-batches, vpp chunks.
 * Returns an SVG string.
 */
export function timelineChartSvg(stages, m, vpp = 1, { width: minWidth = 760 } = {}) {
  let width = minWidth;
  const fwd = stages.map((s) => Number(s.forward_s) || 0);
  const bwd = stages.map((s) => Number(s.backward_s) || 0);
  const { ops, makespan, bubbleFraction } = simulatePipeline(fwd, bwd, Math.max(1, m | 0), Math.max(1, vpp | 0));
  const rowH = 22, gap = 6, left = 120, right = 16, top = 30, bottom = 36;
  const p = stages.length;
  // Wide enough that each micro-batch op keeps a few pixels (64+ micro-batches stay legible).
  const shortest = ops.reduce((a, o) => (o.end - o.start > 0 ? Math.min(a, o.end - o.start) : a), Infinity);
  if (Number.isFinite(shortest) && makespan > 0) width = Math.min(4000, Math.max(width, left + right + Math.ceil(5 * makespan / shortest)));
  const height = top + p * (rowH + gap) - gap + bottom;
  const plotW = width - left - right;
  const span = makespan || 1;
  const x = (t) => left + (t / span) * plotW;
  const rowY = (r) => top + r * (rowH + gap);
  // With too many ops for their width, draw busy runs instead of single ops.
  const coarse = Number.isFinite(shortest) && (shortest / span) * plotW < 2.5;
  let out = '';
  const step = niceStep(span / 6);
  const digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
  for (let t = 0; t <= span * 1.0001; t += step) {
    out += `<line x1="${x(t)}" x2="${x(t)}" y1="${top - 4}" y2="${height - bottom}" class="grid"/>` +
      `<text x="${x(t)}" y="${height - bottom + 16}" text-anchor="middle" class="tick">${fixed(t, digits)}</text>`;
  }
  for (let r = 0; r < p; r++) {
    out += `<rect x="${left}" y="${rowY(r)}" width="${plotW}" height="${rowH}" class="idle"/>` +
      `<text x="${left - 8}" y="${rowY(r) + rowH / 2 + 4}" text-anchor="end" class="label">${stageLabel(r, stages[r].gpu)}</text>`;
  }
  if (coarse) {
    const runs = new Map();
    for (const o of [...ops].sort((a, b) => a.rank - b.rank || a.start - b.start)) {
      const list = runs.get(o.rank) || runs.set(o.rank, []).get(o.rank);
      const last = list.at(-1);
      if (last && x(o.start) - x(last.end) < 0.75) last.end = o.end; else list.push({ start: o.start, end: o.end });
    }
    for (const [r, list] of runs) {
      const d = list.map((s) => `M${x(s.start).toFixed(2)} ${rowY(r)}h${Math.max(0.5, x(s.end) - x(s.start)).toFixed(2)}v${rowH}H${x(s.start).toFixed(2)}Z`).join('');
      out += `<path d="${d}" fill="${BUSY}"/>`;
    }
  } else {
    for (const o of ops) {
      const w = x(o.end) - x(o.start);
      const fill = COLORS[o.kind][Math.min(o.chunk, 3)];
      out += `<rect x="${x(o.start).toFixed(2)}" y="${rowY(o.rank)}" width="${Math.max(0.5, w - 0.5).toFixed(2)}" height="${rowH}" fill="${fill}">` +
        `<title>${o.kind === 'F' ? 'Forward' : 'Backward'} micro-batch ${o.mb}${vpp > 1 ? ` chunk ${o.chunk}` : ''}: ${fixed(o.start, 3)}–${fixed(o.end, 3)} s</title></rect>`;
      if (w >= 16) out += `<text x="${x(o.start) + w / 2}" y="${rowY(o.rank) + rowH / 2 + 4}" text-anchor="middle" class="op">${o.mb}</text>`;
    }
  }
  const legend = coarse
    ? [[BUSY, 'Compute (forward + backward)']]
    : [[COLORS.F[0], 'Forward'], [COLORS.B[0], 'Backward']];
  let lx = left;
  for (const [color, label] of [...legend, [null, 'Idle (bubble)']]) {
    out += `<rect x="${lx}" y="8" width="12" height="12" ${color ? `fill="${color}"` : 'class="idle"'}/>` +
      `<text x="${lx + 16}" y="18" class="legend">${label}</text>`;
    lx += 28 + label.length * 6.5;
  }
  out += `<text x="${lx + 8}" y="18" class="legend">bubble ${fixed(bubbleFraction * 100, 1)}%</text>`;
  out += `<text x="${left + plotW / 2}" y="${height - 4}" text-anchor="middle" class="axis">time (s): simulated schedule, compute only, ${m} micro-batches${vpp > 1 ? `, ${vpp} virtual stages` : ''}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart timeline-chart" viewBox="0 0 ${width} ${height}" ` +
    `width="${width}" height="${height}" role="img" aria-label="Pipeline schedule timeline">${out}</svg>`;
}
