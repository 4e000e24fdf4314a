/**
 * The register documents' names, groups and examples: one operationId, tag and description per operation, and the
 * example requests of every operation in the order a client would send them (create trainees of each route family,
 * list, read, update with If-Match, placements, degrees, state changes). test/docs/examples.test.ts sends them to a
 * fresh server per version and records the answers in recorded-examples.json, which the documents show.
 */
import { projectPath } from '../../paths.js';
import { recordedExamples, withExamples, type OperationDocs } from '../../plugins/openapi-examples.js';
import { adapterFor, REGISTER_VERSIONS, type RegisterVersion } from '../versions/index.js';

type Json = Record<string, unknown>;

/** Where tokens come from, what the terse errors mean: said once, shown in each document's description. */
export const REGISTER_HELP = {
  versions: `Supported versions: ${REGISTER_VERSIONS.join(', ')} (and the alias v2025.0-rc). Any other version answers 404 \`{"errors":[{"error":"NotFound","message":"Not found"}]}\`, as the real service does.`,
  tokens:
    'A token comes from the operator: `npm run register -- token:create --provider <UKPRN>` prints it on its last line, and the first `npm start` on the embedded database prints one for the demo provider (UKPRN 10000001). A missing, unknown, revoked or expired token answers 401 `{"error":"Unauthorized"}` and nothing more.',
  values:
    'A code outside its list answers 422 "… has invalid reference data value of \'…\'" or "… is not included in the list" without the allowed values: they are listed by `GET /api/v2026.1/reference-data` (no token needed; `?field=training_route` for one list), which also holds for the older versions.',
};

