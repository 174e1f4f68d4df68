// scripts/bundle.mjs: the page's modules as one file (dist/app.js). Node only; the browser tests
// run the bundled page itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { bundle, pointAtBundle, parseModule } from '../../scripts/bundle.mjs';
import { REPO } from './harness.mjs';

const WEB = path.join(REPO, 'web');

function tempWeb(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-bundle-'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

test('the page bundles: every module once, after the modules it imports, as valid module syntax', () => {
  const { text, modules } = bundle(WEB);
  assert.equal(modules.at(-1), 'main.js');
  assert.ok(modules.length > 20, modules.join(', '));
  const at = (f) => text.indexOf(`\n// ---- ${f}\n`);
  for (const f of modules) {
    assert.ok(at(f) >= 0, `${f} in the bundle`);
    assert.equal(text.split(`\n// ---- ${f}\n`).length, 2, `${f} once`);
    for (const imp of parseModule(f, fs.readFileSync(path.join(WEB, f), 'utf8')).imports) {
      assert.ok(at(imp.file) < at(f), `${imp.file} before ${f}, which imports it`);
    }
  }
  assert.doesNotMatch(text, /^\s*(import|export)\b/m);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hapmoe-bundle-')), 'app.mjs');
  fs.writeFileSync(file, text);
  execFileSync(process.execPath, ['--check', file]);  // throws on a syntax error
});

test('bundled modules keep their imports, renames and exports', () => {
  const dir = tempWeb({
    'main.js': "import { twice as double, K } from './lib.js';\nimport { K as K2 } from './lib.js';\nglobalThis.out = [double(K), K2];\n",
    'lib.js': "const hidden = 2;\nexport const K = 21;\nexport function twice(x) { return x * hidden; }\n",
  });
  const { text, modules } = bundle(dir);
  assert.deepEqual(modules, ['lib.js', 'main.js']);
  const file = path.join(dir, 'app.mjs');
  fs.writeFileSync(file, `${text}\nconsole.log(JSON.stringify(globalThis.out));\n`);
  assert.equal(execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim(), '[42,21]');
});

test('forms the bundler does not handle stop the build with the file and line', () => {
  const cases = [
    [{ 'main.js': "import x from './a.js';\n", 'a.js': '' }, /main\.js:1: only/],
    [{ 'main.js': "import { a } from './a.js';\n", 'a.js': 'const a = 1;\nexport default a;\n' }, /a\.js:2: only/],
    [{ 'main.js': "import { a } from './a.js';\n", 'a.js': "export { b as a };\n" }, /a\.js:1: only/],
    [{ 'main.js': "import { a } from './a.js';\n", 'a.js': 'export const b = 1;\n' }, /main\.js: a\.js exports no "a"/],
    [{ 'main.js': "import { a } from './a.js';\n", 'a.js': "import { m } from './main.js';\nexport const a = 1;\n" }, /import cycle: main\.js -> a\.js -> main\.js/],
    [{ 'main.js': 'console.log(import.meta.url);\n' }, /import\.meta/],
  ];
  for (const [files, message] of cases) assert.throws(() => bundle(tempWeb(files)), message);
});

test('the built page loads app.js instead of the module graph', () => {
  const { html, sw } = pointAtBundle(fs.readFileSync(path.join(WEB, 'index.html'), 'utf8'), fs.readFileSync(path.join(WEB, 'sw.js'), 'utf8'));
  assert.doesNotMatch(html, /modulepreload|main\.js/);
  assert.equal((html.match(/<script type="module" src="app\.js"><\/script>/g) || []).length, 1);
  assert.match(html, /<script src="boot\.js"><\/script>/);
  assert.match(sw, /'app\.js', 'main\.js',/);
  assert.throws(() => pointAtBundle('<html></html>', sw), /no <script type="module" src="main\.js">/);
});
