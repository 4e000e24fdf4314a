/**
 * One OpenAPI 3.1 document per register version, served at `/api/v{version}/openapi.json` and listed in `/docs`.
 * Built here from the version adapters (field names differ by version) rather than from route schemas, because
 * the register's routes validate and serialize by hand to keep the real service's exact error bodies.
 * The placement, degree and transition endpoints are described by `actionPaths`.
 */
import type { OpenApiDocument } from '../../plugins/openapi.js';
import { once, precompress, type PrecompressedBody } from '../../http/precompressed.js';
import { MAX_DEGREES_PER_TRAINEE } from '../degrees/validate.js';
import { MAX_PLACEMENTS_PER_TRAINEE, PLACEMENT_NAME_MAX } from '../placements/validate.js';
import { EMAIL_MAX_LENGTH, TEXT_FIELD_MAX_LENGTHS } from '../trainees/validate.js';
import { REFERENCE_DATA_KEYS } from '../reference-data.js';
import { adapterFor, externalName, REGISTER_VERSIONS, type RegisterVersion } from '../versions/index.js';
import { actionPaths } from './action-paths.js';
import { extensionPaths } from './extension-paths.js';
import { withRegisterExamples } from './examples.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../idempotency.js';
import { registerEventPaths } from '../events/openapi.js';

type Json = Record<string, unknown>;

/** The register's documents, one per version, as the service lists them in /docs (and `npm run openapi` writes them). */
export const REGISTER_OPENAPI_DOCUMENTS: OpenApiDocument[] = REGISTER_VERSIONS.map((version) => ({
  file: `register-${version}.json`,
  url: `/api/${version}/openapi.json`,
  name: `Register API ${version}`,
}));

const nullableString = { type: ['string', 'null'] };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });

const ErrorEntry = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string', examples: ['NotFound'] }, message: { type: 'string' } },
};

/** A free-text field's limit as the validator checks it. */
const atMost = (field: string) => `at most ${TEXT_FIELD_MAX_LENGTHS[field]} characters`;

function traineeInputProperties(version: RegisterVersion): Json {
  const adapter = adapterFor(version);
  const fields: Array<[string, string]> = [
    ['first_names', `FNAMES; required; ${atMost('first_names')}`],
    ['middle_names', atMost('middle_names')],
    ['last_name', `SURNAME; required; ${atMost('last_name')}`],
    ['previous_last_name', `PSURNAME; ${atMost('previous_last_name')}`],
    ['date_of_birth', 'BIRTHDTE; required; YYYY-MM-DD'],
    ['sex', 'SEXID; required; reference data `sex`'],
    ['email', `NQTEMAIL; required; at most ${EMAIL_MAX_LENGTH} characters`],
    ['nationality', 'NATION; reference data `nationality` (ISO 3166 code)'],
    ['ethnicity', 'ETHNIC; reference data `ethnicity`; blank = not provided (997)'],
    ['training_route', `ENTRYRTE; required; one of ${adapter.routes.join(', ')}`],
    ['itt_aim', 'ITTAIM; required; 201 or 202'],
    ['itt_qualification_aim', 'QLAIM; required when itt_aim is 202'],
    ['course_subject_1', 'SBJCA; required; reference data `course_subject`'],
    ['course_subject_2', 'SBJCA; differs from course_subject_1'],
    ['course_subject_3', 'SBJCA; differs from the other subjects'],
    [
      'study_mode',
      `MODE; required${adapter.studyModeOptionalRoutes.length ? ` except for routes ${adapter.studyModeOptionalRoutes.join(', ')}` : ''}`,
    ],
    ['itt_start_date', 'ITTSTARTDATE; required'],
    [
      'itt_end_date',
      `EXPECTEDENDDATE; required; after itt_start_date${adapter.ittEndDateWindow ? ', within the next 5 years and the last 10' : ''} (only the first of these is reported)`,
    ],
    ['trainee_start_date', 'TRAINEESTARTDATE; defaults to itt_start_date'],
    ['course_age_range', 'ITTPHSC; required; reference data `course_age_range`'],
    ['course_year', 'YEARPRG; required; an integer from 0 (foundation year) to 9999'],
    ['fund_code', 'FUNDCODE; required; 2 or 7; 7 only on a route with funding in the trainee’s academic cycle'],
    [
      'funding_method',
      'BURSLEV; required; a bursary, scholarship or grant must exist for the route, course_subject_1 and academic cycle',
    ],
    ['training_initiative', 'INITIATIVES'],
    ['additional_training_initiative', 'INITIATIVES'],
    ['hesa_id', 'HUSID; required; 13 or 17 characters'],
    ['provider_trainee_id', `OWNSTU; ${atMost('provider_trainee_id')}`],
    ['application_id', 'APPLYAPPLICATIONID; at most 7 digits'],
    ['ni_number', `NIN; ${atMost('ni_number')}`],
    ['pg_apprenticeship_start_date', `PGAPPSTDT; ${atMost('pg_apprenticeship_start_date')}`],
    ['training_partner_urn', 'SDLEAD; a known training partner URN, or 900000/900010/900020/900030'],
    ['training_partner_ukprn', 'a known training partner UKPRN (the URN wins when both are sent)'],
    ['employing_school_urn', 'SDEMPLOY; a known school URN or a special URN'],
    ['iqts_country', 'required for route 15 (iQTS), blank otherwise; reference data `country`'],
  ];
  const properties: Json = {};
  for (const [name, description] of fields) {
    if (adapter.unknownFields.includes(name)) continue;
    properties[externalName(version, name)] = { ...nullableString, description };
  }
  properties.disability1 = { ...nullableString, description: 'DISABLE; also disability2 … disabilityN; no duplicates' };
  properties.degrees_attributes = {
    type: 'array',
    items: { type: 'object' },
    maxItems: MAX_DEGREES_PER_TRAINEE,
    description: 'Degrees created with the trainee (create only)',
  };
  properties.placements_attributes = {
    type: 'array',
    items: { type: 'object' },
    maxItems: MAX_PLACEMENTS_PER_TRAINEE,
    description: `Placements created with the trainee (create only); name at most ${PLACEMENT_NAME_MAX} characters`,
  };
  return properties;
}

