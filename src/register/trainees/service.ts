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
import type { RegisterContext, TraineeTarget, TraineeWrite, WriteRequest } from '../context.js';
import { noTraineesFound, traineeNotFound, traineeValidationError } from '../errors.js';
import { assertTraineeModifiable } from '../state-machine.js';
import { codeText, todayUtc, type Checked } from '../values.js';
import { adapterFor, messageInVersion, type RegisterVersion } from '../versions/index.js';
import { TraineeBodyCache } from './body-cache.js';
import type { PlacementsAndDegrees } from './nested.js';
import { acceptedInput, attributesToColumns, codeOrNull, rowToAttributes } from './input.js';
import type { TraineeListQuery } from './list-query.js';
import { isSpecialUrn } from './nested.js';
import {
  findTraineeForProvider,
  findTraineeWithNested,
  findTrainingPartner,
  listTraineePage,
  loadPlacementsAndDegrees,
  loadTraineesWithNested,
  lockTraineeForUpdate,
  lockTraineeWithNested,
  schoolExists,
  updatedTraineeRow,
  updateTraineeWithRecords,
  type TraineeChange,
  type TraineePatch,
  type TraineeRow,
} from './repository.js';
import { nestedRecordEvent, traineeUpdatedEvent, changedTraineeFields, eventOwner } from '../events/service.js';
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
 * Every change of a locked trainee row: `patch` written (its ETag moves), and one audit row of who changed what with
 * the change's event, in one statement.
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
  const change = { ...patch, updated_at: new Date() };
  return writtenUnderLock(
    trainee,
    await writeTraineeAudited(trx, trainee, writer, action, change, before, after, event),
  );
}

/**
 * The result of a lock-version-guarded write made while `trainee`'s row lock is held, where no other write can have
 * come in between: a write that did not happen there is a bug, not a retry.
 */
function writtenUnderLock<T>(trainee: TraineeRow, result: T | undefined): T {
  if (result === undefined) throw new Error(`Trainee ${trainee.id} changed while locked`);
  return result;
}

/** `change` with its audit row (who: the writer; what: `before`/`after`) and event, unless `trainee` moved on since it was read. */
function writeTraineeAudited(
  executor: Executor,
  trainee: TraineeRow,
  writer: TraineeWriter,
  action: string,
  change: TraineeChange,
  before: unknown,
  after: unknown,
  event: NewEvent,
): Promise<TraineeRow | undefined> {
  const audit = {
    traineeId: trainee.id,
    providerId: trainee.provider_id,
    tokenId: tokenIdOf(writer),
    action,
    before,
    after,
  };
  return updateTraineeWithRecords(executor, trainee, change, audit, event);
}

/**
 * A write that is one statement outside any transaction when it can be (`inOneStatement`, on one connection; undefined
 * when it wrote nothing and cannot be done so), else `inTransaction`. With an Idempotency-Key the key's record must
 * commit with the write, so only the transaction will do.
 */
export async function firstInOneStatement<T>(
  db: Db,
  request: Pick<WriteRequest, 'beforeCommit'>,
  inOneStatement: (connection: Db) => Promise<T | undefined>,
  inTransaction: () => Promise<T>,
): Promise<T> {
  if (!request.beforeCommit) {
    const result = await withStalePreparedRetry(db, inOneStatement);
    if (result !== undefined) return result;
  }
  return inTransaction();
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

export function rejectIfInvalid(version: RegisterVersion, errors: string[], enhancedErrors: boolean): void {
  if (errors.length > 0)
    throw traineeValidationError(
      errors.map((m) => messageInVersion(version, m)),
      enhancedErrors,
    );
}

export interface PartnerColumns {
  training_partner_urn?: string | null;
  training_partner_ukprn?: string | null;
  employing_school_urn?: string | null;
}

/** Training partner and employing school: looked up only when their keys are sent; unknown ones are errors. */
export async function checkPartners(
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

/**
 * `PUT`/`PATCH /trainees/{id}`: a partial update, validated as a whole, audited. The trainee is read, checked and
 * written only if no other write came in between (`updateTraineeWithRecords`): two round trips. When one did, or an
 * `Idempotency-Key`'s record must commit with the change, the update runs again on the trainee locked.
 */
export async function updateTrainee(db: Db, context: RegisterContext, write: TraineeWrite): Promise<TraineeResult> {
  const today = todayUtc();
  return firstInOneStatement(
    db,
    write,
    async (connection) => {
      const found = await findTraineeWithNested(connection, context.provider.id, write.traineeId);
      if (!found) throw traineeNotFound();
      assertIfMatch(write.ifMatch, traineeEtag(found.row));
      return storeUpdate(connection, context, write, found.row, found.nested, today);
    },
    () =>
      withLockedTrainee(
        db,
        context,
        write,
        async (trx, row, stored) => writtenUnderLock(row, await storeUpdate(trx, context, write, row, stored, today)),
        { loadNested: true },
      ),
  );
}

/** The update of `row` as read (undefined when another write changed it since: nothing is written then). */
async function storeUpdate(
  executor: Executor,
  context: RegisterContext,
  write: TraineeWrite,
  row: TraineeRow,
  stored: PlacementsAndDegrees,
  today: string,
): Promise<TraineeResult | undefined> {
  const { version, provider } = context;
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
  const { values: partners, errors: partnerErrors } = await checkPartners(executor, version, input);
  rejectIfInvalid(version, [...trainee.errors, ...partnerErrors], write.enhancedErrors);

  // Placements and degrees do not change here: loaded once for both audit images and the response.
  const change = { ...attributesToColumns(trainee.values.attributes), ...partners, updated_at: new Date() };
  const expected = updatedTraineeRow(row, change);
  const before = serializeTrainee(row, version, nested);
  const after = serializeTrainee(expected, version, nested);
  const updated = await writeTraineeAudited(
    executor,
    row,
    context,
    'update',
    change,
    before,
    after,
    traineeUpdatedEvent(
      eventOwner(context),
      row.id,
      changedTraineeFields(canonicalTraineeBody(row, nested), canonicalTraineeBody(expected, nested)),
    ),
  );
  return updated && { row: updated, body: after };
}
