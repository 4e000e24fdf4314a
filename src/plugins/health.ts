import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../db/database.js';
import { ServiceUnavailableError } from '../errors.js';

/** `/health/ready` answers within a second: connecting and probing together are bounded by this. */
export const HEALTH_TIMEOUT_MS = 800;

const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health' });

export interface HealthOptions {
  db: Db;
  readDb?: Db;
  /**
   * The databases readiness probes, each on a pool of its own (src/runtime.ts) so the probe never waits behind API
   * traffic for a connection. Without them the API pools are probed, still bounded by HEALTH_TIMEOUT_MS.
   */
  probes?: Db[];
}

/** `SELECT 1`, or a rejection once `ms` have passed (a frozen database never answers). */
async function probe(db: Db, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([sql`SELECT 1`.execute(db), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { db, readDb, probes }) => {
  const targets = probes && probes.length > 0 ? probes : readDb && readDb !== db ? [db, readDb] : [db];
  app.addSchema(HealthSchema);
  app.get(
    '/health/live',
    { schema: { tags: ['Health'], summary: 'The process is up', response: { 200: Type.Ref('Health') } } },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/health/ready',
    {
      schema: {
        tags: ['Health'],
        summary: 'The service can answer: its database (and read replica, when configured) responds within a second',
        response: { 200: Type.Ref('Health'), 503: Type.Ref('Problem') },
      },
    },
    async () => {
      try {
        await Promise.all(targets.map((target) => probe(target, HEALTH_TIMEOUT_MS)));
      } catch (error) {
        throw new ServiceUnavailableError('The database is not reachable.', { cause: error });
      }
      return { status: 'ok' as const };
    },
  );
};
