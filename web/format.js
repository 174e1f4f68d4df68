// Number formatting and tiny DOM helpers shared by the views.

/** Escapes text for safe use inside HTML/SVG markup. */
export function esc(value) {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

/** A recompute value as text: "none", "full", "selective", or its modules ("moe_act + layernorm"). */
export function recomputeText(rc) {
  return rc && Array.isArray(rc.modules) ? rc.modules.join(' + ') : String(rc ?? '');
}

/** Fixed decimals, '—' for missing values. */
export function fixed(value, digits = 2) {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

/**
 * Integer with thousands separators, e.g. 1234567 -> "1,234,567" (as en-US writes it). Done by
 * hand: the first toLocaleString() of a page loads the locale data, 50 ms of its first plan.
 */
export function int(value) {
  if (!Number.isFinite(value)) return '—';
  const digits = BigInt(Math.abs(Math.round(value))).toString();
  return (value <= -0.5 ? '-' : '') + digits.replace(/\B(?=(\d{3})+$)/g, ',');
}

/** Seconds as milliseconds text, e.g. 0.0123 -> "12.3" (two decimals below 10 ms). */
export function ms(seconds, digits) {
  if (!Number.isFinite(seconds)) return '—';
  const v = seconds * 1000;
  return v.toFixed(digits ?? (Math.abs(v) < 10 ? 2 : 1));
}

/**
 * USD as text: "$13,086" from 1000 up, "$48.00" from 1, four significant digits below ("$0.1309",
 * so that close costs per token stay apart); '—' when missing.
 */
export function usd(value) {
  if (!Number.isFinite(value)) return '—';
  const a = Math.abs(value);
  if (a >= 1000) return `$${int(value)}`;
  return `$${a >= 1 || a === 0 ? value.toFixed(2) : value.toPrecision(4)}`;
}

/** Fraction as percent text, e.g. 0.312 -> "31.2". */
export function percent(fraction, digits = 1) {
  return Number.isFinite(fraction) ? (fraction * 100).toFixed(digits) : '—';
}

/** A parameter count (elements) as text with its unit: 46.70e9 -> "46.7 B", 2.4e9 -> "2.40 B", 125e6 -> "125 M". */
export function params(count) {
  if (!Number.isFinite(count)) return '—';
  const [v, unit] = count >= 1e12 ? [count / 1e12, 'T'] : count >= 1e9 ? [count / 1e9, 'B'] : [count / 1e6, 'M'];
  return `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${unit}`;
}

/** Largest finite value of an array (or NaN). */
export function maxOf(values) {
  const nums = (values || []).filter(Number.isFinite);
  return nums.length ? Math.max(...nums) : NaN;
}

/** Creates an element from an HTML string (single root). */
export function html(markup) {
  const t = document.createElement('template');
  t.innerHTML = markup.trim();
  return t.content.firstElementChild;
}
