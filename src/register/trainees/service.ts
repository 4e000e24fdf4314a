/**
 * Trainee rules and transactions: the list page (assembled from cached bodies), one trainee, create (duplicate
 * check, nested degrees and placements, audit) and update (If-Match, lock, null semantics, audit). Also the
 * locked-trainee write that every write on an existing trainee (update, placements, degrees, state changes, the
 * operator's commands) goes through.
 */
import type { Db, Executor, Tx } from '../../db/database.js';
import { withStalePreparedRetry } from '../../db/prepared-statements.js';
import type { NewEvent } from '../../events/outbox-repository.js';
import { UnprocessableError } from '../../errors.js';
import { assertIfMatch } from '../../http/conditional.js';
import { isUrn } from '../../validators.js';
import type { RegisterContext, TraineeTarget, TraineeWrite, WriteRequest } from '../context.js';
import { duplicateTrainee, noTraineesFound, traineeNotFound, traineeValidationError } from '../errors.js';
import { newSlug } from '../ids.js';
import { assertTraineeModifiable } from '../state-machine.js';
import { academicCycleOf, codeText, isoDate, todayUtc, type Checked } from '../values.js';
import { adapterFor, messageInVersion, type RegisterVersion } from '../versions/index.js';
import { MAX_PLACEMENTS_PER_TRAINEE } from '../placements/validate.js';
import { TraineeBodyCache } from './body-cache.js';
import type { PlacementsAndDegrees } from './nested.js';
import { acceptedInput, attributesToColumns, codeOrNull, rowToAttributes } from './input.js';
import type { TraineeListQuery } from './list-query.js';
import { isSpecialUrn, serializeDegree, serializePlacement } from './nested.js';
import {
  duplicateLockKey,
  findDuplicateCandidates,
  findSchoolsByUrn,
  findTraineeForProvider,
  findTraineeWithNested,
  findTrainingPartner,
  insertNestedRecords,
  insertTraineeRow,
  insertTraineeUnlessCandidates,
  listTraineePage,
  loadPlacementsAndDegrees,
  loadPlacementsAndDegreesForTrainees,
  loadTraineesWithNested,
  lockTraineeForUpdate,
  lockTraineeWithNested,
  auditColumns,
  recordAuditWithEvent,
  schoolExists,
  updateTraineeRow,
  withDuplicateLocks,
  type DuplicateCandidateKey,
  type TraineeInsert,
  type TraineePatch,
  type TraineeRow,
} from './repository.js';
import {
  nestedRecordEvent,
  traineeUpdatedEvent,
  changedTraineeFields,
  eventOwner,
  traineeCreatedEvent,
} from '../events/service.js';
import { sandboxDueAt } from '../sandbox/scenarios.js';
import { canonicalTraineeBody, serializeTrainee, traineeEtag } from './serialize.js';
import { checkTrainee, DISABILITY_KEY, type Attributes } from './validate.js';

/** A trainee response: the body and the row it came from (the row gives the ETag). */
export interface TraineeResult {
  row: TraineeRow;
  body: Record<string, unknown>;
}

/** Loads the trainee's placements and degrees, then serializes: the body most writes answer with. */
export async function traineeBody(
  db: Executor,
  row: TraineeRow,
  version: RegisterVersion,
  ukprn: string,
): Promise<Record<string, unknown>> {
  const nested = await loadPlacementsAndDegrees(db, row.id);
  return serializeTrainee(row, version, { ukprn, ...nested });
}

/** The provider's trainee (404 when it is another provider's or none), for reads of its placements and degrees. */
export async function findProviderTrainee(
  db: Executor,
  context: RegisterContext,
  traineeId: string,
): Promise<TraineeRow> {
  const trainee = await findTraineeForProvider(db, context.provider.id, traineeId);
  if (!trainee) throw traineeNotFound();
  return trainee;
}

/** The register operator (the CLI): writes any provider's trainee, and is audited without a token. */
export const OPERATOR = 'operator';

/** Who writes on a trainee: a provider's token (its own trainees only) or the operator. */
export type TraineeWriter = RegisterContext | typeof OPERATOR;

/** The audit's token of a writer (none for the operator). */
export function tokenIdOf(writer: TraineeWriter): number | null {
  return writer === OPERATOR ? null : writer.tokenId;
}

type LockedWrite<T> = (trx: Tx, trainee: TraineeRow, nested: PlacementsAndDegrees) => Promise<T>;