/** operationId per `METHOD path`, and each operation's group and one-paragraph description. */
export const REGISTER_OPERATIONS: Record<string, { id: string; tag: string; description: string }> = {
  'GET /info': {
    id: 'GetInfo',
    tag: 'Info',
    description:
      'Checks the token and the service: `status` is `ok` and `version` names the version served. A good first call with a new token (a 401 here means the token is wrong, not the request).',
  },
  'GET /trainees': {
    id: 'ListTrainees',
    tag: 'Trainees',
    description:
      'Lists the trainees of the token’s provider in one academic cycle (`academic_cycle`, the start year; default the current cycle), newest change first, a page at a time (`page`, `per_page` up to 1000; `meta` gives the totals). 404 when no trainee matches; 422 names the filter that is invalid.',
  },
  'POST /trainees': {
    id: 'CreateTrainee',
    tag: 'Trainees',
    description:
      'Creates a trainee in state `submitted_for_trn` from `data` (codes from the reference data). A postgraduate route needs `degrees_attributes`; iQTS (route 15) needs `iqts_country`; early years routes need age range 13920 (and, from v2026.1, subject 100510). Placements may come in `placements_attributes`. A trainee equal to an existing one (names, date of birth, route, start date) answers 409 with the existing record in `data`.',
  },
  'GET /trainees/{trainee_id}': {
    id: 'GetTrainee',
    tag: 'Trainees',
    description:
      'Reads one trainee of the token’s provider, with its placements and degrees, not wrapped in `data`. The `ETag` header names this state of the record: send it back in `If-Match` on a write to refuse it (412) when someone changed the trainee since, or in `If-None-Match` for a 304.',
  },
  'PUT /trainees/{trainee_id}': {
    id: 'ReplaceTrainee',
    tag: 'Trainees',
    description:
      'Updates a trainee exactly like PATCH (the real service treats both as a partial update): the members sent replace the stored ones and the merged record is validated again.',
  },
  'PATCH /trainees/{trainee_id}': {
    id: 'UpdateTrainee',
    tag: 'Trainees',
    description:
      'Changes the members sent and validates the merged record again; send the ETag of your last read in `If-Match` so that a concurrent change is refused with 412 instead of being overwritten.',
  },
  'POST /trainees/{trainee_id}/defer': {
    id: 'DeferTrainee',
    tag: 'State changes',
    description: 'Pauses a trainee’s training (state `deferred`) from a date, with an optional reason.',
  },
  'POST /trainees/{trainee_id}/withdraw': {
    id: 'WithdrawTrainee',
    tag: 'State changes',
    description:
      'Ends a trainee’s training (state `withdrawn`): who decided (`trigger`), whether they may come back (`future_interest`) and why (`reasons`, listed per trigger by `GET /reference-data?field=withdrawal_reasons`).',
  },
  'POST /trainees/{trainee_id}/update-qts-or-eyts-status': {
    id: 'RecommendTrainee',
    tag: 'State changes',
    description:
      'Recommends a trainee who has a TRN for QTS or EYTS (state `recommended_for_award`) from the date the standards were met; 202 Accepted, as the award itself comes later from the teacher record service.',
  },
  'POST /trainees/{trainee_id}/recommend-for-qts': {
    id: 'RecommendTraineeForQts',
    tag: 'State changes',
    description:
      'The former name of `update-qts-or-eyts-status`, still answered; new clients call the successor named in the `Link` header.',
  },
  'GET /trainees/{trainee_id}/placements': {
    id: 'ListPlacements',
    tag: 'Placements',
    description: 'Lists the school placements of a trainee, oldest first.',
  },
  'POST /trainees/{trainee_id}/placements': {
    id: 'CreatePlacement',
    tag: 'Placements',
    description: 'Adds a school placement to a trainee, by the school’s URN or by its name and postcode.',
  },
  'GET /trainees/{trainee_id}/placements/{placement_id}': {
    id: 'GetPlacement',
    tag: 'Placements',
    description: 'Reads one placement of a trainee.',
  },
  'PUT /trainees/{trainee_id}/placements/{placement_id}': {
    id: 'ReplacePlacement',
    tag: 'Placements',
    description: 'Changes a placement exactly like PATCH.',
  },
  'PATCH /trainees/{trainee_id}/placements/{placement_id}': {
    id: 'UpdatePlacement',
    tag: 'Placements',
    description: 'Changes the members of a placement that are sent.',
  },
  'DELETE /trainees/{trainee_id}/placements/{placement_id}': {
    id: 'DeletePlacement',
    tag: 'Placements',
    description: 'Removes a placement from a trainee.',
  },
  'GET /trainees/{trainee_id}/degrees': {
    id: 'ListDegrees',
    tag: 'Degrees',
    description: 'Lists the degrees of a trainee by graduation year.',
  },
  'POST /trainees/{trainee_id}/degrees': {
    id: 'CreateDegree',
    tag: 'Degrees',
    description:
      'Adds a degree to a trainee (codes from `GET /reference-data`: `degree_type`, `degree_subject`, `institution`, `degree_grade`, `country`).',
  },
  'GET /trainees/{trainee_id}/degrees/{degree_id}': {
    id: 'GetDegree',
    tag: 'Degrees',
    description: 'Reads one degree of a trainee.',
  },
  'PUT /trainees/{trainee_id}/degrees/{degree_id}': {
    id: 'ReplaceDegree',
    tag: 'Degrees',
    description: 'Changes a degree exactly like PATCH.',
  },
  'PATCH /trainees/{trainee_id}/degrees/{degree_id}': {
    id: 'UpdateDegree',
    tag: 'Degrees',
    description: 'Changes the members of a degree that are sent.',
  },
  'DELETE /trainees/{trainee_id}/degrees/{degree_id}': {
    id: 'DeleteDegree',
    tag: 'Degrees',
    description: 'Removes a degree from a trainee.',
  },
  'GET /events': {
    id: 'ListEvents',
    tag: 'Events',
    description:
      'Follows what changed in your trainees, placements and degrees, oldest first, in the order the changes were committed: keep the `next_cursor` of each page and send it as `after` next time.',
  },
  'GET /webhooks': {
    id: 'ListWebhooks',
    tag: 'Webhooks',
    description: 'Lists the webhook subscriptions of the token’s provider in this environment (without their secrets).',
  },
  'POST /webhooks': {
    id: 'CreateWebhook',
    tag: 'Webhooks',
    description:
      'Subscribes a URL to your events (all types, or those in `event_types`); the answer holds the signing secret, shown only this once.',
  },
  'GET /webhooks/{webhook_id}': {
    id: 'GetWebhook',
    tag: 'Webhooks',
    description:
      'Reads one subscription: its URL, event types, whether it is enabled and why not, and the version its deliveries use.',
  },
  'PATCH /webhooks/{webhook_id}': {
    id: 'UpdateWebhook',
    tag: 'Webhooks',
    description:
      'Changes a subscription’s URL or event types, or re-enables one that was disabled (`enabled: true`); a new URL is checked as on create.',
  },
  'DELETE /webhooks/{webhook_id}': {
    id: 'DeleteWebhook',
    tag: 'Webhooks',
    description: 'Unsubscribes: no further deliveries are made for this subscription.',
  },
  'POST /webhooks/{webhook_id}/rotate-secret': {
    id: 'RotateWebhookSecret',
    tag: 'Webhooks',
    description:
      'Makes a new signing secret, shown only in this answer; deliveries carry signatures of both the new and the old secret for 24 hours, so a receiver can switch without missing one.',
  },
  'GET /webhooks/{webhook_id}/deliveries': {
    id: 'ListWebhookDeliveries',
    tag: 'Webhooks',
    description:
      'The delivery log of a subscription, newest first: each event sent (or waiting), its attempts, the last HTTP status and error, and when it is tried next.',
  },
  'POST /webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': {
    id: 'RedeliverWebhookDelivery',
    tag: 'Webhooks',
    description:
      'Queues a delivery to be sent again, with the same `webhook-id`, so a receiver that has it already can drop it.',
  },
  'POST /trainees/batch': {
    id: 'CreateTraineeBatch',
    tag: 'Trainees',
    description:
      'An extension of this service (v2026.1): creates up to 100 trainees in one request, `data` being a list of what `POST /trainees` takes. Every row is checked and stored on its own and answered, with its `index`, by the `status` and body its own create would have had: 201 with the trainee, 422 with its validation errors, 409 with the trainee it duplicates (also an earlier row of the same batch). The trainees are stored in row order, and so are their `trainee.created` events. More than 100 rows answer 400 and nothing is written.',
  },
  'POST /sandbox/trainees': {
    id: 'GenerateSandboxTrainees',
    tag: 'Sandbox',
    description:
      'Sandbox only (404 on live): creates `count` (up to 500) realistic trainees for your provider, of every route family with their degrees and placements, spread over the states a year brings (waiting for a TRN, with a TRN, recommended, awarded, deferred, withdrawn), with the events those changes make. At most 10 sandbox tool calls a minute per provider.',
  },
  'DELETE /sandbox/data': {
    id: 'ClearSandboxData',
    tag: 'Sandbox',
    description:
      'Sandbox only (404 on live): deletes all your provider’s sandbox trainees (with their placements, degrees and history), its events and its webhook deliveries, to start again; webhook subscriptions are kept. At most 10 sandbox tool calls a minute per provider.',
  },
  'GET /reference-data': {
    id: 'GetReferenceData',
    tag: 'Reference data',
    description:
      'The code lists the other operations accept (training routes, subjects, age ranges, countries, degree codes, withdrawal reasons, …), all of them or one with `field`. No token needed. Published from v2026.1; its lists hold for the older versions too.',
  },
};

