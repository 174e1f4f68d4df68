// Timeline chart: pure function from the core's schedule of one plan (api timeline(), see
// docs/scenario.md "Timeline") to an SVG string. Nothing is simulated here: every op, idle gap
// and tail is where the core put it, and the axis ends at the core's iteration time.
import { esc, fixed, percent } from './format.js';
import { niceStep, stageLabel } from './memory-chart.js';

const COLORS = { F: ['#4e79a7', '#7aa0c8', '#a5c1de', '#cddcec'], B: ['#59a14f', '#83bf7a', '#aad4a3', '#d0e8cb'] };
const BUSY = '#8c8fa3';
const TAIL = { dp: '#b07aa1', optimizer: '#f28e2b' };
const KIND = { F: 'Forward', B: 'Backward' };

/** A stage's ops as [kind, chunk, mb, start_s, end_s, comm_s] from the core's columns. */
export function stageOps(stage) {
  const kinds = stage.kinds || '';
  const out = new Array(kinds.length);
  for (let k = 0; k < kinds.length; k++) {
    const f = kinds[k] === 'F';
    const start = stage.starts_s[k];
    out[k] = [kinds[k], stage.chunks[k], stage.microbatches[k], start, start + (f ? stage.forward_op_s : stage.backward_op_s),
      f ? stage.forward_comm_op_s : stage.backward_comm_op_s];
  }
  return out;
}

/** Width in px that keeps the shortest op about 5 px wide (64+ micro-batches stay legible). */
function chartWidth(timeline, minWidth, margins) {
  let shortest = Infinity;
  for (const s of timeline.stages) {
    for (const d of [s.forward_op_s, s.backward_op_s]) if (d > 0 && (s.kinds || '').length) shortest = Math.min(shortest, d);
  }
  const span = timeline.iteration_s;
  if (!Number.isFinite(shortest) || !(span > 0)) return { width: minWidth, shortest };
  return { width: Math.min(6000, Math.max(minWidth, margins + Math.ceil(5 * span / shortest))), shortest };
}

/**
 * timeline: the core's timeline (docs/scenario.md "Timeline"): {iteration_s, pipeline_s,
 * bubble_fraction, num_microbatches, vpp, stages: [{gpu, kinds, chunks, microbatches, starts_s,
 * forward_op_s, backward_op_s, forward_comm_op_s, backward_comm_op_s, tail}]}.
 * Returns an SVG string whose data-iteration-s and data-bubble-fraction are the core's values.
 */
