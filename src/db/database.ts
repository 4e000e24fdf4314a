import { AsyncLocalStorage } from 'node:async_hooks';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { ServiceUnavailableError } from '../errors.js';
import type { Database } from './schema.js';
import { prepareMarkedStatements } from './prepared-statements.js';
import { beginWithStatementTimeout, commit, rollback, selectOne, selectOneOn } from './repository.js';

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
  /**
   * Client-side deadline of every database call (a query, one cursor read): a call the server has not answered by
   * then fails with a 503 and its connection is destroyed, so a frozen or unreachable database cannot hang a request.
   * Default: the statement timeout plus 5 s (the server normally stops a slow statement first). 0 turns it off.
   */
  queryTimeoutMillis?: number;
  applicationName?: string;
  /** Called for every connection-level error (idle or checked-out connection lost, database restarted). */
  onPoolError?: (error: Error) => void;
}

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

/** The socket of a pg client or connection (not in pg's types). */
type WithStream = { stream?: { destroyed?: boolean; destroy(error?: Error): void } };

/** The database did not answer a call within the client-side deadline. */
export class DatabaseDeadlineError extends ServiceUnavailableError {
  readonly code = 'DATABASE_DEADLINE';
  constructor(deadlineMs: number) {
    super(`The database did not answer within ${deadlineMs} ms. Try again shortly.`);
  }
}

/** Ends a connection at once: pg then fails its queries with `error`, and the pool discards the client. */
function destroyConnection(connection: WithStream | undefined, error: Error): void {
  const stream = connection?.stream;
  if (stream && !stream.destroyed) stream.destroy(error);
}

/** Whether a connection's socket is gone (nothing more will arrive on it). */
function connectionGone(connection: WithStream | undefined): boolean {
  return !connection?.stream || connection.stream.destroyed === true;
}

/** A request's deadline for its database work (see `withRequestDeadline`). */
export interface RequestDeadline {
  /** When (epoch ms) every call must have answered, getting a connection included. */
  until: number;
  /** Whether the deadline still applies (false once the response has started). */
  applies: () => boolean;
  /**
   * Whether the database answers at all (see `databaseAnswersProbe`), asked when a call passes the deadline: if it
   * does, the call is slow, not stuck, and waits on under the session's deadline; if not (a frozen database), the
   * call fails. Without it the call fails at the deadline.
   */
  databaseAnswers?: () => Promise<boolean>;
}

/**
 * How long the caller lets each of its database calls wait (the session's deadline when that is shorter): at most
 * `perCallMs` each (a register request: short statements, see `withCallDeadline`), or a request's deadline (a
 * statistics request, see `withRequestDeadline`). So a frozen database answers such callers 503 within seconds
 * instead of after the session's deadline, which long statistics statements need.
 */
type CallerDeadline = { perCallMs: number } | RequestDeadline;

const callerDeadline = new AsyncLocalStorage<CallerDeadline>();

/** Runs `fn` with at most `deadlineMs` for each database call it makes (the session's deadline when that is shorter). */
export function withCallDeadline<T>(deadlineMs: number, fn: () => T): T {
  return callerDeadline.run({ perCallMs: deadlineMs }, fn);
}

/**
 * Runs `fn` (a request) so that each database call it makes — getting a connection, a query, a cursor read — that
 * has not answered by `deadline.until`, while `deadline.applies()` (the response has not started: after its first
 * byte a 503 can no longer be sent), fails with a DatabaseDeadlineError (503) unless the database still answers.
 */
export function withRequestDeadline<T>(deadline: RequestDeadline, fn: () => T): T {
  return callerDeadline.run(deadline, fn);
}

/**
 * Runs `fn` outside the deadline and the cursor abort signal of the request it is called from: for background work
 * a request starts (a row index load) that has a time bound of its own and must outlive the request.
 */
export function detachedFromRequest<T>(fn: () => T): T {
  return callerDeadline.exit(() => cursorAbort.exit(fn));
}

/**
 * Whether the database behind `db` answers `SELECT 1` within `timeoutMs` (the probe's own call is bound by it too,
 * so a frozen database leaves no probe waiting). Askers at the same time share one probe.
 */
export function databaseAnswersProbe(db: Db, timeoutMs: number): () => Promise<boolean> {
  let running: Promise<boolean> | undefined;
  const probe = async () => {
    let timer: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const answered = withCallDeadline(timeoutMs, () => selectOne(db)).then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([answered, outOfTime]);
    } finally {
      clearTimeout(timer);
    }
  };
  return () => {
    running ??= detachedFromRequest(probe).finally(() => {
      running = undefined;
    });
    return running;
  };
}

