/**
 * The OpenAPI paths of this service's extensions of the real API (docs/compatibility.md), for the versions whose
 * adapter has them: batch create, and the sandbox tools (served by a sandbox instance only; 404 on live).
 */
import { MAX_GENERATED_TRAINEES } from '../sandbox/service.js';
import { dataRequestBody, jsonResponse } from './json-content.js';
import { MAX_BATCH_ROWS } from '../trainees/batch.js';
import { adapterFor, type RegisterVersion } from '../versions/index.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const stringErrors = jsonResponse(
  { type: 'object', properties: { errors: { type: 'array', items: { type: 'string' } } } },
  '',
);
const unauthorized = jsonResponse(
  { type: 'object', properties: { error: { const: 'Unauthorized' } } },
  'No valid token',
);
const tooMany = {
  description: 'Over the rate limit: `Retry later`',
  content: { 'text/plain': { schema: { type: 'string' } } },
};
const sandboxOnly = 'Sandbox only: a live instance answers 404.';

/** `POST /trainees/batch`: create many trainees, each answered as its own create would be. */
function batchCreatePath(): Json {
  return {
    post: {
      summary: `Create up to ${MAX_BATCH_ROWS} trainees in one request (an extension of this service)`,
      parameters: [
        { name: 'Enhanced-Errors', in: 'header', required: false, schema: { type: 'string', enum: ['true'] } },
      ],
      requestBody: dataRequestBody(
        {
          type: 'array',
          items: ref('TraineeInput'),
          description: `1 to ${MAX_BATCH_ROWS} trainees, each as \`POST /trainees\` takes it`,
        },
        true,
      ),
      responses: {
        200: jsonResponse(
          {
            type: 'object',
            properties: {
              data: {
                type: 'array',
                description:
                  'One answer per row, in row order: `index`, the `status` its own create would have (201, 409, 422) and that create’s body',
                items: {
                  type: 'object',
                  required: ['index', 'status'],
                  properties: { index: { type: 'integer' }, status: { type: 'integer', enum: [201, 409, 422] } },
                  additionalProperties: true,
                },
              },
              meta: {
                type: 'object',
                properties: { rows: { type: 'integer' }, created: { type: 'integer' }, failed: { type: 'integer' } },
              },
            },
          },
          'Every row’s answer',
        ),
        400: {
          ...stringErrors,
          description: `More than ${MAX_BATCH_ROWS} rows, or a body that is not JSON: nothing is written`,
        },
        401: unauthorized,
        422: jsonResponse(ref('ValidationErrors'), '`data` missing, empty or not a list'),
      },
    },
  };
}

/** `POST /sandbox/trainees`: generated trainees for the provider (sandbox only). */
function generateTraineesPath(): Json {
  return {
    post: {
      summary: 'Generate realistic trainees for your provider (sandbox only)',
      description: sandboxOnly,
      requestBody: dataRequestBody(
        {
          type: 'object',
          required: ['count'],
          properties: {
            count: { type: 'integer', description: `How many, from 1 to ${MAX_GENERATED_TRAINEES}` },
          },
        },
        true,
      ),
      responses: {
        201: jsonResponse(
          {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: {
                  created: { type: 'integer' },
                  states: { type: 'object', additionalProperties: { type: 'integer' } },
                },
              },
            },
          },
          'Created, with how many trainees are in each state',
        ),
        401: unauthorized,
        422: jsonResponse(ref('NotFound'), '`count` is not a whole number from 1 to the maximum'),
        429: tooMany,
      },
    },
  };
}

/** `DELETE /sandbox/data`: the provider's sandbox data deleted (sandbox only). */
function sandboxDataPath(): Json {
  return {
    delete: {
      summary: 'Delete your sandbox trainees, events and webhook deliveries (sandbox only)',
      description: `${sandboxOnly} Webhook subscriptions are kept.`,
      responses: {
        200: jsonResponse(
          {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: {
                  trainees: { type: 'integer' },
                  events: { type: 'integer' },
                  webhook_deliveries: { type: 'integer' },
                },
              },
            },
          },
          'What was deleted',
        ),
        401: unauthorized,
        429: tooMany,
      },
    },
  };
}

/** The extensions' paths this version's adapter has. */
export function extensionPaths(version: RegisterVersion): Json {
  const { extensions } = adapterFor(version);
  const paths: Json = {};
  if (extensions.batchCreate) paths['/trainees/batch'] = batchCreatePath();
  if (extensions.sandboxTools) {
    paths['/sandbox/trainees'] = generateTraineesPath();
    paths['/sandbox/data'] = sandboxDataPath();
  }
  return paths;
}
