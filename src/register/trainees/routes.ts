/**
 * `GET/POST /trainees`, `GET/PUT/PATCH /trainees/{trainee_id}` of one version scope.
 * Requests are validated here, not by route schemas and Ajv, because the register's 422 bodies have the real
 * service's shapes; the routes are described in the per-version OpenAPI documents (src/register/openapi.ts).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { PreconditionFailedError } from '../../errors.js';
import { assertTraineeModifiable } from '../state-machine.js';
import { duplicateTrainee, filterValidationError, missingData, noTraineesFound, traineeNotFound, traineeValidationError } from '../errors.js';
import type { RegisterRouteOptions } from '../index.js';
import { adapterFor as versionAdapter, messageInVersion, toCanonicalInput, type RegisterVersion } from '../versions/index.js';
import { TraineeBodyCache } from './body-cache.js';
import { newSlug, findTraineeWithNested, insertTraineeRow, lockDuplicateCandidates, listTraineePage, loadTraineesWithNested, lockTraineeWithNested, recordAudit, updateTraineeRow, type TraineePatch, type TraineeRow } from './repository.js';
import { loadPlacementsAndDegreesForTrainees, serializeDegree, serializePlacement } from '../actions/nested.js';
import { serializeTrainee, traineeEtag } from './serialize.js';
import {
  academicCycleOf, agesOf, codeText, DISABILITY_KEY, isBlank, isoDate, SPECIAL_URNS, validateDegreeInput,
  validatePlacementInput, validateTraineeAttributes, type Attributes,
} from './validate.js';
import { todayUtc } from '../tokens.js';

export const DEFAULT_PER_PAGE = 50;
/** The real service has no maximum; an unbounded page is a denial-of-service lever, so pages stop at 1000. */
export const MAX_PER_PAGE = 1000;
/** The largest `page` (PostgreSQL int4, the real service's limit for a page number). */
export const MAX_PAGE = 2147483647;
export const LIST_STATUSES = ['course_not_yet_started', 'in_training', 'deferred', 'awarded', 'withdrawn'];
/** The oldest academic cycle the register knows (start year). */
export const FIRST_ACADEMIC_CYCLE = 2019;

/** Request fields that map one-to-one onto trainee columns. */
const SCALAR_FIELDS = [
  'provider_trainee_id', 'hesa_id', 'first_names', 'middle_names', 'last_name', 'previous_last_name', 'sex', 'email',
  'nationality', 'ni_number', 'ethnicity', 'training_route', 'itt_aim', 'itt_qualification_aim', 'course_subject_1',
  'course_subject_2', 'course_subject_3', 'course_age_range', 'study_mode', 'fund_code', 'funding_method',
  'training_initiative', 'additional_training_initiative', 'pg_apprenticeship_start_date', 'iqts_country',
] as const;
const DATE_FIELDS = ['date_of_birth', 'itt_start_date', 'itt_end_date', 'trainee_start_date'] as const;
const ACCEPTED_FIELDS = new Set<string>([
  ...SCALAR_FIELDS, ...DATE_FIELDS, 'application_id', 'course_year', 'training_partner_urn', 'training_partner_ukprn',
  'employing_school_urn', 'degrees_attributes', 'placements_attributes',
]);

function requestData(body: unknown): Record<string, unknown> {
  const data = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).data : undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data) || Object.keys(data).length === 0) throw missingData();
  return data as Record<string, unknown>;
}

/**
 * Members the real permit lists accept but the API derives or ignores (`ethnic_group` comes from `ethnicity`, …):
 * they keep a body from being "missing" but change nothing. `trn` is not among them (never permitted).
 */
const IGNORED_FIELDS = new Set<string>([
  'ethnic_group', 'ethnic_background', 'diversity_disclosure', 'disability_disclosure', 'course_education_phase',
  'course_allocation_subject_id', 'progress', 'applying_for_bursary', 'applying_for_grant', 'applying_for_scholarship',
  'bursary_tier', 'course_study_mode', 'hesa_disabilities', 'nationalisations_attributes',
]);

