// Checks on a scenario from outside (a link or a file) before the form loads it: the format,
// and every preset id it names must exist, so nothing is silently replaced by a default.

export const SCENARIO_FORMAT = 'hapmoe.scenario/1';
export const BUNDLE_FORMAT = 'hapmoe.bundle/1';

const presetOf = (v) => (typeof v === 'string' ? v : v && typeof v === 'object' ? v.preset : undefined);

/** Returns the sentences naming each preset id the scenario uses that presets lacks. */
export function unknownPresets(scenario, presets) {
  const out = [];
  const check = (path, id, table, kind) => {
    if (id != null && !Object.prototype.hasOwnProperty.call(table, id)) out.push(`${path}: unknown ${kind} preset "${String(id).slice(0, 80)}"`);
  };
  check('model', presetOf(scenario.model), presets.models, 'model');
  check('cluster', presetOf(scenario.cluster), presets.clusters, 'cluster');
  const groups = scenario.cluster && typeof scenario.cluster === 'object' ? scenario.cluster.groups : null;
  if (Array.isArray(groups)) {
    groups.forEach((g, i) => check(`cluster.groups[${i}].gpu`, presetOf(g?.gpu), presets.gpus, 'GPU'));
  }
  return out;
}

/**
 * Picks the scenario out of a parsed file: a scenario (format hapmoe.scenario/1) or the page's
 * download bundle ({format: hapmoe.bundle/1, scenario, result}). Throws with the reason otherwise.
 */
export function scenarioFromFile(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('it is not a JSON object');
  const s = value.format === BUNDLE_FORMAT ? value.scenario : value;
  if (!s || typeof s !== 'object' || Array.isArray(s)) throw new Error('its "scenario" is not an object');
  if (s.format !== SCENARIO_FORMAT) {
    const got = s.format === undefined ? 'no "format" field' : `"format": ${JSON.stringify(String(s.format).slice(0, 60))}`;
    throw new Error(`it has ${got}, a scenario has "format": "${SCENARIO_FORMAT}"`);
  }
  const missing = ['model', 'cluster', 'training'].filter((k) => s[k] == null);
  if (missing.length) throw new Error(`it has no ${missing.map((k) => `"${k}"`).join(', ')}`);
  return s;
}
