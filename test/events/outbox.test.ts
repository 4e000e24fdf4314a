import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { appendEvent, CursorExpiredError, decodeCursor, encodeCursor, purgeEvents, readEventPage, type NewEvent } from '../../src/events/outbox-repository.js';
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
  const trx = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect: async () => bound, end: async () => {} } as never }) });
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

async function feed(after?: number) {
  return readEventPage(database.db, STATISTICS, after, {}, 500, 90);
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

  it('makes a second appender wait until the first ends, and leaves no gap or event for a rollback', async () => {
    const start = (await feed()).next;
    const a = await openTransaction();
    const b = await openTransaction();
    const aPosition = (await a.append(event('rolled-back'))).position;
    const bAppend = b.append(event('kept'));
    expect(await pendingAfter(bAppend, 300)).toBe(true);
    expect((await feed(start)).events).toEqual([]);
    await a.rollback();
    expect((await bAppend).position).toBe(aPosition);
    await b.commit();
    const page = await feed(start);
    expect(page.events.map((e) => [e.position, e.resource_id])).toEqual([[aPosition, 'kept']]);
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
    for (const id of ['x2', 'x3']) await database.db.transaction().execute((trx) => appendEvent(trx, { ...event(id), parentId: 'x1' }));
    const byType = await readEventPage(database.db, STATISTICS, start, { types: ['data_set_version.published'] }, 10, 90);
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
    const later = new Date(Date.now() + 91 * 86_400_000);
    const purged = await purgeEvents(database.db, 90, later);
    expect(purged.deleted).toBeGreaterThan(0);
    await expect(readEventPage(database.db, STATISTICS, old, {}, 10, 90)).rejects.toBeInstanceOf(CursorExpiredError);
    // The position of the last purged event is still a valid cursor: nothing after it is lost.
    expect((await readEventPage(database.db, STATISTICS, purged.purgedThrough, {}, 10, 90)).events).toEqual([]);
    expect((await feed()).events).toEqual([]);
  });

  it('keeps cursors opaque and refuses a forged one', () => {
    expect(decodeCursor(encodeCursor(42), 'after')).toBe(42);
    expect(() => decodeCursor('42', 'after')).toThrow(/not a cursor/);
    expect(() => decodeCursor(Buffer.from('ev1.007').toString('base64url'), 'after')).toThrow(/not a cursor/);
  });
});
