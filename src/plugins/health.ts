import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../db/database.js';
import type { ReadRouter } from '../db/read-routing.js';
import { ServiceUnavailableError } from '../errors.js';

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
        { description: 'With a read replica (DATABASE_READ_URL): where statistics reads go, and why not to the replica' },
      ),
    ),
  },
  { $id: 'Health' },
);

export const healthRoutes: FastifyPluginAsyncTypebox<{ db: Db; readDb?: Db; readRouting?: ReadRouter }> = async (app, { db, readDb, readRouting }) => {
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
        summary: 'The service can answer: its primary database responds (and, with a read replica, where statistics reads go)',
        response: { 200: Type.Ref('Health'), 503: Type.Ref('Problem') },
      },
    },
    async () => {
      try {
        await sql`SELECT 1`.execute(db);
        // A replica that is down or lagging does not make the instance unready: statistics reads use the primary.
        if (readDb && readDb !== db && !readRouting) await sql`SELECT 1`.execute(readDb);
      } catch (error) {
        throw new ServiceUnavailableError('The database is not reachable.', { cause: error });
      }
      return readRouting ? { status: 'ok' as const, statisticsReads: readRouting.status() } : { status: 'ok' as const };
    },
  );
};
