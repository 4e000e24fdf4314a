import type { FastifyPluginAsync } from 'fastify';
import type { StatisticsApiOptions } from '../index.js';

/** Endpoints 9 and 10: GET and POST /data-sets/{dataSetId}/query. */
export const queryRoutes: FastifyPluginAsync<StatisticsApiOptions> = async () => {};
