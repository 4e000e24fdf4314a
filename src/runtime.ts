import type { Config } from './config.js';
import { createDatabase, type DatabaseHandle } from './db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { migrateToLatestOrThrow } from './db/migrate.js';
import { ReadRouter, routedReadDatabase } from './db/read-routing.js';

export interface Runtime {
  /** The primary database. */
  primary: DatabaseHandle;
  /** The read pool for the statistics API: a replica when DATABASE_READ_URL is set, else the primary. */
  read: DatabaseHandle;
  /** With DATABASE_READ_URL: where statistics reads go now (replica, or the primary while it is down or lagging). */
  readRouting?: ReadRouter;
  databaseUrl: string;
  embedded?: EmbeddedDatabase;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  log?: (message: string) => void;
  /** Run pending migrations (the server and most CLIs do). */
  migrate?: boolean;
  applicationName?: string;
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
    embedded = await startEmbeddedPostgres(config.DATA_DIR, { log: (m) => m && log(`[postgres] ${m}`) });
    databaseUrl = embedded.url;
  }
  const poolOptions = {
    max: config.DATABASE_POOL_MAX,
    connectionTimeoutMillis: config.DATABASE_CONNECTION_TIMEOUT_MS,
    statementTimeoutMillis: config.DATABASE_STATEMENT_TIMEOUT_MS,
    applicationName: options.applicationName,
    onPoolError: (error: Error) => log(`database pool error: ${error.message}`),
  };
  const primary = createDatabase(databaseUrl, poolOptions);
  const replica = config.DATABASE_READ_URL ? createDatabase(config.DATABASE_READ_URL, poolOptions) : undefined;
  const readRouting = replica ? new ReadRouter(primary.pool, replica.pool, { maxLagMs: config.DATABASE_READ_MAX_LAG_MS, log }) : undefined;
  const read = replica && readRouting ? routedReadDatabase(readRouting, primary, replica) : primary;
  try {
    if (options.migrate !== false) await migrateToLatestOrThrow(primary.db);
    await readRouting?.start();
  } catch (error) {
    await primary.close();
    if (read !== primary) await read.close();
    if (embedded?.owned) await embedded.stop();
    throw error;
  }
  return {
    primary,
    read,
    readRouting,
    databaseUrl,
    embedded,
    async close() {
      if (read !== primary) await read.close();
      await primary.close();
      if (embedded?.owned) await embedded.stop();
    },
  };
}