/**
 * Runs `write` on the trainee, locked until the transaction ends: 404 when it is not the provider's (the operator:
 * when there is none), 412 when an `If-Match` does not name its current ETag. With `loadNested` its placements and
 * degrees are read in the same statement (else `nested` is empty). A refusal thrown by `write` rolls everything back;
 * the target's `beforeCommit` runs last, in the transaction, with `write`'s result.
 */
export async function withLockedTrainee<T>(
  db: Db,
  writer: TraineeWriter,
  target: TraineeTarget,
  write: LockedWrite<T>,
  options: { loadNested?: boolean } = {},
): Promise<T> {
  return withStalePreparedRetry(db, (connection) =>
    connection.transaction().execute(async (trx) => {
      const providerId = writer === OPERATOR ? null : writer.provider.id;
      const locked = options.loadNested
        ? await lockTraineeWithNested(trx, providerId, target.traineeId)
        : await lockTraineeForUpdate(trx, providerId, target.traineeId).then(
            (row) => row && { row, nested: { placements: [], degrees: [] } },
          );
      if (!locked)
        throw writer === OPERATOR
          ? new UnprocessableError(`No trainee with id "${target.traineeId}"`)
          : traineeNotFound();
      assertIfMatch(target.ifMatch, traineeEtag(locked.row));
      const result = await write(trx, locked.row, locked.nested);
      await target.beforeCommit?.(trx, result);
      return result;
    }),
  );
}

/** A placement or degree write: the trainee's `updated_at` and ETag move too, and the change is audited on it. */
export async function touchTraineeAudited(
  trx: Tx,
  trainee: TraineeRow,
  context: RegisterContext,
  action: string,
  before: unknown,
  after: unknown,
) {
  const event = nestedRecordEvent(eventOwner(context), trainee.id, action, before, after);
  return updateTraineeAudited(trx, trainee, context, action, {}, before, after, event);
}

/**
 * Every change of a trainee row: `patch` written (its ETag moves), and one audit row of who changed what with the
 * change's event, in one statement.
 */
export async function updateTraineeAudited(
  trx: Tx,
  trainee: TraineeRow,
  writer: TraineeWriter,
  action: string,
  patch: TraineePatch,
  before: unknown,
  after: unknown,
  event: NewEvent,
): Promise<TraineeRow> {
  const updated = await updateTraineeRow(trx, trainee.id, patch);
  const audit = {
    traineeId: trainee.id,
    providerId: trainee.provider_id,
    tokenId: tokenIdOf(writer),
    action,
    before,
    after,
  };
  await recordAuditWithEvent(trx, audit, event);
  return updated;
}

const LIST_OPEN = Buffer.from('{"data":[');
const LIST_COMMA = Buffer.from(',');

/**
 * One list page as JSON bytes: the page's ids and lock versions come from the index, each trainee's body from the
 * cache when it holds that lock version, else from one query for all the missing ones. Never parsed or re-encoded.
 */
export async function listTraineesJson(
  db: Executor,
  context: RegisterContext,
  query: TraineeListQuery,
  bodies: TraineeBodyCache,
): Promise<Buffer> {
  const { provider, version } = context;
  const { page: entries, total } = await listTraineePage(db, { providerId: provider.id, ...query, today: todayUtc() });
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
  const meta = {
    current_page: query.page,
    total_pages: Math.ceil(total / query.perPage),
    total_count: total,
    per_page: query.perPage,
  };
  const parts: Buffer[] = [LIST_OPEN];
  for (const entry of entries) {
    const body = pageBodies.get(entry.id);
    if (body === undefined) continue;
    if (parts.length > 1) parts.push(LIST_COMMA);
    parts.push(body);
  }
  parts.push(Buffer.from(`],"meta":${JSON.stringify(meta)}}`));
  return Buffer.concat(parts);
}

export async function getTrainee(db: Db, context: RegisterContext, traineeId: string): Promise<TraineeResult> {
  // Its statement is prepared: read again when a migration made it stale.
  const found = await withStalePreparedRetry(db, (connection) =>
    findTraineeWithNested(connection, context.provider.id, traineeId),
  );
  if (!found) throw traineeNotFound();
  return {
    row: found.row,
    body: serializeTrainee(found.row, context.version, { ukprn: context.provider.ukprn, ...found.nested }),
  };
}

function rejectIfInvalid(version: RegisterVersion, errors: string[], enhancedErrors: boolean): void {
  if (errors.length > 0)
    throw traineeValidationError(
      errors.map((m) => messageInVersion(version, m)),
      enhancedErrors,
    );
}

