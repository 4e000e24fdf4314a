/**
 * `POST /trainees` and each row of a batch: the checks before the transaction (validation, schools and training
 * partner looked up), the duplicate check, and the new trainee's rows. The common create is one statement with its
 * own duplicate lock (`storeCreateInOneStatement`); a possible duplicate, nested rows to read back or an
 * Idempotency-Key take the transaction of `withDuplicateLocks` (`storeCreate`).
 */
import type { Db, Executor } from '../../db/database.js';
import type { NewEvent } from '../../events/outbox-repository.js';
import { isUrn } from '../../validators.js';
import type { RegisterContext, WriteRequest } from '../context.js';
import { duplicateTrainee } from '../errors.js';
import { newSlug } from '../ids.js';
import { academicCycleOf, codeText, isoDate, todayUtc } from '../values.js';
import { adapterFor, type RegisterVersion } from '../versions/index.js';
import { MAX_PLACEMENTS_PER_TRAINEE } from '../placements/validate.js';
import type { DegreeRow, PlacementRow, PlacementsAndDegrees } from './nested.js';
import { acceptedInput, attributesToColumns, codeOrNull } from './input.js';
import { isSpecialUrn, serializeDegree, serializePlacement } from './nested.js';
import {
  duplicateLockKey,
  findDuplicateCandidates,
  findSchoolsByUrn,
  findTraineeWithNested,
  insertNestedRecords,
  insertTraineeRow,
  insertTraineeUnlessCandidates,
  insertTraineeWithRecords,
  loadPlacementsAndDegreesForTrainees,
  auditColumns,
  withDuplicateLocks,
  newTraineeRow,
  type AuditEntry,
  type DuplicateCandidateKey,
  type NewTraineeValues,
  type TraineeInsert,
  type TraineeRow,
} from './repository.js';
import { eventOwner, traineeCreatedEvent } from '../events/service.js';
import { sandboxDueAt } from '../sandbox/scenarios.js';
import { serializeTrainee } from './serialize.js';
import { checkTrainee, type Attributes } from './validate.js';
import {
  checkPartners,
  firstInOneStatement,
  rejectIfInvalid,
  type PartnerColumns,
  type TraineeResult,
} from './service.js';

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
 * Inserts the new trainee's row, or throws 409 when it duplicates one of the provider's (`key`: what its candidates
 * share with it; none without). Most creates have no candidate at all, and then the check and the insert are one
 * statement; `known` says the caller already found that there are some.
 */
