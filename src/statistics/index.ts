import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { installErrorHandling } from '../plugins/problem.js';
import { catalogueRoutes } from './routes/catalogue.js';
import { queryRoutes } from './routes/query.js';

export interface StatisticsApiOptions {
  config: Config;
  /** Where statistics reads go (the read replica when configured). */
  db: Db;
  /** The primary, for the rare statistics writes. */
  writeDb: Db;
}

/** The public statistics data set API, mounted at `/v1`. */
export const statisticsApi: FastifyPluginAsync<StatisticsApiOptions> = async (app, options) => {
  installErrorHandling(app);
  await app.register(catalogueRoutes, options);
  await app.register(queryRoutes, options);
};
