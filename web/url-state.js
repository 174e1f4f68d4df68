// Scenario <-> URL hash. Format: "#s=v1." + base64url(deflate-raw(JSON)) [+ "&v=" view state].
// The version prefix lets later formats coexist; the decoder never throws, and it refuses a
// link before any work grows with it: the hash length, the inflated size (inflation stops past
// the limit) and the JSON's nesting and list lengths are all checked before the form sees it.
import { checkJsonShape } from './json-limits.js';

const PREFIX = 's=v1.';
/** Longest hash accepted, in characters (a real scenario link is a few hundred). */
export const MAX_HASH_CHARS = 64 * 1024;
/** Largest inflated scenario accepted, in bytes. */
export const MAX_INFLATED_BYTES = 256 * 1024;

/**
 * bytes through a (de)compression stream, read chunk by chunk; throws once the output passes
 * maxBytes. The bytes are written to the stream directly: a Blob's stream is read through the
 * browser process, and that waited 100-300 ms behind the module's compilation on a first visit.
 */
async function transformBytes(bytes, transform, maxBytes = Infinity) {
  const writer = transform.writable.getWriter();
  writer.write(bytes).catch(() => {});  // a failure shows in read() below
  writer.close().catch(() => {});
  const reader = transform.readable.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new Error(`it inflates past ${Math.round(maxBytes / 1024)} KB, more than any scenario needs`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

/** Inflates deflate-raw bytes, stopping (and throwing) as soon as the output passes maxBytes. */
export function inflateLimited(bytes, maxBytes = MAX_INFLATED_BYTES) {
  return transformBytes(bytes, new DecompressionStream('deflate-raw'), maxBytes);
}

function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error('it is not base64url text');
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** View state (selected plan index, sort key and direction) <-> "plan.key.dir" text. */
export function encodeView({ plan = 0, sort = 'rank', dir = 1 } = {}) {
  return `${plan | 0}.${sort}.${dir < 0 ? 'd' : 'a'}`;
}

export function decodeView(text) {
  const m = /^(\d{1,4})\.([A-Za-z]{1,12})\.([ad])$/.exec(text || '');
  return m ? { plan: Number(m[1]), sort: m[2], dir: m[3] === 'd' ? -1 : 1 } : null;
}

/** Returns the hash (with leading '#') that encodes the scenario object and optional view. */
export async function encodeScenario(scenario, view = null) {
  const raw = new TextEncoder().encode(JSON.stringify(scenario));
  const packed = await transformBytes(raw, new CompressionStream('deflate-raw'));
  return '#' + PREFIX + toBase64Url(packed) + (view ? `&v=${encodeView(view)}` : '');
}

/**
 * Decodes a location.hash. Returns {scenario, view} on success, {error} for a hash that looks
 * like ours but cannot be read, and null when there is no scenario in the hash.
 */
export async function decodeHash(hash) {
  const body = (hash || '').replace(/^#/, '');
  if (!body || !body.startsWith('s=')) return null;
  if (!body.startsWith(PREFIX)) return { error: 'This link was made by a newer or unknown version of the planner (it does not start with "s=v1."); nothing was loaded from it.' };
  if (body.length > MAX_HASH_CHARS) return { error: `This link is ${Math.round(body.length / 1024)} KB long, more than the ${MAX_HASH_CHARS / 1024} KB a scenario link may be; nothing was loaded from it.` };
  const [data, ...params] = body.slice(PREFIX.length).split('&');
  try {
    const bytes = await inflateLimited(fromBase64Url(data));
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const shapeError = checkJsonShape(text);
    if (shapeError) throw new Error(shapeError);
    const scenario = JSON.parse(text);
    if (!scenario || typeof scenario !== 'object' || Array.isArray(scenario)) throw new Error('it is not a JSON object');
    const v = params.find((p) => p.startsWith('v='));
    return { scenario, view: v ? decodeView(v.slice(2)) : null };
  } catch (err) {
    return { error: `The link's scenario could not be read: ${err.message}. Nothing was loaded from it.` };
  }
}
