/**
 * Trainee rows: lookups always scoped to the provider (another provider's trainee is "not found", never
 * forbidden), row locks for writes, updates that bump `lock_version`, and the audit trail.
 */
import { CompiledQuery, sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { LRUCache } from 'lru-cache';
import { createHash } from 'node:crypto';
import type { Db, Executor } from '../../db/database.js';
import { executePrepared, PREPARED, withStalePreparedRetry } from '../../db/prepared-statements.js';
import { eventInboxRecord, eventInboxValues, type NewEvent } from '../../events/outbox-repository.js';
import type { TraineesTable } from '../tables.js';
import { academicCycleOf } from '../values.js';
import type { TraineeListQuery } from './list-query.js';
import {
  serializeDegree,
  serializePlacement,
  type DegreeRow,
  type PlacementRow,
  type PlacementsAndDegrees,
} from './nested.js';

export type TraineeRow = Selectable<TraineesTable>;
export type TraineeInsert = Insertable<TraineesTable>;
export type TraineePatch = Updateable<TraineesTable>;

/** A new trainee's insert with the times the service gives it, so its stored row is known without reading it back. */
export type NewTraineeValues = TraineeInsert & { created_at: Date; updated_at: Date };

/** The columns a new trainee's insert may leave to the table: their defaults (migrations), by column. */
const TRAINEE_DEFAULTS: Omit<
  TraineeRow,
  | 'id'
  | 'provider_id'
  | 'state'
  | 'first_names'
  | 'last_name'
  | 'date_of_birth'
  | 'sex'
  | 'training_route'
  | 'created_at'
  | 'updated_at'
  | 'start_academic_cycle'
> = {
  trn: null,
  lock_version: 0,
  record_source: 'api',
  provider_trainee_id: null,
  application_id: null,
  hesa_id: null,
  middle_names: null,
  previous_last_name: null,
  email: null,
  nationality: null,
  ni_number: null,
  ethnicity: null,
  disabilities: {},
  itt_aim: null,
  itt_qualification_aim: null,
  course_subject_1: null,
  course_subject_2: null,
  course_subject_3: null,
  course_age_range: null,
  course_min_age: null,
  course_max_age: null,
  study_mode: null,
  itt_start_date: null,
  itt_end_date: null,
  trainee_start_date: null,
  course_year: null,
  fund_code: null,
  funding_method: null,
  training_initiative: null,
  additional_training_initiative: null,
  pg_apprenticeship_start_date: null,
  training_partner_urn: null,
  training_partner_ukprn: null,
  employing_school_urn: null,
  iqts_country: null,
  submitted_for_trn_at: null,
  recommended_for_award_at: null,
  awarded_at: null,
  outcome_date: null,
  defer_date: null,
  defer_reason: null,
  reinstate_date: null,
  withdrawal_date: null,
  withdrawal_reasons: null,
  withdrawal_trigger: null,
  withdrawal_future_interest: null,
  withdrawal_another_reason: null,
  withdrawal_safeguarding_concern_reasons: null,
  discarded_at: null,
  sandbox_due_at: null,
};

/**
 * The row that inserting `values` stores: the table's defaults for what they leave out and the academic cycle the
 * table generates, so a create answers without reading its row back (`insertTraineeWithRecords`). A test compares
 * it with the stored row, column by column.
 */
export function newTraineeRow(values: NewTraineeValues): TraineeRow {
  const row: Record<string, unknown> = { ...TRAINEE_DEFAULTS, ...traineeRecord(values) };
  // A column given as undefined is not named in the insert (`insertTraineeWithRecords`), so it gets its default.
  for (const column in values) {
    if (row[column] === undefined) row[column] = TRAINEE_DEFAULTS[column as keyof typeof TRAINEE_DEFAULTS] ?? null;
  }
  return withAcademicCycle(row as unknown as TraineeRow);
}

/** `row` with the academic cycle the table generates from its start dates. */
function withAcademicCycle(row: TraineeRow): TraineeRow {
  const cycleStart = row.trainee_start_date ?? row.itt_start_date;
  return { ...row, start_academic_cycle: cycleStart === null ? null : academicCycleOf(cycleStart) };
}

/**
 * The trainee's placements and degrees as JSON beside its columns, so reading a trainee body is one query
 * (same order as the nested loader: placements oldest first, degrees by graduation year). json, not jsonb: the
 * rows are only read back, and json_agg skips the jsonb conversion (about a third faster for a page of 50).
 */
const nestedPlacements = sql<
  PlacementRow[]
>`coalesce((select json_agg(p order by p.created_at, p.id) from trainee_placements p where p.trainee_id = trainees.id), '[]'::json)`;
const nestedDegrees = sql<
  DegreeRow[]
>`coalesce((select json_agg(d order by d.graduation_year, d.created_at, d.id) from trainee_degrees d where d.trainee_id = trainees.id), '[]'::json)`;

export interface TraineeWithNested {
  row: TraineeRow;
  nested: PlacementsAndDegrees;
}

function splitNested(
  record: TraineeRow & { nested_placements: PlacementRow[]; nested_degrees: DegreeRow[] },
): TraineeWithNested {
  const { nested_placements, nested_degrees, ...row } = record;
  return {
    row,
    nested: { placements: nested_placements.map(serializePlacement), degrees: nested_degrees.map(serializeDegree) },
  };
}

/** `findTraineeForProvider` with the trainee's placements and degrees, in one query (the GET of one trainee). */
export async function findTraineeWithNested(
  db: Executor,
  providerId: number,
  traineeId: string,
): Promise<TraineeWithNested | undefined> {
  const [record] = await executePrepared(
    db,
    db
      .selectFrom('trainees')
      .selectAll()
      .select([nestedPlacements.as('nested_placements'), nestedDegrees.as('nested_degrees')])
      .where(sql<string>`lower(id)`, '=', traineeId.toLowerCase())
      .where('provider_id', '=', providerId),
  );
  return record ? splitNested(record) : undefined;
}

/** `lockTraineeForUpdate` with the trainee's placements and degrees, in one query (only the trainee row is locked). */
export async function lockTraineeWithNested(
  trx: Executor,
  providerId: number | null,
  traineeId: string,
): Promise<TraineeWithNested | undefined> {
  const [record] = await executePrepared(
    trx,
    trx
      .selectFrom('trainees')
      .selectAll()
      .select([nestedPlacements.as('nested_placements'), nestedDegrees.as('nested_degrees')])
      .where(sql<string>`lower(id)`, '=', traineeId.toLowerCase())
      .$if(providerId !== null, (qb) => qb.where('provider_id', '=', providerId!))
      .forUpdate(),
  );
  return record ? splitNested(record) : undefined;
}

/** The trainee with this id if it belongs to the provider (ids are matched case-insensitively, as the real citext). */
export async function findTraineeForProvider(
  db: Executor,
  providerId: number,
  traineeId: string,
): Promise<TraineeRow | undefined> {
  return db
    .selectFrom('trainees')
    .selectAll()
    .where(sql<string>`lower(id)`, '=', traineeId.toLowerCase())
    .where('provider_id', '=', providerId)
    .executeTakeFirst();
}

/**
 * The same, locked `FOR UPDATE` until the transaction ends: every write on a trainee starts here. `providerId` null:
 * any provider's trainee (the operator's commands).
 */
export async function lockTraineeForUpdate(
  trx: Executor,
  providerId: number | null,
  traineeId: string,
): Promise<TraineeRow | undefined> {
  return trx
    .selectFrom('trainees')
    .selectAll()
    .where(sql<string>`lower(id)`, '=', traineeId.toLowerCase())
    .$if(providerId !== null, (qb) => qb.where('provider_id', '=', providerId!))
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Serializes creates that could duplicate each other until the transaction ends, so two identical creates at once
 * cannot both pass the duplicate check. A duplicate always has the same provider, date of birth and last name
 * (case-insensitive), so only those creates wait for each other. A batch takes all its keys in one statement, in
 * the order of their hashes, so two batches never wait for each other in a circle (deadlock).
 */
export function duplicateLockKey(providerId: number, dateOfBirth: string, lastName: string): string {
  return `register-trainee:${providerId}:${dateOfBirth}:${lastName.toLowerCase()}`;
}

/** The advisory lock number of a duplicate lock key: 64 bits of its SHA-256, so SQL can carry it as a literal. */
function duplicateLockNumber(key: string): bigint {
  return createHash('sha256').update(key).digest().readBigInt64BE(0);
}

/**
 * The distinct lock numbers of `keys` as a `bigint[]` literal, in the order every taker of several locks takes them
 * (no deadlock).
 */
function lockArray(keys: string[]): string {
  const numbers = [...new Set(keys.map(duplicateLockNumber))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${numbers.join(',')}}`;
}

/**
 * Runs `store` in a transaction that begins holding the duplicate locks of these keys (`duplicateLockKey`) until it
 * ends. BEGIN and the locks are one round trip: a simple-protocol query of two statements, the locks as number
 * literals (a Kysely transaction would send BEGIN alone first). The statements `store` sends after it each take a
 * new snapshot, so they see every trainee committed by a holder of the same lock. A batch (more than one key) also
 * counts all its trainees in one trainee_list_counts shard (migration 2026-11-29T0810), so two batches never
 * deadlock on shards.
 */
export async function withDuplicateLocks<T>(db: Db, keys: string[], store: (trx: Executor) => Promise<T>): Promise<T> {
  const shard =
    keys.length > 1 ? `set_config('register.list_count_shard', '${Math.floor(Math.random() * 16)}', true), ` : '';
  const lockAll = `select ${shard}pg_advisory_xact_lock(h) from unnest('${lockArray(keys)}'::bigint[]) h`;
  return withStalePreparedRetry(db, async (connection) => {
    try {
      await sql.raw(`begin; ${lockAll}`).execute(connection);
      const result = await store(connection);
      await sql`commit`.execute(connection);
      return result;
    } catch (error) {
      // Also when the lock was not granted (a statement timeout): the connection goes back to the pool out of any
      // transaction. A connection that is gone cannot roll back; the error to report is the first one.
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

export async function insertTraineeRow(trx: Executor, row: TraineeInsert): Promise<TraineeRow> {
  return trx.insertInto('trainees').values(row).returningAll().executeTakeFirstOrThrow();
}

export interface AuditEntry {
  traineeId: string;
  providerId: number;
  /** Null for operator changes (CLI). */
  tokenId: number | null;
  /** e.g. `create`, `update`, `defer`, `withdraw`, `placement.create`. */
  action: string;
  before: unknown;
  after: unknown;
}

/** An audit entry as its `trainee_audits` row, the images as JSON values (for a statement that takes rows as JSON). */
function auditRecord(entry: AuditEntry) {
  return {
    trainee_id: entry.traineeId,
    provider_id: entry.providerId,
    token_id: entry.tokenId,
    action: entry.action,
    before: entry.before ?? null,
    after: entry.after ?? null,
  };
}

/** An audit entry as its `trainee_audits` row, the images as JSON text (a create writes it in the statement of its nested rows). */
export function auditColumns(entry: AuditEntry) {
  const record = auditRecord(entry);
  return {
    ...record,
    before: record.before === null ? null : JSON.stringify(record.before),
    after: record.after === null ? null : JSON.stringify(record.after),
  };
}

/** The list's query for one provider; `today` decides `course_not_yet_started` and `in_training`. */
export interface ListFilters extends TraineeListQuery {
  providerId: number;
  today: string;
}

/** The provider's non-draft trainees of one academic cycle that match the list filters. */
function listQuery(db: Executor, filters: ListFilters) {
  let query = db
    .selectFrom('trainees')
    .where('provider_id', '=', filters.providerId)
    .where('state', '!=', 'draft')
    .where('discarded_at', 'is', null)
    .where('start_academic_cycle', '=', filters.academicCycle);
  if (filters.since) query = query.where('updated_at', '>=', filters.since);
  if (filters.hasTrn === true) query = query.where('trn', 'is not', null);
  if (filters.hasTrn === false) query = query.where('trn', 'is', null);
  if (filters.statuses.length > 0) {
    const today = filters.today;
    query = query.where((eb) =>
      eb.or(
        filters.statuses.map((status) => {
          switch (status) {
            case 'course_not_yet_started':
              return eb.and([
                eb('itt_start_date', '>', today),
                eb('state', 'not in', ['draft', 'deferred', 'withdrawn']),
              ]);
            case 'in_training':
              return eb.and([
                eb('state', 'in', ['submitted_for_trn', 'trn_received', 'recommended_for_award']),
                eb('itt_start_date', '<=', today),
              ]);
            default:
              return eb('state', '=', status as TraineeRow['state']);
          }
        }),
      ),
    );
  }
  return query;
}

export interface TraineePageEntry {
  id: string;
  lock_version: number;
}

/**
 * One page of the list as ids and lock versions only, with the total count, in one statement: the page walks
 * trainees_list_idx (provider, cycle, updated_at, id; lock version included) in either direction and stops after
 * `offset + perPage` entries. The total is an uncorrelated subquery that runs once: without status, since or has_trn
 * filters it sums the cycle's trainee_list_counts rows (kept by triggers), otherwise it counts the filtered entries
 * of the index. A page past the end has no rows and so no total: the list answers 404 then anyway.
 */
export async function listTraineePage(
  db: Executor,
  filters: ListFilters,
): Promise<{ page: TraineePageEntry[]; total: number }> {
  const unfiltered = filters.statuses.length === 0 && filters.since === undefined && filters.hasTrn === undefined;
  const total = unfiltered
    ? db
        .selectFrom('trainee_list_counts')
        .where('provider_id', '=', filters.providerId)
        .where('academic_cycle', '=', filters.academicCycle)
        .select(sql<string>`coalesce(sum(trainees), 0)`.as('sum'))
    : listQuery(db, filters).select((eb) => eb.fn.countAll<string>().as('count'));
  // Prepared: its columns are named, so no migration changes what it returns.
  const rows = await executePrepared(
    db,
    listQuery(db, filters)
      .select(['id', 'lock_version'])
      .select(() => total.as('total'))
      .orderBy('updated_at', filters.sortOrder)
      .orderBy('id', filters.sortOrder)
      .limit(filters.perPage)
      .offset((filters.page - 1) * filters.perPage),
  );
  return { page: rows.map(({ id, lock_version }) => ({ id, lock_version })), total: Number(rows[0]?.total ?? 0) };
}

/** These trainees of the provider with their placements and degrees, in one query. */
export async function loadTraineesWithNested(
  db: Executor,
  providerId: number,
  ids: string[],
): Promise<TraineeWithNested[]> {
  if (ids.length === 0) return [];
  const records = await db
    .selectFrom('trainees')
    .selectAll()
    .select([nestedPlacements.as('nested_placements'), nestedDegrees.as('nested_degrees')])
    .where('provider_id', '=', providerId)
    .where('id', 'in', ids)
    .execute();
  return records.map(splitNested);
}

// ---- placements and degrees of trainees (their bodies nest them) ----

/** Placements oldest first (the real list order), then by id for a stable order within one transaction. */
export async function listPlacementRows(db: Executor, traineeIds: readonly string[]): Promise<PlacementRow[]> {
  if (traineeIds.length === 0) return [];
  return db
    .selectFrom('trainee_placements')
    .selectAll()
    .where('trainee_id', 'in', traineeIds)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/** Degrees by graduation year ascending (the real list order). */
export async function listDegreeRows(db: Executor, traineeIds: readonly string[]): Promise<DegreeRow[]> {
  if (traineeIds.length === 0) return [];
  return db
    .selectFrom('trainee_degrees')
    .selectAll()
    .where('trainee_id', 'in', traineeIds)
    .orderBy('graduation_year', 'asc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/**
 * The `placements` and `degrees` of one trainee's body, in one round trip (every single-trainee response needs
 * them): both lists aggregated as JSON, in their list orders.
 */
export async function loadPlacementsAndDegrees(db: Executor, traineeId: string): Promise<PlacementsAndDegrees> {
  const { rows } = await sql<{ placements: PlacementRow[]; degrees: DegreeRow[] }>`
    SELECT
      (SELECT coalesce(json_agg(p ORDER BY p.created_at, p.id), '[]'::json) FROM trainee_placements p WHERE p.trainee_id = ${traineeId}) AS placements,
      (SELECT coalesce(json_agg(d ORDER BY d.graduation_year, d.created_at, d.id), '[]'::json) FROM trainee_degrees d WHERE d.trainee_id = ${traineeId}) AS degrees
  `.execute(db);
  const { placements, degrees } = rows[0]!; // one row: the SELECT has no FROM
  return { placements: placements.map(serializePlacement), degrees: degrees.map(serializeDegree) };
}

/**
 * The same for a page of trainees in two queries (not two per trainee), keyed by trainee id; every requested
 * id has an entry, empty when it has neither.
 */
export async function loadPlacementsAndDegreesForTrainees(
  db: Executor,
  traineeIds: readonly string[],
): Promise<Map<string, PlacementsAndDegrees>> {
  const result = new Map<string, PlacementsAndDegrees>();
  for (const id of traineeIds) result.set(id, { placements: [], degrees: [] });
  const [placements, degrees] = await Promise.all([listPlacementRows(db, traineeIds), listDegreeRows(db, traineeIds)]);
  for (const row of placements) result.get(row.trainee_id)?.placements.push(serializePlacement(row));
  for (const row of degrees) result.get(row.trainee_id)?.degrees.push(serializeDegree(row));
  return result;
}

// ---- lookups and writes of trainee create and update ----

export interface PartnerKeys {
  urn: string | null;
  ukprn: string | null;
}

/** The active training partner with this URN or UKPRN, or undefined. */
export async function findTrainingPartner(
  db: Executor,
  by: 'urn' | 'ukprn',
  value: string,
): Promise<PartnerKeys | undefined> {
  return db
    .selectFrom('training_partners')
    .select(['urn', 'ukprn'])
    .where(by, '=', value)
    .where('discarded_at', 'is', null)
    .executeTakeFirst();
}

export async function schoolExists(db: Executor, urn: string): Promise<boolean> {
  return (await db.selectFrom('schools').select('urn').where('urn', '=', urn).executeTakeFirst()) !== undefined;
}

/** The schools of these URNs (a create's placements): one prepared statement whatever their number. */
export async function findSchoolsByUrn(db: Executor, urns: string[]) {
  if (urns.length === 0) return [];
  return executePrepared(
    db,
    db
      .selectFrom('schools')
      .select(['urn', 'name', 'postcode', 'town'])
      .where(sql<boolean>`urn = any(${urns}::text[])`),
  );
}

/** What a new trainee's possible duplicates share with it: provider, date of birth, last name (any case), route, start cycle. */
export interface DuplicateCandidateKey {
  providerId: number;
  dateOfBirth: string;
  lastName: string;
  trainingRoute: string;
  startAcademicCycle: number;
}

/** The types of the database's candidate functions' arguments (migration 2026-11-30T1800), after the locks. */
const CANDIDATE_ARGUMENT_TYPES = ['integer', 'date', 'text', 'text', 'integer'] as const;

/** The values of those arguments, in their order: the last name lower-cased, as the functions compare it. */
function candidateValues(key: DuplicateCandidateKey): unknown[] {
  return [key.providerId, key.dateOfBirth, key.lastName.toLowerCase(), key.trainingRoute, key.startAcademicCycle];
}

const candidateArguments = (key: DuplicateCandidateKey) =>
  sql.join(candidateValues(key).map((value, i) => sql`${value}::${sql.raw(CANDIDATE_ARGUMENT_TYPES[i]!)}`));

/** The provider's trainees a new one may duplicate (`DuplicateCandidateKey`). */
export async function findDuplicateCandidates(db: Executor, key: DuplicateCandidateKey): Promise<TraineeRow[]> {
  const { rows } =
    await sql<TraineeRow>`select * from trainee_duplicate_candidates(${candidateArguments(key)})`.execute(db);
  return rows;
}

/**
 * Inserts the trainee unless the provider has a trainee it may duplicate (`findDuplicateCandidates`), in one
 * statement: the create's common case, no candidate, costs one round trip instead of two. Undefined when there is a
 * candidate (the caller reads them and decides). The row goes in as one JSON parameter (`jsonb_populate_record`, as
 * the nested rows do): an INSERT … SELECT leaves bare parameters untyped. The jsonb column goes in as JSON, not text.
 */
export async function insertTraineeUnlessCandidates(
  trx: Executor,
  row: TraineeInsert,
  key: DuplicateCandidateKey,
): Promise<TraineeRow | undefined> {
  const { rows } = await sql<TraineeRow>`${sql.raw(PREPARED)}${insertFromJson('trainees', [traineeRecord(row)])}
    where not exists (select from trainee_duplicate_candidates(${candidateArguments(key)}))
    returning *`.execute(trx);
  return rows[0];
}

/** A trainee's insert or change as a JSON record: its jsonb columns as JSON values, not as the text Kysely's type asks for. */
function traineeRecord(row: TraineeInsert | TraineePatch): Record<string, unknown> {
  const record: Record<string, unknown> = { ...row };
  for (const column of ['disabilities', 'withdrawal_reasons'] as const) {
    if (typeof record[column] === 'string') record[column] = JSON.parse(record[column]) as unknown;
  }
  return record;
}

/**
 * `insert into table (columns) select columns from` the rows of one JSON parameter, naming only the columns given: a
 * column no row gives a value (one left undefined) gets the table's default, not the NULL its missing JSON key reads as.
 */
function insertFromJson(table: 'trainees' | 'trainee_degrees' | 'trainee_placements', rows: Record<string, unknown>[]) {
  const given = new Set(rows.flatMap((row) => Object.keys(definedColumns(row))));
  const columns = sql.join([...given].map((c) => sql.ref(c)));
  const source =
    rows.length === 1
      ? sql`jsonb_populate_record(null::${sql.table(table)}, ${JSON.stringify(rows[0])}::jsonb)`
      : sql`jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb)`;
  return sql`insert into ${sql.table(table)} (${columns}) select ${columns} from ${source}`;
}

/**
 * Inserts a new trainee's degrees and placements (and its audit row and event) in one statement: each list goes in from one
 * JSON parameter (`jsonb_populate_recordset`), naming its columns so table defaults still apply to the others.
 */
export async function insertNestedRecords(
  trx: Executor,
  degrees: object[],
  placements: object[],
  audit?: Record<string, unknown>,
  event?: NewEvent,
): Promise<void> {
  const fromJson = (table: 'trainee_degrees' | 'trainee_placements', rows: object[]) =>
    rows.length === 0 ? undefined : insertFromJson(table, rows as Record<string, unknown>[]);
  const inserts = (table: string, row: Record<string, unknown>) => {
    const values = definedColumns(row);
    return sql`insert into ${sql.table(table)} (${sql.join(Object.keys(values).map((c) => sql.ref(c)))}) values (${sql.join(Object.values(values))})`;
  };
  const parts = [
    fromJson('trainee_degrees', degrees),
    fromJson('trainee_placements', placements),
    event ? inserts('event_inbox', eventInboxValues(event)) : undefined,
  ].filter((p) => p !== undefined);
  const final = audit ? inserts('trainee_audits', audit) : sql`select 1`;
  if (parts.length === 0 && !audit) return;
  const ctes = parts.map((part, i) => sql`${sql.raw(`n${i}`)} as (${part})`);
  await (ctes.length > 0 ? sql`${sql.raw(PREPARED)}with ${sql.join(ctes)} ${final}` : final).execute(trx);
}

/** What a create writes besides the trainee's row. */
export interface NewTraineeRecords {
  degrees: Record<string, unknown>[];
  placements: Record<string, unknown>[];
  audit: AuditEntry;
  event: NewEvent;
}

/**
 * A new trainee with its degrees, placements, audit row and event in one statement, which also takes the duplicate
 * locks of `lockKeys` (`duplicateLockKey`) and then looks for trainees it may duplicate
 * (`trainee_lock_duplicate_candidates`, migration 2026-11-30T1800): with one, nothing is written and the answer is
 * false (the caller reads them and decides). Outside a transaction, the common create is then this one round trip
 * instead of four (BEGIN with the locks, the trainee, its other rows, COMMIT): per statement and round trip both the
 * server and PostgreSQL spend more than on the rows (docs/performance.md, "Register API"). The other rows go in only
 * when the trainee did (`where exists (select from t)`); their foreign keys are checked at the end of the statement,
 * when the trainee's row is there. Every row goes in as JSON (`jsonb_populate_record`): an INSERT … SELECT leaves
 * bare parameters untyped, and jsonb columns must go in as JSON values, not as their text.
 */
export async function insertTraineeWithRecords(
  executor: Executor,
  row: TraineeInsert,
  lockKeys: string[],
  key: DuplicateCandidateKey,
  records: NewTraineeRecords,
): Promise<boolean> {
  const trainee = definedColumns(traineeRecord(row));
  const audit = auditRecord(records.audit);
  const event = eventInboxRecord(records.event);
  const shape = {
    trainee: Object.keys(trainee),
    degrees: records.degrees.length > 0 ? Object.keys(records.degrees[0]!) : undefined,
    placements: records.placements.length > 0 ? Object.keys(records.placements[0]!) : undefined,
    audit: Object.keys(audit),
    event: Object.keys(event),
  };
  const parameters: unknown[] = [
    JSON.stringify(trainee),
    lockArray(lockKeys),
    ...candidateValues(key),
    ...(shape.degrees ? [JSON.stringify(records.degrees)] : []),
    ...(shape.placements ? [JSON.stringify(records.placements)] : []),
    JSON.stringify(audit),
    JSON.stringify(event),
  ];
  const { rows } = await executor.executeQuery<{ inserted: number }>(
    CompiledQuery.raw(createStatementText(shape), parameters),
  );
  return rows[0]!.inserted === 1;
}

/** A row's columns that have a value: a column left undefined is not named in the insert, so it gets its default. */
function definedColumns(row: Record<string, unknown>): Record<string, unknown> {
  const defined: Record<string, unknown> = {};
  for (const column in row) if (row[column] !== undefined) defined[column] = row[column];
  return defined;
}

interface CreateStatementShape {
  trainee: string[];
  degrees: string[] | undefined;
  placements: string[] | undefined;
  audit: string[];
  event: string[];
}

/**
 * The texts of `insertTraineeWithRecords` and `updateTraineeWithRecords`, made once per shape (the columns each of
 * their rows names; the service's writes have a handful): composed with Kysely's `sql` on every create, its
 * compilation was the largest single cost in the create's server profile (docs/performance.md, "Register API").
 */
const statementTexts = new LRUCache<string, string>({ max: 128 });

function statementText(kind: 'create' | 'update', shape: object, make: () => string): string {
  const signature = `${kind} ${JSON.stringify(shape)}`;
  let text = statementTexts.get(signature);
  if (text === undefined) statementTexts.set(signature, (text = make()));
  return text;
}

const quotedColumns = (names: string[]) => names.map((name) => `"${name.replaceAll('"', '""')}"`).join(', ');

type JsonRowSource = 'jsonb_populate_record' | 'jsonb_populate_recordset';

/** Rows of one JSON parameter into `table`, naming only their columns (the others get their defaults), when `guard` wrote a row. */
function insertFromJsonParameter(
  table: string,
  names: string[],
  source: JsonRowSource,
  parameter: number,
  guard: string,
): string {
  const columns = quotedColumns(names);
  return `insert into ${table} (${columns}) select ${columns} from ${source}(null::${table}, $${parameter}::jsonb) where exists (select from ${guard})`;
}

/** Parameters: $1 the trainee, $2 the locks, $3–$7 the candidate key, then one per other row kind, in the order of `shape`. */
function createStatementText(shape: CreateStatementShape): string {
  return statementText('create', shape, () => {
    let parameter = 2 + CANDIDATE_ARGUMENT_TYPES.length;
    const candidateParameters = CANDIDATE_ARGUMENT_TYPES.map((type, i) => `$${3 + i}::${type}`).join(', ');
    const dependents: [table: string, names: string[], source: JsonRowSource][] = [];
    if (shape.degrees) dependents.push(['trainee_degrees', shape.degrees, 'jsonb_populate_recordset']);
    if (shape.placements) dependents.push(['trainee_placements', shape.placements, 'jsonb_populate_recordset']);
    dependents.push(['trainee_audits', shape.audit, 'jsonb_populate_record']);
    dependents.push(['event_inbox', shape.event, 'jsonb_populate_record']);
    const inserts = dependents.map(([table, names, source]) =>
      insertFromJsonParameter(table, names, source, ++parameter, 't'),
    );
    return `${PREPARED}with t as (
    insert into trainees (${quotedColumns(shape.trainee)})
    select ${quotedColumns(shape.trainee)} from jsonb_populate_record(null::trainees, $1::jsonb)
    where not trainee_lock_duplicate_candidates($2::bigint[], ${candidateParameters})
    returning id
  ), ${inserts.map((part, i) => `n${i} as (${part})`).join(', ')}
  select count(*)::int as inserted from t`;
  });
}

/** A change of a trainee's columns; `updated_at` is the service's clock, as a create's times are. */
export type TraineeChange = TraineePatch & { updated_at: Date };

/**
 * The row that `updateTraineeWithRecords` stores for `trainee` and `change`: the next lock version and the academic
 * cycle the table generates, so an update knows its after image before it writes it. A test compares it with the
 * stored row, column by column.
 */
export function updatedTraineeRow(trainee: TraineeRow, change: TraineeChange): TraineeRow {
  return withAcademicCycle({ ...trainee, ...writtenColumns(trainee, change) });
}

/** The columns an update of `trainee` writes: those `change` gives, and the next lock version. */
function writtenColumns(trainee: Pick<TraineeRow, 'lock_version'>, change: TraineeChange) {
  return { ...definedColumns(traineeRecord(change)), lock_version: trainee.lock_version + 1 };
}

/**
 * A change of the trainee's columns with its audit row and event, in one statement, written only when the trainee
 * is still at the lock version it was read at: `change` and the next lock version (its ETag moves; a placement or
 * degree write gives no columns but `updated_at`, so the tag and the list's `since` see it too). Answers the stored
 * row, or undefined when another write came first (nothing is written then). Under the trainee's row lock that
 * cannot happen; without it, the update of a trainee is this and the read before it: two round trips instead of
 * five (BEGIN, the lock, the row, the audit with its event, COMMIT).
 */
export async function updateTraineeWithRecords(
  executor: Executor,
  trainee: Pick<TraineeRow, 'id' | 'lock_version'>,
  change: TraineeChange,
  audit: AuditEntry,
  event: NewEvent,
): Promise<TraineeRow | undefined> {
  const columns = writtenColumns(trainee, change);
  const auditRow = auditRecord(audit);
  const eventRow = eventInboxRecord(event);
  const shape = { trainee: Object.keys(columns), audit: Object.keys(auditRow), event: Object.keys(eventRow) };
  const text = statementText('update', shape, () => {
    const assignments = shape.trainee.map((name) => `${quotedColumns([name])} = r.${quotedColumns([name])}`);
    return `${PREPARED}with u as (
    update trainees set ${assignments.join(', ')}
    from jsonb_populate_record(null::trainees, $1::jsonb) r
    where trainees.id = $2 and trainees.lock_version = $3
    returning trainees.*
  ), n0 as (${insertFromJsonParameter('trainee_audits', shape.audit, 'jsonb_populate_record', 4, 'u')}),
  n1 as (${insertFromJsonParameter('event_inbox', shape.event, 'jsonb_populate_record', 5, 'u')})
  select * from u`;
  });
  const parameters = [
    JSON.stringify(columns),
    trainee.id,
    trainee.lock_version,
    JSON.stringify(auditRow),
    JSON.stringify(eventRow),
  ];
  const { rows } = await executor.executeQuery<TraineeRow>(CompiledQuery.raw(text, parameters));
  return rows[0];
}
