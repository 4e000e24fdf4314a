/**
 * The OpenAPI paths of the placement, degree and transition endpoints, merged into each version's document
 * (`/api/v{version}/openapi.json`) by openapi/index.ts. Built from the TypeBox schemas in ../schemas.ts.
 */
import { REASON_MAX_LENGTH } from '../transitions/validate.js';
import { adapterFor, externalName, type RegisterVersion } from '../versions/index.js';
import {
  DeferBody,
  DegreeBody,
  DegreeSchema,
  PlacementBody,
  PlacementSchema,
  QtsBody,
  RegisterErrorsSchema,
  withdrawBody,
} from '../schemas.js';

type Json = Record<string, unknown>;

/**
 * Plain JSON (TypeBox schemas carry symbol keys; a JSON round trip drops them), with `anyOf: [{type: T}, {type:
 * 'null'}]` written the short OpenAPI 3.1 way, `type: [T, 'null']`.
 */
const plain = (schema: unknown): Json =>
  JSON.parse(JSON.stringify(schema), (_key, value: unknown) => {
    if (!value || typeof value !== 'object' || !Array.isArray((value as Json).anyOf)) return value;
    const { anyOf, ...rest } = value as { anyOf: Json[] } & Json;
    const simple = anyOf.every((s) => typeof s.type === 'string' && Object.keys(s).length === 1);
    return simple ? { type: anyOf.map((s) => s.type), ...rest } : value;
  }) as Json;
const json = (schema: unknown, description: string) => ({
  description,
  content: { 'application/json': { schema: plain(schema) } },
});
const body = (schema: unknown) => ({ required: true, content: { 'application/json': { schema: plain(schema) } } });
const trainee = { $ref: '#/components/schemas/Trainee' };
const wrapped = (data: unknown) => ({ type: 'object', properties: { data } });

const param = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description,
});
const traineeId = param('trainee_id', 'The 24-character trainee id');
const ifMatch = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description: 'The trainee’s ETag (from a GET or a previous write): 412 when the trainee changed since',
};

const errors = {
  401: {
    description: 'No valid token',
    content: { 'application/json': { schema: { type: 'object', properties: { error: { const: 'Unauthorized' } } } } },
  },
  404: json(RegisterErrorsSchema, 'Trainee(s), Placement(s) or Degree(s) not found (also another provider’s)'),
  409: json(RegisterErrorsSchema, '"This is a duplicate degree", the existing degree(s) in `data`'),
  422: (what: string) => json(RegisterErrorsSchema, what),
};

/** What the writes say about a locked trainee (the version's locked states; nothing when it has none). */
interface LockNotes {
  lockedStates: readonly string[];
  /** Appended to a 422's description. */
  locked: string;
  /** Appended to an operation's description. */
  lockNote: string;
}

function lockNotes(version: RegisterVersion): LockNotes {
  const lockedStates = adapterFor(version).lockedStates;
  const lockedList = `${lockedStates.slice(0, -1).join(', ')} or ${lockedStates[lockedStates.length - 1]}`;
  const locked = lockedStates.length > 0 ? `; or the trainee is ${lockedList} (StateTransitionError)` : '';
  const lockNote =
    lockedStates.length > 0 ? ` Refused with 422 \`StateTransitionError\` while the trainee is ${lockedList}.` : '';
  return { lockedStates, locked, lockNote };
}

