import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import Cursor from 'pg-cursor';
import { classifyInfrastructureError, ServiceUnavailableError } from '../errors.js';
import type { Database } from './schema.js';
import { registerConnectionSource, type DatabaseHandle } from './database.js';
import { currentWalPosition, replayPosition } from './repository.js';

/**
 * Where the statistics API reads: the replica (DATABASE_READ_URL) while it is reachable and close enough behind the
 * primary, else the primary.
 *
 * A check every `checkIntervalMs` samples the primary's WAL position (`pg_current_wal_lsn()`), then asks the replica
 * how far it has replayed (`pg_last_wal_replay_lsn()`). The replica's lag is the age of the oldest primary sample
 * it has not replayed yet — the time a client could have to wait to see a change committed on the primary. It is 0
 * while the replica has replayed everything the primary had at the check, also when the primary is idle (unlike
 * `now() - pg_last_xact_replay_timestamp()`, which grows while nothing is written).
 *
 * - Replica unreachable (a check or a read fails to connect, or its sessions are terminated): reads go to the primary
 *   at once; the next checks bring it back.
 * - Lag above `maxLagMs`: reads go to the primary until it is back within the bound.
 * - Back to the replica only when it has replayed everything the primary had committed when that check began, so a
 *   client that has just seen a version on the primary does not lose it again on the replica.
 *
 * A server that is not in recovery (a second database standing in for a replica, or a logically replicated copy)
 * has no replay position and is treated as current.
 */

export type ReplicaState = 'starting' | 'ok' | 'lagging' | 'down';

export interface ReadRoutingStatus {
  /** Where statistics reads go now. */
  reads: 'replica' | 'primary';
  replica: ReplicaState;
  /** Replication lag as clients see it, when known. */
  lagMs: number | null;
  maxLagMs: number;
  /** Why reads are not on the replica, in a few words. */
  reason?: string;
}

export interface ReadRouterOptions {
  maxLagMs: number;
  checkIntervalMs?: number;
  log?: (message: string) => void;
}