/**
 * Fields the real service stores "squished": surrounding white space (non-breaking and other Unicode spaces too)
 * removed and inner runs made one space. Names compared by the duplicate check are therefore compared squished.
 */
const SQUISHED_FIELDS = new Set<string>(['first_names', 'middle_names', 'last_name', 'email', 'hesa_id']);

export function squish(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

/** Members a `PUT`/`PATCH` may clear with `null`; any other `null` leaves the stored value as it is. */
const CLEARABLE_BY_NULL = new Set<string>(['course_subject_2', 'course_subject_3', 'ethnicity']);

/** `{"0": {...}, "1": {...}}` (form keys `data[placements_attributes][0][urn]`) as the list Rails reads it as. */
function indexedHashAsArray(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((k) => /^\d+$/.test(k))) return value;
  return keys.sort((a, b) => Number(a) - Number(b)).map((k) => (value as Record<string, unknown>)[k]);
}

/**
 * The request's fields in canonical names, unknown and read-only keys dropped (the real permit lists). `null`
 * members are dropped as the real mapper drops them, except those `mode` lets a client clear.
 */
function acceptedInput(version: RegisterVersion, data: Record<string, unknown>, mode: 'create' | 'update' = 'create'): Attributes {
  const canonical = toCanonicalInput(version, data);
  const result: Attributes = {};
  let permitted = 0;
  for (const [key, value] of Object.entries(canonical)) {
    const nested = key === 'degrees_attributes' || key === 'placements_attributes' || key === 'nationalisations_attributes';
    // Scalar fields permit scalars only (as Rails' permit lists): an object or array there is dropped.
    if (!nested && value !== null && typeof value === 'object') continue;
    if (IGNORED_FIELDS.has(key)) {
      permitted += 1;
      continue;
    }
    if (!(ACCEPTED_FIELDS.has(key) || DISABILITY_KEY.test(key))) continue;
    permitted += 1;
    if (value === null && !(mode === 'update' && CLEARABLE_BY_NULL.has(key))) continue;
    result[key] = nested ? indexedHashAsArray(value) : SQUISHED_FIELDS.has(key) && typeof value === 'string' ? squish(value) : value;
  }
  // Rails' `params.expect` finds nothing it permits: the same 422 as a missing `data`.
  if (permitted === 0) throw missingData();
  return result;
}

function rowToAttributes(row: TraineeRow): Attributes {
  const attrs: Attributes = {};
  for (const field of [...SCALAR_FIELDS, ...DATE_FIELDS]) attrs[field] = row[field];
  attrs.application_id = row.application_id;
  attrs.course_year = row.course_year;
  attrs.training_partner_urn = row.training_partner_urn;
  attrs.training_partner_ukprn = row.training_partner_ukprn;
  attrs.employing_school_urn = row.employing_school_urn;
  Object.assign(attrs, row.disabilities ?? {});
  return attrs;
}

const text = (value: unknown): string | null => (isBlank(value) ? null : codeText(value));

/** Column values of a validated attribute set. */
function attributesToColumns(attrs: Attributes): TraineePatch {
  const columns: Record<string, unknown> = {};
  for (const field of SCALAR_FIELDS) columns[field] = text(attrs[field]);
  // Funding method C (veteran teaching undergraduate bursary) sets that initiative, which has no HESA code.
  if (columns.funding_method === 'C') columns.training_initiative = null;
  for (const field of DATE_FIELDS) columns[field] = isBlank(attrs[field]) ? null : (isoDate(attrs[field]) ?? null);
  columns.application_id = isBlank(attrs.application_id) ? null : Number.parseInt(codeText(attrs.application_id), 10);
  columns.course_year = isBlank(attrs.course_year) ? null : Number.parseInt(codeText(attrs.course_year), 10);
  const [min, max] = agesOf(text(attrs.course_age_range));
  columns.course_min_age = min;
  columns.course_max_age = max;
  const disabilities: Record<string, string> = {};
  for (const [key, value] of Object.entries(attrs)) if (DISABILITY_KEY.test(key) && !isBlank(value)) disabilities[key] = codeText(value);
  columns.disabilities = JSON.stringify(disabilities);
  return columns as TraineePatch;
}

