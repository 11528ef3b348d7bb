// A tiny static file server for the page (the test starts it; `npm run serve` for people).
// Serves web/ read-only on 127.0.0.1: GET and HEAD only, no directory listings, nothing
// outside web/ (nor its node_modules, unless `nodeModules` is set), `.wasm` as application/wasm
// (streaming compilation needs it).
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

export const WEB_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Starts the server; resolves to `{ url, requests, close }` (`requests` logs method and path). */
export function serve({ root = WEB_ROOT, host = '127.0.0.1', port = 0, nodeModules = false } = {}) {
  root = resolve(root);
  const requests = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method, url: req.url });
    const send = (status, text) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : `${text}\n`);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed');
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      return send(400, 'bad request');
    }
    if (path.endsWith('/')) path += 'index.html';
    const file = resolve(join(root, path));
    if (file !== root && !file.startsWith(root + sep)) return send(403, 'forbidden');
    if (!nodeModules && relative(root, file).split(sep).includes('node_modules')) return send(404, 'not found');
    let stat;
    try {
      stat = statSync(file);
    } catch {
      return send(404, 'not found');
    }
    if (!stat.isFile()) return send(404, 'not found');
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolvePromise({
        url: `http://${host}:${actual}/`,
        requests,
        close: () => new Promise((done) => server.close(done)),
      });
    });
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] ?? 8080);
  const { url } = await serve({ port });
  console.log(`Serving ${WEB_ROOT} at ${url} (Ctrl+C stops)`);
}
