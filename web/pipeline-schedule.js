// Pipeline schedule simulation (pure): Megatron's 1F1B, interleaved when vpp > 1.
// Each rank runs its ops in Megatron's fixed order; an op starts when its rank is free and
// its dependency (previous virtual stage's forward / next one's backward) has finished.

/** Megatron's per-rank op order: [{kind: 'F'|'B', chunk, mb}]. */
export function rankOrder(rank, p, m, v) {
  const group = p; // micro-batches per interleaving group
  const fwd = [], bwd = [];
  const rounds = Math.ceil(m / group) * group * v;
  for (let k = 0; k < rounds; k++) {
    const mb = Math.floor(k / (group * v)) * group + (k % group);
    if (mb >= m) continue;
    const c = Math.floor(k / group) % v;
    fwd.push({ kind: 'F', chunk: c, mb });
    bwd.push({ kind: 'B', chunk: v - 1 - c, mb });
  }
  const total = fwd.length;
  const warmup = v === 1 ? Math.min(p - rank - 1, total) : Math.min((p - rank - 1) * 2 + (v - 1) * p, total);
  const order = fwd.slice(0, warmup);
  for (let i = 0; i < total - warmup; i++) order.push(fwd[warmup + i], bwd[i]);
  return order.concat(bwd.slice(total - warmup));
}

/**
 * Simulates the schedule. fwd[i], bwd[i]: per-micro-batch compute seconds of stage i (whole
 * stage, split evenly over its vpp chunks); m micro-batches; v = vpp.
 * Returns {ops: [{rank, kind, chunk, mb, start, end}], makespan, bubbleFraction}.
 */
export function simulatePipeline(fwd, bwd, m, v = 1) {
  const p = fwd.length;
  const nv = p * v;
  const fEnd = new Float64Array(nv * m).fill(NaN);
  const bEnd = new Float64Array(nv * m).fill(NaN);
  const orders = fwd.map((_, r) => rankOrder(r, p, m, v));
  const next = new Array(p).fill(0);
  const free = new Array(p).fill(0);
  const ops = [];
  let progress = true;
  while (progress) {
    progress = false;
    for (let r = 0; r < p; r++) {
      for (;;) {
        const op = orders[r][next[r]];
        if (!op) break;
        const vs = op.chunk * p + r;
        let dep;
        if (op.kind === 'F') dep = vs === 0 ? 0 : fEnd[(vs - 1) * m + op.mb];
        else dep = vs === nv - 1 ? fEnd[vs * m + op.mb] : bEnd[(vs + 1) * m + op.mb];
        if (Number.isNaN(dep)) break;
        const start = Math.max(free[r], dep);
        const end = start + (op.kind === 'F' ? fwd[r] : bwd[r]) / v;
        (op.kind === 'F' ? fEnd : bEnd)[vs * m + op.mb] = end;
        free[r] = end;
        ops.push({ rank: r, kind: op.kind, chunk: op.chunk, mb: op.mb, start, end });
        next[r]++;
        progress = true;
      }
    }
  }
  const makespan = Math.max(0, ...free);
  const busy = ops.reduce((a, o) => a + (o.end - o.start), 0);
  return { ops, makespan, bubbleFraction: makespan > 0 ? 1 - busy / (p * makespan) : 0 };
}