interface PartnerColumns {
  training_partner_urn?: string | null;
  training_partner_ukprn?: string | null;
  employing_school_urn?: string | null;
}

/** Training partner and employing school: looked up only when their keys are sent. */
async function resolvePartners(db: Executor, version: RegisterVersion, input: Attributes, errors: string[]): Promise<PartnerColumns> {
  const legacy = version === 'v2025.0';
  const result: PartnerColumns = {};
  if ('training_partner_urn' in input) {
    const urn = text(input.training_partner_urn);
    if (urn === null || SPECIAL_URNS.includes(urn)) {
      result.training_partner_urn = null;
      result.training_partner_ukprn = null;
    } else {
      const partner = await db.selectFrom('training_partners').select(['urn', 'ukprn']).where('urn', '=', urn).where('discarded_at', 'is', null).executeTakeFirst();
      if (!partner) {
        errors.push(legacy
          ? `lead_partner_id is invalid. The URN '${urn}' does not match any known lead partners`
          : `training_partner_urn is invalid. The URN '${urn}' does not match any known training partners`);
      } else {
        result.training_partner_urn = partner.urn;
        result.training_partner_ukprn = partner.ukprn;
      }
    }
  } else if ('training_partner_ukprn' in input) {
    const ukprn = text(input.training_partner_ukprn);
    if (ukprn === null) {
      result.training_partner_urn = null;
      result.training_partner_ukprn = null;
    } else {
      const partner = await db.selectFrom('training_partners').select(['urn', 'ukprn']).where('ukprn', '=', ukprn).where('discarded_at', 'is', null).executeTakeFirst();
      if (!partner) {
        errors.push(legacy
          ? `lead_partner_ukprn is invalid. The UKPRN '${ukprn}' does not match any known lead partners`
          : `training_partner_ukprn is invalid. The UKPRN '${ukprn}' does not match any known training partners`);
      } else {
        result.training_partner_urn = partner.urn;
        result.training_partner_ukprn = partner.ukprn;
      }
    }
  }
  if ('employing_school_urn' in input) {
    const urn = text(input.employing_school_urn);
    if (urn === null || SPECIAL_URNS.includes(urn)) result.employing_school_urn = null;
    else {
      const school = await db.selectFrom('schools').select('urn').where('urn', '=', urn).executeTakeFirst();
      if (!school) errors.push(`employing_school_id is invalid. The URN '${urn}' does not match any known schools`);
      else result.employing_school_urn = urn;
    }
  }
  return result;
}

function enhanced(request: FastifyRequest): boolean {
  return request.headers['enhanced-errors'] === 'true';
}

function rejectIfInvalid(request: FastifyRequest, version: RegisterVersion, errors: string[]): void {
  if (errors.length > 0) throw traineeValidationError(errors.map((m) => messageInVersion(version, m)), enhanced(request));
}

/** Existing trainees the new one duplicates: same provider, DOB, last name, route, start cycle, and first name or email. */
async function findDuplicates(db: Executor, providerId: number, attrs: Attributes): Promise<TraineeRow[]> {
  const ittStart = isoDate(attrs.itt_start_date);
  if (!ittStart) return [];
  const firstToken = (value: unknown) => (typeof value === 'string' ? (value.toLowerCase().replace(/[^a-z ]/g, '').trim().split(/\s+/)[0] ?? '') : '');
  const email = typeof attrs.email === 'string' ? attrs.email.trim().toLowerCase() : '';
  const candidates = await db
    .selectFrom('trainees')
    .selectAll()
    .where('provider_id', '=', providerId)
    .where('discarded_at', 'is', null)
    .where('date_of_birth', '=', isoDate(attrs.date_of_birth) ?? '')
    .where(sql<string>`lower(last_name)`, '=', String(attrs.last_name).toLowerCase())
    .where('training_route', '=', codeText(attrs.training_route))
    .where('start_academic_cycle', '=', academicCycleOf(ittStart))
    .execute();
  return candidates.filter(
    (row) => firstToken(row.first_names) === firstToken(attrs.first_names) || (email !== '' && (row.email ?? '').trim().toLowerCase() === email),
  );
}

