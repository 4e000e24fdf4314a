/** `GET/POST /trainees/{trainee_id}/degrees`, `GET/PUT/PATCH/DELETE …/degrees/{degree_id}`. */
import type { FastifyPluginAsync } from 'fastify';
import type { RegisterRouteOptions } from '../context.js';
import { registerNestedRecordRoutes } from '../nested-routes.js';
import { DegreeParams, DegreeSchema } from '../schemas.js';
import { changeDegree, createDegree, getDegree, listDegrees, removeDegree } from './service.js';

export const degreeRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (app) => {
  const { db } = app;
  registerNestedRecordRoutes(app, db, {
    collection: 'degrees',
    idParam: 'degree_id',
    params: DegreeParams,
    record: DegreeSchema,
    service: { list: listDegrees, get: getDegree, create: createDegree, change: changeDegree, remove: removeDegree },
  });
};
