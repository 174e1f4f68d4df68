// The tree shows the data flow (issue 21): the folders of core/src include each other without a
// cycle, and neither do its components (a .cpp with its headers: its own "folder/name.hpp" and
// the public "hapmoe/name.hpp" of the same name). Prints the folder order; exit 1 on a cycle.
// Usage: node tests/tree/include_dag.mjs [REPO]
import fs from 'node:fs';
import path from 'node:path';

const repo = process.argv[2] || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const src = path.join(repo, 'core/src');
const folders = fs.readdirSync(src).filter((f) => fs.statSync(path.join(src, f)).isDirectory());

// component name -> folder, from the .cpp and .hpp files under core/src
const home = new Map();
const files = [];
for (const folder of folders) {
  for (const f of fs.readdirSync(path.join(src, folder))) {
    if (!/\.(cpp|hpp)$/.test(f)) continue;
    files.push({ folder, file: f, component: f.replace(/\.(cpp|hpp)$/, '') });
    home.set(f.replace(/\.(cpp|hpp)$/, ''), folder);
  }
}

const folderEdges = new Map(folders.map((f) => [f, new Set()]));
const compEdges = new Map();
for (const { folder, file, component } of files) {
  const text = fs.readFileSync(path.join(src, folder, file), 'utf8');
  for (const m of text.matchAll(/^#include "([^"]+)"/gm)) {
    const [dir, name] = m[1].split('/');
    if (!name) continue;
    const target = name.replace(/\.hpp$/, '');
    const targetFolder = dir === 'hapmoe' ? home.get(target) : dir;
    if (!targetFolder || !folderEdges.has(targetFolder)) continue;  // a public header without a component
    if (targetFolder !== folder) folderEdges.get(folder).add(targetFolder);
    if (target !== component && home.get(target) === targetFolder) {
      const from = `${folder}/${component}`, to = `${targetFolder}/${target}`;
      if (!compEdges.has(from)) compEdges.set(from, new Set());
      compEdges.get(from).add(to);
    }
  }
}

// The strongly connected components of graph (Map node -> Set of nodes) with more than one
// node: each is a set of files that include each other in a cycle.
function cycles(graph) {
  let next = 0;
  const index = new Map(), low = new Map(), onStack = new Set(), stack = [], out = [];
  const nodes = new Set([...graph.keys(), ...[...graph.values()].flatMap((x) => [...x])]);
  const visit = (v) => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) || []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const c = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); c.push(w); } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return out;
}

let failed = false;
for (const c of cycles(folderEdges)) { console.error(`folders that include each other: ${c.join(', ')}`); failed = true; }
for (const c of cycles(compEdges)) { console.error(`components that include each other: ${c.join(', ')}`); failed = true; }
if (!failed) {
  // Folders in dependency order (each after what it includes).
  const order = [], done = new Set();
  const place = (f) => { if (done.has(f)) return; done.add(f); for (const g of folderEdges.get(f)) place(g); order.push(f); };
  folders.sort().forEach(place);
  console.log(`core/src folders, each after what it includes: ${order.join(' < ')}`);
  console.log(`${compEdges.size} components, no include cycle`);
}
process.exit(failed ? 1 : 0);