interface PartnerColumns {
  training_partner_urn?: string | null;
  training_partner_ukprn?: string | null;
  employing_school_urn?: string | null;
}

/** Training partner and employing school: looked up only when their keys are sent; unknown ones are errors. */
async function checkPartners(
  db: Executor,
  version: RegisterVersion,
  input: Attributes,
): Promise<Checked<PartnerColumns>> {
  const wording = adapterFor(version).partnerLookup;
  const errors: string[] = [];
  const result: PartnerColumns = {};
  const setPartner = (partner: { urn: string | null; ukprn: string | null } | null) => {
    result.training_partner_urn = partner?.urn ?? null;
    result.training_partner_ukprn = partner?.ukprn ?? null;
  };
  if ('training_partner_urn' in input) {
    const urn = codeOrNull(input.training_partner_urn);
    if (urn === null || isSpecialUrn(urn)) setPartner(null);
    else {
      const partner = await findTrainingPartner(db, 'urn', urn);
      if (partner) setPartner(partner);
      else errors.push(`${wording.urnAttribute} is invalid. The URN '${urn}' does not match any known ${wording.noun}`);
    }
  } else if ('training_partner_ukprn' in input) {
    const ukprn = codeOrNull(input.training_partner_ukprn);
    if (ukprn === null) setPartner(null);
    else {
      const partner = await findTrainingPartner(db, 'ukprn', ukprn);
      if (partner) setPartner(partner);
      else
        errors.push(
          `${wording.ukprnAttribute} is invalid. The UKPRN '${ukprn}' does not match any known ${wording.noun}`,
        );
    }
  }
  if ('employing_school_urn' in input) {
    const urn = codeOrNull(input.employing_school_urn);
    if (urn === null || isSpecialUrn(urn)) result.employing_school_urn = null;
    else if (await schoolExists(db, urn)) result.employing_school_urn = urn;
    else errors.push(`employing_school_id is invalid. The URN '${urn}' does not match any known schools`);
  }
  return { values: result, errors };
}

/** What the new trainee's possible duplicates share with it; undefined without an ITT start date (none can be). */
function duplicateCandidateKey(providerId: number, attrs: Attributes): DuplicateCandidateKey | undefined {
  const ittStart = isoDate(attrs.itt_start_date);
  if (!ittStart) return undefined;
  return {
    providerId,
    dateOfBirth: isoDate(attrs.date_of_birth) ?? '',
    lastName: String(attrs.last_name),
    trainingRoute: codeText(attrs.training_route),
    startAcademicCycle: academicCycleOf(ittStart),
  };
}

/** Existing trainees the new one duplicates: the candidates (`duplicateCandidateKey`) with its first name or email. */
async function findDuplicates(db: Executor, key: DuplicateCandidateKey, attrs: Attributes): Promise<TraineeRow[]> {
  const firstToken = (value: unknown) =>
    typeof value === 'string'
      ? (value
          .toLowerCase()
          .replace(/[^a-z ]/g, '')
          .trim()
          .split(/\s+/)[0] ?? '')
      : '';
  const email = typeof attrs.email === 'string' ? attrs.email.trim().toLowerCase() : '';
  const candidates = await findDuplicateCandidates(db, key);
  return candidates.filter(
    (row) =>
      firstToken(row.first_names) === firstToken(attrs.first_names) ||
      (email !== '' && (row.email ?? '').trim().toLowerCase() === email),
  );
}

/**
 * Inserts the new trainee's row, or throws 409 when it duplicates one of the provider's. Most creates have no
 * candidate at all, and then the check and the insert are one statement.
 */
async function insertUnlessDuplicate(
  trx: Executor,
  context: RegisterContext,
  attrs: Attributes,
  values: TraineeInsert,
): Promise<TraineeRow> {
  const key = duplicateCandidateKey(context.provider.id, attrs);
  const inserted = key && (await insertTraineeUnlessCandidates(trx, values, key));
  if (inserted) return inserted;
  const duplicates = key ? await findDuplicates(trx, key, attrs) : [];
  if (duplicates.length > 0)
    throw duplicateTrainee(await serializeRows(trx, duplicates, context.version, context.provider.ukprn));
  return insertTraineeRow(trx, values);
}

/** `time` plus `n` microseconds (n < 1000), as an ISO timestamp with microseconds, for PostgreSQL. */
function microsecondsAfter(time: Date | string, n: number): string {
  return `${new Date(time).toISOString().slice(0, 23)}${String(n).padStart(3, '0')}Z`;
}

