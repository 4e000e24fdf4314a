import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/** Redis at REDIS_URL, or the CI machine's default; the test is skipped only where none answers. */
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const available = await redisAnswers(redisUrl);

describe.skipIf(!available)('rate limits shared through Redis (REDIS_URL)', () => {
  let first: TestApp;
  let second: TestApp;
  // A client address of this run only, so earlier runs' counters in the same Redis do not count.
  const client = `10.77.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

  beforeAll(async () => {
    const env = { REDIS_URL: redisUrl, RATE_LIMIT_STATISTICS_MAX: '3', RATE_LIMIT_STATISTICS_WINDOW_MS: '60000' };
    first = await buildTestApp(env);
    second = await buildTestApp(env);
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it('counts one client’s requests across two instances', async () => {
    const call = (t: TestApp) => t.app.inject({ method: 'GET', url: '/v1/publications', remoteAddress: client });
    expect((await call(first)).statusCode).toBe(200);
    expect((await call(second)).statusCode).toBe(200);
    expect((await call(first)).statusCode).toBe(200);
    const fourth = await call(second);
    expect(fourth.statusCode).toBe(429);
    expect(fourth.headers['retry-after']).toBeDefined();
  });
});