async function serializeRows(db: Executor, rows: TraineeRow[], version: RegisterVersion, ukprn: string) {
  const nested = await loadPlacementsAndDegreesForTrainees(db, rows.map((r) => r.id));
  return rows.map((row) => serializeTrainee(row, version, { ukprn, ...(nested.get(row.id) ?? { placements: [], degrees: [] }) }));
}

/**
 * Inserts a new trainee's degrees and placements (and its audit row) in one statement: each list goes in from one
 * JSON parameter (`jsonb_populate_recordset`), naming its columns so table defaults still apply to the others.
 */
async function insertNested(trx: Executor, degrees: object[], placements: object[], audit?: Record<string, unknown>): Promise<void> {
  const fromJson = (table: 'trainee_degrees' | 'trainee_placements', rows: object[]) => {
    if (rows.length === 0) return undefined;
    const columns = Object.keys(rows[0]).map((c) => sql.ref(c));
    return sql`insert into ${sql.table(table)} (${sql.join(columns)}) select ${sql.join(columns)} from jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb)`;
  };
  const parts = [fromJson('trainee_degrees', degrees), fromJson('trainee_placements', placements)].filter((p) => p !== undefined);
  const final = audit
    ? sql`insert into trainee_audits (${sql.join(Object.keys(audit).map((c) => sql.ref(c)))}) values (${sql.join(Object.values(audit))})`
    : sql`select 1`;
  if (parts.length === 0 && !audit) return;
  const ctes = parts.map((part, i) => sql`${sql.raw(`n${i}`)} as (${part})`);
  await (ctes.length > 0 ? sql`with ${sql.join(ctes)} ${final}` : final).execute(trx);
}

function checkIfMatch(request: FastifyRequest, row: TraineeRow): void {
  const ifMatch = request.headers['if-match'];
  if (ifMatch === undefined) return;
  const current = traineeEtag(row);
  const tags = ifMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (!tags.includes('*') && !tags.includes(current)) throw new PreconditionFailedError();
}

const LIST_OPEN = Buffer.from('{"data":[');
const LIST_COMMA = Buffer.from(',');