function traineeSchema(version: RegisterVersion): Json {
  const names = [
    'trainee_id',
    'provider_trainee_id',
    'application_id',
    'hesa_id',
    'trn',
    'ukprn',
    'first_names',
    'middle_names',
    'last_name',
    'previous_last_name',
    'date_of_birth',
    'sex',
    'email',
    'nationality',
    'ni_number',
    'diversity_disclosure',
    'ethnic_group',
    'ethnic_background',
    'additional_ethnic_background',
    'ethnicity',
    'disability_disclosure',
    'training_route',
    'course_subject_1',
    'course_subject_2',
    'course_subject_3',
    'course_min_age',
    'course_max_age',
    'course_age_range',
    'course_education_phase',
    'course_qualification',
    'course_level',
    'course_title',
    'course_itt_start_date',
    'study_mode',
    'itt_start_date',
    'itt_end_date',
    'trainee_start_date',
    'itt_aim',
    'itt_qualification_aim',
    'course_year',
    'pg_apprenticeship_start_date',
    'iqts_country',
    'training_partner_urn',
    'training_partner_ukprn',
    'employing_school_urn',
    'fund_code',
    'funding_method',
    'training_initiative',
    'additional_training_initiative',
    'state',
    'record_source',
    'submitted_for_trn_at',
    'recommended_for_award_at',
    'awarded_at',
    'outcome_date',
    'defer_date',
    'defer_reason',
    'reinstate_date',
    'withdrawal_date',
    'withdrawal_reasons',
    'withdrawal_trigger',
    'withdrawal_future_interest',
    'withdrawal_another_reason',
    'withdrawal_safeguarding_concern_reasons',
    'created_at',
    'updated_at',
  ];
  const adapter = adapterFor(version);
  const properties: Json = {};
  for (const name of names) {
    if (adapter.unknownFields.includes(name)) continue;
    properties[externalName(version, name)] =
      name === 'course_min_age' || name === 'course_max_age' || name === 'course_year' || name === 'application_id'
        ? { type: ['integer', 'null'] }
        : name === 'withdrawal_reasons'
          ? { type: ['array', 'null'], items: { type: 'string' } }
          : name === 'state'
            ? {
                type: 'string',
                enum: [
                  'draft',
                  'submitted_for_trn',
                  'trn_received',
                  'recommended_for_award',
                  'withdrawn',
                  'deferred',
                  'awarded',
                ],
              }
            : nullableString;
  }
  properties.placements = { type: 'array', items: { type: 'object', additionalProperties: true } };
  properties.degrees = { type: 'array', items: { type: 'object', additionalProperties: true } };
  return { type: 'object', properties, additionalProperties: { type: 'string', description: 'disabilityN codes' } };
}

const traineeIdParameter = {
  name: 'trainee_id',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: 'The 24-character trainee id',
};
const errors = {
  401: json({ type: 'object', properties: { error: { const: 'Unauthorized' } } }, 'No valid token'),
  404: json(ref('NotFound'), 'Not found (also another provider’s trainee)'),
};

