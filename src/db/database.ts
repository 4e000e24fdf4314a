import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import type { Database } from './schema.js';

// int8 (count(*), bigserial) as numbers; dates as 'YYYY-MM-DD' strings, never shifted by the local time zone.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Anything a repository function can run on: the database or a transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;

export interface DatabaseOptions {
  max?: number;
  connectionTimeoutMillis?: number;
  statementTimeoutMillis?: number;
  applicationName?: string;
  onPoolError?: (error: Error) => void;
}

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function createPool(url: string, options: DatabaseOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // A request waits a bounded time for a connection instead of forever (the pg default).
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5000,
    idleTimeoutMillis: 30000,
    statement_timeout: options.statementTimeoutMillis ?? 30000,
    idle_in_transaction_session_timeout: 60000,
    application_name: options.applicationName ?? 'education-api',
    options: '-c TimeZone=UTC',
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', (error) => options.onPoolError?.(error));
  return pool;
}

export function createDatabase(url: string, options: DatabaseOptions = {}): DatabaseHandle {
  const pool = createPool(url, options);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool, cursor: Cursor }) });
  let closed = false;
  return {
    db,
    pool,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
