import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { installErrorHandling } from '../plugins/problem.js';

export interface RegisterApiOptions {
  config: Config;
  db: Db;
}

/** The trainee teacher register API, mounted at `/api` (versions below it: `/api/v2026.1/...`). */
export const registerApi: FastifyPluginAsync<RegisterApiOptions> = async (app) => {
  installErrorHandling(app);
};
