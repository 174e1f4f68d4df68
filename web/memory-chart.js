// Memory chart: pure function from per-stage memory breakdown to an SVG string.
// One stacked bar per stage (weights, gradients, optimizer, activations, reserved) and a
// capacity tick per stage.
import { esc, fixed } from './format.js';

export const MEMORY_PARTS = [
  { key: 'weights_gib', label: 'Weights', color: '#4e79a7' },
  { key: 'gradients_gib', label: 'Gradients', color: '#76b7b2' },
  { key: 'optimizer_state_gib', label: 'Optimizer state', color: '#59a14f' },
  { key: 'activations_gib', label: 'Activations', color: '#f28e2b' },
  { key: 'reserved_gib', label: 'Reserved', color: '#bab0ac' },
];

/**
 * stages: [{gpu, weights_gib, ...}], capacities: GiB per stage. Returns an SVG string.
 * Bars are horizontal so many stages stay readable.
 */
export function memoryChartSvg(stages, capacities, { width = 640 } = {}) {
  const rowH = 22, gap = 8, left = 120, right = 44, top = 34, bottom = 34;
  const n = stages.length;
  const height = top + n * (rowH + gap) - gap + bottom;
  const totals = stages.map((s) => MEMORY_PARTS.reduce((a, p) => a + (Number(s[p.key]) || 0), 0));
  const maxVal = Math.max(1, ...totals, ...capacities.filter(Number.isFinite)) * 1.05;
  const plotW = width - left - right;
  const x = (v) => left + (v / maxVal) * plotW;
  const step = niceStep(maxVal / 5);
  let out = '';
  const digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
  for (let v = 0; v <= maxVal; v += step) {
    out += `<line x1="${x(v)}" x2="${x(v)}" y1="${top - 4}" y2="${height - bottom}" class="grid"/>` +
      `<text x="${x(v)}" y="${height - bottom + 16}" text-anchor="middle" class="tick">${fixed(v, digits)}</text>`;
  }
  stages.forEach((s, i) => {
    const y = top + i * (rowH + gap);
    let acc = 0;
    out += `<text x="${left - 8}" y="${y + rowH / 2 + 4}" text-anchor="end" class="label">${stageLabel(i, s.gpu)}</text>`;
    for (const p of MEMORY_PARTS) {
      const v = Number(s[p.key]) || 0;
      if (v > 0) {
        out += `<rect x="${x(acc)}" y="${y}" width="${Math.max(0, x(acc + v) - x(acc))}" height="${rowH}" fill="${p.color}">` +
          `<title>${esc(`Stage ${i} ${p.label}: ${fixed(v, 2)} GiB`)}</title></rect>`;
      }
      acc += v;
    }
    const cap = capacities[i];
    if (Number.isFinite(cap)) {
      out += `<line x1="${x(cap)}" x2="${x(cap)}" y1="${y - 3}" y2="${y + rowH + 3}" class="capacity"><title>Capacity ${fixed(cap, 2)} GiB</title></line>`;
    }
    out += `<text x="${x(acc) + 4}" y="${y + rowH / 2 + 4}" class="value">${fixed(acc, 2)}</text>`;
  });
  out += `<text x="${left + plotW / 2}" y="${height - 4}" text-anchor="middle" class="axis">GiB per GPU</text>`;
  let lx = left;
  for (const p of [...MEMORY_PARTS, { label: 'Capacity', color: null }]) {
    out += p.color
      ? `<rect x="${lx}" y="8" width="12" height="12" fill="${p.color}"/>`
      : `<line x1="${lx + 6}" x2="${lx + 6}" y1="6" y2="22" class="capacity"/>`;
    out += `<text x="${lx + 16}" y="18" class="legend">${p.label}</text>`;
    lx += 22 + p.label.length * 6.5;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart memory-chart" viewBox="0 0 ${width} ${height}" ` +
    `width="${width}" height="${height}" role="img" aria-label="Memory per GPU by stage">${out}</svg>`;
}

/** A round step (1, 2 or 5 times a power of ten) near raw. */
export function niceStep(raw) {
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/** Stage label markup that fits the 120 px label column: "S3 ascend-910b", cut with an ellipsis
 * (the full text stays in a tooltip). */
export function stageLabel(i, gpu) {
  const full = `S${i} ${gpu ?? ''}`.trim();
  const short = full.length > 17 ? `${full.slice(0, 16)}…` : full;
  return `${esc(short)}<title>${esc(full)}</title>`;
}
