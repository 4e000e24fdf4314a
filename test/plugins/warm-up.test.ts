import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * An instance that warms up before it says ready (what the server does): /health/ready answers 503 until its OpenAPI
 * document is serialized, its route schemas compiled, the register's code lists loaded and its pool's connections
 * open, then 200; it answers requests meanwhile (a balancer just does not send any yet).
 */
describe('warm-up before ready', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({}, { warmUpBeforeReady: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('says not ready while warming up, then ready, and answers throughout', async () => {
    const early = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(early.statusCode).toBe(503);
    // The published fixture's row index first, then the rest.
    expect(early.json().detail).toMatch(
      /^The (row indexes of the statistics versions in use are still loading|instance is still warming up \(route schemas, database connections\))\.$/,
    );
    expect((await t.app.inject({ method: 'GET', url: '/v1/publications?page=1&pageSize=1' })).statusCode).toBe(200);
    await vi.waitFor(
      async () => expect((await t.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200),
      { timeout: 30000, interval: 50 },
    );
    // Everything was compiled during the warm-up.
    expect(await t.app.compileDeferredSchemas()).toBe(0);
  }, 60000);
});

describe('warm-up readiness refusals in the log', () => {
  it('are said once, at info, without an error line or a stack; the app says when it is warm', async () => {
    const lines: Array<{ level: number; msg: string; err?: unknown }> = [];
    const stream = { write: (line: string) => void lines.push(JSON.parse(line)) };
    const t = await buildTestApp({}, { warmUpBeforeReady: true, logger: { level: 'info', stream } });
    try {
      const polls: number[] = [];
      for (let i = 0; i < 5; i++) polls.push((await t.app.inject({ method: 'GET', url: '/health/ready' })).statusCode);
      expect(polls).toContain(503);
      await t.app.warmedUp;
      expect((await t.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
      const notReady = lines.filter((l) => l.msg.startsWith('not ready yet'));
      expect(notReady).toHaveLength(1);
      expect(notReady[0]!.level).toBe(30);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      // /docs's document was made in the warm-up, not left to its first request.
      expect(lines.map((l) => l.msg)).toContain('OpenAPI document prepared');
    } finally {
      await t.close();
    }
  }, 60000);
});

describe('draining readiness refusals in the log', () => {
  it('answer 503 with the reason to every probe, and write no error line or stack per probe', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const stream = { write: (line: string) => void lines.push(JSON.parse(line)) };
    const t = await buildTestApp({}, { logger: { level: 'info', stream } });
    try {
      expect((await t.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
      t.app.beginDrain();
      for (let i = 0; i < 5; i++) {
        const probe = await t.app.inject({ method: 'GET', url: '/health/ready' });
        expect(probe.statusCode).toBe(503);
        expect(probe.json().detail).toBe(
          'The instance is stopping: it finishes the requests it has, and takes no more once the balancer has noticed.',
        );
      }
      // The API still answers while draining.
      expect((await t.app.inject({ method: 'GET', url: '/v1/publications?page=1&pageSize=1' })).statusCode).toBe(200);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await t.close();
    }
  }, 60000);
});
