import { expect, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppDeps } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * Admission control off unless a test asks for it (test/plugins/load-shedding.test.ts): a test worker sharing a busy
 * machine, or a test firing many requests at once on purpose, is not an overloaded instance.
 */
const WITHOUT_LOAD_SHEDDING = {
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
  LOAD_SHED_MAX_IN_FLIGHT: '1000000',
  LOAD_SHED_MAX_POOL_WAITING: '1000000',
};

export interface TestApp {
  app: FastifyInstance;
  database: TestDatabase;
  config: Config;
  close(): Promise<void>;
}

/**
 * The whole app on this file's own database, for `app.inject`. Config comes from defaults plus `env`; `deps` may
 * bring the app's row index store (tests that switch query engines keep a handle on it).
 */
export async function buildTestApp(
  env: Record<string, string> = {},
  deps: Pick<
    AppDeps,
    | 'rowIndexes'
    | 'queryEngines'
    | 'webhookNetwork'
    | 'webhookWorker'
    | 'warmUpBeforeReady'
    | 'checkRouteSchemas'
    | 'logger'
  > = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  // The sandbox's simulated TRN and award wait a day unless a test asks for them: no other test's trainee changes
  // state under it.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    REGISTER_SANDBOX_TRN_DELAY_MS: '86400000',
    REGISTER_SANDBOX_AWARD_DELAY_MS: '86400000',
    ...WITHOUT_LOAD_SHEDDING,
    ...env,
    DATABASE_URL: database.url,
  });
  const app = await buildApp(config, { db: database.db, pools: { primary: database.pool }, logger: false, ...deps });
  // Used once ready, as a balancer would (the published fixture's row index loads first); tests of the warm-up
  // itself pass its store or ask for the whole warm-up.
  if (!deps.rowIndexes && !deps.warmUpBeforeReady) await waitUntilReady(app);
  return {
    app,
    database,
    config,
    async close() {
      await app.close();
      await database.drop();
    },
  };
}

/** Resolves once `/health/ready` answers 200 (the app's warm-up is over); fails after `timeoutMs`. */
export async function waitUntilReady(app: FastifyInstance, timeoutMs = 30000): Promise<void> {
  await vi.waitFor(
    async () => expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200),
    { timeout: timeoutMs, interval: 20 },
  );
}