/** Defer, withdraw and the recommendation for QTS or EYTS (and its deprecated alias). */
function transitionPaths(version: RegisterVersion): Record<string, Record<string, unknown>> {
  const qtsResponses = {
    202: json(wrapped(trainee), 'Recommended: state recommended_for_award, outcome_date set'),
    401: errors[401],
    404: errors[404],
    422: errors[422]('Invalid date, missing degree or placements, or the trainee is not trn_received'),
  };
  const qtsDescription =
    'From `trn_received` to `recommended_for_award`. Every route except the undergraduate ones needs a degree; placements needed: ' +
    '2 by default, 1 for iQTS, none for early years and assessment-only routes.';
  const dateField = externalName(version, 'withdrawal_date');

  return {
    '/trainees/{trainee_id}/defer': {
      parameters: [traineeId],
      post: {
        summary: 'Defer a trainee',
        description: `From \`submitted_for_trn\` or \`trn_received\` to \`deferred\`; \`defer_reason\` is optional (at most ${REASON_MAX_LENGTH} characters).`,
        requestBody: body(DeferBody),
        responses: {
          200: json(wrapped(trainee), 'Deferred'),
          401: errors[401],
          404: errors[404],
          422: errors[422]('Invalid date or reason, or a state that cannot be deferred'),
        },
      },
    },
    '/trainees/{trainee_id}/withdraw': {
      parameters: [traineeId],
      post: {
        summary: 'Withdraw a trainee',
        description:
          `From \`submitted_for_trn\`, \`trn_received\` or \`deferred\`, once ITT has started (else 422 StateTransitionError). ` +
          `\`${dateField}\` not before the ITT start; the reasons must be valid for the trigger; \`another_reason\` with a reason ending ` +
          'in `another_reason`, `safeguarding_concern_reasons` with `safeguarding_concerns`.',
        requestBody: body(withdrawBody(version)),
        responses: {
          200: json(wrapped(trainee), 'Withdrawn'),
          401: errors[401],
          404: errors[404],
          422: errors[422]('Invalid withdrawal, or the trainee cannot be withdrawn (StateTransitionError)'),
        },
      },
    },
    '/trainees/{trainee_id}/update-qts-or-eyts-status': {
      parameters: [traineeId],
      post: {
        summary: 'Recommend a trainee for QTS or EYTS',
        description: qtsDescription,
        requestBody: body(QtsBody),
        responses: qtsResponses,
      },
    },
    '/trainees/{trainee_id}/recommend-for-qts': {
      parameters: [traineeId],
      post: {
        summary: 'Recommend a trainee for QTS or EYTS (deprecated alias)',
        description: `Deprecated alias of \`update-qts-or-eyts-status\`, answered with a \`Deprecation\` header and a \`Link\` to the successor. ${qtsDescription}`,
        deprecated: true,
        requestBody: body(QtsBody),
        responses: {
          ...qtsResponses,
          202: {
            ...qtsResponses[202],
            headers: {
              Deprecation: {
                schema: { type: 'string' },
                description: 'RFC 9745: @1773964800 (2026-03-20, when update-qts-or-eyts-status replaced it)',
              },
              Link: {
                schema: { type: 'string' },
                description: '<…/update-qts-or-eyts-status>; rel="successor-version"',
              },
            },
          },
        },
      },
    },
  };
}

function placementPaths({ locked, lockNote, lockedStates }: LockNotes): Record<string, Record<string, unknown>> {
  return {
    '/trainees/{trainee_id}/placements': {
      parameters: [traineeId],
      get: {
        summary: 'List the placements of a trainee (oldest first)',
        responses: {
          200: json(wrapped({ type: 'array', items: plain(PlacementSchema) }), 'Placements (an empty list when none)'),
          401: errors[401],
          404: errors[404],
        },
      },
      post: {
        summary: 'Add a placement',
        description: `The school by URN (a known school supplies name and postcode), or by name and postcode. No duplicate check.${lockNote}`,
        requestBody: body(PlacementBody),
        responses: {
          201: json(wrapped(plain(PlacementSchema)), 'Added'),
          401: errors[401],
          404: errors[404],
          422: errors[422](`Invalid placement${locked}`),
        },
      },
    },
    '/trainees/{trainee_id}/placements/{placement_id}': {
      parameters: [traineeId, param('placement_id', 'The placement id')],
      get: {
        summary: 'Get a placement',
        responses: { 200: json(wrapped(plain(PlacementSchema)), 'The placement'), 401: errors[401], 404: errors[404] },
      },
      ...Object.fromEntries(
        ['put', 'patch'].map((method) => [
          method,
          {
            summary: 'Change a placement (partial; PUT and PATCH are the same)',
            description: `Fields not sent keep their values.${lockNote}`,
            requestBody: body(PlacementBody),
            responses: {
              200: json(wrapped(plain(PlacementSchema)), 'Changed'),
              401: errors[401],
              404: errors[404],
              422: errors[422](`Invalid placement${locked}`),
            },
          },
        ]),
      ),
      delete: {
        summary: 'Delete a placement',
        description: `Returns the trainee after the deletion.${lockNote}`,
        responses: {
          200: json(wrapped(trainee), 'Deleted'),
          401: errors[401],
          404: errors[404],
          ...(lockedStates.length > 0 ? { 422: errors[422]('StateTransitionError') } : {}),
        },
      },
    },
  };
}

