import type { FastifyPluginAsync } from 'fastify';

/**
 * Defer, withdraw, QTS/EYTS status, placements and degrees of one trainee (issue 6). Mounted by the register
 * API inside every version scope, after authentication, so `request` already carries the provider and version.
 */
export const traineeActionRoutes: FastifyPluginAsync = async () => {};
