/**
 * `/api/v{version}/webhooks`: a provider manages its webhook subscriptions with its token (in the environment its
 * token belongs to). Deliveries use the field names of the version the subscription was made with.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { NotFoundError } from '../../errors.js';
import {
  changeSubscription,
  createSubscription,
  deleteSubscription,
  getSubscription,
  listDeliveries,
  listSubscriptions,
  redeliver,
  rotateSecret,
  type SubscriptionOwner,
} from '../../events/webhooks.js';
import type { RegisterRouteOptions } from '../context.js';
import { requestData } from '../http.js';
import { REGISTER_EVENT_TYPES } from './service.js';

const Id = Type.Object({ webhook_id: Type.String() });
const DeliveryParams = Type.Object({ webhook_id: Type.String(), delivery_id: Type.String() });
const DeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    before: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const registerWebhookRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (app, options) => {
  const settings = () => app.webhooks;
  const owner = (request: {
    registerContext: { provider: { id: number }; environment: 'production' | 'sandbox' };
  }): SubscriptionOwner => ({
    scope: {
      api: 'register',
      providerId: request.registerContext.provider.id,
      environment: request.registerContext.environment,
    },
    apiVersion: options.version,
  });

  app.get('/webhooks', { schema: { hide: true } }, async (request) => ({
    data: await listSubscriptions(app.db, owner(request)),
  }));

  app.post('/webhooks', { schema: { hide: true } }, async (request, reply) => {
    const created = await createSubscription(
      app.db,
      owner(request),
      requestData(request.body),
      REGISTER_EVENT_TYPES,
      settings(),
    );
    return reply.code(201).send({ data: created });
  });

  app.get<{ Params: { webhook_id: string } }>(
    '/webhooks/:webhook_id',
    { schema: { hide: true, params: Id } },
    async (request) => ({
      data: await getSubscription(app.db, owner(request), request.params.webhook_id),
    }),
  );

  app.patch<{ Params: { webhook_id: string } }>(
    '/webhooks/:webhook_id',
    { schema: { hide: true, params: Id } },
    async (request) => ({
      data: await changeSubscription(
        app.db,
        owner(request),
        request.params.webhook_id,
        requestData(request.body),
        REGISTER_EVENT_TYPES,
        settings(),
      ),
    }),
  );

  app.delete<{ Params: { webhook_id: string } }>(
    '/webhooks/:webhook_id',
    { schema: { hide: true, params: Id } },
    async (request, reply) => {
      await deleteSubscription(app.db, owner(request), request.params.webhook_id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { webhook_id: string } }>(
    '/webhooks/:webhook_id/rotate-secret',
    { schema: { hide: true, params: Id } },
    async (request) => ({
      data: await rotateSecret(app.db, owner(request), request.params.webhook_id, settings()),
    }),
  );

  app.get<{ Params: { webhook_id: string }; Querystring: { limit?: number; before?: number } }>(
    '/webhooks/:webhook_id/deliveries',
    { schema: { hide: true, params: Id, querystring: DeliveriesQuery } },
    async (request) => ({
      data: await listDeliveries(
        app.db,
        owner(request),
        request.params.webhook_id,
        request.query.limit ?? 50,
        request.query.before,
      ),
    }),
  );

  app.post<{ Params: { webhook_id: string; delivery_id: string } }>(
    '/webhooks/:webhook_id/deliveries/:delivery_id/redeliver',
    { schema: { hide: true, params: DeliveryParams } },
    async (request, reply) => {
      const deliveryId = Number(request.params.delivery_id);
      // Like an unknown webhook id: an id that cannot name a delivery names none.
      if (!Number.isSafeInteger(deliveryId) || deliveryId < 1) throw new NotFoundError('Delivery not found');
      await redeliver(app.db, owner(request), request.params.webhook_id, deliveryId);
      return reply.code(202).send({ data: { delivery_id: deliveryId, status: 'pending' } });
    },
  );
};
