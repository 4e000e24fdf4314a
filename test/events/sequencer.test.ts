import type { FastifyInstance } from 'fastify';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import type { Database } from '../../src/db/schema.js';
import { appendEvent, eventLogState, type NewEvent } from '../../src/events/outbox-repository.js';
import { EventSequencer } from '../../src/events/sequencer.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

function event(resourceId: string): NewEvent {
  return { api: 'statistics', type: 'data_set.created', resourceType: 'data_set', resourceId, payload: { resourceId } };
}

async function inboxCount(): Promise<number> {
  return Number(
    (
      await database.db
        .selectFrom('event_inbox')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
}

async function until(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the sequencer', () => {
  it('with two instances on one database sequencing at once, gives every committed event exactly one position, without gaps', async () => {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATABASE_URL: database.url,
      EVENTS_SEQUENCE_INTERVAL_MS: '1',
      RATE_LIMIT_STATISTICS_MAX: '1000000',
    });
    // Each instance on a pool of its own, as separate processes would be.
    const handles: DatabaseHandle[] = [
      createDatabase(database.url, { max: 4 }),
      createDatabase(database.url, { max: 4 }),
    ];
    const apps: FastifyInstance[] = [];
    try {
      for (const handle of handles)
        apps.push(
          await buildApp(config, {
            db: handle.db,
            pools: { primary: handle.pool },
            logger: false,
            webhookWorker: false,
          }),
        );
      await Promise.all(apps.map((app) => app.ready()));
      const start = (await eventLogState(database.db)).lastPosition;
      const committed: string[] = [];
      let writing = true;
      // Feed reads on both instances all along: each sequences before it reads, besides both instances' loops.
      const readers = apps.map(async (app) => {
        while (writing) {
          const res = await app.inject({ method: 'GET', url: '/v1/events?limit=1' });
          expect(res.statusCode).toBe(200);
        }
      });
      await Promise.all(
        Array.from({ length: 6 }, async (_, writer) => {
          for (let i = 0; i < 25; i++) {
            const ids = Array.from({ length: 1 + (i % 3) }, (_, k) => `w${writer}-${i}-${k}`);
            const rollback = i % 7 === 6;
            await database.db
              .transaction()
              .execute(async (trx) => {
                for (const id of ids) await appendEvent(trx, event(id));
                if (rollback) throw new Error('rolled back');
              })
              .catch((error: Error) => {
                if (error.message !== 'rolled back') throw error;
              });
            if (!rollback) committed.push(...ids);
          }
        }),
      );
      writing = false;
      await Promise.all(readers);
      await until(async () => (await inboxCount()) === 0, 10_000, 'the inbox to empty');
      const rows = await database.db
        .selectFrom('events')
        .select(['position', 'id', 'resource_id'])
        .where('position', '>', start)
        .orderBy('position')
        .execute();
      expect(rows.map((r) => r.resource_id).sort()).toEqual([...committed].sort());
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
      expect(rows.map((r) => r.position)).toEqual(Array.from({ length: committed.length }, (_, i) => start + 1 + i));
      // One writer's transactions (each waited for the previous one's commit) and one transaction's events keep their order.
      for (let writer = 0; writer < 6; writer++) {
        const mine = rows.map((r) => r.resource_id).filter((id) => id.startsWith(`w${writer}-`));
        expect(mine).toEqual(committed.filter((id) => id.startsWith(`w${writer}-`)));
      }
      expect((await eventLogState(database.db)).lastPosition).toBe(start + committed.length);
    } finally {
      for (const app of apps) await app.close();
      for (const handle of handles) await handle.close();
    }
  });

  it('survives a database outage: logs, backs off, sequences what waited once the database answers, and stops on close', async () => {
    let down = true;
    let connects = 0;
    const pool = database.pool;
    // A pool that refuses connections while `down`, in front of the test database's own.
    const flaky = {
      connect: async () => {
        connects++;
        if (down) throw new Error('connection refused (test outage)');
        return pool.connect();
      },
      end: async () => {},
    };
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: flaky }) });
    const warnings: string[] = [];
    const sequencer = new EventSequencer(db, { intervalMs: 5, log: { warn: (_obj, msg) => warnings.push(msg) } });
    const start = (await eventLogState(database.db)).lastPosition;
    await database.db.transaction().execute((trx) => appendEvent(trx, event('waited-out-the-outage')));
    sequencer.start();
    await until(async () => warnings.length >= 3, 5000, 'failed ticks');
    // Backing off: far fewer attempts than one per 5 ms.
    const attempts = connects;
    await new Promise((r) => setTimeout(r, 300));
    expect(connects - attempts).toBeLessThan(10);
    expect(await inboxCount()).toBe(1);
    down = false;
    await until(async () => (await inboxCount()) === 0, 10_000, 'the inbox to empty after the outage');
    const moved = await database.db
      .selectFrom('events')
      .select(['position', 'resource_id'])
      .where('position', '>', start)
      .execute();
    expect(moved).toEqual([{ position: start + 1, resource_id: 'waited-out-the-outage' }]);
    expect(warnings.every((m) => m === 'event sequencer failed; retrying')).toBe(true);
    // Between ticks no connection is held: every connection the sequencer took is back in the pool.
    await sequencer.close();
    expect(pool.totalCount - pool.idleCount).toBe(0);
    const afterClose = connects;
    await new Promise((r) => setTimeout(r, 100));
    expect(connects).toBe(afterClose);
  });
});