/** The wait the caller allows for one call starting now, in ms (at least 1), or undefined when it sets none. */
function callerWaitMs(caller: CallerDeadline | undefined): number | undefined {
  if (!caller) return undefined;
  if ('perCallMs' in caller) return caller.perCallMs;
  return caller.applies() ? Math.max(1, caller.until - Date.now()) : undefined;
}

/** The deadline of one call: the session's (0: none), or the caller's shorter one. */
function effectiveDeadline(sessionDeadline: number, caller = callerDeadline.getStore()): number {
  const wait = callerWaitMs(caller);
  if (wait === undefined || sessionDeadline <= 0) return sessionDeadline;
  return Math.min(wait, sessionDeadline);
}

/**
 * Calls `expire` when a call made now passes its deadline (the session's, or the caller's shorter one); returns the
 * function that disarms it. Past a request's deadline whose database still answers, the call waits on until the
 * session's deadline.
 */
function armCallDeadline(
  sessionDeadline: number,
  caller: CallerDeadline | undefined,
  expire: (error: DatabaseDeadlineError) => void,
): () => void {
  const deadline = effectiveDeadline(sessionDeadline, caller);
  if (deadline <= 0) return () => {};
  const started = Date.now();
  let disarmed = false;
  const arm = (ms: number, onTimeout: () => void) => setTimeout(onTimeout, ms).unref();
  let timer = arm(deadline, () => {
    const databaseAnswers =
      caller && 'until' in caller && deadline < sessionDeadline ? caller.databaseAnswers : undefined;
    if (!databaseAnswers) return expire(new DatabaseDeadlineError(deadline));
    void databaseAnswers().then((answers) => {
      if (disarmed) return;
      if (!answers) return expire(new DatabaseDeadlineError(deadline));
      timer = arm(Math.max(1, sessionDeadline - (Date.now() - started)), () =>
        expire(new DatabaseDeadlineError(sessionDeadline)),
      );
    });
  });
  return () => {
    disarmed = true;
    clearTimeout(timer);
  };
}

const SET_STATEMENT_TIMEOUT = /^\s*SET\s+(LOCAL\s+|SESSION\s+)?statement_timeout\s*(?:=|TO)\s*'?(\d+)(ms)?'?\s*;?\s*$/i;
const TRANSACTION_END = /^\s*(COMMIT|ROLLBACK|END|ABORT)\b/i;

/**
 * Gives a pooled client a deadline on each promise-style query (what Kysely and the repositories use).
 * The deadline follows the session: a statement that changes `statement_timeout` (the importer's
 * `SET LOCAL statement_timeout = 0` for its long statements) sets it to that timeout plus 5 s (none for 0), for the
 * transaction (`LOCAL`) or the session. Submittables (cursors, COPY streams) are left alone: cursors bound each read
 * themselves, and COPY runs as long as the import feeds it.
 */
function guardQueries(client: pg.PoolClient, deadlineMs: number): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let sessionDeadline = deadlineMs;
  let localDeadline: number | undefined;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [config] = args;
    const submittable = typeof (config as { submit?: unknown } | null)?.submit === 'function';
    if (submittable || args.some((arg) => typeof arg === 'function')) return query(...args);
    const text =
      typeof config === 'string'
        ? config
        : typeof (config as { text?: unknown })?.text === 'string'
          ? (config as { text: string }).text
          : '';
    const deadline = localDeadline ?? sessionDeadline;
    const caller = callerDeadline.getStore();
    const setting = SET_STATEMENT_TIMEOUT.exec(text);
    if (setting) {
      const timeout = Number(setting[2]);
      const next = timeout === 0 ? 0 : timeout + 5000;
      if (setting[1]?.trim().toUpperCase() === 'LOCAL') localDeadline = next;
      else sessionDeadline = next;
    } else if (TRANSACTION_END.test(text)) {
      localDeadline = undefined;
    }
    if (deadline <= 0) return query(...args);
    const connection = (client as unknown as { connection?: WithStream }).connection;
    const disarm = armCallDeadline(deadline, caller, (error) => destroyConnection(connection, error));
    return (query(...args) as Promise<unknown>).finally(disarm);
  };
}

/**
 * An abort signal for the cursors created while `run` is active (see `withCursorAbort`): once it fires, a cursor
 * whose read is still waiting for the server has its connection destroyed, so an abandoned export stops waiting
 * for a slow first chunk and its pool slot is free at once.
 */
const cursorAbort = new AsyncLocalStorage<AbortSignal>();

/** Runs `fn` (which starts or advances a cursor stream) with `signal` as the abort signal of the cursors it creates. */
export function withCursorAbort<T>(signal: AbortSignal, fn: () => T): T {
  return cursorAbort.run(signal, fn);
}

/**
 * pg-cursor with a deadline on each read, and a `close()` that does not wait forever for an answer from a
 * connection that has died (pg-cursor waits for the server's ReadyForQuery, which a lost connection never sends,
 * and the connection would never go back to the pool).
 */
