import { createHash } from 'node:crypto';
import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import type pg from 'pg';

/**
 * Named prepared statements for the statements the register sends on nearly every request (a create's, an update's,
 * a GET's, a list page's) and the event sequencer's batch. A statement whose text begins with PREPARED is parsed and
 * planned once per connection and afterwards only bound and executed: PostgreSQL skips parsing, analysing and
 * planning it (measured in docs/performance.md, "Register API"). Only marked statements are prepared, so the
 * statements a connection holds are the code's marked texts (at most MAX_PREPARED_TEXTS whatever the texts).
 *
 * A prepared statement outlives a migration on its connection: when a table it reads changes so that its result
 * type changes (a column added to a table it returns `*` of), PostgreSQL refuses it ("cached plan must not change
 * result type"). The connection then prepares its statements again under new names (the old ones are let go with
 * the connection), and `withStalePreparedRetry` runs the caller's transaction once more on it.
 */
export const PREPARED = '/* prepared */ ';

/** Distinct marked texts that get a name; past it, a marked text runs unnamed (bounded memory on both ends). */
const MAX_PREPARED_TEXTS = 256;
const names = new Map<string, string>();

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED_TEXTS) {
    name = createHash('sha256').update(text).digest('base64url').slice(0, 24);
    names.set(text, name);
  }
  return name;
}

/** PostgreSQL refused a prepared statement whose result type changed since it was prepared (SQLSTATE 0A000). */
export function isStalePreparedStatement(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}

/** Sends the client's marked statements (text and parameter array, as Kysely calls it) as named statements. */
export function prepareMarkedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  // Part of every name: a stale statement is replaced by a fresh one under another name.
  let generation = 0;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    const name = typeof text === 'string' && text.startsWith(PREPARED) && args.length <= 2 ? nameOf(text) : undefined;
    if (name === undefined) return query(...args);
    return query({ name: `${generation}_${name}`, text, values }).catch((error: unknown) => {
      if (isStalePreparedStatement(error)) generation++;
      throw error;
    });
  };
}

/**
 * Runs `query` (a Kysely query builder) as a marked statement on `executor`: a builder's text cannot begin with
 * the mark, so the compiled text gets it.
 */
export async function executePrepared<Row>(
  executor: { executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> },
  query: Compilable<Row>,
): Promise<Row[]> {
  const compiled = query.compile();
  return (await executor.executeQuery(CompiledQuery.raw(PREPARED + compiled.sql, [...compiled.parameters])))
    .rows as Row[];
}

/**
 * Runs `run` on one connection of `db`, and once more on it when a prepared statement went stale: `run` must be one
 * transaction (its first run rolled back whole), and the connection has prepared its statements afresh by then.
 */
export async function withStalePreparedRetry<DB, T>(
  db: Kysely<DB>,
  run: (connection: Kysely<DB>) => Promise<T>,
): Promise<T> {
  return db.connection().execute(async (connection) => {
    try {
      return await run(connection);
    } catch (error) {
      if (!isStalePreparedStatement(error)) throw error;
      return run(connection);
    }
  });
}