export const REGISTER_TAGS = [
  { name: 'Info', description: 'Check a token and the service' },
  { name: 'Trainees', description: 'Create, list, read and update trainee records' },
  { name: 'Placements', description: 'School placements of a trainee' },
  { name: 'Degrees', description: 'Degrees of a trainee' },
  { name: 'State changes', description: 'Defer, withdraw and recommend for QTS or EYTS' },
  { name: 'Reference data', description: 'The code lists the API accepts' },
  { name: 'Events', description: 'Changes to your trainees, placements and degrees, in commit order' },
  { name: 'Webhooks', description: 'Subscriptions that push your events to a URL, and their delivery log' },
  { name: 'Sandbox', description: 'Sandbox only: generate trainees to test with, and start again' },
];

export const REGISTER_OPERATION_DOCS: OperationDocs = Object.fromEntries(
  Object.values(REGISTER_OPERATIONS).map(({ id, tag, description }) => [id, { tag, description }]),
);

/** The operation an example calls: its id, method and path template. */
export function registerOperation(id: string): { method: string; path: string } {
  const key = Object.keys(REGISTER_OPERATIONS).find((k) => REGISTER_OPERATIONS[k]!.id === id);
  if (!key) throw new Error(`unknown register operation ${id}`);
  const [method, path] = key.split(' ') as [string, string];
  return { method, path };
}

/**
 * An example request of the scenario. `$name` in a path parameter is the id an earlier example saved as `name`;
 * `$etag:name` in a header is that trainee's current ETag (the test reads it just before sending).
 */
export interface RegisterExample {
  operationId: string;
  name: string;
  summary: string;
  status: number;
  /** Versions that show it; default every version that has the operation. */
  versions?: readonly RegisterVersion[];
  pathParams?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: (version: RegisterVersion) => unknown;
  rawBody?: string;
  /** Saves `data.trainee_id` / `placement_id` / `degree_id` (or the top-level one) of the answer under this name. */
  saves?: string;
  /**
   * Done before sending: the TRN arrives, as the operator would record it (it comes from the teacher record
   * service); the webhook worker's fan-out queues deliveries (without sending them); the events older than now are
   * deleted, as retention would after 90 days.
   */
  before?: { receiveTrn: string; trn: string } | { fanOutWebhooks: true } | { purgeEvents: true };
}

