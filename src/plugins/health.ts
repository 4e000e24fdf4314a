import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../db/database.js';
import type { ReadRouter } from '../db/read-routing.js';
import { NotReadyError, ServiceUnavailableError } from '../errors.js';
import { selectOne } from './health-repository.js';
import type { LoadPressure } from './load-shedding.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A probe of the instance, not traffic (health, metrics): the start's warm-up does not wait for it (src/app.ts) and
     * load shedding never refuses it (src/plugins/load-shedding.ts).
     */
    probe?: boolean;
  }
}

/** `/health/ready` answers within a second: connecting and probing together are bounded by this. */
export const HEALTH_TIMEOUT_MS = 800;

const HealthSchema = Type.Object(
  {
    status: Type.Literal('ok'),
    statisticsReads: Type.Optional(
      Type.Object(
        {
          reads: Type.Union([Type.Literal('replica'), Type.Literal('primary')]),
          replica: Type.Union(['starting', 'ok', 'lagging', 'down'].map((s) => Type.Literal(s))),
          lagMs: Type.Union([Type.Integer(), Type.Null()]),
          maxLagMs: Type.Integer(),
          reason: Type.Optional(Type.String()),
        },
        {
          description: 'With a read replica (DATABASE_READ_URL): where statistics reads go, and why not to the replica',
        },
      ),
    ),
    load: Type.Optional(
      Type.Object(
        {
          inFlight: Type.Integer({ description: 'Requests being answered (probes not counted)' }),
          eventLoopDelayMs: Type.Number({ description: 'Mean event-loop delay over the last sample' }),
          eventLoopUtilization: Type.Number({ description: 'Event-loop utilisation over the last sample, 0-1' }),
          poolWaiting: Type.Integer({ description: 'Requests waiting for a database connection' }),
        },
        { description: "The instance's load: past its bounds (LOAD_SHED_*) it sheds requests and is not ready" },
      ),
    ),
  },
  { $id: 'Health' },
);

export interface HealthOptions {
  db: Db;
  readDb?: Db;
  /**
   * The databases readiness probes, each on a pool of its own (src/runtime.ts) so the probe never waits behind API
   * traffic for a connection. Without them the API pools are probed, still bounded by HEALTH_TIMEOUT_MS.
   */
  probes?: Db[];
  /** With a read replica: where statistics reads go. A replica that is down or lagging does not make us unready. */
  readRouting?: ReadRouter;
  /** The statistics row indexes: not ready while the versions in use are still loading (within their time bound). */
  rowIndexes?: { readonly warm: boolean };
  /** The app's own warm-up (route schemas compiled, pool connections open): not ready until it is over. */
  warmUp?: { readonly warm: boolean };
  /** The instance's load (src/plugins/load-shedding.ts): not ready while it sheds, so a balancer prefers another. */
  pressure?: () => LoadPressure;
  /** Stopping (SIGTERM): not ready for the drain period, while requests are still served (src/server.ts). */
  lifecycle?: { readonly draining: boolean };
}

/** `SELECT 1`, or a rejection once `ms` have passed (a frozen database never answers). */
async function probe(db: Db, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([selectOne(db), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (
  app,
  { db, readDb, probes, readRouting, rowIndexes, warmUp, pressure, lifecycle },
) => {
  const targets = probes && probes.length > 0 ? probes : readDb && readDb !== db && !readRouting ? [db, readDb] : [db];
  let startingAnnounced = false;
  app.addSchema(HealthSchema);
  app.get(
    '/health/live',
    {
      config: { probe: true },
      schema: {
        tags: ['Health'],
        operationId: 'GetLiveness',
        summary: 'The process is up',
        response: { 200: Type.Ref('Health') },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/health/ready',
    {
      config: { probe: true },
      schema: {
        tags: ['Health'],
        operationId: 'GetReadiness',
        summary:
          'The service can answer: its primary database responds within a second (and, with a read replica, where statistics reads go)',
        response: { 200: Type.Ref('Health'), 503: Type.Ref('Problem') },
      },
    },
    async (request) => {
      // Draining and overload are states the balancer polls for, not failures: not logged per probe (the drain is
      // logged once when it begins, each shed request at warn).
      if (lifecycle?.draining)
        throw new NotReadyError(
          'The instance is stopping: it finishes the requests it has, and takes no more once the balancer has noticed.',
        );
      const load = pressure?.();
      if (load?.overloaded) throw new NotReadyError(`The instance is overloaded (${load.reason}).`);
      // A balancer sends no traffic to an instance whose row indexes of the versions in use are not loaded yet.
      const starting =
        rowIndexes && !rowIndexes.warm
          ? 'The row indexes of the statistics versions in use are still loading.'
          : warmUp && !warmUp.warm
            ? 'The instance is still warming up (route schemas, database connections).'
            : undefined;
      if (starting) {
        // Polled every few seconds while starting: said once, at info (not each poll as a failed request).
        if (!startingAnnounced)
          request.log.info({ reason: starting }, 'not ready yet: /health/ready answers 503 until the start-up is over');
        startingAnnounced = true;
        throw new NotReadyError(starting);
      }
      try {
        await Promise.all(targets.map((target) => probe(target, HEALTH_TIMEOUT_MS)));
      } catch (error) {
        throw new ServiceUnavailableError('The database is not reachable.', { cause: error });
      }
      const measures = load && {
        inFlight: load.inFlight,
        eventLoopDelayMs: load.eventLoopDelayMs,
        eventLoopUtilization: load.eventLoopUtilization,
        poolWaiting: load.poolWaiting,
      };
      return {
        status: 'ok' as const,
        ...(readRouting ? { statisticsReads: readRouting.status() } : {}),
        ...(measures ? { load: measures } : {}),
      };
    },
  );
};
