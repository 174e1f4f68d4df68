// Scenario <-> URL hash. Format: "#s=v1." + base64url(deflate-raw(JSON)).
// The version prefix lets later formats coexist; the decoder never throws.

const PREFIX = 's=v1.';

async function pipeBytes(bytes, transform) {
  const stream = new Blob([bytes]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** Returns the hash (with leading '#') that encodes the scenario object. */
export async function encodeScenario(scenario) {
  const raw = new TextEncoder().encode(JSON.stringify(scenario));
  const packed = await pipeBytes(raw, new CompressionStream('deflate-raw'));
  return '#' + PREFIX + toBase64Url(packed);
}

/**
 * Decodes a location.hash. Returns {scenario} on success, {error} for a hash that looks
 * like ours but cannot be read, and null when there is no scenario in the hash.
 */
export async function decodeHash(hash) {
  const body = (hash || '').replace(/^#/, '');
  if (!body) return null;
  if (!body.startsWith('s=')) return null;
  if (!body.startsWith(PREFIX)) return { error: 'This link was made by a newer or unknown version of the planner.' };
  try {
    const bytes = await pipeBytes(fromBase64Url(body.slice(PREFIX.length)), new DecompressionStream('deflate-raw'));
    const scenario = JSON.parse(new TextDecoder().decode(bytes));
    if (!scenario || typeof scenario !== 'object' || Array.isArray(scenario)) throw new Error('not an object');
    return { scenario };
  } catch (err) {
    return { error: `The link's scenario could not be read (${err.message}).` };
  }
}