/** `X/Y` (hex) → a comparable number. */
export function parseLsn(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

interface Sample {
  at: number;
  lsn: bigint;
}

const SAMPLE_RETENTION_MS = 120_000;

export class ReadRouter {
  readonly maxLagMs: number;
  private readonly checkIntervalMs: number;
  private readonly log: (message: string) => void;
  private state: ReplicaState = 'starting';
  private onReplica = false;
  private lagMs: number | null = null;
  private reason: string | undefined = 'not checked yet';
  private samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly primary: pg.Pool,
    private readonly replica: pg.Pool,
    options: ReadRouterOptions,
  ) {
    this.maxLagMs = options.maxLagMs;
    this.checkIntervalMs = options.checkIntervalMs ?? 500;
    this.log = options.log ?? (() => {});
  }

  /** Runs the first check (reads stay on the primary until it passes), then checks periodically. */
  async start(): Promise<void> {
    await this.check();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  readsFromReplica(): boolean {
    return this.onReplica;
  }

  status(): ReadRoutingStatus {
    return {
      reads: this.onReplica ? 'replica' : 'primary',
      replica: this.state,
      lagMs: this.lagMs,
      maxLagMs: this.maxLagMs,
      ...(this.reason ? { reason: this.reason } : {}),
    };
  }

  /** A read on the replica failed: when the replica is unreachable, route to the primary now and recheck soon. */
  reportFailure(error: unknown): void {
    if (!(classifyInfrastructureError(error) instanceof ServiceUnavailableError)) return;
    if (this.onReplica) this.log(`read replica unreachable (${describe(error)}); statistics reads go to the primary`);
    this.setState('down', `replica unreachable: ${describe(error)}`);
  }

  /** One check; concurrent callers share it. */
  check(): Promise<void> {
    this.running ??= this.runCheck().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.checkIntervalMs);
    this.timer.unref();
  }

  private setState(state: ReplicaState, reason: string | undefined, onReplica = false): void {
    this.state = state;
    this.reason = reason;
    this.onReplica = onReplica;
  }

  private async runCheck(): Promise<void> {
    let primaryLsn: bigint | undefined;
    const at = Date.now();
    try {
      const lsn = await currentWalPosition(this.primary);
      if (lsn) primaryLsn = parseLsn(lsn);
    } catch {
      // The primary is down: the service is not ready anyway; keep the replica's last verdict.
    }
    if (primaryLsn !== undefined) {
      this.samples.push({ at, lsn: primaryLsn });
      while (this.samples.length > 2 && this.samples[0]!.at < at - SAMPLE_RETENTION_MS) this.samples.shift();
    }

    let replayed: bigint | null;
    try {
      const position = await replayPosition(this.replica);
      replayed = position.standby && position.replayed ? parseLsn(position.replayed) : null;
    } catch (error) {
      if (this.onReplica || this.state === 'starting')
        this.log(`read replica unreachable (${describe(error)}); statistics reads go to the primary`);
      this.lagMs = null;
      this.setState('down', `replica unreachable: ${describe(error)}`);
      return;
    }

    if (replayed === null) {
      // Not a streaming standby: nothing to wait for.
      this.lagMs = 0;
      this.setState('ok', undefined, true);
      return;
    }
    if (primaryLsn === undefined) return; // cannot tell the lag without the primary; keep the last verdict
    const firstUnreplayed = this.samples.find((sample) => sample.lsn > replayed);
    this.lagMs = firstUnreplayed ? Date.now() - firstUnreplayed.at : 0;
    if (this.lagMs > this.maxLagMs) {
      if (this.onReplica)
        this.log(
          `read replica ${this.lagMs} ms behind (bound ${this.maxLagMs} ms); statistics reads go to the primary`,
        );
      this.setState('lagging', `replica ${this.lagMs} ms behind the primary (bound ${this.maxLagMs} ms)`);
      return;
    }
    if (this.onReplica) {
      this.setState('ok', undefined, true);
      return;
    }
    // Coming back from the primary: only once the replica holds everything the primary had when this check began.
    if (replayed >= primaryLsn) {
      this.log('read replica caught up; statistics reads go to the replica again');
      this.setState('ok', undefined, true);
    } else {
      this.setState('ok', 'replica catching up with what the primary served', false);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message || error.constructor.name : String(error);
}

/**
 * A pool for Kysely that hands out replica connections while the router says so, and primary connections otherwise
 * (also when connecting to the replica fails). Query failures on replica connections are reported to the router.
 */
class RoutedPool {
  private readonly wrapped = new WeakMap<pg.PoolClient, pg.PoolClient>();
  private readonly guarded = new WeakSet<pg.PoolClient>();

  constructor(
    private readonly router: ReadRouter,
    private readonly primary: pg.Pool,
    private readonly replica: pg.Pool,
  ) {}

  async connect(): Promise<pg.PoolClient> {
    if (this.router.readsFromReplica()) {
      try {
        return this.watch(await this.replica.connect());
      } catch (error) {
        this.router.reportFailure(error);
        if (this.router.readsFromReplica()) throw error;
      }
    }
    return this.guard(await this.primary.connect());
  }

  async end(): Promise<void> {
    // The pools belong to their DatabaseHandles, which end them.
  }

  /**
   * A checked-out client between queries (a cursor being read in steps) emits 'error' when its server ends the
   * session, and the pool listens only to idle clients: without a listener that would crash the process. The
   * failing query reports the error to its caller anyway.
   */
  private guard(client: pg.PoolClient, onError: (error: Error) => void = () => {}): pg.PoolClient {
    if (!this.guarded.has(client)) {
      this.guarded.add(client);
      client.on('error', onError);
    }
    return client;
  }

  private watch(client: pg.PoolClient): pg.PoolClient {
    this.guard(client, (error) => this.router.reportFailure(error));
    let proxy = this.wrapped.get(client);
    if (!proxy) {
      const router = this.router;
      const query = (...args: unknown[]) => {
        const result = (client.query as (...a: unknown[]) => unknown)(...args);
        if (result instanceof Promise)
          return result.catch((error: unknown) => {
            router.reportFailure(error);
            throw error;
          });
        return result;
      };
      proxy = new Proxy(client, {
        get(target, property, receiver) {
          if (property === 'query') return query;
          const value = Reflect.get(target, property, receiver) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      this.wrapped.set(client, proxy);
    }
    return proxy;
  }
}

export interface RoutedReadDatabase extends DatabaseHandle {
  routing: ReadRouter;
}

/**
 * The statistics read database when DATABASE_READ_URL is set: a Kysely whose connections come from the replica or
 * the primary as `router` decides; `cursor` is the pools' cursor class (with their deadline). `pool` is the replica's
 * (for the pool metrics); `close` closes the replica's.
 */
export function routedReadDatabase(
  router: ReadRouter,
  primary: DatabaseHandle,
  replica: DatabaseHandle,
  cursor: typeof Cursor = Cursor,
): RoutedReadDatabase {
  const pool = new RoutedPool(router, primary.pool, replica.pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pool, cursor }) });
  registerConnectionSource(db, pool);
  return {
    db,
    pool: replica.pool,
    routing: router,
    async close() {
      router.stop();
      await db.destroy();
      await replica.close();
    },
  };
}