/** Request member names of a version: v2025.0 still spells some the old way (`course_subject_one`, `withdraw_date`). */
export function inVersion(version: RegisterVersion, data: Json): Json {
  const external = Object.fromEntries(
    Object.entries(adapterFor(version).inputNames).map(([name, canonical]) => [canonical, name]),
  );
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [external[key] ?? key, value]));
}

const DEGREE = { uk_degree: '083', subject: '100485', institution: '0117', grade: '02', graduation_year: '2020' };

/** The fields every route needs (a 2026/27 trainee, started in September 2026). */
const COMMON = {
  first_names: 'Ada',
  last_name: 'Lovelace',
  date_of_birth: '1995-12-10',
  sex: '11',
  email: 'ada.lovelace@example.com',
  nationality: 'GB',
  itt_start_date: '2026-09-01',
  itt_end_date: '2027-07-31',
  study_mode: '01',
  itt_aim: '202',
  itt_qualification_aim: '004',
  course_year: '1',
  fund_code: '2',
  funding_method: '6',
};

const v2026_1: readonly RegisterVersion[] = ['v2026.1'];
const create = (name: string, summary: string, data: Json, versions?: readonly RegisterVersion[]): RegisterExample => ({
  operationId: 'CreateTrainee',
  name,
  summary,
  status: 201,
  versions,
  saves: name,
  body: (version) => ({ data: inVersion(version, data) }),
});

/**
 * A receiver on this machine: the service accepts it only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES (development and
 * tests), and the examples run without the webhook worker, so nothing is sent to it.
 */
export const EXAMPLE_WEBHOOK_URL = 'https://127.0.0.1:8443/register-events';
/** The cursor of the first event ever written (position 1), older than any kept once events were purged. */
const FIRST_CURSOR = Buffer.from('ev1.1', 'latin1').toString('base64url');

