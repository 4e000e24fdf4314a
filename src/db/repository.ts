import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from './database.js';

/**
 * The database layer's own statements: probes, a pooled client's transaction control, the replica check and the
 * embedded cluster's database. The APIs' statements are in their modules' repositories.
 */

/** A connection or a pool of them, as node-postgres gives them. */
type Queryable = pg.Pool | pg.PoolClient | pg.Client;

/** The cheapest statement a database answers: the liveness probe's. */
export async function selectOne(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/** The same through a pool: it opens (or takes) one of its connections. */
export async function selectOneOn(pool: pg.Pool): Promise<void> {
  await pool.query('SELECT 1');
}

/** Starts a transaction whose statements each end after `statementTimeoutMs` (a whole number of milliseconds). */
export async function beginWithStatementTimeout(client: pg.PoolClient, statementTimeoutMs: number): Promise<void> {
  await client.query('BEGIN');
  // SET takes no parameters; the value is an integer the caller computed, never input.
  await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(statementTimeoutMs))}`);
}

export async function commit(client: pg.PoolClient): Promise<void> {
  await client.query('COMMIT');
}

export async function rollback(client: pg.PoolClient): Promise<void> {
  await client.query('ROLLBACK');
}

/** The primary's WAL position as text (`0/3000148`); null when the server is itself a standby. */
export async function currentWalPosition(primary: Queryable): Promise<string | null> {
  const { rows } = await primary.query<{ lsn: string | null }>(
    'SELECT CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_current_wal_lsn()::text END AS lsn',
  );
  return rows[0]?.lsn ?? null;
}

/** Whether a server is a standby, and how far it has replayed the primary's WAL (null: not a streaming standby). */
export async function replayPosition(replica: Queryable): Promise<{ standby: boolean; replayed: string | null }> {
  const { rows } = await replica.query<{ standby: boolean; replayed: string | null }>(
    'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed',
  );
  return rows[0]!;
}

/** Creates database `name` on the cluster `client` is connected to, unless it exists. */
export async function createDatabaseUnlessExists(client: Queryable, name: string): Promise<void> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  // CREATE DATABASE takes no parameters: the name is quoted as an identifier.
  if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
}
