/**
 * The OpenAPI paths of `/events` and `/webhooks` in each register version's document (merged by
 * src/register/openapi/index.ts). The register documents are written by hand (see there); so are these.
 */
import { FEED_PAGE_DEFAULT, FEED_PAGE_MAX } from '../../events/feed.js';
import { dataRequestBody, jsonResponse } from '../openapi/json-content.js';
import { MAX_SUBSCRIPTIONS } from '../../events/webhooks.js';
import { REGISTER_EVENT_TYPES } from './service.js';

const errors = { type: 'object', properties: { errors: { type: 'array' } } };
/** As every register operation: a missing, unknown, revoked or expired token. */
const unauthorized = jsonResponse(
  { type: 'object', properties: { error: { const: 'Unauthorized' } } },
  'No valid token',
);
const id = { name: 'webhook_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };

const Event = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Also the `webhook-id` of its deliveries: de-duplicate on it.' },
    cursor: { type: 'string', description: 'Opaque; strictly increasing in commit order.' },
    type: { type: 'string', enum: [...REGISTER_EVENT_TYPES] },
    occurred_at: { type: 'string', format: 'date-time' },
    environment: { type: 'string', enum: ['sandbox', 'production'] },
    resource: {
      type: 'object',
      properties: { type: { type: 'string' }, id: { type: 'string' }, trainee_id: { type: 'string' } },
    },
    data: {
      type: 'object',
      description:
        '`trainee.created`: trainee_id, state. `trainee.updated`: changed_fields (this version’s names). `trainee.state_changed`: ' +
        'from, to, reason (deferral, withdrawal, recommendation, trn_received, award), changes (the fields written, this version’s ' +
        'names). Placement and degree events: trainee_id, placement_id/degree_id, placement/degree (null when deleted). ' +
        '`webhook.disabled`: webhook_id, url, reason.',
    },
  },
};

const Subscription = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    url: { type: 'string' },
    event_types: {
      type: 'array',
      items: { type: 'string', enum: [...REGISTER_EVENT_TYPES] },
      description: 'Empty: every type.',
    },
    enabled: { type: 'boolean' },
    disabled_reason: { type: ['string', 'null'] },
    api_version: {
      type: 'string',
      description: 'Deliveries use this version’s field names (the version the subscription was made with).',
    },
    previous_secret_expires_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    secret: {
      type: 'string',
      description: 'Only in the answers of create and rotate-secret: the Standard Webhooks signing secret (`whsec_…`).',
    },
  },
};

/** `/events`: the provider's events after a cursor, a page or a Server-Sent Events stream. */
function eventsPath() {
  return {
    get: {
      summary: 'Follow changes: your trainees’ events in commit order (a page, or a Server-Sent Events stream)',
      description:
        'Events of the token’s provider in this environment, oldest first after the cursor, with the next cursor. With ' +
        '`Accept: text/event-stream` a live stream instead (`id:` is the cursor, resume with `Last-Event-ID`, heartbeat ' +
        'comments; counted against the per-provider limits). A cursor older than the retention period (90 days by ' +
        'default) answers 410: list the trainees again, then follow from the start.',
      parameters: [
        {
          name: 'after',
          in: 'query',
          schema: { type: 'string' },
          description: 'Cursor to continue after; omitted: the oldest event kept.',
        },
        {
          name: 'type',
          in: 'query',
          schema: { type: 'string' },
          description: `Comma-separated types: ${REGISTER_EVENT_TYPES.join(', ')}.`,
        },
        {
          name: 'resource',
          in: 'query',
          schema: { type: 'string' },
          description: 'A trainee id (its placements and degrees included), placement id or degree id.',
        },
        {
          name: 'limit',
          in: 'query',
          schema: { type: 'integer', minimum: 1, maximum: FEED_PAGE_MAX, default: FEED_PAGE_DEFAULT },
        },
      ],
      responses: {
        200: {
          description: 'A page (JSON) or the stream',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  data: { type: 'array', items: Event },
                  meta: {
                    type: 'object',
                    properties: { next_cursor: { type: 'string' }, has_more: { type: 'boolean' } },
                  },
                },
              },
            },
            'text/event-stream': { schema: { type: 'string' } },
          },
        },
        400: jsonResponse(errors, 'A malformed cursor or unknown type'),
        401: unauthorized,
        410: jsonResponse(errors, 'The cursor is older than the retention period'),
        429: { description: 'Too many requests or streams' },
      },
    },
  };
}

