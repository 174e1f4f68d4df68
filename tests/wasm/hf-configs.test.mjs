// Real Hugging Face config.json files (tests/hf-configs/, sources in its README) through the page's
// importer (web/hf-config.js) and the core's parameter count (validate's "model"): each imported
// model's total and active parameters within TOLERANCE of the sizes its publisher states, and the
// configs the core cannot model refused with the reason.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO, loadModule } from './module.mjs';
import { importHfConfig } from '../../web/hf-config.js';

const M = await loadModule();
const DIR = path.join(REPO, 'tests/hf-configs');
/** Largest relative gap to a published size: publishers round to 2-3 digits and count biases and norms their own way. */
export const TOLERANCE = 0.03;

/**
 * Published sizes in billions of parameters ([total, active, convention]); null: refused. Sources:
 * tests/hf-configs/README.md. convention 'no-embedding': the publisher's active count leaves out
 * the input embedding (a table lookup, no FLOPs) and the MTP module, so the core's
 * parameters_active is compared after taking those out.
 */
export const PUBLISHED = {
  'mixtral-8x7b': [46.7, 12.9],
  'mixtral-8x22b': [141, 39],
  'deepseek-v3': [685, 37, 'no-embedding'],  // 671 B main model + 14 B MTP module (the core counts the MTP layer)
  'deepseek-v2-lite': [15.7, 2.4, 'no-embedding'],
  'qwen3-30b-a3b': [30.5, 3.3],
  'qwen3-235b-a22b': [235, 22],
  'qwen1.5-moe-a2.7b': [14.3, 2.7],
  'llama-4-scout': [109, 17],
  'llama-4-maverick': [400, 17],
  'glm-4.5': [355, 32, 'no-embedding'],
  'gpt-oss-120b': [117, 5.1, 'no-embedding'],
  'olmoe-1b-7b': [6.9, 1.3],
  'minimax-m1-80k': null,
};

const scenario = (model) => JSON.stringify({ format: 'hapmoe.scenario/1', model, cluster: 'h100-64',
  training: { global_batch_size: 512, seq_length: 4096 } });

/** {total, active, activeNoEmbedding} in billions as the core counts the imported config. */
export function shownSize(file) {
  const { spec } = importHfConfig(JSON.parse(fs.readFileSync(path.join(DIR, `${file}.json`), 'utf8')), { name: file });
  const r = JSON.parse(M.validate(scenario(spec)));
  assert.ok(r.ok, `${file}: ${r.error?.field}: ${r.error?.message}`);
  const one = JSON.parse(M.validate(scenario({ ...spec, mtp_num_layers: 0 })));
  const embedding = spec.hidden_size * Math.ceil(spec.vocab_size / 128) * 128;  // Megatron pads the vocabulary to 128
  return { total: r.model.parameters_total / 1e9, active: r.model.parameters_active / 1e9,
    activeNoEmbedding: (one.model.parameters_active - embedding) / 1e9 };
}

test('every fixture has a published size and every published size a fixture', () => {
  const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, '')).sort();
  assert.deepEqual(files, Object.keys(PUBLISHED).sort());
});

for (const [file, sizes] of Object.entries(PUBLISHED)) {
  test(`${file}: ${sizes ? `${sizes[0]} B total, ${sizes[1]} B active within ${TOLERANCE * 100}%` : 'refused with the reason'}`, () => {
    if (!sizes) {
      assert.throws(() => importHfConfig(JSON.parse(fs.readFileSync(path.join(DIR, `${file}.json`), 'utf8'))), /cannot model .*linear/);
      return;
    }
    const shown = shownSize(file);
    const active = sizes[2] === 'no-embedding' ? shown.activeNoEmbedding : shown.active;
    console.log(`HF ${file}: published ${sizes[0]} / ${sizes[1]} B, shown ${shown.total.toFixed(2)} / ${shown.active.toFixed(2)} B` +
      ` (active without embedding and MTP ${shown.activeNoEmbedding.toFixed(2)} B)`);
    assert.ok(Math.abs(shown.total / sizes[0] - 1) <= TOLERANCE, `total ${shown.total} vs ${sizes[0]}`);
    assert.ok(Math.abs(active / sizes[1] - 1) <= TOLERANCE, `active ${active} vs ${sizes[1]}`);
  });
}
