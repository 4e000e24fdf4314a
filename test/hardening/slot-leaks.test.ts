/**
 * Live streams and CSV exports hold slots; a slot is given back when the response closes, whether the client hangs
 * up before the handler runs, while it awaits (each await is held open here until the client has gone), or after
 * the response started. Anonymous clients cannot take the providers' share, and an IPv6 client counts by its /64.
 */
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientKeyOf } from '../../src/plugins/streaming.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { createProviderWithToken } from '../register/helpers.js';
import {
  expectServiceAnswersOthers,
  hangUpAfter,
  rawRequest,
  registerCall,
  statusOf,
  until,
  type Bystander,
} from '../events/outside.js';
import { loopbackNetwork, startReceiver } from '../events/receiver.js';

let t: TestApp;
let base: string;
let bystander: Bystander;
const CSV_PATH = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?geographicLevels.eq=NAT`;
const STREAM = { accept: 'text/event-stream' };
const CSV = { accept: 'text/csv' };

beforeAll(async () => {
  t = await buildTestApp(
    {
      RATE_LIMIT_REGISTER_MAX: '100000',
      RATE_LIMIT_STATISTICS_MAX: '100000',
      TRUST_PROXY: 'true',
      QUERY_VERSION_CACHE_MS: '0',
      EVENTS_STREAM_MAX_PER_CLIENT: '2',
      EVENTS_STREAM_MAX_CONCURRENT: '6',
      EVENTS_STREAM_RESERVED_FOR_PROVIDERS: '2',
      QUERY_CSV_MAX_PER_CLIENT: '2',
      QUERY_CSV_MAX_CONCURRENT: '4',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
      WEBHOOK_POLL_MS: '100',
    },
    { webhookNetwork: loopbackNetwork().network },
  );
  const receiver = await startReceiver();
  bystander = { provider: await createProviderWithToken(t.database.db), receiver };
  expect((await registerCall(t, bystander.provider, 'POST', '/webhooks', { url: receiver.url })).statusCode).toBe(201);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t?.close();
  await bystander?.receiver.close();
});

/** No slot held, for 500 ms in a row (requests of clients already gone may still be arriving on a busy machine). */
async function expectNoSlotHeld() {
  let freeSince = 0;
  await until(
    () => {
      if (t.app.events.slots.running !== 0 || t.app.streaming.exports.running !== 0) freeSince = 0;
      else freeSince ||= Date.now();
      return freeSince > 0 && Date.now() - freeSince >= 500;
    },
    10_000,
    `every slot given back (streams ${t.app.events.slots.running}, exports ${t.app.streaming.exports.running})`,
  );
}

/** The cursor of the newest event (a Last-Event-ID the stream accepts), so the handler reads a page too. */
async function newestCursor(): Promise<string> {
  const page = (await t.app.inject({ method: 'GET', url: '/v1/events?limit=500' })).json();
  return page.nextCursor;
}

describe('slots are given back whenever the client hangs up', () => {
  it('before the handler runs: 30 streams and 30 exports abandoned at once', async () => {
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        hangUpAfter(base, '/v1/events', { ...STREAM, 'x-forwarded-for': `198.51.100.${i}` }, 0),
      ),
    );
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        hangUpAfter(base, CSV_PATH, { ...CSV, 'x-forwarded-for': `198.51.100.${i}` }, 0),
      ),
    );
    await expectNoSlotHeld();
    await expectServiceAnswersOthers(t, base, bystander);
  });

  it('at each await of the stream handler (the sequencer, the log state, the resumed page)', async () => {
    const cursor = await newestCursor();
    const deps = t.app.events;
    const db = deps.db;
    const sequencer = deps.sequencer;
    const catchUp = sequencer.catchUp.bind(sequencer);
    try {
      // -1: the sequencer's catch-up; 0, 1, 2: the handler's database calls, in order.
      for (const pauseAt of [-1, 0, 1, 2]) {
        let gone!: () => void;
        const clientGone = new Promise<void>((resolve) => (gone = resolve));
        let reached = false;
        const hold = async () => {
          reached = true;
          await clientGone;
          // The server sees the close before the handler goes on.
          await new Promise((r) => setTimeout(r, 100));
        };
        let calls = 0;
        const pause: KyselyPlugin = {
          transformQuery: (args) => args.node,
          transformResult: async (args) => {
            if (calls++ === pauseAt) await hold();
            return args.result;
          },
        };
        sequencer.catchUp = async () => {
          if (pauseAt === -1) await hold();
          return catchUp();
        };
        deps.db = db.withPlugin(pause);
        const request = rawRequest(base, '/v1/events', {
          ...STREAM,
          'last-event-id': cursor,
          'x-forwarded-for': '203.0.113.7',
        });
        // The sequencer's own ticks call catchUp (and the database) too, and may reach the hold first: wait for the
        // handler itself, which holds its slot from before its first await.
        await until(() => reached && deps.slots.running === 1, 5000, `the handler to reach await ${pauseAt}`);
        // Hang up while the handler waits.
        await request.hangUp();
        gone();
        await expectNoSlotHeld();
      }
    } finally {
      deps.db = db;
      sequencer.catchUp = catchUp;
    }
    // The same client can still open its 2 streams.
    for (let i = 0; i < 2; i++)
      expect(await statusOf(base, '/v1/events', { ...STREAM, 'x-forwarded-for': '203.0.113.7' })).toBe(200);
    await expectNoSlotHeld();
  });

  it('at each await of the CSV export (the data set, its version), held by a table lock', async () => {
    for (const table of ['data_sets', 'data_set_versions']) {
      const client = await t.database.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        // The export waits on the lock; its client hangs up meanwhile.
        const request = rawRequest(base, CSV_PATH, { ...CSV, 'x-forwarded-for': '203.0.113.8' });
        await until(() => t.app.streaming.exports.running === 1, 5000, 'the export to take its slot');
        await new Promise((r) => setTimeout(r, 200));
        await request.hangUp();
      } finally {
        await client.query('COMMIT');
        client.release();
      }
      await expectNoSlotHeld();
    }
    await expectServiceAnswersOthers(t, base, bystander);
  });

  it('after the response started (streams and exports read, then abandoned), many times over', async () => {
    for (let i = 0; i < 10; i++) {
      await Promise.all([
        hangUpAfter(base, '/v1/events', { ...STREAM, 'x-forwarded-for': '203.0.113.9' }, 5 + i * 7),
        hangUpAfter(base, CSV_PATH, { ...CSV, 'x-forwarded-for': '203.0.113.9' }, 5 + i * 7),
      ]);
    }
    await expectNoSlotHeld();
    await expectServiceAnswersOthers(t, base, bystander);
  });
});

describe('shares and client keys', () => {
  it("anonymous streams cannot take the providers' share: 503 for the next anonymous client, 200 for a provider", async () => {
    const opened: Array<() => void> = [];
    try {
      // 6 in all, 2 reserved: 4 anonymous clients fill the anonymous share.
      for (let i = 0; i < 4; i++) opened.push(await openStream('/v1/events', { 'x-forwarded-for': `192.0.2.${i}` }));
      expect(await statusOf(base, '/v1/events', { ...STREAM, 'x-forwarded-for': '192.0.2.200' })).toBe(503);
      expect(await statusOf(base, '/api/v2026.1/events', { ...STREAM, ...bystander.provider.auth })).toBe(200);
    } finally {
      for (const close of opened) close();
    }
    await expectNoSlotHeld();
  });

  it('counts an IPv6 client by its /64: a third stream from the same /64 is refused (429), another /64 is not', async () => {
    const opened: Array<() => void> = [];
    try {
      opened.push(await openStream('/v1/events', { 'x-forwarded-for': '2001:db8:1:2::1' }));
      opened.push(await openStream('/v1/events', { 'x-forwarded-for': '2001:db8:1:2:aaaa:bbbb:cccc:dddd' }));
      expect(await statusOf(base, '/v1/events', { ...STREAM, 'x-forwarded-for': '2001:db8:1:2::3' })).toBe(429);
      expect(await statusOf(base, CSV_PATH, { ...CSV, 'x-forwarded-for': '2001:db8:1:3::1' })).toBe(200);
      expect(await statusOf(base, '/v1/events', { ...STREAM, 'x-forwarded-for': '2001:db8:1:3::1' })).toBe(200);
    } finally {
      for (const close of opened) close();
    }
    expect(clientKeyOf('2001:db8:1:2::1')).toBe(clientKeyOf('2001:0db8:0001:0002:ffff::'));
    expect(clientKeyOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
    await expectNoSlotHeld();
  });

  it('logs a refusal for want of a slot at warn, in one line without a stack', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const { buildApp } = await import('../../src/app.js');
    const app = await buildApp(
      { ...t.config, EVENTS_STREAM_MAX_PER_CLIENT: 1 },
      { db: t.database.db, logger: { level: 'info', stream: sink }, webhookWorker: false },
    );
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const first = await openStreamAt(url, '/v1/events', {});
      expect(await statusOf(url, '/v1/events', STREAM)).toBe(429);
      first();
      const refusal = lines.map((l) => JSON.parse(l)).find((l) => l.status === 429);
      expect(refusal).toMatchObject({ level: 40 });
      expect(JSON.stringify(refusal)).not.toMatch(/stack|at .*\.ts/);
    } finally {
      await app.close();
    }
  });
});

function openStream(path: string, headers: Record<string, string>): Promise<() => void> {
  return openStreamAt(base, path, headers);
}

async function openStreamAt(url: string, path: string, headers: Record<string, string>): Promise<() => void> {
  const controller = new AbortController();
  const res = await fetch(`${url}${path}`, { headers: { ...STREAM, ...headers }, signal: controller.signal });
  expect(res.status).toBe(200);
  return () => controller.abort();
}