/** Requests in the order they are sent; each version runs them on its own provider's records. */
export const REGISTER_EXAMPLES: RegisterExample[] = [
  { operationId: 'GetInfo', name: 'info', summary: 'Check the token', status: 200 },
  {
    operationId: 'CreateWebhook',
    name: 'subscribe',
    summary: 'Trainee events to a receiver (made before the trainees, so their events are queued for it)',
    status: 201,
    saves: 'webhook',
    body: () => ({
      data: { url: EXAMPLE_WEBHOOK_URL, event_types: ['trainee.created', 'trainee.updated', 'trainee.state_changed'] },
    }),
  },
  {
    operationId: 'CreateWebhook',
    name: 'unknown-type',
    summary: 'An event type that does not exist',
    status: 422,
    body: () => ({ data: { url: EXAMPLE_WEBHOOK_URL, event_types: ['trainee.graduated'] } }),
  },
  { operationId: 'ListWebhooks', name: 'webhooks', summary: 'The provider’s subscriptions', status: 200 },
  create('postgraduate', 'Postgraduate route (12, provider-led) with its degree', {
    ...COMMON,
    training_route: '12',
    course_subject_1: '100425',
    course_age_range: '13918',
    hesa_id: '2612345678901',
    degrees_attributes: [DEGREE],
    placements_attributes: [{ urn: '900020' }],
  }),
  create('undergraduate', 'Undergraduate route (11, provider-led): no degree needed', {
    ...COMMON,
    first_names: 'Alan',
    last_name: 'Turing',
    email: 'alan.turing@example.com',
    training_route: '11',
    course_subject_1: '100346',
    course_age_range: '13918',
    itt_end_date: '2029-07-31',
    itt_qualification_aim: '001',
    hesa_id: '2612345678902',
    placements_attributes: [
      { urn: '900020', name: 'Oak Lane Primary School' },
      { urn: '900030', name: 'Elm Street Academy' },
    ],
  }),
  create('salaried', 'Salaried postgraduate route (03, school direct) with its degree', {
    ...COMMON,
    first_names: 'Emmeline',
    last_name: 'Pankhurst',
    email: 'emmeline.pankhurst@example.com',
    training_route: '03',
    course_subject_1: '100425',
    course_age_range: '13918',
    hesa_id: '2612345678907',
    degrees_attributes: [DEGREE],
  }),
  create(
    'iqts',
    'International QTS (15) with iqts_country',
    {
      ...COMMON,
      first_names: 'Marie',
      last_name: 'Curie',
      email: 'marie.curie@example.com',
      training_route: '15',
      course_subject_1: '100425',
      course_age_range: '13918',
      iqts_country: 'FR',
      hesa_id: '2612345678903',
      degrees_attributes: [DEGREE],
    },
    v2026_1,
  ),
  create(
    'early-years',
    'Early years undergraduate (18): age range 13920, subject 100510',
    {
      ...COMMON,
      first_names: 'Maria',
      last_name: 'Montessori',
      email: 'maria.montessori@example.com',
      training_route: '18',
      course_subject_1: '100510',
      course_age_range: '13920',
      itt_aim: '201',
      itt_qualification_aim: undefined,
      hesa_id: '2612345678904',
    },
    v2026_1,
  ),
  create(
    'assessment-only',
    'Assessment only (16): study_mode may be left out',
    {
      ...COMMON,
      first_names: 'Charlotte',
      last_name: 'Mason',
      email: 'charlotte.mason@example.com',
      training_route: '16',
      study_mode: undefined,
      course_subject_1: '100425',
      course_age_range: '13918',
      hesa_id: '2612345678905',
      degrees_attributes: [DEGREE],
    },
    v2026_1,
  ),
  {
    operationId: 'CreateTrainee',
    name: 'duplicate',
    summary: 'The postgraduate trainee again: 409 with the existing record',
    status: 409,
    body: (version) => ({
      data: inVersion(version, {
        ...COMMON,
        training_route: '12',
        course_subject_1: '100425',
        course_age_range: '13918',
        hesa_id: '2612345678901',
        degrees_attributes: [DEGREE],
      }),
    }),
  },
  {
    operationId: 'CreateTrainee',
    name: 'invalid',
    summary: 'A code outside its list and a postgraduate route without a degree',
    status: 422,
    body: (version) => ({
      data: inVersion(version, {
        ...COMMON,
        first_names: 'Grace',
        last_name: 'Hopper',
        training_route: '12',
        sex: '99',
        course_subject_1: '100425',
        course_age_range: '13918',
        hesa_id: '2612345678906',
      }),
    }),
  },
  {
    operationId: 'CreateTrainee',
    name: 'malformed',
    summary: 'A body that is not JSON',
    status: 400,
    rawBody: '{"data": {"first_names": "Ada",',
  },
  {
    operationId: 'ListTrainees',
    name: 'cycle',
    summary: 'The 2026/27 trainees, 2 a page',
    status: 200,
    query: { academic_cycle: '2026', per_page: '2', sort_order: 'desc' },
  },
  {
    operationId: 'ListTrainees',
    name: 'none',
    summary: 'A cycle without trainees',
    status: 404,
    query: { academic_cycle: '2020' },
  },
  {
    operationId: 'ListTrainees',
    name: 'bad-filter',
    summary: 'A status that does not exist',
    status: 422,
    query: { status: 'graduated' },
  },
  {
    operationId: 'GetTrainee',
    name: 'trainee',
    summary: 'The postgraduate trainee',
    status: 200,
    pathParams: { trainee_id: '$postgraduate' },
  },
  {
    operationId: 'UpdateTrainee',
    name: 'update',
    summary: 'A new email address, refused if the trainee changed since the ETag',
    status: 200,
    pathParams: { trainee_id: '$postgraduate' },
    headers: { 'If-Match': '$etag:postgraduate' },
    body: () => ({ data: { email: 'ada@example.org' } }),
  },
  {
    operationId: 'UpdateTrainee',
    name: 'invalid',
    summary: 'An impossible date of birth',
    status: 422,
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { date_of_birth: '2030-01-01' } }),
  },
  {
    operationId: 'ReplaceTrainee',
    name: 'replace',
    summary: 'A middle name (PUT is a partial update too)',
    status: 200,
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { middle_names: 'Augusta' } }),
  },
  {
    operationId: 'ReplaceTrainee',
    name: 'invalid',
    summary: 'A training route this version does not know',
    status: 422,
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { training_route: '99' } }),
  },
  {
    operationId: 'CreatePlacement',
    name: 'by-urn',
    summary: 'A placement at a school by URN and name',
    status: 201,
    saves: 'placement',
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { urn: '131238', name: 'Hedgehog Primary School' } }),
  },
  {
    operationId: 'CreatePlacement',
    name: 'by-name',
    summary: 'A placement at a school by name and postcode',
    status: 201,
    saves: 'second-placement',
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { name: 'Hilltop Primary School', postcode: 'GU1 1AA' } }),
  },
  {
    operationId: 'CreatePlacement',
    name: 'invalid',
    summary: 'No school named',
    status: 422,
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { postcode: 'GU1 1AA' } }),
  },
  {
    operationId: 'ListPlacements',
    name: 'placements',
    summary: 'The trainee’s placements',
    status: 200,
    pathParams: { trainee_id: '$postgraduate' },
  },
  {
    operationId: 'GetPlacement',
    name: 'placement',
    summary: 'One placement',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', placement_id: '$placement' },
  },
  {
    operationId: 'UpdatePlacement',
    name: 'update',
    summary: 'Another school',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', placement_id: '$second-placement' },
    body: () => ({ data: { name: 'Riverside Academy', postcode: 'SW1A 1AA' } }),
  },
  {
    operationId: 'UpdatePlacement',
    name: 'invalid',
    summary: 'A URN that is not 6 digits',
    status: 422,
    pathParams: { trainee_id: '$postgraduate', placement_id: '$second-placement' },
    body: () => ({ data: { urn: '12' } }),
  },
  {
    operationId: 'ReplacePlacement',
    name: 'replace',
    summary: 'A new postcode',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', placement_id: '$second-placement' },
    body: () => ({ data: { postcode: 'SW1A 2AA' } }),
  },
  {
    operationId: 'ReplacePlacement',
    name: 'invalid',
    summary: 'A postcode that is not one',
    status: 422,
    pathParams: { trainee_id: '$postgraduate', placement_id: '$second-placement' },
    body: () => ({ data: { postcode: 'not a postcode' } }),
  },
  {
    operationId: 'DeletePlacement',
    name: 'delete',
    summary: 'Remove the second placement',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', placement_id: '$second-placement' },
  },
  {
    operationId: 'CreateDegree',
    name: 'uk-degree',
    summary: 'A UK degree',
    status: 201,
    saves: 'degree',
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { ...DEGREE, subject: '100346', graduation_year: 2022 } }),
  },
  {
    operationId: 'CreateDegree',
    name: 'non-uk-degree',
    summary: 'A degree from outside the UK (non_uk_degree is a degree type code)',
    status: 201,
    saves: 'second-degree',
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({
      data: { non_uk_degree: '083', subject: '100425', country: 'FR', grade: '02', graduation_year: 2018 },
    }),
  },
  {
    operationId: 'CreateDegree',
    name: 'duplicate',
    summary: 'The same UK degree again',
    status: 409,
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { ...DEGREE, subject: '100346', graduation_year: 2022 } }),
  },
  {
    operationId: 'CreateDegree',
    name: 'invalid',
    summary: 'A degree type outside its list',
    status: 422,
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { ...DEGREE, subject: '100104', graduation_year: 2015, uk_degree: 'BA' } }),
  },
  {
    operationId: 'ListDegrees',
    name: 'degrees',
    summary: 'The trainee’s degrees',
    status: 200,
    pathParams: { trainee_id: '$postgraduate' },
  },
  {
    operationId: 'GetDegree',
    name: 'degree',
    summary: 'One degree',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
  },
  {
    operationId: 'UpdateDegree',
    name: 'update',
    summary: 'A different grade',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
    body: () => ({ data: { grade: '01' } }),
  },
  {
    operationId: 'UpdateDegree',
    name: 'duplicate',
    summary: 'Made equal to another degree of the trainee',
    status: 409,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
    body: () => ({ data: { subject: '100485', graduation_year: 2020, grade: '02' } }),
  },
  {
    operationId: 'UpdateDegree',
    name: 'invalid',
    summary: 'A graduation year in the future',
    status: 422,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
    body: () => ({ data: { graduation_year: 2090 } }),
  },
  {
    operationId: 'ReplaceDegree',
    name: 'replace',
    summary: 'A different subject',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
    body: () => ({ data: { subject: '100104' } }),
  },
  {
    operationId: 'ReplaceDegree',
    name: 'duplicate',
    summary: 'Made equal to another degree of the trainee',
    status: 409,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
    body: () => ({ data: { subject: '100485', graduation_year: 2020, grade: '02' } }),
  },
  {
    operationId: 'ReplaceDegree',
    name: 'invalid',
    summary: 'A grade outside its list',
    status: 422,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
    body: () => ({ data: { grade: 'A*' } }),
  },
  {
    operationId: 'DeleteDegree',
    name: 'delete',
    summary: 'Remove the non-UK degree',
    status: 200,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$second-degree' },
  },
  {
    operationId: 'RecommendTrainee',
    name: 'no-trn',
    summary: 'A trainee still waiting for its TRN',
    status: 422,
    pathParams: { trainee_id: '$salaried' },
    body: () => ({ data: { qts_standards_met_date: '2026-11-10' } }),
  },
  {
    operationId: 'RecommendTraineeForQts',
    name: 'no-trn',
    summary: 'A trainee still waiting for its TRN',
    status: 422,
    pathParams: { trainee_id: '$salaried' },
    body: () => ({ data: { qts_standards_met_date: '2026-11-10' } }),
  },
  {
    operationId: 'RecommendTrainee',
    name: 'recommend',
    summary: 'The postgraduate trainee, once its TRN arrived (a degree and 2 placements)',
    status: 202,
    before: { receiveTrn: 'postgraduate', trn: '1234567' },
    pathParams: { trainee_id: '$postgraduate' },
    body: () => ({ data: { qts_standards_met_date: '2026-11-10' } }),
  },
  {
    operationId: 'DeletePlacement',
    name: 'locked',
    summary: 'A recommended trainee cannot change (from v2026.1)',
    status: 422,
    versions: v2026_1,
    pathParams: { trainee_id: '$postgraduate', placement_id: '$placement' },
  },
  {
    operationId: 'DeleteDegree',
    name: 'locked',
    summary: 'A recommended trainee cannot change (from v2026.1)',
    status: 422,
    versions: v2026_1,
    pathParams: { trainee_id: '$postgraduate', degree_id: '$degree' },
  },
  {
    operationId: 'RecommendTraineeForQts',
    name: 'recommend',
    summary: 'The undergraduate trainee, once its TRN arrived (2 placements, no degree needed)',
    status: 202,
    before: { receiveTrn: 'undergraduate', trn: '7654321' },
    pathParams: { trainee_id: '$undergraduate' },
    body: () => ({ data: { qts_standards_met_date: '2026-11-10' } }),
  },
  {
    operationId: 'DeferTrainee',
    name: 'defer',
    summary: 'Defer the salaried trainee',
    status: 200,
    pathParams: { trainee_id: '$salaried' },
    body: () => ({ data: { defer_date: '2026-11-02', defer_reason: 'Illness' } }),
  },
  {
    operationId: 'DeferTrainee',
    name: 'invalid',
    summary: 'Already deferred',
    status: 422,
    pathParams: { trainee_id: '$salaried' },
    body: () => ({ data: { defer_date: '2026-11-03' } }),
  },
  {
    operationId: 'WithdrawTrainee',
    name: 'invalid',
    summary: 'A reason that belongs to the other trigger',
    status: 422,
    pathParams: { trainee_id: '$salaried' },
    body: (version) => ({
      data: inVersion(version, {
        withdrawal_date: '2026-11-20',
        trigger: 'provider',
        future_interest: 'no',
        reasons: ['does_not_want_to_become_a_teacher'],
      }),
    }),
  },
  {
    operationId: 'WithdrawTrainee',
    name: 'withdraw',
    summary: 'The trainee decided to leave',
    status: 200,
    pathParams: { trainee_id: '$salaried' },
    body: (version) => ({
      data: inVersion(version, {
        withdrawal_date: '2026-11-20',
        trigger: 'trainee',
        future_interest: 'no',
        reasons: ['does_not_want_to_become_a_teacher'],
      }),
    }),
  },
  { operationId: 'ListEvents', name: 'page', summary: 'The first 2 events kept', status: 200, query: { limit: '2' } },
  {
    operationId: 'ListEvents',
    name: 'unknown-type',
    summary: 'An event type that does not exist',
    status: 400,
    query: { type: 'trainee.graduated' },
  },
  {
    operationId: 'GetWebhook',
    name: 'webhook',
    summary: 'The subscription',
    status: 200,
    pathParams: { webhook_id: '$webhook' },
  },
  {
    operationId: 'UpdateWebhook',
    name: 'update',
    summary: 'Only state changes from now on',
    status: 200,
    pathParams: { webhook_id: '$webhook' },
    body: () => ({ data: { event_types: ['trainee.state_changed'] } }),
  },
  {
    operationId: 'UpdateWebhook',
    name: 'invalid',
    summary: 'A URL that is not one',
    status: 422,
    pathParams: { webhook_id: '$webhook' },
    body: () => ({ data: { url: 'not a url' } }),
  },
  {
    operationId: 'RotateWebhookSecret',
    name: 'rotate',
    summary: 'A new signing secret',
    status: 200,
    pathParams: { webhook_id: '$webhook' },
  },
  {
    operationId: 'ListWebhookDeliveries',
    name: 'deliveries',
    summary: 'The 2 newest deliveries (queued, not yet sent)',
    status: 200,
    before: { fanOutWebhooks: true },
    pathParams: { webhook_id: '$webhook' },
    query: { limit: '2' },
    saves: 'delivery',
  },
  {
    operationId: 'RedeliverWebhookDelivery',
    name: 'redeliver',
    summary: 'Send the newest delivery again',
    status: 202,
    pathParams: { webhook_id: '$webhook', delivery_id: '$delivery' },
  },
  {
    operationId: 'DeleteWebhook',
    name: 'delete',
    summary: 'Unsubscribe',
    status: 204,
    pathParams: { webhook_id: '$webhook' },
  },
  {
    operationId: 'ListEvents',
    name: 'expired',
    summary: 'A cursor older than the retention period (its events were deleted)',
    status: 410,
    before: { purgeEvents: true },
    query: { after: FIRST_CURSOR },
  },
  {
    operationId: 'CreateTraineeBatch',
    name: 'batch',
    summary: 'Two trainees: one created, one with an invalid code (422 for that row only)',
    status: 200,
    versions: v2026_1,
    body: () => ({
      data: [
        {
          ...COMMON,
          first_names: 'Dorothy',
          last_name: 'Hodgkin',
          email: 'dorothy.hodgkin@example.com',
          training_route: '11',
          course_subject_1: '100346',
          course_age_range: '13918',
          itt_end_date: '2029-07-31',
          itt_qualification_aim: '001',
          hesa_id: '2612345678908',
        },
        {
          ...COMMON,
          first_names: 'Rosalind',
          last_name: 'Franklin',
          email: 'rosalind.franklin@example.com',
          training_route: '11',
          sex: '99x',
          course_subject_1: '100346',
          course_age_range: '13918',
          itt_end_date: '2029-07-31',
          itt_qualification_aim: '001',
          hesa_id: '2612345678909',
        },
      ],
    }),
  },
  {
    operationId: 'CreateTraineeBatch',
    name: 'empty',
    summary: 'No rows',
    status: 422,
    versions: v2026_1,
    body: () => ({ data: [] }),
  },
  {
    operationId: 'CreateTraineeBatch',
    name: 'malformed',
    summary: 'A body that is not JSON',
    status: 400,
    versions: v2026_1,
    rawBody: '{"data": [{"first_names": "Ada",',
  },
  {
    operationId: 'GenerateSandboxTrainees',
    name: 'generate',
    summary: 'Ten trainees to test with',
    status: 201,
    versions: v2026_1,
    body: () => ({ data: { count: 10 } }),
  },
  {
    operationId: 'GenerateSandboxTrainees',
    name: 'too-many',
    summary: 'More than 500',
    status: 422,
    versions: v2026_1,
    body: () => ({ data: { count: 1000 } }),
  },
  {
    operationId: 'GetReferenceData',
    name: 'training-routes',
    summary: 'The training routes',
    status: 200,
    query: { field: 'training_route' },
  },
  {
    operationId: 'GetReferenceData',
    name: 'unknown',
    summary: 'A list that does not exist',
    status: 404,
    query: { field: 'colour' },
  },
  // Last: it deletes every record the examples made.
  { operationId: 'ClearSandboxData', name: 'clear', summary: 'Start again', status: 200, versions: v2026_1 },
];