const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
  description:
    'A key of your choice (a new UUID per write) that makes the write safe to retry: the first request with it runs, ' +
    'and its response is kept for 24 hours; a retry with the same key and the same request gets that response again, ' +
    'marked `Idempotent-Replayed: true`, without running again (also on another instance). While the first still ' +
    'runs a retry gets 409 `IdempotencyKeyInProgress` with `Retry-After`; the same key with another method, path or ' +
    'body 422 `IdempotencyKeyReused`; a malformed key 400 `InvalidIdempotencyKey`; more than 10,000 unexpired keys ' +
    'per provider 429 `TooManyIdempotencyKeys` (each `{"errors":[{"error","message"}]}`). 5xx and 429 answers are ' +
    'not kept. Also accepted as a Structured Field string (`"…"`).',
};

const replayedHeader = {
  description: '`true` on a response replayed for a retry with the same Idempotency-Key',
  schema: { type: 'string', enum: ['true'] },
};

/** Every write takes an optional Idempotency-Key (src/register/idempotency.ts): its parameter and replay header. */
function withIdempotencyKeys(paths: Json): void {
  for (const item of Object.values(paths) as Json[]) {
    for (const [method, value] of Object.entries(item)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
      const operation = value as Json;
      operation.parameters = [...((operation.parameters as unknown[] | undefined) ?? []), idempotencyKeyParameter];
      for (const [status, response] of Object.entries(operation.responses as Json) as [string, Json][]) {
        if (status.startsWith('2'))
          response.headers = { ...(response.headers as Json | undefined), 'Idempotent-Replayed': replayedHeader };
      }
    }
  }
}

/** The request body of a trainee's create and update: its fields as JSON or as a Rails-style form. */
function traineeWriteBody(): Json {
  const body = { schema: { type: 'object', required: ['data'], properties: { data: ref('TraineeInput') } } };
  return {
    required: true,
    description:
      'JSON, or a form body with Rails-style keys (`data[first_names]=…`, `data[placements_attributes][][urn]=…`)',
    content: { 'application/json': body, 'application/x-www-form-urlencoded': body },
  };
}

/** `GET /info`: the service's status and versions. */
function infoPath(): Json {
  return {
    get: {
      summary: 'Service status and versions',
      responses: {
        200: json({ type: 'object', properties: { status: { const: 'ok' }, version: { type: 'object' } } }, 'OK'),
        401: errors[401],
      },
    },
  };
}

/** `/trainees`: list the provider's trainees of a cycle, or create one (`write`: the request body). */
function traineesPath(write: Json): Json {
  return {
    get: {
      summary: 'The provider’s trainees of one academic cycle',
      parameters: [
        ['academic_cycle', 'Start year of the cycle (default: the current one)'],
        ['status', 'course_not_yet_started, in_training, deferred, awarded or withdrawn'],
        ['since', 'Only trainees updated at or after this ISO 8601 date or date-time'],
        ['has_trn', 'true: only with a TRN; false: only without'],
        ['page', 'Page number (default 1, at most 2147483647)'],
        ['per_page', 'Page size (default 50, at most 1000)'],
        ['sort_order', 'asc or desc by updated_at (default desc)'],
      ].map(([name, description]) => ({
        name,
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description,
      })),
      responses: {
        200: json(
          { type: 'object', properties: { data: { type: 'array', items: ref('Trainee') }, meta: ref('Meta') } },
          'A page of trainees',
        ),
        401: errors[401],
        404: json(ref('NotFound'), 'No trainees found'),
        422: json(ref('FilterErrors'), 'Invalid filter'),
      },
    },
    post: {
      summary: 'Create a trainee (state submitted_for_trn)',
      requestBody: write,
      parameters: [
        { name: 'Enhanced-Errors', in: 'header', required: false, schema: { type: 'string', enum: ['true'] } },
      ],
      responses: {
        201: json({ type: 'object', properties: { data: ref('Trainee') } }, 'Created'),
        400: json(
          { type: 'object', properties: { errors: { type: 'array', items: { type: 'string' } } } },
          'Malformed JSON',
        ),
        401: errors[401],
        409: json(
          {
            type: 'object',
            properties: {
              errors: { type: 'array', items: ErrorEntry },
              data: { type: 'array', items: ref('Trainee') },
            },
          },
          'Duplicate trainee',
        ),
        422: json(ref('ValidationErrors'), 'Invalid trainee'),
      },
    },
  };
}