function degreePaths({ locked, lockNote, lockedStates }: LockNotes): Record<string, Record<string, unknown>> {
  return {
    '/trainees/{trainee_id}/degrees': {
      parameters: [traineeId],
      get: {
        summary: 'List the degrees of a trainee (by graduation year)',
        responses: {
          200: json(wrapped({ type: 'array', items: plain(DegreeSchema) }), 'Degrees (an empty list when none)'),
          401: errors[401],
          404: errors[404],
        },
      },
      post: {
        summary: 'Add a degree',
        description:
          'UK degree (country blank or XF/XG/XH/XI/XK, or an institution sent): uk_degree, institution and grade required. Non-UK: ' +
          `non_uk_degree and a country. Codes from the reference data. Equal to an existing degree on the fields sent → 409.${lockNote}`,
        requestBody: body(DegreeBody),
        responses: {
          201: json(wrapped(plain(DegreeSchema)), 'Added'),
          401: errors[401],
          404: errors[404],
          409: errors[409],
          422: errors[422](`Invalid degree${locked}`),
        },
      },
    },
    '/trainees/{trainee_id}/degrees/{degree_id}': {
      parameters: [traineeId, param('degree_id', 'The degree id')],
      get: {
        summary: 'Get a degree',
        responses: { 200: json(wrapped(plain(DegreeSchema)), 'The degree'), 401: errors[401], 404: errors[404] },
      },
      ...Object.fromEntries(
        ['put', 'patch'].map((method) => [
          method,
          {
            summary: 'Change a degree (partial; PUT and PATCH are the same)',
            description: `Fields not sent keep their values; sending uk_degree or non_uk_degree switches between UK and non-UK.${lockNote}`,
            requestBody: body(DegreeBody),
            responses: {
              200: json(wrapped(plain(DegreeSchema)), 'Changed'),
              401: errors[401],
              404: errors[404],
              409: errors[409],
              422: errors[422](`Invalid degree${locked}`),
            },
          },
        ]),
      ),
      delete: {
        summary: 'Delete a degree',
        description: `Returns the trainee after the deletion.${lockNote}`,
        responses: {
          200: json(wrapped(trainee), 'Deleted'),
          401: errors[401],
          404: errors[404],
          ...(lockedStates.length > 0 ? { 422: errors[422]('StateTransitionError') } : {}),
        },
      },
    },
  };
}

export function actionPaths(version: RegisterVersion): Json {
  const lock = lockNotes(version);
  const paths = { ...transitionPaths(version), ...placementPaths(lock), ...degreePaths(lock) };
  // Every write takes an optional If-Match on the trainee.
  for (const item of Object.values(paths)) {
    for (const [method, value] of Object.entries(item)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
      const operation = value as Json;
      operation.parameters = [ifMatch];
      (operation.responses as Json)[412] = json(
        RegisterErrorsSchema,
        'If-Match does not name the trainee’s current ETag',
      );
    }
  }
  return paths;
}
