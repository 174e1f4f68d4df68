// Structure and invariants of a `reproduce` result (hapmoe.reproduce/1), shared by the CLI check,
// the wasm test and the browser test. checkReproduce(result) returns a list of failures (empty =
// all hold). Numbers in the JSON are rounded to 6 significant digits, hence the tolerances.
const REL = 2e-5;

const near = (a, b, rel = REL) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b));

export function checkReproduce(r, { models, clusters } = {}) {
  const fail = [];
  const expect = (cond, msg) => { if (!cond) fail.push(msg); };
  expect(r.format === 'hapmoe.reproduce/1' && r.ok === true, 'format/ok');
  const ids = r.columns.map((c) => c.id);
  expect(new Set(ids).size === ids.length, 'column ids unique');
  if (models && clusters) expect(r.rows.length === models.length * clusters.length, `rows: ${r.rows.length}`);
  for (const row of r.rows) {
    const at = `${row.model} ${row.cluster}`;
    expect((row.ours === null) === (row.ours_no_plan !== ''), `${at}: ours or its reason`);
    for (const col of r.columns) {
      const cell = row.columns[col.id];
      const where = `${at} ${col.id}`;
      expect(cell !== undefined, `${where}: cell present`);
      if (!cell) continue;
      expect((cell.result === null) === (cell.no_plan !== ''), `${where}: plan or its reason`);
      const both = row.ours !== null && cell.result !== null;
      expect((cell.throughput_ratio !== null) === both, `${where}: ratio iff both plans`);
      const budget = row.ours_budget_reached || cell.budget_reached;
      if (both) {
        const [num, den] = col.ratio === 'column / ours' ? [cell.result, row.ours] : [row.ours, cell.result];
        expect(near(cell.throughput_ratio, num.tokens_per_s / den.tokens_per_s, 1e-4), `${where}: ratio = tokens/s ratio`);
        if (col.subset_of_ours && !budget) {
          expect(row.ours.iteration_time_s <= cell.result.iteration_time_s * (1 + REL), `${where}: ours not slower`);
          expect(cell.throughput_ratio >= 1 - REL, `${where}: ratio >= 1`);
        }
      }
      if (col.subset_of_ours && row.ours === null && !budget) expect(cell.result === null, `${where}: subset has no plan either`);
      const off = cell.throughput_ratio !== null && cell.paper !== null && Math.abs(cell.throughput_ratio / cell.paper.value - 1);
      if (off === false || Math.abs(off - 0.3) > 1e-3) {
        const wanted = cell.paper !== null && (cell.throughput_ratio === null || off > 0.3);
        expect((cell.gap_reason !== '') === wanted, `${where}: gap reason iff paper figure and > 30% off or no ratio`);
      }
    }
    const t = (id) => row.columns[id]?.result?.iteration_time_s;
    const chain = ['even_split', 'uniform', 'megatron_default'].map(t);
    let prev = row.ours?.iteration_time_s;
    for (const [i, v] of chain.entries()) {
      if (v === undefined || prev === undefined) continue;
      expect(prev <= v * (1 + REL), `${at}: ours <= even split <= uniform <= Megatron-default (${i})`);
      prev = v;
    }
    const metis = row.columns.metis_style;
    if (metis?.result) {
      const { ep, etp } = metis.result.plan;
      expect(metis.note.startsWith(`ep ${ep}, etp ${etp} `), `${at}: Metis-style keeps the homogeneous EP/ETP`);
    }
  }
  for (const g of r.geomeans) {
    const where = `geomean ${g.model} ${g.column}`;
    const rows = r.rows.filter((row) => row.model === g.model && row.heterogeneous);
    const withRatio = rows.filter((row) => row.columns[g.column].throughput_ratio !== null);
    expect(g.of === rows.length, `${where}: of`);
    expect(JSON.stringify(g.clusters) === JSON.stringify(withRatio.map((row) => row.cluster)), `${where}: clusters`);
    if (withRatio.length === 0) {
      expect(g.value === null, `${where}: no value without rows`);
    } else {
      const mean = Math.exp(withRatio.reduce((s, row) => s + Math.log(row.columns[g.column].throughput_ratio), 0) / withRatio.length);
      expect(near(g.value, mean, 1e-4), `${where}: value ${g.value} = geomean of rows ${mean}`);
    }
    if (g.paper !== null && g.value !== null && Math.abs(Math.abs(g.value / g.paper.value - 1) - 0.3) > 1e-3) {
      expect((g.gap_reason !== '') === (Math.abs(g.value / g.paper.value - 1) > 0.3), `${where}: gap reason iff > 30% off`);
    }
  }
  // The paper's figures, in our ratio's direction.
  const table2 = (model, method) => r.paper.table2.find((x) => x.model === model && x.method === method);
  for (const g of r.geomeans.filter((x) => x.column === 'megatron_default')) {
    expect(near(g.paper.value, table2(g.model, 'hapmoe').throughput), `paper Table 2 ${g.model}`);
  }
  for (const row of r.rows) {
    const t3 = r.paper.table3.find((x) => x.cluster === row.cluster);
    const p = row.columns.even_split?.paper;
    if (row.columns.even_split) expect(t3 ? p && near(p.value, 1 / t3.throughput) : p === null, `paper Table 3 ${row.cluster}`);
  }
  return fail;
}