export function timelineChartSvg(timeline, { width: minWidth = 760 } = {}) {
  const rowH = 22, gap = 6, left = 120, right = 16, top = 30, bottom = 36;
  const stages = timeline.stages || [];
  const p = stages.length, m = timeline.num_microbatches, vpp = timeline.vpp || 1;
  const { width, shortest } = chartWidth(timeline, minWidth, left + right);
  const height = top + p * (rowH + gap) - gap + bottom;
  const plotW = width - left - right;
  const span = timeline.iteration_s > 0 ? timeline.iteration_s : 1;
  const x = (t) => left + (t / span) * plotW;
  const rowY = (r) => top + r * (rowH + gap);
  // With too many ops for their width, draw busy runs instead of single ops.
  const coarse = Number.isFinite(shortest) && (shortest / span) * plotW < 2.5;
  let out = '';
  const step = niceStep(span / Math.max(6, plotW / 120));  // a labelled tick every ~120 px
  const digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
  for (let t = 0; t <= span * 1.0001; t += step) {
    out += `<line x1="${x(t)}" x2="${x(t)}" y1="${top - 4}" y2="${height - bottom}" class="grid"/>` +
      `<text x="${x(t)}" y="${height - bottom + 16}" text-anchor="middle" class="tick">${fixed(t, digits)}</text>`;
  }
  stages.forEach((s, r) => {
    out += `<rect x="${left}" y="${rowY(r)}" width="${plotW}" height="${rowH}" class="idle"/>` +
      `<text x="${left - 8}" y="${rowY(r) + rowH / 2 + 4}" text-anchor="end" class="label">${stageLabel(r, s.gpu)}</text>`;
  });
  stages.forEach((s, r) => {
    const ops = stageOps(s);
    if (coarse) {
      const runs = [];
      for (const o of ops) {
        const last = runs.at(-1);
        if (last && x(o[3]) - x(last.end) < 0.75) last.end = o[4]; else runs.push({ start: o[3], end: o[4] });
      }
      const d = runs.map((u) => `M${x(u.start).toFixed(2)} ${rowY(r)}h${Math.max(0.5, x(u.end) - x(u.start)).toFixed(2)}v${rowH}H${x(u.start).toFixed(2)}Z`).join('');
      if (d) out += `<path d="${d}" fill="${BUSY}"/>`;
    } else {
      for (const [kind, chunk, mb, start, end, comm] of ops) {
        const w = x(end) - x(start);
        out += `<rect x="${x(start).toFixed(2)}" y="${rowY(r)}" width="${Math.max(0.5, w - 0.5).toFixed(2)}" height="${rowH}" fill="${COLORS[kind][Math.min(chunk, 3)]}">` +
          `<title>${KIND[kind]} micro-batch ${mb}${vpp > 1 ? ` chunk ${chunk}` : ''}: ${fixed(start, 4)}–${fixed(end, 4)} s, of which exposed communication ${fixed(comm, 4)} s</title></rect>`;
        const cw = x(end) - x(end - comm);
        if (cw >= 1) out += `<rect x="${(x(end) - cw).toFixed(2)}" y="${rowY(r) + rowH - 5}" width="${Math.max(0.5, cw - 0.5).toFixed(2)}" height="5" class="comm"/>`;
        if (w >= 16) out += `<text x="${x(start) + w / 2}" y="${rowY(r) + rowH / 2 + 4}" text-anchor="middle" class="op">${mb}</text>`;
      }
    }
    const t = s.tail || {};
    const parts = [['dp', t.dp_s, 'Exposed data-parallel communication'], ['optimizer', t.optimizer_s, 'Optimizer step']];
    let at = t.start_s;
    for (const [key, secs, label] of parts) {
      if (!(secs > 0)) continue;
      out += `<rect x="${x(at).toFixed(2)}" y="${rowY(r)}" width="${Math.max(0.5, x(at + secs) - x(at)).toFixed(2)}" height="${rowH}" class="tail" style="fill:${TAIL[key]}">` +
        `<title>${label}: ${fixed(at, 4)}–${fixed(at + secs, 4)} s</title></rect>`;
      at += secs;
    }
  });
  out += `<line x1="${x(timeline.iteration_s)}" x2="${x(timeline.iteration_s)}" y1="${top - 4}" y2="${height - bottom}" class="end-line"/>`;
  const legend = [...(coarse ? [[BUSY, 'Forward + backward']] : [[COLORS.F[0], 'Forward'], [COLORS.B[0], 'Backward']]),
    [TAIL.dp, 'DP comm.'], [TAIL.optimizer, 'Optimizer'], [null, 'Idle (bubble)']];
  let lx = left;
  for (const [color, label] of legend) {
    out += `<rect x="${lx}" y="8" width="12" height="12" ${color ? `style="fill:${color}"` : 'class="idle"'}/>` +
      `<text x="${lx + 16}" y="18" class="legend">${label}</text>`;
    lx += 28 + label.length * 6.5;
  }
  out += `<text x="${lx + 8}" y="18" class="legend">bubble ${percent(timeline.bubble_fraction)}%</text>`;
  out += `<text x="${left}" y="${height - 4}" class="axis">time (s): the planner's schedule, ${m} micro-batches` +
    `${vpp > 1 ? `, ${vpp} virtual stages` : ''}; iteration ${fixed(timeline.iteration_s, 3)} s = pipeline ${fixed(timeline.pipeline_s, 3)} s + tail</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart timeline-chart" viewBox="0 0 ${width} ${height}" ` +
    `width="${width}" height="${height}" role="img" aria-label="Pipeline schedule timeline" ` +
    `data-iteration-s="${esc(timeline.iteration_s)}" data-bubble-fraction="${esc(timeline.bubble_fraction)}">${out}</svg>`;
}
