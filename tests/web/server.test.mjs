// The dev server (scripts/static-server.mjs): CSP header with frame-ancestors and worker-src on
// every response, gzip when asked for, identical bytes after decompression, no path escape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../scripts/static-server.mjs';

const WEB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web');

function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

test('CSP header and gzip', async () => {
  const server = await startServer([WEB]);
  try {
    const plain = await get(`${server.url}/index.html`);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(plain.body, fs.readFileSync(path.join(WEB, 'index.html')));
    const csp = plain.headers['content-security-policy'];
    for (const directive of ["frame-ancestors 'none'", "worker-src 'self'", "object-src 'none'", "default-src 'self'"]) {
      assert.ok(csp.includes(directive), directive);
    }
    assert.doesNotMatch(csp, /'unsafe-eval'/);
    const gz = await get(`${server.url}/worker.js`, { 'accept-encoding': 'gzip, deflate' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers['content-security-policy'], csp);  // the worker runs under it too
    assert.deepEqual(zlib.gunzipSync(gz.body), fs.readFileSync(path.join(WEB, 'worker.js')));
    const missing = await get(`${server.url}/../../etc/passwd`);
    assert.equal(missing.status, 404);
    assert.ok(missing.headers['content-security-policy']);
  } finally {
    await server.close();
  }
});

test('revalidation: ETag, 304 when unchanged, the new bytes after an edit', async () => {
  const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'hapmoe-serve-'));
  const file = path.join(dir, 'a.js');
  fs.writeFileSync(file, 'const a = 1;\n');
  const server = await startServer([dir]);
  try {
    const first = await get(`${server.url}/a.js`, { 'accept-encoding': 'gzip' });
    assert.equal(first.headers['cache-control'], 'no-cache');  // kept, but asked again on every use
    const etag = first.headers.etag;
    assert.ok(etag);
    const again = await get(`${server.url}/a.js`, { 'accept-encoding': 'gzip', 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    fs.writeFileSync(file, 'const a = 22;\n');
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const edited = await get(`${server.url}/a.js`, { 'accept-encoding': 'gzip', 'if-none-match': etag });
    assert.equal(edited.status, 200);
    assert.notEqual(edited.headers.etag, etag);
    assert.equal(zlib.gunzipSync(edited.body).toString(), 'const a = 22;\n');
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
