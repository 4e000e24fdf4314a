import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import {
  appendEvent,
  CursorExpiredError,
  decodeCursor,
  encodeCursor,
  purgeEvents,
  readEventPage,
  sequenceEventBatch,
  sequencePendingEvents,
  type NewEvent,
} from '../../src/events/outbox-repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const STATISTICS = { api: 'statistics' } as const;

function event(resourceId: string, type = 'data_set.created'): NewEvent {
  return { api: 'statistics', type, resourceType: 'data_set', resourceId, payload: { resourceId } };
}

/** A transaction on its own connection, driven step by step (BEGIN now; append, commit or roll back later). */
async function openTransaction() {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('BEGIN');
  const bound = { query: client.query.bind(client), release: () => {} };
  const trx = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect: async () => bound, end: async () => {} } }),
  });
  return {
    // A change of the transaction's own, before its event: the transaction is in flight from here on.
    change: () => client.query('SELECT txid_current()'),
    append: (e: NewEvent) => appendEvent(trx, e),
    commit: async () => {
      await client.query('COMMIT');
      await client.end();
    },
    rollback: async () => {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

/** A feed read as the routes make it: the inbox sequenced first. */
async function feed(after?: number) {
  await sequencePendingEvents(database.db);
  return readEventPage(database.db, STATISTICS, after, {}, 500, 90);
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

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([promise, new Promise((r) => setTimeout(() => r(marker), ms))])) === marker;
}

describe('the outbox', () => {
  it('numbers events in commit order when the transaction that began first commits last', async () => {
    const start = (await feed()).next;
    const a = await openTransaction();
    const b = await openTransaction();
    await a.change();
    await b.change();
    await b.append(event('b'));
    await b.commit();
    // A reader between the two commits sees B, and remembers its cursor.
    const first = await feed(start);
    expect(first.events.map((e) => e.resource_id)).toEqual(['b']);
    await a.append(event('a'));
    await a.commit();
    // A, committed later, comes after B's cursor: the reader misses nothing.
    const second = await feed(first.next);
    expect(second.events.map((e) => e.resource_id)).toEqual(['a']);
    expect(second.events[0]!.position).toBeGreaterThan(first.events[0]!.position);
  });

  it('orders by commit when the transaction that appended first commits last: a reader between the commits misses nothing', async () => {
    const start = (await feed()).next;
    const a = await openTransaction();
    const b = await openTransaction();
    await a.change();
    await a.append(event('appended-first'));
    // No lock is shared any more: B appends and commits while A is still open.
    await b.change();
    expect(await pendingAfter(b.append(event('appended-second')), 1000)).toBe(false);
    await b.commit();
    const between = await feed(start);
    expect(between.events.map((e) => e.resource_id)).toEqual(['appended-second']);
    await a.commit();
    const after = await feed(between.next);
    expect(after.events.map((e) => e.resource_id)).toEqual(['appended-first']);
    // Read from the start after both commits: each once, positions increasing and consecutive.
    const whole = (await feed(start)).events;
    expect(whole.map((e) => [e.position, e.resource_id])).toEqual([
      [start + 1, 'appended-second'],
      [start + 2, 'appended-first'],
    ]);
    expect(await inboxCount()).toBe(0);
  });

  it('leaves nothing for an append in a rolled-back transaction: no event, no inbox row, no position used', async () => {
    const start = (await feed()).next;
    const a = await openTransaction();
    const b = await openTransaction();
    await a.append(event('rolled-back'));
    await b.append(event('kept'));
    // Not committed yet: nothing to sequence, nothing to read.
    expect(await sequencePendingEvents(database.db)).toBe(0);
    expect((await feed(start)).events).toEqual([]);
    await a.rollback();
    await b.commit();
    const page = await feed(start);
    expect(page.events.map((e) => [e.position, e.resource_id])).toEqual([[start + 1, 'kept']]);
    expect(await inboxCount()).toBe(0);
    expect(
      await database.db.selectFrom('events').select('id').where('resource_id', '=', 'rolled-back').execute(),
    ).toEqual([]);
  });

  it("keeps one transaction's events in append order, in batches of any size, and notifies once per batch", async () => {
    const start = (await feed()).next;
    const listener = new pg.Client({ connectionString: database.url });
    await listener.connect();
    const notified: string[] = [];
    listener.on('notification', (n) => notified.push(String(n.payload)));
    await listener.query('LISTEN events');
    await database.db.transaction().execute(async (trx) => {
      for (const id of ['t1', 't2', 't3', 't4', 't5']) await appendEvent(trx, event(id));
    });
    expect(await sequenceEventBatch(database.db, 2)).toBe(2);
    expect(await sequencePendingEvents(database.db, 2)).toBe(3);
    const page = await readEventPage(database.db, STATISTICS, start, {}, 500, 90);
    expect(page.events.map((e) => [e.position, e.resource_id])).toEqual(
      ['t1', 't2', 't3', 't4', 't5'].map((id, i) => [start + 1 + i, id]),
    );
    // Batches of 2, 2 and 1; the last batch's notification names the last position.
    const deadline = Date.now() + 5000;
    while (notified.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await listener.end();
    expect(notified).toEqual([String(start + 2), String(start + 4), String(start + 5)]);
  });

  it('gives a follower polling during 40 concurrent writers every committed event exactly once, in position order', async () => {
    const start = (await feed()).next;
    const seen: number[] = [];
    let cursor = start;
    let writing = true;
    const follower = (async () => {
      while (writing) {
        const page = await feed(cursor);
        seen.push(...page.events.map((e) => e.position));
        cursor = page.next;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const committed: string[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const trx = await openTransaction();
        await trx.change();
        await new Promise((r) => setTimeout(r, Math.random() * 30));
        await trx.append(event(`w${i}`));
        await new Promise((r) => setTimeout(r, Math.random() * 10));
        if (i % 5 === 4) return trx.rollback();
        await trx.commit();
        committed.push(`w${i}`);
      }),
    );
    writing = false;
    await follower;
    const rest = await feed(cursor);
    seen.push(...rest.events.map((e) => e.position));
    const all = (await feed(start)).events;
    expect(all.map((e) => e.resource_id).sort()).toEqual([...committed].sort());
    expect(seen).toEqual(all.map((e) => e.position));
    // Gapless: 32 committed events at 32 consecutive positions.
    expect(all.map((e) => e.position)).toEqual(Array.from({ length: committed.length }, (_, i) => start + 1 + i));
  });

  it('filters by type and resource, and pages with the next cursor', async () => {
    const start = (await feed()).next;
    await database.db.transaction().execute(async (trx) => {
      await appendEvent(trx, event('x1', 'data_set_version.published'));
    });
    for (const id of ['x2', 'x3'])
      await database.db.transaction().execute((trx) => appendEvent(trx, { ...event(id), parentId: 'x1' }));
    await sequencePendingEvents(database.db);
    const byType = await readEventPage(
      database.db,
      STATISTICS,
      start,
      { types: ['data_set_version.published'] },
      10,
      90,
    );
    expect(byType.events.map((e) => e.resource_id)).toEqual(['x1']);
    const byResource = await readEventPage(database.db, STATISTICS, start, { resourceId: 'x1' }, 2, 90);
    expect(byResource.events.map((e) => e.resource_id)).toEqual(['x1', 'x2']);
    expect(byResource.hasMore).toBe(true);
    const rest = await readEventPage(database.db, STATISTICS, byResource.next, { resourceId: 'x1' }, 2, 90);
    expect(rest.events.map((e) => e.resource_id)).toEqual(['x3']);
    expect(rest.hasMore).toBe(false);
  });

  it('purges events past retention and answers a cursor older than that with 410', async () => {
    const old = (await feed()).next;
    await database.db.transaction().execute((trx) => appendEvent(trx, event('old')));
    await sequencePendingEvents(database.db);
    const later = new Date(Date.now() + 91 * 86_400_000);
    const purged = await purgeEvents(database.db, 90, later);
    expect(purged.deleted).toBeGreaterThan(0);
    await expect(readEventPage(database.db, STATISTICS, old, {}, 10, 90)).rejects.toBeInstanceOf(CursorExpiredError);
    // The position of the last purged event is still a valid cursor: nothing after it is lost.
    expect((await readEventPage(database.db, STATISTICS, purged.purgedThrough, {}, 10, 90)).events).toEqual([]);
    expect((await feed()).events).toEqual([]);
  });

  it('purges a backlog a batch at a time: every old event, none newer, the positions left unbroken', async () => {
    // Whatever earlier tests left is purged first (a cutoff after every event), so the backlog below is all there is.
    await feed();
    await purgeEvents(database.db, 0, new Date(Date.now() + 60_000));
    const { last_position: start } = await database.db
      .selectFrom('event_log_state')
      .select('last_position')
      .executeTakeFirstOrThrow();
    for (let i = 0; i < 25; i++)
      await database.db.transaction().execute((trx) => appendEvent(trx, event(`backlog${i}`)));
    for (let i = 0; i < 3; i++) await database.db.transaction().execute((trx) => appendEvent(trx, event(`recent${i}`)));
    await sequencePendingEvents(database.db);
    // Everything up to the 25th new event is 100 days old; the last three are today's.
    await sql`UPDATE events SET occurred_at = now() - interval '100 days' WHERE position <= ${start + 25}`.execute(
      database.db,
    );
    const old = await database.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('position', '<=', start + 25)
      .executeTakeFirstOrThrow();

    // What each statement of the purge deletes, as the database sees it.
    await sql`CREATE TABLE purge_statements (id serial, deleted int)`.execute(database.db);
    await sql`CREATE FUNCTION record_purge_statement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO purge_statements (deleted) SELECT count(*) FROM gone; RETURN NULL; END $$`.execute(database.db);
    await sql`CREATE TRIGGER events_purge_statements AFTER DELETE ON events REFERENCING OLD TABLE AS gone
      FOR EACH STATEMENT EXECUTE FUNCTION record_purge_statement()`.execute(database.db);

    const purged = await purgeEvents(database.db, 90, new Date(), 10);

    const { rows: statements } = await sql<{
      deleted: number;
    }>`SELECT deleted FROM purge_statements ORDER BY id`.execute(database.db);
    expect(statements.map((row) => row.deleted)).toEqual([10, 10, 5]);
    await sql`DROP TRIGGER events_purge_statements ON events`.execute(database.db);

    expect(purged).toEqual({ deleted: old.n, purgedThrough: start + 25 });
    const left = await database.db
      .selectFrom('events')
      .select(['position', 'resource_id'])
      .orderBy('position')
      .execute();
    expect(left).toEqual([0, 1, 2].map((i) => ({ position: start + 26 + i, resource_id: `recent${i}` })));
    const state = await database.db.selectFrom('event_log_state').select('purged_through').executeTakeFirstOrThrow();
    expect(state.purged_through).toBe(start + 25);
    // Nothing is old now: a second purge deletes nothing and keeps the position.
    expect(await purgeEvents(database.db, 90, new Date(), 10)).toEqual({ deleted: 0, purgedThrough: start + 25 });
  });

  it('keeps cursors opaque and refuses a forged one', () => {
    expect(decodeCursor(encodeCursor(42), 'after')).toBe(42);
    expect(() => decodeCursor('42', 'after')).toThrow(/not a cursor/);
    expect(() => decodeCursor(Buffer.from('ev1.007').toString('base64url'), 'after')).toThrow(/not a cursor/);
  });
});
