/** `GET/POST /trainees/{trainee_id}/placements`, `GET/PUT/PATCH/DELETE …/placements/{placement_id}`. */
import type { FastifyPluginAsync } from 'fastify';
import type { RegisterRouteOptions } from '../context.js';
import { registerNestedRecordRoutes } from '../nested-routes.js';
import { PlacementParams, PlacementSchema } from '../schemas.js';
import { changePlacement, createPlacement, getPlacement, listPlacements, removePlacement } from './service.js';

export const placementRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (app) => {
  const { db } = app;
  registerNestedRecordRoutes(app, db, {
    collection: 'placements',
    idParam: 'placement_id',
    params: PlacementParams,
    record: PlacementSchema,
    service: {
      list: listPlacements,
      get: getPlacement,
      create: createPlacement,
      change: changePlacement,
      remove: removePlacement,
    },
  });
};
