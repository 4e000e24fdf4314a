import http from 'node:http';
import { sendVariantRaw, type ShapeVariant } from './scale-shapes.js';

/**
 * The floor of `npm run bench`: a bare node:http server that answers a request with the bytes the service sent for
 * the same request (status, content type, coding and body, copied before), doing no other work. Timed by the same
 * clients, in the same turns with DuckDB, it shows what HTTP and the client cost each shape by themselves, below which
 * no server can answer. Run as its own process (`startFloorServer` in bench/query.ts); `PORT` is its port.
 *
 * `POST /_copy` with `{"url", "method", "path", "body"}` asks the service at `url` for that request (gzip asked, as
 * both benchmark clients ask) and keeps its answer; any other request answers what was kept for its method, path and
 * body, or 404.
 */

interface Kept {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const kept = new Map<string, Kept>();
const keyOf = (method: string, path: string, body: string) => `${method} ${path}\n${body}`;
/** The headers a client reads; the rest (dates, ids, cache and security headers) are not the client's work. */
const COPIED_HEADERS = ['content-type', 'content-encoding', 'x-query-engine'];

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString()));
    request.on('error', reject);
  });
}

async function copy(url: string, asked: ShapeVariant['http']): Promise<Kept> {
  const { status, headers, body } = await sendVariantRaw(url, asked);
  const copied: Record<string, string> = {};
  for (const name of COPIED_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') copied[name] = value;
  }
  return { status, headers: copied, body };
}

async function answer(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const body = await readBody(request);
  if (request.method === 'POST' && request.url === '/_copy') {
    const asked = JSON.parse(body) as { url: string } & ShapeVariant['http'];
    const copied = await copy(asked.url, asked);
    kept.set(keyOf(asked.method, asked.path, asked.body ?? ''), copied);
    response.writeHead(204).end();
    return;
  }
  const found = kept.get(keyOf(request.method ?? 'GET', request.url ?? '/', body));
  if (!found) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(found.status, { ...found.headers, 'content-length': found.body.length });
  response.end(found.body);
}

const server = http.createServer((request, response) => {
  answer(request, response).catch((error: unknown) => {
    if (!response.headersSent) response.writeHead(500);
    response.end(String(error));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('Floor server listening'));