/** An id no record has (24 base58 characters). */
export const UNKNOWN_ID = 'NoSuchRecord111111111111';

/** The answers this service gave to REGISTER_EXAMPLES, per version (written by test/docs/examples.test.ts). */
export const registerRecordedExamples = recordedExamples(projectPath('src/register/openapi/recorded-examples.json'));

const RATE_LIMITED = {
  description: 'Too many requests from this provider (or IP without a valid token): retry after a minute',
  content: { 'text/plain': { schema: { type: 'string' } } },
};

/**
 * A version's document with operationIds, groups, descriptions, the 429 every operation can answer and the
 * recorded examples; the document's description says what the terse errors mean.
 */
export function withRegisterExamples(version: RegisterVersion, document: Json): Json {
  const paths = document.paths as Record<string, Json>;
  // Only the groups this version has operations in (no empty section: v2025.0 and v2026.0 have no reference data).
  const used = new Set<string>();
  for (const [key, { id, tag }] of Object.entries(REGISTER_OPERATIONS)) {
    const [method, path] = key.split(' ') as [string, string];
    const operation = paths[path]?.[method.toLowerCase()] as Json | undefined;
    if (!operation) continue;
    operation.operationId = id;
    // Requests without a token (reference data) are not counted.
    const open = Array.isArray(operation.security) && operation.security.length === 0;
    if (!open) (operation.responses as Json)[429] = RATE_LIMITED;
    used.add(tag);
  }
  const info = document.info as Json;
  const result = withExamples(
    {
      ...document,
      info: {
        ...info,
        description: `${String(info.description)}\n\n${REGISTER_HELP.versions}\n\n${REGISTER_HELP.tokens}\n\n${REGISTER_HELP.values}`,
      },
      tags: REGISTER_TAGS.filter((tag) => used.has(tag.name)),
    },
    REGISTER_OPERATION_DOCS,
    registerRecordedExamples()[version] ?? {},
  );
  return result;
}
