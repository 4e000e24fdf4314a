import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../db/database.js';
import { ServiceUnavailableError } from '../errors.js';

const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health' });

export const healthRoutes: FastifyPluginAsyncTypebox<{ db: Db; readDb?: Db }> = async (app, { db, readDb }) => {
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
        summary: 'The service can answer: its database (and read replica, when configured) responds',
        response: { 200: Type.Ref('Health'), 503: Type.Ref('Problem') },
      },
    },
    async () => {
      try {
        await sql`SELECT 1`.execute(db);
        if (readDb && readDb !== db) await sql`SELECT 1`.execute(readDb);
      } catch (error) {
        throw new ServiceUnavailableError('The database is not reachable.', { cause: error });
      }
      return { status: 'ok' as const };
    },
  );
};