export function guardedCursorClass(deadlineMs: number): typeof Cursor {
  class GuardedCursor<Row = unknown> extends Cursor<Row> {
    private readonly abortSignal = cursorAbort.getStore();
    /** The deadline of the request that opened the cursor (its first read, before the response starts). */
    private readonly caller = callerDeadline.getStore();
    private reading = false;

    constructor(...args: ConstructorParameters<typeof Cursor>) {
      super(...args);
      this.abortSignal?.addEventListener(
        'abort',
        () => {
          if (this.reading)
            destroyConnection(this.link, new Error('The cursor was abandoned while a read was waiting.'));
        },
        { once: true },
      );
    }

    private get link(): (WithStream & NodeJS.EventEmitter) | undefined {
      return (this as unknown as { connection?: WithStream & NodeJS.EventEmitter }).connection ?? undefined;
    }

    override read(maxRows: number): Promise<Row[]>;
    override read(maxRows: number, callback: Cursor.ResultCallback<Row>): undefined;
    override read(maxRows: number, callback?: Cursor.ResultCallback<Row>): Promise<Row[]> | undefined {
      if (callback) return super.read(maxRows, callback);
      if (this.abortSignal?.aborted) return Promise.reject(new Error('The cursor was abandoned.'));
      const disarm = armCallDeadline(deadlineMs, this.caller ?? callerDeadline.getStore(), (error) =>
        destroyConnection(this.link, error),
      );
      this.reading = true;
      return super.read(maxRows).finally(() => {
        this.reading = false;
        disarm();
      });
    }

    override close(): Promise<void>;
    override close(callback: (err: Error) => void): undefined;
    override close(callback?: (err: Error) => void): Promise<void> | undefined {
      if (callback) return super.close(callback);
      const link = this.link;
      if (!link || connectionGone(link)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          link.removeListener('end', done);
          resolve();
        };
        // A connection that stops answering while closing is destroyed too; either way the cursor is finished.
        const timer = setTimeout(
          () => {
            destroyConnection(link, new DatabaseDeadlineError(deadlineMs));
            done();
          },
          deadlineMs > 0 ? deadlineMs : 5000,
        );
        timer.unref();
        link.once('end', done);
        super.close().then(done, done);
      });
    }
  }
  return GuardedCursor;
}

/** The client-side deadline of a call on a database opened with `options` (see `queryTimeoutMillis`); 0 = none. */
export function queryDeadlineMs(options: DatabaseOptions): number {
  return options.queryTimeoutMillis ?? (options.statementTimeoutMillis ?? 30000) + 5000;
}

/**
 * Getting a connection inside `withRequestDeadline` fails with a DatabaseDeadlineError once the request's deadline
 * passes (unless the database still answers), when that comes before the pool's own connection timeout; a
 * connection that arrives later goes back to the pool.
 */
function boundConnectByRequestDeadline(pool: pg.Pool, connectionTimeoutMs: number): void {
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    const caller = callerDeadline.getStore();
    const wait = caller && !('perCallMs' in caller) ? callerWaitMs(caller) : undefined;
    if (args.length > 0 || wait === undefined || wait >= connectionTimeoutMs) return connect(...args);
    return new Promise<pg.PoolClient>((resolve, reject) => {
      let late = false;
      const disarm = armCallDeadline(connectionTimeoutMs, caller, (error) => {
        late = true;
        reject(error);
      });
      (connect() as Promise<pg.PoolClient>).then(
        (client) => {
          disarm();
          if (late) client.release();
          else resolve(client);
        },
        (error: Error) => {
          disarm();
          if (!late) reject(error);
        },
      );
    });
  };
}

/** Per pool made by createPool: its connections that are open (opened and not yet removed). */
const openConnections = new WeakMap<pg.Pool, { count: number }>();

/**
 * Connections of a pool made by createPool that are being opened: the pool counts them in `totalCount` from the
 * moment it starts one, and each will take a waiting query once open. 0 for another pool.
 */
export function connectionsBeingOpened(pool: pg.Pool): number {
  const open = openConnections.get(pool);
  return open === undefined ? 0 : Math.max(0, pool.totalCount - open.count);
}

