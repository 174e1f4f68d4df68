// Time against cost: pure functions from the core's Pareto front (result.pareto: the plans no
// other plan beats on both iteration time and USD per million tokens, fastest first) to an SVG
// chart whose points are keyboard-focusable buttons, and to a table of the same points.
import { esc, fixed, int, usd } from './format.js';
import { niceStep } from './memory-chart.js';

/** Where a front point is among the plans: "plan #3 in the table" or "not in the top k". */
export function pointPlace(point) {
  return Number.isInteger(point.plan_index) ? `plan #${point.plan_index + 1} in the table` : 'not in the top k';
}

/** A front point in words: its time, cost, cost per hour, GPUs and place. k counts from 0. */
export function pointLabel(point, k) {
  return `Pareto point ${k + 1}: ${fixed(point.iteration_time_s, 3)} s per iteration, ${usd(point.cost_per_million_tokens)} per million tokens, ` +
    `${usd(point.cost_per_hour)} per hour, ${int(point.gpus_used)} GPUs; ${pointPlace(point)}`;
}

/** [low, high] around values with some room on each side (a lone value gets ±10 %). */
function domain(values) {
  const lo = Math.min(...values), hi = Math.max(...values);
  const pad = hi > lo ? (hi - lo) * 0.1 : Math.abs(lo) * 0.1 || 1;
  return [Math.max(0, lo - pad), hi + pad];
}

/** Tick values from lo to hi, about n of them, on a round step; and the decimals they need. */
function ticks(lo, hi, n = 5) {
  const step = niceStep((hi - lo) / n);
  const digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(v);
  return { values: out, digits };
}

/**
 * points: result.pareto (each {iteration_time_s, cost_per_million_tokens, cost_per_hour,
 * gpus_used, plan_index}); selected: the index of the highlighted point, or -1. Returns an SVG
 * string: x = iteration time (s), y = USD per million tokens; each point a <g role="button">
 * with data-point = its index, focusable, named by pointLabel.
 */
export function paretoChartSvg(points, selected = -1, { width = 640, height = 300 } = {}) {
  const left = 64, right = 24, top = 30, bottom = 44;
  const plotW = width - left - right, plotH = height - top - bottom;
  const [x0, x1] = domain(points.map((p) => p.iteration_time_s));
  const [y0, y1] = domain(points.map((p) => p.cost_per_million_tokens));
  const x = (v) => left + ((v - x0) / (x1 - x0)) * plotW;
  const y = (v) => top + plotH - ((v - y0) / (y1 - y0)) * plotH;
  let out = '';
  const xt = ticks(x0, x1), yt = ticks(y0, y1);
  for (const v of xt.values) {
    out += `<line x1="${x(v).toFixed(1)}" x2="${x(v).toFixed(1)}" y1="${top}" y2="${top + plotH}" class="grid"/>` +
      `<text x="${x(v).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle" class="tick">${fixed(v, xt.digits)}</text>`;
  }
  for (const v of yt.values) {
    out += `<line x1="${left}" x2="${left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" class="grid"/>` +
      `<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" class="tick">${fixed(v, Math.max(2, yt.digits))}</text>`;
  }
  // The front as a staircase: between two points, no plan is both faster and cheaper.
  const stairs = points.map((p, k) => `${k ? `H${x(p.iteration_time_s).toFixed(1)}V` : `M${x(p.iteration_time_s).toFixed(1)} `}${y(p.cost_per_million_tokens).toFixed(1)}`).join('');
  if (points.length > 1) out += `<path d="${stairs}" class="front"/>`;
  points.forEach((p, k) => {
    const cx = x(p.iteration_time_s).toFixed(1), cy = y(p.cost_per_million_tokens).toFixed(1);
    const label = esc(pointLabel(p, k));
    const inTop = Number.isInteger(p.plan_index);
    out += `<g class="pt${k === selected ? ' selected' : ''}" role="button" tabindex="0" data-point="${k}" aria-label="${label}"` +
      `${k === selected ? ' aria-current="true"' : ''}><title>${label}</title>` +
      `<circle cx="${cx}" cy="${cy}" r="13" class="ring"/>` +
      `<circle cx="${cx}" cy="${cy}" r="7" class="${inTop ? 'in-top' : 'off-top'}"/>` +
      (points.length <= 12 ? `<text x="${(+cx + 15).toFixed(1)}" y="${(+cy - 8).toFixed(1)}" class="pt-label">${k + 1}</text>` : '') + '</g>';
  });
  out += `<text x="${left + plotW / 2}" y="${height - 6}" text-anchor="middle" class="axis">iteration time (s)</text>` +
    `<text transform="translate(14 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis">USD per million tokens (your prices)</text>`;
  // The legend from the left edge, each item as wide as its text (fits 320 px).
  let lx = 8;
  for (const [cls, r, text] of [['in-top', 5, 'in the table'], ['off-top', 5, 'not in the top k'], ['ring legend-ring', 7, 'selected']]) {
    out += `<circle cx="${lx + 7}" cy="14" r="${r}" class="${cls}"/><text x="${lx + 18}" y="18" class="legend">${text}</text>`;
    lx += 26 + text.length * 6.2;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart pareto-chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" ` +
    `role="group" aria-label="Pareto front: iteration time in seconds against USD per million tokens, ${points.length} plans; select a point to show its plan">` +
    `<title>Pareto front: iteration time (s) against USD per million tokens (your prices)</title>${out}</svg>`;
}

/** The front as a table (for screen readers and small screens): one row per point, each with a Show button (data-point). */
export function paretoTableMarkup(points, selected = -1) {
  const rows = points.map((p, k) => `<tr${k === selected ? ' class="selected"' : ''} data-point-row="${k}"><td>${k + 1}</td>` +
    `<td>${fixed(p.iteration_time_s, 3)}</td><td>${int(p.tokens_per_s)}</td><td>${usd(p.cost_per_hour)}</td>` +
    `<td>${usd(p.cost_per_million_tokens)}</td><td>${int(p.gpus_used)}</td><td class="c-place">${esc(pointPlace(p))}</td>` +
    `<td><button type="button" class="secondary" data-point="${k}" aria-label="Show Pareto point ${k + 1}"${k === selected ? ' aria-current="true"' : ''}>Show</button></td></tr>`).join('');
  return `<table class="data pareto"><caption>Pareto front (your prices)</caption>` +
    '<thead><tr><th scope="col">Point</th><th scope="col">Iteration <span class="unit">s</span></th><th scope="col">Tokens <span class="unit">per s</span></th>' +
    '<th scope="col">Cost <span class="unit">$/hour</span></th><th scope="col">Cost <span class="unit">$/M tokens</span></th>' +
    '<th scope="col">GPUs <span class="unit">used</span></th><th scope="col">Plan</th><th scope="col"><span class="sr-only">Select</span></th></tr></thead>' +
    `<tbody>${rows}</tbody></table>`;
}