/** `/webhooks`: list the provider's subscriptions, or add one. */
function webhooksPath() {
  return {
    get: {
      summary: 'Your webhook subscriptions',
      responses: {
        401: unauthorized,
        200: jsonResponse(
          { type: 'object', properties: { data: { type: 'array', items: Subscription } } },
          'The subscriptions',
        ),
      },
    },
    post: {
      summary: 'Subscribe a URL to events (the signing secret is shown once)',
      description:
        `At most ${MAX_SUBSCRIPTIONS}. In production the URL must be https; the sandbox accepts http too. It must not resolve to a ` +
        'loopback, private, link-local, unique-local or metadata address (422 otherwise; checked again at every delivery) unless ' +
        'the service runs with `WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true`, a setting for local development that production refuses ' +
        '(these examples were recorded with it, for a receiver on 127.0.0.1; see docs/guides.md, "Follow changes"). ' +
        'Deliveries are POSTs signed per Standard Webhooks ' +
        '(`webhook-id` = event id, `webhook-timestamp`, `webhook-signature`), at least once, in order, retried with exponential ' +
        'backoff and jitter for 24 hours; after that the subscription is disabled and a `webhook.disabled` event is written.',
      requestBody: dataRequestBody({
        type: 'object',
        required: ['url'],
        properties: { url: { type: 'string' }, event_types: { type: 'array', items: { type: 'string' } } },
      }),
      responses: {
        401: unauthorized,
        201: jsonResponse({ type: 'object', properties: { data: Subscription } }, 'Created, with `secret`'),
        422: jsonResponse(errors, 'A refused URL or unknown type'),
      },
    },
  };
}

/** `/webhooks/{webhook_id}`: read, change or delete one subscription. */
function webhookPath() {
  return {
    get: {
      summary: 'One subscription',
      parameters: [id],
      responses: {
        401: unauthorized,
        200: jsonResponse({ type: 'object', properties: { data: Subscription } }, 'The subscription'),
        404: jsonResponse(errors, 'Not yours or none'),
      },
    },
    patch: {
      summary:
        'Change the URL or event types, or re-enable (`enabled: true`; the failed delivery is tried again first)',
      parameters: [id],
      requestBody: dataRequestBody({
        type: 'object',
        properties: {
          url: { type: 'string' },
          event_types: { type: 'array', items: { type: 'string' } },
          enabled: { type: 'boolean' },
        },
      }),
      responses: {
        401: unauthorized,
        200: jsonResponse({ type: 'object', properties: { data: Subscription } }, 'Changed'),
        404: jsonResponse(errors, 'Not yours or none'),
        422: jsonResponse(errors, 'Refused'),
      },
    },
    delete: {
      summary: 'Unsubscribe',
      parameters: [id],
      responses: { 401: unauthorized, 204: { description: 'Deleted' }, 404: jsonResponse(errors, 'Not yours or none') },
    },
  };
}

/** `/webhooks/{webhook_id}/rotate-secret`: a new signing secret. */
function rotateSecretPath() {
  return {
    post: {
      summary: 'A new signing secret (shown once); the old one keeps signing alongside for 24 hours',
      parameters: [id],
      responses: {
        401: unauthorized,
        200: jsonResponse({ type: 'object', properties: { data: Subscription } }, 'With the new `secret`'),
      },
    },
  };
}

/** `/webhooks/{webhook_id}/deliveries`: a subscription's delivery log. */
function deliveriesPath() {
  return {
    get: {
      summary: 'The delivery log, newest first: attempts, status, last HTTP status and error',
      parameters: [
        id,
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
        { name: 'before', in: 'query', schema: { type: 'integer' } },
      ],
      responses: {
        401: unauthorized,
        200: jsonResponse(
          { type: 'object', properties: { data: { type: 'array', items: { type: 'object' } } } },
          'Deliveries',
        ),
      },
    },
  };
}

/** `/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver`: send a delivery again. */
function redeliverPath() {
  return {
    post: {
      summary: 'Send a delivery again (same `webhook-id`)',
      parameters: [id, { name: 'delivery_id', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: {
        401: unauthorized,
        202: jsonResponse(
          {
            type: 'object',
            properties: {
              data: { type: 'object', properties: { delivery_id: { type: 'integer' }, status: { type: 'string' } } },
            },
          },
          'Queued',
        ),
        404: jsonResponse(errors, 'No such delivery'),
      },
    },
  };
}

/** The paths of `/events` and `/webhooks`, in the order the documents list them. */
export function registerEventPaths(): Record<string, unknown> {
  return {
    '/events': eventsPath(),
    '/webhooks': webhooksPath(),
    '/webhooks/{webhook_id}': webhookPath(),
    '/webhooks/{webhook_id}/rotate-secret': rotateSecretPath(),
    '/webhooks/{webhook_id}/deliveries': deliveriesPath(),
    '/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': redeliverPath(),
  };
}
