import type { Config } from './config.js';
import {
  createDatabase,
  guardedCursorClass,
  queryDeadlineMs,
  type DatabaseHandle,
  type DatabaseOptions,
} from './db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { migrateToLatestOrThrow } from './db/migrate.js';
import { HEALTH_TIMEOUT_MS } from './plugins/health.js';
import { ReadRouter, routedReadDatabase } from './db/read-routing.js';

export interface Runtime {
  /** The primary database's pool for the register API and every write (DATABASE_REGISTER_POOL_MAX). */
  primary: DatabaseHandle;
  /**
   * The statistics API's own pools (DATABASE_STATISTICS_POOL_MAX each): on the primary, and with DATABASE_READ_URL
   * on the replica too, routed by `readRouting`. Separate either way, so statistics load never takes the register's
   * connections.
   */
  read: DatabaseHandle;
  /** With DATABASE_READ_URL: where statistics reads go now (replica, or the primary while it is down or lagging). */
  readRouting?: ReadRouter;
  /** A one-connection pool for `/health/ready` on the primary: never queued behind API traffic. */
  health: DatabaseHandle[];
  databaseUrl: string;
  embedded?: EmbeddedDatabase;
  /** The pools by name, for the `db_pool_connections` metric. */
  pools(): Record<string, DatabaseHandle['pool']>;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  log?: (message: string) => void;
  /** Run pending migrations (the server and most CLIs do). */
  migrate?: boolean;
  applicationName?: string;
  /** Connection-level errors (a connection lost, a deadline passed); default: `log`. Never fatal. */
  onDatabaseError?: (error: Error) => void;
  /** What this process does to the embedded PostgreSQL besides starting it (starting it again); default: `log`. */
  notice?: (message: string) => void;
}

/**
 * Connects to the configured database (DATABASE_URL), or starts or joins the embedded PostgreSQL under DATA_DIR,
 * and migrates it. Shared by the server and every CLI so they all honour the same configuration.
 */
export async function openRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? (() => {});
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    // keepRunning: a process that joined another's cluster starts it again when that process stops it.
    embedded = await startEmbeddedPostgres(config.DATA_DIR, {
      log: (m) => m && log(`[postgres] ${m}`),
      notice: options.notice ?? log,
      keepRunning: true,
    });
    databaseUrl = embedded.url;
  }
  const poolOptions: DatabaseOptions = {
    connectionTimeoutMillis: config.DATABASE_CONNECTION_TIMEOUT_MS,
    statementTimeoutMillis: config.DATABASE_STATEMENT_TIMEOUT_MS,
    queryTimeoutMillis: config.DATABASE_QUERY_TIMEOUT_MS,
    applicationName: options.applicationName,
    onPoolError: options.onDatabaseError ?? ((error: Error) => log(`database connection error: ${error.message}`)),
  };
  const primary = createDatabase(databaseUrl, {
    ...poolOptions,
    max: config.DATABASE_REGISTER_POOL_MAX ?? config.DATABASE_POOL_MAX,
  });
  const statisticsOptions: DatabaseOptions = {
    ...poolOptions,
    max: config.DATABASE_STATISTICS_POOL_MAX ?? config.DATABASE_POOL_MAX,
  };
  // The statistics API's pool on the primary: all of its reads without a replica, its fallback with one.
  const statisticsPrimary = createDatabase(databaseUrl, statisticsOptions);
  const replica = config.DATABASE_READ_URL ? createDatabase(config.DATABASE_READ_URL, statisticsOptions) : undefined;
  const readRouting = replica
    ? new ReadRouter(statisticsPrimary.pool, replica.pool, { maxLagMs: config.DATABASE_READ_MAX_LAG_MS, log })
    : undefined;
  const read =
    replica && readRouting
      ? routedReadDatabase(
          readRouting,
          statisticsPrimary,
          replica,
          guardedCursorClass(queryDeadlineMs(statisticsOptions)),
        )
      : statisticsPrimary;
  // Readiness probes the primary only: a replica that is down or lagging takes itself out of reads (readRouting).
  const health = [
    createDatabase(databaseUrl, {
      max: 1,
      connectionTimeoutMillis: HEALTH_TIMEOUT_MS,
      statementTimeoutMillis: HEALTH_TIMEOUT_MS,
      queryTimeoutMillis: HEALTH_TIMEOUT_MS,
      applicationName: `${options.applicationName ?? 'education-api'}-health`,
    }),
  ];
  const closePools = async () => {
    await Promise.all([read.close(), statisticsPrimary.close(), primary.close(), ...health.map((h) => h.close())]);
  };
  try {
    if (options.migrate !== false) await migrateToLatestOrThrow(primary.db);
    await readRouting?.start();
  } catch (error) {
    await closePools();
    await embedded?.stop();
    throw error;
  }
  return {
    primary,
    read,
    readRouting,
    health,
    databaseUrl,
    embedded,
    pools() {
      const pools: Record<string, DatabaseHandle['pool']> = {
        register: primary.pool,
        statistics: statisticsPrimary.pool,
        health: health[0]!.pool,
      };
      if (replica) pools['statistics-replica'] = replica.pool;
      return pools;
    },
    async close() {
      await closePools();
      await embedded?.stop();
    },
  };
}
