import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ABSENCE_SCHOOL, multiplyFixtureRows } from '../helpers/statistics.js';

/**
 * On a real listening server: a client that stops reading any response (JSON or CSV) is dropped after
 * STREAM_STALL_TIMEOUT_MS; a client that sends its headers slowly gets 408 within a second of HEADERS_TIMEOUT_MS;
 * eight 1 MB hostile bodies at once leave another client's simple GET answering within a second.
 * The fixture version reads from a view repeating its 216 rows 60 times, so a page of 10,000 rows is a JSON body
 * of several MB, far more than the socket buffers of a client that reads nothing.
 */
let database: TestDatabase;
let app: FastifyInstance;
let port: number;
const STALL_MS = 1000;
const HEADERS_MS = 2000;

beforeAll(async () => {
  database = await createTestDatabase();
  await multiplyFixtureRows(database.db, 'many_rows', 60);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    STREAM_STALL_TIMEOUT_MS: String(STALL_MS),
    HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    RATE_LIMIT_STATISTICS_MAX: '100000',
  });
  app = await buildApp(config, { db: database.db, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  app?.server.closeAllConnections();
  await app?.close();
  await database?.drop();
});

/** The server side of the next connection: when it closes. */
function nextServerSocketClosed(): Promise<number> {
  return new Promise((resolve) => {
    app.server.once('connection', (socket: net.Socket) => socket.once('close', () => resolve(Date.now())));
  });
}

/** Opens a connection, sends `request`, and never reads a byte of the answer. */
function connectAndStopReading(request: string): net.Socket {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

const QUERY_PATH = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?pageSize=10000`;

describe('the write timeout', () => {
  it.each([
    ['a JSON page of 10,000 rows', 'application/json'],
    ['a CSV stream', 'text/csv'],
  ])(
    'drops a client that stops reading %s after STREAM_STALL_TIMEOUT_MS',
    async (_name, accept) => {
      // The size of what the client would have had to read.
      const fetchStarted = Date.now();
      const whole = await fetch(`http://127.0.0.1:${port}${QUERY_PATH}`, { headers: { accept } });
      expect(whole.status).toBe(200);
      const size = (await whole.arrayBuffer()).byteLength;
      expect(size).toBeGreaterThan(1_000_000);
      // How long the server takes to produce it for a client that reads (on a loaded machine, seconds).
      const produceMs = Date.now() - fetchStarted;

      const closed = nextServerSocketClosed();
      const started = Date.now();
      const client = connectAndStopReading(`GET ${QUERY_PATH} HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\n\r\n`);
      const closedAt = await closed;
      // Dropped once it had taken nothing for STALL_MS (checked every STALL_MS / 4), not kept for as long as it likes.
      expect(closedAt - started).toBeGreaterThanOrEqual(STALL_MS);
      expect(closedAt - started).toBeLessThan(STALL_MS + produceMs + 5000);
      client.destroy();
    },
    90_000,
  );

  it('leaves a client that reads slowly but steadily alone', async () => {
    const response = await fetch(`http://127.0.0.1:${port}${QUERY_PATH}`);
    const reader = response.body!.getReader();
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      // Well under the stall timeout between reads.
      if (bytes < 600_000) await new Promise((resolve) => setTimeout(resolve, STALL_MS / 5));
    }
    expect(bytes).toBeGreaterThan(1_000_000);
  }, 90_000);
});

describe('the headers timeout', () => {
  it('answers 408 and closes a connection whose headers are incomplete within a second of HEADERS_TIMEOUT_MS', async () => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n'));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    await new Promise((resolve) => socket.once('close', resolve));
    const elapsed = Date.now() - started;
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(elapsed).toBeGreaterThanOrEqual(HEADERS_MS);
    expect(elapsed).toBeLessThan(HEADERS_MS + 2500);
  });
});

describe('hostile bodies at once', () => {
  it('eight 1 MB `sorts` bodies leave a parallel simple GET answering within a second', async () => {
    const hostile = `{"sorts":[${new Array(340_000).fill('{}').join(',')}]}`;
    const base = `http://127.0.0.1:${port}`;
    // Warm (schema compilation, first connections): what is measured is the hostile load, not a cold start.
    await fetch(`${base}/v1/publications`).then((r) => r.arrayBuffer());
    const sent = Array.from({ length: 8 }, () =>
      fetch(`${base}${QUERY_PATH}`.replace('?pageSize=10000', ''), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: hostile,
      }).then(async (r) => ({ status: r.status, bytes: (await r.arrayBuffer()).byteLength })),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    const simple = await fetch(`${base}/v1/publications`);
    await simple.arrayBuffer();
    const simpleMs = performance.now() - started;
    const results = await Promise.all(sent);
    expect(simple.status).toBe(200);
    expect(simpleMs).toBeLessThan(1000);
    for (const result of results) {
      expect(result.status).toBe(400);
      expect(result.bytes).toBeLessThan(64 * 1024);
    }
  });
});
