// Shape limits for JSON text from outside (links, files): checked in one linear scan before
// JSON.parse, so nothing recursive or list-sized runs on hostile input.

/** Deepest nesting of objects/arrays accepted (a scenario needs about 6). */
export const MAX_DEPTH = 64;
/** Longest list accepted (per-layer lists of the largest models fit easily). */
export const MAX_LIST = 16384;

/** Returns null when text is within the limits, else a sentence saying which limit it breaks. */
export function checkJsonShape(text, { maxDepth = MAX_DEPTH, maxList = MAX_LIST } = {}) {
  const counts = []; // per open container: element count (arrays) or -1 (objects)
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) { inString = true; continue; }
    if (c === 91 || c === 123) { // [ {
      if (counts.length && counts[counts.length - 1] === 0) counts[counts.length - 1] = 1;
      if (counts.length >= maxDepth) return `it nests deeper than ${maxDepth} levels`;
      counts.push(c === 91 ? 0 : -1);
    } else if (c === 93 || c === 125) counts.pop(); // ] }
    else if (c === 44 && counts.length && counts[counts.length - 1] > 0) { // , inside an array
      if (++counts[counts.length - 1] > maxList) return `it holds a list longer than ${maxList} entries`;
    } else if (c > 32 && counts.length && counts[counts.length - 1] === 0) counts[counts.length - 1] = 1;
  }
  return null;
}
