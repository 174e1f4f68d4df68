// Stamps DIST/sw.js with the site's version: a hash of every other file of DIST (names and bytes),
// so each build that changes any file is a new service worker, which open pages notice
// ("Update available — reload"), and its cache replaces the older one.
//   node scripts/stamp-sw.mjs DIST
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PLACEHOLDER = /const VERSION = '[^']*';/;

/** Hex digest (12 digits) of the files under dir except sw.js, in name order. */
export function siteVersion(dir) {
  const hash = crypto.createHash('sha256');
  const walk = (rel) => fs.readdirSync(path.join(dir, rel), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .forEach((e) => {
      const name = path.posix.join(rel, e.name);
      if (e.isDirectory()) walk(name);
      else if (name !== 'sw.js') hash.update(`${name}\0${fs.statSync(path.join(dir, name)).size}\0`).update(fs.readFileSync(path.join(dir, name)));
    });
  walk('');
  return hash.digest('hex').slice(0, 12);
}

/** sw.js text with its VERSION set to version; throws when sw.js has no VERSION line. */
export function stamp(swText, version) {
  if (!PLACEHOLDER.test(swText)) throw new Error("sw.js has no `const VERSION = '...';` line");
  return swText.replace(PLACEHOLDER, `const VERSION = '${version}';`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dist = process.argv[2];
  if (!dist) { console.error('usage: node scripts/stamp-sw.mjs DIST_DIR'); process.exit(2); }
  const file = path.join(dist, 'sw.js');
  const version = siteVersion(dist);
  fs.writeFileSync(file, stamp(fs.readFileSync(file, 'utf8'), version));
  console.log(`sw.js: version ${version}`);
}
