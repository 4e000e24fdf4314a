import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';
import { startReceiver } from './receiver.js';

let database: TestDatabase;
let provider: TestProvider;
let dataDir: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  provider = await createProviderWithToken(database.db);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'events-crash-'));
  receiver = await startReceiver();
});
afterAll(async () => {
  for (const server of servers)
    if (server.child.exitCode === null && server.child.signalCode === null)
      await stopServerProcess(server.child, 'SIGTERM');
  await receiver?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const env = () => ({
  DATABASE_URL: database.url,
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
  RATE_LIMIT_REGISTER_MAX: '100000',
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '500',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_CONNECT_TIMEOUT_MS: '500',
  WEBHOOK_POLL_MS: '200',
});

const letters = (n: number) =>
  n
    .toString(26)
    .split('')
    .map((d) => String.fromCharCode(97 + parseInt(d, 26)))
    .join('');

describe('kill -9 during a burst of writes and deliveries', () => {
  it('leaves exactly one event per committed change, and every event is delivered after a restart', async () => {
    const first = await startServerProcess(dataDir, env());
    servers.push(first);
    const headers = { ...provider.auth, 'content-type': 'application/json' };
    const sub = await fetch(`${first.url}/api/v2026.1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ data: { url: receiver.url, event_types: ['trainee.created'] } }),
    });
    expect(sub.status).toBe(201);

    const answered: string[] = [];
    const burst = Array.from({ length: 60 }, (_, i) =>
      fetch(`${first.url}/api/v2026.1/trainees`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          data: validTrainee({ first_names: `crash${letters(i)}`, email: `crash${letters(i)}@example.com` }),
        }),
      })
        .then(async (res) => {
          if (res.status === 201) answered.push((await res.json()).data.trainee_id);
        })
        .catch(() => {}),
    );
    // Killed while requests and deliveries are in flight: once a few creates have been answered.
    const started = Date.now();
    while (answered.length < 5 && Date.now() - started < 60_000) await new Promise((r) => setTimeout(r, 20));
    expect(answered.length).toBeLessThan(60);
    first.child.kill('SIGKILL');
    await Promise.all(burst);
    await new Promise((r) =>
      first.child.exitCode !== null || first.child.signalCode !== null ? r(null) : first.child.once('exit', r),
    );

    const second = await startServerProcess(dataDir, env());
    servers.push(second);
    // Events committed by the killed instance but not yet given a position wait in the inbox: the new instance's
    // sequencer moves them.
    const sequenced = Date.now() + 10_000;
    while (
      (await database.db.selectFrom('event_inbox').select('seq').limit(1).execute()).length > 0 &&
      Date.now() < sequenced
    )
      await new Promise((r) => setTimeout(r, 20));
    expect(await database.db.selectFrom('event_inbox').select('seq').execute()).toEqual([]);
    const trainees = (
      await database.db.selectFrom('trainees').select('id').where('provider_id', '=', provider.id).execute()
    ).map((t) => t.id);
    // Every create that was answered 201 committed; some that were cut off may have committed too.
    expect(trainees).toEqual(expect.arrayContaining(answered));
    expect(trainees.length).toBeGreaterThan(0);
    const events = await database.db
      .selectFrom('events')
      .select(['id', 'resource_id'])
      .where('type', '=', 'trainee.created')
      .where('provider_id', '=', provider.id)
      .execute();
    // Exactly one event per committed create, none for one that did not commit.
    expect(events.map((e) => e.resource_id).sort()).toEqual([...trainees].sort());

    const deadline = Date.now() + 60_000;
    while (new Set(receiver.received.map((r) => r.json.resource.id)).size < trainees.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const delivered = new Map<string, Set<string>>();
    for (const r of receiver.received)
      delivered.set(r.json.resource.id, (delivered.get(r.json.resource.id) ?? new Set()).add(r.id));
    expect([...delivered.keys()].sort()).toEqual([...trainees].sort());
    // A duplicate (an attempt cut off by the kill and sent again) always carries the same webhook-id.
    for (const ids of delivered.values()) expect(ids.size).toBe(1);
    // In commit order.
    const order = (
      await database.db
        .selectFrom('events')
        .select('resource_id')
        .where('type', '=', 'trainee.created')
        .where('provider_id', '=', provider.id)
        .orderBy('position')
        .execute()
    ).map((e) => e.resource_id);
    const firstSeen = [...new Map(receiver.received.map((r) => [r.json.resource.id, true])).keys()];
    expect(firstSeen).toEqual(order);
    await stopServerProcess(second.child, 'SIGTERM');
  }, 240_000);
});