/** `/trainees/{trainee_id}`: read one trainee, or update it by PUT or PATCH alike (`write`: the request body). */
function traineePath(write: Json): Json {
  return {
    parameters: [traineeIdParameter],
    get: {
      summary: 'One trainee (not wrapped in data); ETag header',
      parameters: [
        {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          schema: { type: 'string' },
          description: 'ETag from an earlier response: 304 when unchanged',
        },
      ],
      responses: {
        200: json(ref('Trainee'), 'The trainee'),
        304: { description: 'Not modified since the given ETag' },
        401: errors[401],
        404: errors[404],
      },
    },
    ...Object.fromEntries(
      ['put', 'patch'].map((method) => [
        method,
        {
          summary: 'Update a trainee (partial; the merged record is re-validated)',
          description:
            'Members not sent keep their values. A member sent as `null` keeps the stored value too (as the real ' +
            'service drops `null`s), except `course_subject_2` and `course_subject_3` (cleared) and `ethnicity` ' +
            '(997, not provided). A body whose members are all ignored or read-only (`ethnic_group`, ' +
            '`ethnic_background`, …) answers 200 with the trainee unchanged; `trn` alone is `Param is missing`. ' +
            'Placements and degrees change through their own endpoints.',
          parameters: [
            {
              name: 'If-Match',
              in: 'header',
              required: false,
              schema: { type: 'string' },
              description: 'ETag from a GET: 412 when the trainee changed since',
            },
          ],
          requestBody: write,
          responses: {
            200: json({ type: 'object', properties: { data: ref('Trainee') } }, 'Updated'),
            401: errors[401],
            404: errors[404],
            412: json(ref('NotFound'), 'If-Match does not match the current ETag'),
            422: json(ref('ValidationErrors'), 'Invalid, or the trainee is locked (StateTransitionError)'),
          },
        },
      ]),
    ),
  };
}

/** `/info`, `/trainees` and `/trainees/{trainee_id}`: the trainee endpoints of every version. */
function traineePaths(): Json {
  const write = traineeWriteBody();
  return {
    '/info': infoPath(),
    '/trainees': traineesPath(write),
    '/trainees/{trainee_id}': traineePath(write),
  };
}

/** The document's schemas: the version's trainee (as sent and as read), pages, not-found and validation errors. */
function componentSchemas(version: RegisterVersion): Json {
  return {
    TraineeInput: { type: 'object', properties: traineeInputProperties(version) },
    Trainee: traineeSchema(version),
    Meta: {
      type: 'object',
      properties: {
        current_page: { type: 'integer' },
        total_pages: { type: 'integer' },
        total_count: { type: 'integer' },
        per_page: { type: 'integer' },
      },
    },
    NotFound: { type: 'object', properties: { errors: { type: 'array', items: ErrorEntry } } },
    ValidationErrors: {
      type: 'object',
      properties: {
        message: { type: 'string', examples: ['Validation failed: 1 error prohibited this trainee from being saved'] },
        errors: {
          oneOf: [
            { type: 'array', items: { type: 'string' } },
            { type: 'object' },
            { type: 'array', items: ErrorEntry },
          ],
        },
      },
    },
    FilterErrors: {
      type: 'object',
      properties: {
        message: { type: 'string' },
        errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      },
    },
  };
}

export function registerOpenApiDocument(version: RegisterVersion): Json {
  const adapter = adapterFor(version);
  const paths = traineePaths();
  if (adapter.referenceData) {
    paths['/reference-data'] = {
      get: {
        summary: 'Reference data (no token needed)',
        security: [],
        parameters: [
          { name: 'field', in: 'query', required: false, schema: { type: 'string', enum: [...REFERENCE_DATA_KEYS] } },
        ],
        responses: {
          200: json({ type: 'object' }, 'All fields, or the one asked for'),
          404: json(ref('NotFound'), 'Unknown field'),
        },
      },
    };
  }
  Object.assign(paths, actionPaths(version), registerEventPaths(), extensionPaths(version));
  withIdempotencyKeys(paths);
  return withRegisterExamples(version, {
    openapi: '3.1.0',
    info: {
      title: `Register trainee teachers API ${version}`,
      version: version.slice(1),
      description:
        'Providers import and keep trainee records in sync. Every request but `/reference-data` needs a provider token ' +
        '(`Authorization: Bearer <token>`). Requests are limited per provider (per IP without a valid token): by ' +
        'default 100 a minute, then 429 with the body `Retry later`. A known path called with another method answers ' +
        '405 with `Allow`. Validation messages name a known training route by its name (`provider_led_postgrad`).',
    },
    servers: [{ url: `/api/${version}` }],
    security: [{ registerToken: [] }],
    paths,
    components: {
      securitySchemes: { registerToken: { type: 'http', scheme: 'bearer' } },
      schemas: componentSchemas(version),
    },
  });
}

const servedDocuments = new Map(
  REGISTER_VERSIONS.map((version) => [
    version,
    once(async () =>
      precompress(Buffer.from(JSON.stringify(registerOpenApiDocument(version))), 'application/json; charset=utf-8'),
    ),
  ]),
);

/**
 * A version's document as it is sent: serialized and compressed once per process (it depends on the version alone),
 * instead of built again for every request.
 */
export function servedRegisterOpenApiDocument(version: RegisterVersion): Promise<PrecompressedBody> {
  return servedDocuments.get(version)!();
}
