// Tiny static file server for the browser tests: 127.0.0.1, random free port, GET/HEAD only.
// Serves from one or more root folders (first match wins), e.g. "dist" or "web:build/wasm".
// Responses are revalidated on every use (cache-control: no-cache + ETag), so an edit is seen at
// once while an unchanged file is answered 304 and the browser keeps its compiled wasm code;
// gzip bodies are compressed once per file version and kept in memory.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.webmanifest': 'application/manifest+json', '.png': 'image/png', '.ico': 'image/x-icon', '.map': 'application/json', '.txt': 'text/plain; charset=utf-8',
};

// The page's policy as a header (web/index.html carries the same as a meta tag). Only a header
// can forbid framing; it also covers the worker, whose script gets it too: 'wasm-unsafe-eval'
// lets the worker compile hapmoe.wasm (built with -sDYNAMIC_EXECUTION=0: no eval in the glue).
export const CSP = ["default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "worker-src 'self'",
  "connect-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:", "object-src 'none'",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join('; ');

const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.webmanifest', '.wasm', '.svg', '.map', '.txt']);

/** Headers of a 200 response for file; gzip when the client accepts it and the type compresses. */
export function responseHeaders(file, acceptEncoding = '') {
  const ext = path.extname(file);
  const gzip = COMPRESSIBLE.has(ext) && /\bgzip\b/.test(acceptEncoding);
  return {
    'content-type': TYPES[ext] || 'application/octet-stream', 'cache-control': 'no-cache',
    'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer',
    vary: 'accept-encoding', ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  };
}

/** Finds url path inside one of roots; null when absent or outside every root. */
export function resolveFile(roots, urlPath) {
  let rel;
  try { rel = decodeURIComponent(urlPath.split('?')[0]); } catch { return null; }
  if (rel.endsWith('/')) rel += 'index.html';
  for (const root of roots) {
    const file = path.resolve(root, '.' + rel);
    if (!file.startsWith(root + path.sep)) continue;
    try { if (fs.statSync(file).isFile()) return file; } catch { /* try the next root */ }
  }
  return null;
}

/** The file's bytes (gzipped when gzip), read and compressed once per version (size + mtime). */
function bodyOf(file, stat, gzip, cache) {
  const key = `${file}|${gzip ? 'gz' : 'id'}`;
  const version = `${stat.size}-${stat.mtimeMs}`;
  const hit = cache.get(key);
  if (hit && hit.version === version) return hit.body;
  const raw = fs.readFileSync(file);
  const body = gzip ? zlib.gzipSync(raw) : raw;
  cache.set(key, { version, body });
  return body;
}

/** Starts the server; resolves {url, close()}. log collects every requested path. */
export function startServer(roots, log = [], port = 0) {
  const absRoots = roots.map((r) => path.resolve(r));
  const bodies = new Map();
  const server = http.createServer((req, res) => {
    log.push(req.url);
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405).end(); return; }
    const file = resolveFile(absRoots, req.url);
    if (!file) { res.writeHead(404, { 'content-type': 'text/plain', 'content-security-policy': CSP }).end('not found'); return; }
    const headers = responseHeaders(file, req.headers['accept-encoding']);
    const stat = fs.statSync(file);
    const etag = `"${stat.size.toString(36)}-${Math.round(stat.mtimeMs).toString(36)}${headers['content-encoding'] ? '-gz' : ''}"`;
    headers.etag = etag;
    if (req.headers['if-none-match'] === etag) { res.writeHead(304, headers).end(); return; }
    const body = bodyOf(file, stat, headers['content-encoding'] === 'gzip', bodies);
    headers['content-length'] = body.length;
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}