async function serializeRows(db: Executor, rows: TraineeRow[], version: RegisterVersion, ukprn: string) {
  const nested = await loadPlacementsAndDegreesForTrainees(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) =>
    serializeTrainee(row, version, { ukprn, ...(nested.get(row.id) ?? { placements: [], degrees: [] }) }),
  );
}

/** A create that passed validation and its lookups, ready to be stored (by itself or as a row of a batch). */
export interface PreparedCreate {
  attrs: Attributes;
  partners: PartnerColumns;
  degrees: ReturnType<typeof checkTrainee>['values']['degrees'];
  placements: ReturnType<typeof checkTrainee>['values']['placements'];
  schoolsByUrn: Map<string, { urn: string; name: string; postcode: string | null; town: string | null }>;
}

/** A create's checks before its transaction: validation, schools and training partner looked up; 422 when invalid. */
export async function prepareCreate(
  db: Executor,
  context: RegisterContext,
  request: WriteRequest,
): Promise<PreparedCreate> {
  const { version } = context;
  const input = acceptedInput(version, request.data());
  const today = todayUtc();
  const placementsInput = Array.isArray(input.placements_attributes) ? input.placements_attributes : [];
  // An over-long list is refused whole by the validation; its schools are not looked up.
  const urns = (placementsInput.length > MAX_PLACEMENTS_PER_TRAINEE ? [] : placementsInput)
    .map((p) => (p && typeof p === 'object' ? codeOrNull((p as Record<string, unknown>).urn) : null))
    .filter((u): u is string => u !== null && isUrn(u) && !isSpecialUrn(u));
  const schoolsByUrn = new Map((await findSchoolsByUrn(db, urns)).map((s) => [s.urn, s]));

  const trainee = checkTrainee(input, {
    adapter: adapterFor(version),
    today,
    mode: 'create',
    existingDegreeCount: 0,
    knownSchoolUrns: new Set(schoolsByUrn.keys()),
  });
  const { values: partners, errors: partnerErrors } = await checkPartners(db, version, input);
  rejectIfInvalid(version, [...trainee.errors, ...partnerErrors], request.enhancedErrors);
  return {
    attrs: trainee.values.attributes,
    partners,
    degrees: trainee.values.degrees,
    placements: trainee.values.placements,
    schoolsByUrn,
  };
}

/** The key whose lock serializes the creates that could duplicate a prepared one (same provider, date of birth, last name). */
export function createLockKey(providerId: number, { attrs }: PreparedCreate): string {
  return duplicateLockKey(providerId, isoDate(attrs.date_of_birth) ?? '', String(attrs.last_name));
}

/**
 * Stores a prepared create inside `trx`, whose caller holds its duplicate lock (`lockDuplicateCandidates`): 409 when
 * it duplicates a trainee (also one stored earlier in the same transaction, a batch's), else the trainee with its
 * degrees, placements, audit row and `trainee.created` event.
 */