export function createPool(url: string, options: DatabaseOptions = {}): pg.Pool {
  const statementTimeout = options.statementTimeoutMillis ?? 30000;
  const deadline = queryDeadlineMs(options);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // A request waits a bounded time for a connection instead of forever (the pg default).
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5000,
    idleTimeoutMillis: 30000,
    statement_timeout: statementTimeout,
    idle_in_transaction_session_timeout: 60000,
    application_name: options.applicationName ?? 'education-api',
    options: '-c TimeZone=UTC',
    // Dead peers (a database host that vanished) are noticed by TCP keep-alive instead of never.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10000,
  });
  boundConnectByRequestDeadline(pool, options.connectionTimeoutMillis ?? 5000);
  const report = (error: Error) => options.onPoolError?.(error);
  // The pool re-emits errors of idle clients; without a listener they would end the process.
  pool.on('error', () => {});
  // pg-pool emits 'connect' once a connection is open and 'remove' only for open ones (a connection that fails to
  // open leaves without either).
  const open = { count: 0 };
  openConnections.set(pool, open);
  pool.on('remove', () => {
    open.count -= 1;
  });
  pool.on('connect', (client) => {
    open.count += 1;
    // A checked-out client whose connection dies (database restart, network cut) emits 'error' on itself; without
    // this listener Node ends the process. Its queries fail (503) and the pool discards it when it is released.
    client.on('error', report);
    if (deadline > 0) guardQueries(client, deadline);
    prepareMarkedStatements(client);
  });
  return pool;
}

/**
 * Opens up to 8 connections of each API pool (one `SELECT 1` each, at once), so that a new instance's first burst of
 * requests does not open them all while answering. A pool whose database is away is left as it is.
 */
export async function openPoolConnections(pools: Record<string, pg.Pool>): Promise<void> {
  await Promise.all(
    Object.entries(pools)
      .filter(([name]) => name !== 'health')
      .map(([, pool]) =>
        Promise.all(Array.from({ length: Math.min(pool.options.max ?? 10, 8) }, () => selectOneOn(pool))).catch(
          () => undefined,
        ),
      ),
  );
}

export function createDatabase(url: string, options: DatabaseOptions = {}): DatabaseHandle {
  const pool = createPool(url, options);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool, cursor: guardedCursorClass(queryDeadlineMs(options)) }),
  });
  connectionSources.set(db, pool);
  let closed = false;
  return {
    db,
    pool,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      // Kysely ends the pool only if it ran a query itself; connections opened on the pool directly (warm-up, raw
      // COPY) would otherwise stay open until the embedded database's shutdown terminates them, each a warning.
      if (!pool.ended && !pool.ending) await pool.end();
    },
  };
}

/** Where a database's raw connections come from (its pool, or the read router's), for `withPooledClient`. */
export interface ConnectionSource {
  connect(): Promise<pg.PoolClient>;
}

const connectionSources = new WeakMap<Db, ConnectionSource>();

/** Records where `db` gets its connections, so `withPooledClient` can hand out one of them (read-routing.ts). */
export function registerConnectionSource(db: Db, source: ConnectionSource): void {
  connectionSources.set(db, source);
}

/**
 * Runs `work` on one raw connection of `db` (for what Kysely cannot run: `COPY … TO STDOUT (FORMAT binary)`, whose
 * bytes pg hands over as they are, where a bytea in a row comes as hex text), in a transaction whose statements may
 * take `timeoutMs` each instead of the requests' statement timeout. The whole is bound client-side too (`timeoutMs`
 * plus 5 s: a COPY is not guarded per call), so a frozen database cannot hold the connection for ever.
 * With `ownTimeout: false`, a request's short reads: no transaction, the connection's own statement timeout (three
 * round trips fewer, a fifth of a cold query's time), `timeoutMs` being that timeout for the client-side bound, and
 * the request's deadline as for its other calls.
 */
export async function withPooledClient<T>(
  db: Executor,
  timeoutMs: number,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { ownTimeout?: boolean } = {},
): Promise<T> {
  const source = connectionSources.get(db);
  if (!source)
    throw new Error('withPooledClient needs a database made by createDatabase (or the read router), not a transaction');
  const statementTimeoutMs = Math.max(1, Math.floor(timeoutMs));
  const client = await source.connect();
  const connection = (client as unknown as { connection?: WithStream }).connection;
  // A request's reads (`ownTimeout: false`) are bound by its deadline too, as its queries through Kysely are.
  const caller = options.ownTimeout === false ? callerDeadline.getStore() : undefined;
  const disarm = armCallDeadline(statementTimeoutMs + 5000, caller, (error) => destroyConnection(connection, error));
  let failure: Error | undefined;
  const transaction = options.ownTimeout !== false;
  try {
    if (transaction) await beginWithStatementTimeout(client, statementTimeoutMs);
    const result = await work(client);
    if (transaction) await commit(client);
    return result;
  } catch (error) {
    failure = error as Error;
    if (transaction && !connectionGone(connection)) await rollback(client).catch(() => undefined);
    throw error;
  } finally {
    disarm();
    // A connection that is gone (or was cut by the deadline) is discarded, not given back.
    client.release(failure && connectionGone(connection) ? failure : undefined);
  }
}
