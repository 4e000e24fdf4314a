import type { FastifyPluginAsync } from 'fastify';
import type { StatisticsApiOptions } from '../index.js';

/** Endpoints 1–8 and 11: publications, data sets, versions, changes, meta, CSV download. */
export const catalogueRoutes: FastifyPluginAsync<StatisticsApiOptions> = async () => {};