export async function storeCreate(
  trx: Executor,
  context: RegisterContext,
  prepared: PreparedCreate,
): Promise<TraineeResult> {
  const { version, provider } = context;
  const { attrs, partners, schoolsByUrn } = prepared;
  const row = await insertUnlessDuplicate(trx, context, attrs, {
    ...(attributesToColumns(attrs) as Record<string, unknown>),
    training_partner_urn: partners.training_partner_urn ?? null,
    training_partner_ukprn: partners.training_partner_ukprn ?? null,
    employing_school_urn: partners.employing_school_urn ?? null,
    id: newSlug(),
    provider_id: provider.id,
    state: 'submitted_for_trn',
    record_source: 'api',
    submitted_for_trn_at: new Date(),
    sandbox_due_at: sandboxDueAt(
      context.sandbox,
      'trn',
      typeof attrs.provider_trainee_id === 'string' ? attrs.provider_trainee_id : null,
    ),
  } as TraineeInsert);
  const degreeValues = prepared.degrees.map((degree) => ({ id: newSlug(), trainee_id: row.id, ...degree }));
  const placementValues = prepared.placements.map((placement) => {
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
  // Nested rows carry the trainee's time, so the response can be built before they are written; they go in with
  // the audit row and the event in one statement. Each is a microsecond after the one before it, so they list in the
  // order sent (as the real service's serial ids do), while every one shows the trainee's time to the millisecond.
  // With more than one placement or degree they are read back first, exactly as every later GET returns them.
  const stamped = <T extends object>(values: T[]) =>
    values.map((v, i) => {
      const at = microsecondsAfter(row.created_at, i);
      return { ...v, created_at: at, updated_at: at };
    });
  const degrees = stamped(degreeValues);
  const placements = stamped(placementValues);
  const audit = (body: unknown) =>
    auditColumns({
      traineeId: row.id,
      providerId: provider.id,
      tokenId: context.tokenId,
      action: 'create',
      before: null,
      after: body,
    });
  const created = traineeCreatedEvent(eventOwner(context), row);
  if (degrees.length > 1 || placements.length > 1) {
    await insertNestedRecords(trx, degrees, placements);
    const nested = (await findTraineeWithNested(trx, provider.id, row.id))!.nested;
    const body = serializeTrainee(row, version, { ukprn: provider.ukprn, ...nested });
    await insertNestedRecords(trx, [], [], audit(body), created);
    return { row, body };
  }
  const nested = {
    placements: placementValues.map((p) =>
      serializePlacement({ ...p, created_at: row.created_at, updated_at: row.created_at }),
    ),
    degrees: degreeValues.map((d) => serializeDegree({ ...d, created_at: row.created_at, updated_at: row.created_at })),
  };
  const body = serializeTrainee(row, version, { ukprn: provider.ukprn, ...nested });
  await insertNestedRecords(trx, degrees, placements, audit(body), created);
  return { row, body };
}

/** `POST /trainees`: validate, refuse duplicates, insert the trainee with its degrees and placements, audit. */
export async function createTrainee(db: Db, context: RegisterContext, request: WriteRequest): Promise<TraineeResult> {
  const prepared = await prepareCreate(db, context, request);
  return withDuplicateLocks(db, [createLockKey(context.provider.id, prepared)], async (trx) => {
    const result = await storeCreate(trx, context, prepared);
    await request.beforeCommit?.(trx, result);
    return result;
  });
}

/** `PUT`/`PATCH /trainees/{id}`: a partial update on the locked trainee, validated as a whole, audited. */
export async function updateTrainee(db: Db, context: RegisterContext, write: TraineeWrite): Promise<TraineeResult> {
  const { version, provider } = context;
  const today = todayUtc();
  return withLockedTrainee(
    db,
    context,
    write,
    async (trx, row, stored) => {
      assertTraineeModifiable(row, version);
      // The body is read only now: a locked or changed trainee is refused before its body is looked at.
      const input = acceptedInput(version, write.data(), 'update');
      // Nested records change through their own endpoints only.
      delete input.degrees_attributes;
      delete input.placements_attributes;
      const nested = { ukprn: provider.ukprn, ...stored };
      // Only ignored members (or `null`s that keep stored values): the trainee as it is, nothing written.
      if (Object.keys(input).length === 0) return { row, body: serializeTrainee(row, version, nested) };

      const merged = rowToAttributes(row);
      for (const [key, value] of Object.entries(input)) if (!DISABILITY_KEY.test(key)) merged[key] = value;
      for (const key of Object.keys(input).filter((k) => DISABILITY_KEY.test(k))) merged[key] = input[key];
      // Leaving the iQTS route clears the iQTS country.
      if ('training_route' in input && codeText(input.training_route) !== '15' && !('iqts_country' in input))
        merged.iqts_country = null;

      const trainee = checkTrainee(merged, {
        adapter: adapterFor(version),
        today,
        mode: 'update',
        existingDegreeCount: stored.degrees.length,
        knownSchoolUrns: new Set(),
      });
      const { values: partners, errors: partnerErrors } = await checkPartners(trx, version, input);
      rejectIfInvalid(version, [...trainee.errors, ...partnerErrors], write.enhancedErrors);
      const attrs = trainee.values.attributes;

      // Placements and degrees do not change here: loaded once for both audit images and the response.
      const before = serializeTrainee(row, version, nested);
      const updated = await updateTraineeRow(trx, row.id, { ...attributesToColumns(attrs), ...partners });
      const after = serializeTrainee(updated, version, nested);
      await recordAuditWithEvent(
        trx,
        { traineeId: row.id, providerId: provider.id, tokenId: context.tokenId, action: 'update', before, after },
        traineeUpdatedEvent(
          eventOwner(context),
          row.id,
          changedTraineeFields(canonicalTraineeBody(row, nested), canonicalTraineeBody(updated, nested)),
        ),
      );
      return { row: updated, body: after };
    },
    { loadNested: true },
  );
}
