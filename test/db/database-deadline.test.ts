import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { to as copyTo } from 'pg-copy-streams';
import {
  createDatabase,
  DatabaseDeadlineError,
  withPooledClient,
  withRequestDeadline,
  type DatabaseHandle,
} from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** The client-side deadline of database calls: a 503 and a closed connection, following the session's timeout. */
let database: TestDatabase;
let handle: DatabaseHandle;

beforeAll(async () => {
  database = await createTestDatabase();
  // statement_timeout 10 s on the server, but the client gives up on a call after 300 ms.
  handle = createDatabase(database.url, { max: 2, statementTimeoutMillis: 10000, queryTimeoutMillis: 300 });
});
afterAll(async () => {
  await handle?.close();
  await database?.drop();
});

describe('database call deadline', () => {
  // Why the deadline is not pg's own `query_timeout` (docs/architecture.md, "Database deadlines"): pg rejects the
  // call but keeps the connection and the statement, so the next call on that client waits behind the unanswered
  // one and fails too — on a frozen database every pooled client would end up stuck. The guard destroys the connection instead.
  it("pg's query_timeout gives up on a call but leaves the connection busy with it", async () => {
    const client = new pg.Client({ connectionString: database.url, query_timeout: 200 });
    await client.connect();
    try {
      const started = Date.now();
      await expect(client.query('SELECT pg_sleep(1.5)')).rejects.toThrow('Query read timeout');
      expect(Date.now() - started).toBeLessThan(1000);
      // The statement still holds the connection: a `SELECT 1` right after cannot run and times out too.
      await expect(client.query('SELECT 1')).rejects.toThrow('Query read timeout');
      expect(Date.now() - started).toBeLessThan(1400);
    } finally {
      await client.end();
    }
  });

  it('fails a call the database does not answer in time with a 503, and the pool serves on', async () => {
    const started = Date.now();
    const error = await sql`SELECT pg_sleep(2)`.execute(handle.db).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseDeadlineError);
    expect((error as DatabaseDeadlineError).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(1500);
    // The connection was closed and discarded; the next call gets a fresh one.
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(handle.db)).rows).toEqual([{ one: 1 }]);
  });

  it('follows SET LOCAL statement_timeout for the transaction (the importer turns it off for its long statements)', async () => {
    await handle.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL statement_timeout = 0`.execute(trx);
      await sql`SELECT pg_sleep(0.6)`.execute(trx);
    });
    // After the transaction the pool's deadline applies again.
    await expect(sql`SELECT pg_sleep(0.6)`.execute(handle.db)).rejects.toBeInstanceOf(DatabaseDeadlineError);
  });

  it("fails getting a connection at a request's deadline when that comes before the connection timeout", async () => {
    const single = createDatabase(database.url, { max: 1, connectionTimeoutMillis: 5000 });
    try {
      const held = await single.pool.connect();
      const started = Date.now();
      const error = await withRequestDeadline({ until: Date.now() + 300, applies: () => true }, () =>
        sql`SELECT 1`.execute(single.db),
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DatabaseDeadlineError);
      expect((error as DatabaseDeadlineError).status).toBe(503);
      expect(Date.now() - started).toBeLessThan(2000);
      // The connection that arrives after the deadline goes back to the pool, which serves on.
      held.release();
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(single.db)).rows).toEqual([{ one: 1 }]);
      expect(single.pool.waitingCount).toBe(0);
      expect(single.pool.idleCount).toBe(1);
    } finally {
      await single.close();
    }
  });

  it("fails a call past a request's deadline when the database does not answer a probe, and lets it run on when it does", async () => {
    const patient = createDatabase(database.url, { max: 2, statementTimeoutMillis: 10000 });
    try {
      const run = (answers: boolean) =>
        withRequestDeadline(
          { until: Date.now() + 200, applies: () => true, databaseAnswers: async () => answers },
          () => sql`SELECT pg_sleep(0.8)`.execute(patient.db),
        );
      const started = Date.now();
      await expect(run(false)).rejects.toBeInstanceOf(DatabaseDeadlineError);
      expect(Date.now() - started).toBeLessThan(700);
      await expect(run(true)).resolves.toBeDefined();
      // Once the response has started (`applies` false), the request's deadline no longer applies.
      await expect(
        withRequestDeadline({ until: Date.now() + 200, applies: () => false }, () =>
          sql`SELECT pg_sleep(0.8)`.execute(patient.db),
        ),
      ).resolves.toBeDefined();
    } finally {
      await patient.close();
    }
  });

  it('gives a raw connection for a COPY in a transaction with its own statement timeout, bound client-side as a whole', {
    timeout: 20000,
  }, async () => {
    const single = createDatabase(database.url, { max: 1, statementTimeoutMillis: 10000, queryTimeoutMillis: 300 });
    try {
      // The COPY's bytes come as PostgreSQL writes them, and the session's statement timeout is the given one.
      const copied = await withPooledClient(single.db, 1500, async (client) => {
        const received: Buffer[] = [];
        for await (const data of client.query(copyTo("COPY (SELECT current_setting('statement_timeout')) TO STDOUT")))
          received.push(data as Buffer);
        return Buffer.concat(received).toString();
      });
      expect(copied).toBe('1500ms\n');
      // Past the bound plus 5 s, on a COPY (which the per-call deadline does not cover), the connection is cut.
      const started = Date.now();
      await expect(
        withPooledClient(single.db, 200, async (client) => {
          await client.query('SET LOCAL statement_timeout = 0');
          for await (const data of client.query(copyTo('COPY (SELECT pg_sleep(20)) TO STDOUT'))) void data;
        }),
      ).rejects.toBeInstanceOf(DatabaseDeadlineError);
      expect(Date.now() - started).toBeLessThan(7000);
      // A failure rolls back; the pool serves on with its own statement timeout.
      await expect(withPooledClient(single.db, 1000, async (client) => client.query('SELECT 1/0'))).rejects.toThrow(
        /division by zero/,
      );
      expect(
        (await sql<{ timeout: string }>`SELECT current_setting('statement_timeout') AS timeout`.execute(single.db))
          .rows,
      ).toEqual([{ timeout: '10s' }]);
      // A transaction has no connection of its own to give.
      await single.db.transaction().execute(async (trx) => {
        await expect(withPooledClient(trx, 1000, async () => 1)).rejects.toThrow(/not a transaction/);
      });
    } finally {
      await single.close();
    }
  });
});