async function insertUnlessDuplicate(
  trx: Executor,
  context: RegisterContext,
  attrs: Attributes,
  values: TraineeInsert,
  key: DuplicateCandidateKey | undefined,
  known: 'candidates' | 'unknown',
): Promise<TraineeRow> {
  const inserted = key && known === 'unknown' && (await insertTraineeUnlessCandidates(trx, values, key));
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

/** A create's rows, made before anything is written: the service's clock gives its times, its ids are new. */
interface PlannedCreate {
  values: NewTraineeValues;
  degrees: Array<DegreeValues & { created_at: string; updated_at: string }>;
  placements: Array<PlacementValues & { created_at: string; updated_at: string }>;
  /** Its answer's placements and degrees, when that needs no read-back (at most one of each). */
  nested: PlacementsAndDegrees | undefined;
  /** What its possible duplicates share with it; undefined when none can exist. */
  candidateKey: DuplicateCandidateKey | undefined;
  lockKey: string;
  event: NewEvent;
}

type DegreeValues = Omit<DegreeRow, 'created_at' | 'updated_at'>;
type PlacementValues = Omit<PlacementRow, 'created_at' | 'updated_at'>;

function planCreate(context: RegisterContext, prepared: PreparedCreate): PlannedCreate {
  const { provider } = context;
  const { attrs, partners, schoolsByUrn } = prepared;
  // The service's clock, as the real service's record timestamps are its application's: the create then knows its
  // whole row before writing it, and can write it with its other rows in one statement.
  const now = new Date();
  const values = {
    ...(attributesToColumns(attrs) as Record<string, unknown>),
    training_partner_urn: partners.training_partner_urn ?? null,
    training_partner_ukprn: partners.training_partner_ukprn ?? null,
    employing_school_urn: partners.employing_school_urn ?? null,
    id: newSlug(),
    provider_id: provider.id,
    state: 'submitted_for_trn',
    record_source: 'api',
    submitted_for_trn_at: now,
    sandbox_due_at: sandboxDueAt(
      context.sandbox,
      'trn',
      typeof attrs.provider_trainee_id === 'string' ? attrs.provider_trainee_id : null,
    ),
    created_at: now,
    updated_at: now,
  } as NewTraineeValues;
  const degreeValues: DegreeValues[] = prepared.degrees.map((degree) => ({
    id: newSlug(),
    trainee_id: values.id,
    ...degree,
  }));
  const placementValues: PlacementValues[] = prepared.placements.map((placement) => {
    const school = placement.urn ? schoolsByUrn.get(placement.urn) : undefined;
    return {
      id: newSlug(),
      trainee_id: values.id,
      urn: placement.urn,
      name: school ? school.name : placement.name,
      postcode: school ? school.postcode : placement.postcode,
      school_linked: school !== undefined,
      town: school ? school.town : null,
    };
  });
  // Nested rows carry the trainee's time, so the answer can be built before they are written. Each is a microsecond
  // after the one before it, so they list in the order sent (as the real service's serial ids do), while every one
  // shows the trainee's time to the millisecond. With more than one placement or degree they are read back first,
  // exactly as every later GET returns them.
  const stamped = <T extends object>(rows: T[]) =>
    rows.map((v, i) => {
      const at = microsecondsAfter(now, i);
      return { ...v, created_at: at, updated_at: at };
    });
  const single = degreeValues.length <= 1 && placementValues.length <= 1;
  return {
    values,
    degrees: stamped(degreeValues),
    placements: stamped(placementValues),
    nested: single
      ? {
          placements: placementValues.map((p) => serializePlacement({ ...p, created_at: now, updated_at: now })),
          degrees: degreeValues.map((d) => serializeDegree({ ...d, created_at: now, updated_at: now })),
        }
      : undefined,
    candidateKey: duplicateCandidateKey(provider.id, attrs),
    lockKey: createLockKey(provider.id, prepared),
    event: traineeCreatedEvent(eventOwner(context), { id: values.id, state: 'submitted_for_trn' }),
  };
}

function createAudit(context: RegisterContext, traineeId: string, body: unknown): AuditEntry {
  return {
    traineeId,
    providerId: context.provider.id,
    tokenId: context.tokenId,
    action: 'create',
    before: null,
    after: body,
  };
}

/**
 * The common create, one statement that takes its own duplicate lock (`insertTraineeWithRecords`), so it needs no
 * transaction of its own: undefined, with nothing written, when the trainee may have duplicates or its answer needs
 * its nested rows read back (then `storeCreate` does it in steps).
 */
async function storeCreateInOneStatement(
  executor: Executor,
  context: RegisterContext,
  plan: PlannedCreate,
): Promise<TraineeResult | undefined> {
  if (!plan.candidateKey || !plan.nested) return undefined;
  const row = newTraineeRow(plan.values);
  const body = serializeTrainee(row, context.version, { ukprn: context.provider.ukprn, ...plan.nested });
  const inserted = await insertTraineeWithRecords(executor, plan.values, [plan.lockKey], plan.candidateKey, {
    degrees: plan.degrees,
    placements: plan.placements,
    audit: createAudit(context, row.id, body),
    event: plan.event,
  });
  return inserted ? { row, body } : undefined;
}

/**
 * Stores a prepared create inside `trx`, whose caller holds its duplicate lock (`withDuplicateLocks`): 409 when
 * it duplicates a trainee (also one stored earlier in the same transaction, a batch's), else the trainee with its
 * degrees, placements, audit row and `trainee.created` event. `triedInOneStatement`: the caller already ran
 * `storeCreateInOneStatement` for this plan, which wrote nothing.
 */
export async function storeCreate(
  trx: Executor,
  context: RegisterContext,
  prepared: PreparedCreate,
  plan = planCreate(context, prepared),
  triedInOneStatement = false,
): Promise<TraineeResult> {
  const { version, provider } = context;
  if (!triedInOneStatement) {
    const stored = await storeCreateInOneStatement(trx, context, plan);
    if (stored) return stored;
  }
  // When the one statement was tried (a candidate key and no read-back), it found candidates.
  const known = plan.candidateKey && plan.nested ? 'candidates' : 'unknown';
  const row = await insertUnlessDuplicate(trx, context, prepared.attrs, plan.values, plan.candidateKey, known);
  const nested = plan.nested;
  if (nested) {
    const body = serializeTrainee(row, version, { ukprn: provider.ukprn, ...nested });
    await insertNestedRecords(
      trx,
      plan.degrees,
      plan.placements,
      auditColumns(createAudit(context, row.id, body)),
      plan.event,
    );
    return { row, body };
  }
  await insertNestedRecords(trx, plan.degrees, plan.placements);
  const stored = (await findTraineeWithNested(trx, provider.id, row.id))!.nested;
  const body = serializeTrainee(row, version, { ukprn: provider.ukprn, ...stored });
  await insertNestedRecords(trx, [], [], auditColumns(createAudit(context, row.id, body)), plan.event);
  return { row, body };
}

/** `POST /trainees`: validate, refuse duplicates, insert the trainee with its degrees and placements, audit. */
export async function createTrainee(db: Db, context: RegisterContext, request: WriteRequest): Promise<TraineeResult> {
  const prepared = await prepareCreate(db, context, request);
  const plan = planCreate(context, prepared);
  return firstInOneStatement(
    db,
    request,
    (connection) => storeCreateInOneStatement(connection, context, plan),
    () =>
      withDuplicateLocks(db, [plan.lockKey], async (trx) => {
        const result = await storeCreate(trx, context, prepared, plan, !request.beforeCommit);
        await request.beforeCommit?.(trx, result);
        return result;
      }),
  );
}