export const traineeRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (app, { db, version, bodyCache: bodies }) => {
  // Documented in the per-version OpenAPI documents (src/register/openapi.ts), not the service-wide one.
  const schema = { hide: true };
  // List pages are assembled from serialized bodies (`bodies`) that only change with a trainee's lock version.

  app.get<{ Querystring: Record<string, unknown> }>('/trainees', { schema }, async (request, reply) => {
    const { provider } = request.registerContext;
    const today = todayUtc();
    const query = request.query;
    const errors: Record<string, string[]> = {};
    const one = (value: unknown) => (Array.isArray(value) ? value[value.length - 1] : value);

    let cycle = academicCycleOf(today);
    const cycleParam = one(query.academic_cycle);
    if (!isBlank(cycleParam)) {
      const value = codeText(cycleParam);
      if (!/^\d{4}$/.test(value) || Number(value) < FIRST_ACADEMIC_CYCLE || Number(value) > academicCycleOf(today) + 1) {
        errors.academic_cycle = [`${value} is not a valid academic cycle year`];
      } else cycle = Number(value);
    }
    const statuses = (Array.isArray(query.status) ? query.status : isBlank(query.status) ? [] : [query.status]).map(codeText);
    const badStatus = statuses.find((s) => !LIST_STATUSES.includes(s));
    if (badStatus !== undefined) errors.status = [`${badStatus} is not a valid status`];
    let since: Date | undefined;
    const sinceParam = one(query.since);
    if (!isBlank(sinceParam)) {
      const value = codeText(sinceParam);
      // An unencoded `+01:00` offset arrives as ` 01:00` (form decoding of `+`).
      const text = value.replace(/(T[\d:.]+) (\d{2}:?\d{2})$/, '$1+$2');
      const zoned = /T/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text}Z` : text;
      const parsed = isoDate(text) ? new Date(/T/.test(text) ? zoned : `${text}T00:00:00Z`) : undefined;
      if (!parsed || Number.isNaN(parsed.getTime())) errors.since = [`${value} is not a valid date`];
      else since = parsed;
    }
    // Kaminari reads a non-numeric or negative page as page 1; a page beyond int32 cannot be an offset (it was a 500).
    const pageParam = one(query.page);
    const pageNumber = isBlank(pageParam) ? 1 : Number.parseInt(codeText(pageParam), 10);
    if (Number.isFinite(pageNumber) && pageNumber > MAX_PAGE) errors.page = [`must be less than or equal to ${MAX_PAGE}`];
    const sortParam = one(query.sort_order);
    const sortOrder = isBlank(sortParam) ? 'desc' : codeText(sortParam);
    if (sortOrder !== 'asc' && sortOrder !== 'desc') errors.sort_order = ['is not included in the list'];
    if (Object.keys(errors).length > 0) throw filterValidationError(errors);

    const hasTrnParam = one(query.has_trn);
    const hasTrn = isBlank(hasTrnParam) ? undefined : codeText(hasTrnParam) === 'true';
    const page = Number.isFinite(pageNumber) && pageNumber >= 1 ? pageNumber : 1;
    const perPageParam = one(query.per_page);
    let perPage = DEFAULT_PER_PAGE;
    if (!isBlank(perPageParam)) {
      const parsed = Number.parseInt(codeText(perPageParam), 10);
      perPage = Number.isNaN(parsed) || parsed === 0 ? 0 : parsed < 0 ? 100 : Math.min(parsed, MAX_PER_PAGE);
    }
    if (perPage === 0) throw noTraineesFound();

    const { page: entries, total } = await listTraineePage(db, {
      providerId: provider.id,
      academicCycle: cycle,
      statuses,
      since,
      hasTrn,
      page,
      perPage,
      sortOrder: sortOrder as 'asc' | 'desc',
      today,
    });
    if (entries.length === 0) throw noTraineesFound();
    const pageBodies = new Map<string, Buffer>();
    for (const entry of entries) {
      const cached = bodies.get(TraineeBodyCache.key(entry.id, entry.lock_version, version));
      if (cached !== undefined) pageBodies.set(entry.id, cached);
    }
    const missing = entries.filter((entry) => !pageBodies.has(entry.id)).map((entry) => entry.id);
    for (const { row, nested } of await loadTraineesWithNested(db, provider.id, missing)) {
      // Keyed by the lock version just read: a trainee changed since the page query gets its newer body.
      const json = Buffer.from(JSON.stringify(serializeTrainee(row, version, { ukprn: provider.ukprn, ...nested })));
      bodies.set(TraineeBodyCache.key(row.id, row.lock_version, version), json);
      pageBodies.set(row.id, json);
    }
    const meta = { current_page: page, total_pages: Math.ceil(total / perPage), total_count: total, per_page: perPage };
    // The page is the cached bodies copied once into one buffer, never parsed or re-encoded.
    const parts: Buffer[] = [LIST_OPEN];
    for (const entry of entries) {
      const body = pageBodies.get(entry.id);
      if (body === undefined) continue;
      if (parts.length > 1) parts.push(LIST_COMMA);
      parts.push(body);
    }
    parts.push(Buffer.from(`],"meta":${JSON.stringify(meta)}}`));
    reply.type('application/json; charset=utf-8');
    return Buffer.concat(parts);
  });

  app.get<{ Params: { trainee_id: string } }>('/trainees/:trainee_id', { schema }, async (request, reply) => {
    const { provider } = request.registerContext;
    const found = await findTraineeWithNested(db, provider.id, request.params.trainee_id);
    if (!found) throw traineeNotFound();
    const etag = traineeEtag(found.row);
    reply.header('etag', etag);
    // A syncing client that already holds this version of the trainee gets 304 and no body.
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')) {
      return reply.code(304).send();
    }
    return serializeTrainee(found.row, version, { ukprn: provider.ukprn, ...found.nested });
  });

  app.post('/trainees', { schema }, async (request, reply) => {
    const context = request.registerContext;
    const input = acceptedInput(version, requestData(request.body));
    const today = todayUtc();
    const placementsInput = Array.isArray(input.placements_attributes) ? input.placements_attributes : [];
    const urns = placementsInput
      .map((p) => (p && typeof p === 'object' ? text((p as Record<string, unknown>).urn) : null))
      .filter((u): u is string => u !== null && /^\d{6}$/.test(u) && !SPECIAL_URNS.includes(u));
    const schools = urns.length > 0 ? await db.selectFrom('schools').selectAll().where('urn', 'in', urns).execute() : [];
    const schoolsByUrn = new Map(schools.map((s) => [s.urn, s]));

    const attrs: Attributes = { ...input };
    const errors = validateTraineeAttributes(attrs, {
      adapter: versionAdapter(version),
      today,
      mode: 'create',
      existingDegreeCount: 0,
      knownSchoolUrns: new Set(schoolsByUrn.keys()),
    });
    const partners = await resolvePartners(db, version, input, errors);
    rejectIfInvalid(request, version, errors);

    const created = await db.transaction().execute(async (trx) => {
      await lockDuplicateCandidates(trx, context.provider.id, isoDate(attrs.date_of_birth) ?? '', String(attrs.last_name));
      const duplicates = await findDuplicates(trx, context.provider.id, attrs);
      if (duplicates.length > 0) throw duplicateTrainee(await serializeRows(trx, duplicates, version, context.provider.ukprn));
      const row = await insertTraineeRow(trx, {
        ...(attributesToColumns(attrs) as Record<string, unknown>),
        training_partner_urn: partners.training_partner_urn ?? null,
        training_partner_ukprn: partners.training_partner_ukprn ?? null,
        employing_school_urn: partners.employing_school_urn ?? null,
        id: newSlug(),
        provider_id: context.provider.id,
        state: 'submitted_for_trn',
        record_source: 'api',
        submitted_for_trn_at: new Date(),
      } as Parameters<typeof insertTraineeRow>[1]);
      const ignored: string[] = [];
      const degreeValues = (Array.isArray(input.degrees_attributes) ? input.degrees_attributes : [])
        .map((raw) => validateDegreeInput(raw, today, ignored))
        .filter((degree) => degree !== undefined)
        .map((degree) => ({ id: newSlug(), trainee_id: row.id, ...degree }));
      const placementValues = placementsInput.map((raw) => {
        const placement = validatePlacementInput(raw, new Set(schoolsByUrn.keys()), ignored);
        const school = placement.urn ? schoolsByUrn.get(placement.urn) : undefined;
        return {
          id: newSlug(),
          trainee_id: row.id,
          urn: placement.urn,
          name: school ? school.name : placement.name,
          postcode: school ? school.postcode : placement.postcode,
          school_linked: school !== undefined,
          town: school ? school.town : null,
        };
      });
      // Nested rows carry the trainee's timestamps, so the response can be built before they are written; they go in
      // with the audit row in one statement. With more than one placement or degree they are read back first, so
      // their order is the database's, exactly as every later GET returns them.
      const stamped = <T extends object>(values: T[]) => values.map((v) => ({ ...v, created_at: row.created_at, updated_at: row.created_at }));
      const degrees = stamped(degreeValues);
      const placements = stamped(placementValues);
      const audit = (body: unknown) => ({ trainee_id: row.id, provider_id: context.provider.id, token_id: context.tokenId, action: 'create', before: null, after: JSON.stringify(body) });
      if (degrees.length > 1 || placements.length > 1) {
        await insertNested(trx, degrees, placements);
        const nested = (await findTraineeWithNested(trx, context.provider.id, row.id))!.nested;
        const body = serializeTrainee(row, version, { ukprn: context.provider.ukprn, ...nested });
        await trx.insertInto('trainee_audits').values(audit(body)).execute();
        return { row, body };
      }
      const nested = {
        placements: placements.map((p) => serializePlacement(p as Parameters<typeof serializePlacement>[0])),
        degrees: degrees.map((d) => serializeDegree(d as Parameters<typeof serializeDegree>[0])),
      };
      const body = serializeTrainee(row, version, { ukprn: context.provider.ukprn, ...nested });
      await insertNested(trx, degrees, placements, audit(body));
      return { row, body };
    });
    reply.code(201).header('etag', traineeEtag(created.row));
    return { data: created.body };
  });

  const update = async (request: FastifyRequest<{ Params: { trainee_id: string } }>, reply: FastifyReply) => {
    const context = request.registerContext;
    const today = todayUtc();
    const result = await db.transaction().execute(async (trx) => {
      const locked = await lockTraineeWithNested(trx, context.provider.id, request.params.trainee_id);
      if (!locked) throw traineeNotFound();
      const row = locked.row;
      checkIfMatch(request, row);
      assertTraineeModifiable(row, version);
      const input = acceptedInput(version, requestData(request.body), 'update');
      // Nested records change through their own endpoints only.
      delete input.degrees_attributes;
      delete input.placements_attributes;
      // Only ignored members (or `null`s that keep stored values): the trainee as it is, nothing written.
      if (Object.keys(input).length === 0) return { row, body: serializeTrainee(row, version, { ukprn: context.provider.ukprn, ...locked.nested }) };

      const attrs = rowToAttributes(row);
      const disabilityKeys = Object.keys(input).filter((k) => DISABILITY_KEY.test(k));
      for (const [key, value] of Object.entries(input)) {
        if (DISABILITY_KEY.test(key)) continue;
        attrs[key] = value;
      }
      if (disabilityKeys.length > 0) for (const key of disabilityKeys) attrs[key] = input[key];
      if ('ethnicity' in input && input.ethnicity === null) attrs.ethnicity = null;
      // Leaving the iQTS route clears the iQTS country.
      if ('training_route' in input && codeText(input.training_route) !== '15' && !('iqts_country' in input)) attrs.iqts_country = null;

      const errors = validateTraineeAttributes(attrs, {
        adapter: versionAdapter(version),
        today,
        mode: 'update',
        existingDegreeCount: locked.nested.degrees.length,
        knownSchoolUrns: new Set(),
      });
      const partners = await resolvePartners(trx, version, input, errors);
      rejectIfInvalid(request, version, errors);

      // Placements and degrees do not change here: loaded once for both audit images and the response.
      const nested = { ukprn: context.provider.ukprn, ...locked.nested };
      const before = serializeTrainee(row, version, nested);
      const updated = await updateTraineeRow(trx, row.id, { ...attributesToColumns(attrs), ...partners });
      const after = serializeTrainee(updated, version, nested);
      await recordAudit(trx, { traineeId: row.id, providerId: context.provider.id, tokenId: context.tokenId, action: 'update', before, after });
      return { row: updated, body: after };
    });
    reply.header('etag', traineeEtag(result.row));
    return { data: result.body };
  };
  app.put<{ Params: { trainee_id: string } }>('/trainees/:trainee_id', { schema }, update);
  app.patch<{ Params: { trainee_id: string } }>('/trainees/:trainee_id', { schema }, update);
};
