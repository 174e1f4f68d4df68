// The page's ES modules as one file: node scripts/bundle.mjs WEB_DIR DIST_DIR writes DIST/app.js
// (main.js and every module it imports, each in its own function scope, dependencies first) and
// points DIST/index.html and DIST/sw.js at it. One request instead of one per module: on a first
// visit the module requests queued ahead of hapmoe.wasm on the browser's six connections per host.
// The modules stay in DIST as well (tests and tools import them one by one).
//
// Only the forms the page uses are accepted; anything else stops the build with the file and line:
//   import { a, b as c } from './x.js';
//   export function | async function | const | let | class NAME ...
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const IMPORT = /^import\s*\{([^}]*)\}\s*from\s*'\.\/([\w.-]+\.js)'\s*;?[ \t]*$/gm;
const EXPORT = /^export\s+(async\s+function\*?|function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)/gm;

const lineOf = (src, index) => src.slice(0, index).split('\n').length;

/** Parses one module: its imports [{file, names: [[imported, local]]}], exports and body. */
export function parseModule(file, src) {
  const imports = [];
  const body = src.replace(IMPORT, (_, names, from) => {
    imports.push({
      file: from,
      names: names.split(',').map((n) => n.trim()).filter(Boolean).map((n) => {
        const m = /^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(n);
        if (!m) throw new Error(`${file}: cannot bundle the import name "${n}"`);
        return [m[1], m[2] || m[1]];
      }),
    });
    return '';
  });
  const exports = [];
  const out = body.replace(EXPORT, (_, kind, name) => { exports.push(name); return `${kind} ${name}`; });
  // Whatever import/export is left is a form this bundler does not handle.
  const left = /^\s*(import\b(?!\s*\()|export\b)/m.exec(out);
  if (left) throw new Error(`${file}:${lineOf(out, left.index)}: only "import { ... } from './x.js'" and "export function|const|let|class NAME" can be bundled`);
  if (/\bimport\.meta\b/.test(out)) throw new Error(`${file}: import.meta cannot be bundled`);
  return { imports, exports, body: out };
}

/** The bundle text of entry and the modules it imports (read from dir), dependencies first. */
export function bundle(dir, entry = 'main.js') {
  const mods = new Map();
  const order = [];
  const visiting = [];
  const visit = (file) => {
    if (mods.has(file)) return;
    if (visiting.includes(file)) throw new Error(`import cycle: ${[...visiting, file].join(' -> ')}`);
    visiting.push(file);
    const m = parseModule(file, fs.readFileSync(path.join(dir, file), 'utf8'));
    for (const imp of m.imports) visit(imp.file);
    visiting.pop();
    mods.set(file, m);
    order.push(file);
  };
  visit(entry);
  const scope = (file) => `$${file.replace(/\W/g, '_')}`;
  const parts = [`// Built by scripts/bundle.mjs from ${order.length} modules (${order.join(', ')}); edit those, not this.\n`];
  for (const file of order) {
    const m = mods.get(file);
    for (const imp of m.imports) {
      const has = new Set(mods.get(imp.file).exports);
      for (const [name] of imp.names) if (!has.has(name)) throw new Error(`${file}: ${imp.file} exports no "${name}"`);
    }
    const bindings = m.imports.map((imp) => `  const { ${imp.names.map(([a, b]) => (a === b ? a : `${a}: ${b}`)).join(', ')} } = ${scope(imp.file)};\n`).join('');
    const open = file === entry ? '(() => {\n' : `const ${scope(file)} = (() => {\n`;
    const close = file === entry ? '})();\n' : `return { ${m.exports.join(', ')} };\n})();\n`;
    parts.push(`\n// ---- ${file}\n${open}${bindings}${m.body.replace(/\s+$/, '')}\n${close}`);
  }
  return { text: parts.join(''), modules: order };
}

/** Replaces index.html's module preloads and main.js script with app.js; adds app.js to sw.js. */
export function pointAtBundle(indexHtml, swJs) {
  const preloads = /^[ \t]*<!--[^>]*module graph[^>]*-->\n|^[ \t]*<link rel="modulepreload" href="[\w.-]+">\n/gm;
  const script = '<script type="module" src="main.js"></script>';
  if (!indexHtml.includes(script)) throw new Error(`index.html has no ${script}`);
  const html = indexHtml.replace(preloads, '').replace(script, '<script type="module" src="app.js"></script>');
  const listed = "'main.js',";
  if (!swJs.includes(listed)) throw new Error(`sw.js FILES has no ${listed}`);
  return { html, sw: swJs.replace(listed, `'app.js', ${listed}`) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [web, dist] = process.argv.slice(2);
  if (!web || !dist) { console.error('usage: node scripts/bundle.mjs WEB_DIR DIST_DIR'); process.exit(2); }
  const { text, modules } = bundle(web);
  fs.writeFileSync(path.join(dist, 'app.js'), text);
  const { html, sw } = pointAtBundle(fs.readFileSync(path.join(web, 'index.html'), 'utf8'), fs.readFileSync(path.join(web, 'sw.js'), 'utf8'));
  fs.writeFileSync(path.join(dist, 'index.html'), html);
  fs.writeFileSync(path.join(dist, 'sw.js'), sw);
  console.log(`app.js: ${modules.length} modules, ${text.length} bytes`);
}
