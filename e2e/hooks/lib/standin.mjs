// What both model-API stand-ins share: a server on 127.0.0.1:0 that reads each request's JSON body
// before handing it on, and closes on demand.
import http from 'node:http';

/**
 * Serves `handle(req, res, { url, body, raw })` on 127.0.0.1:0 (a body that is not JSON arrives as
 * {}, with `raw` as sent); resolves to { port, close }.
 */
export async function serveJson(handle) {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      let body = {};
      try { body = raw ? JSON.parse(raw) : {}; } catch { /* the handler sees `raw` */ }
      handle(req, res, { url: req.url ?? '', body, raw });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((resolve) => server.close(resolve)) };
}
