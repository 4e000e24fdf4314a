import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Db, Tx } from '../../db/database.js';
import { PreconditionFailedError } from '../../errors.js';
import type { RegisterContext } from '../index.js';
import { entryName } from '../reference-data.js';
import { assertTraineeModifiable, assertWithdrawable, type RegisterVersion, type TraineeState } from '../state-machine.js';
import {
  findTraineeForProvider,
  lockTraineeForUpdate,
  recordAudit,
  updateTraineeRow,
  type TraineePatch,
  type TraineeRow,
} from '../trainees/repository.js';
import { traineeBody, traineeEtag } from '../trainees/serialize.js';
import { checkDegree, findDuplicateDegrees, type DegreeValues } from './degrees.js';
import { degreeNotFound, duplicateDegree, missingData, placementNotFound, traineeNotFound, unprocessable } from './errors.js';
import {
  listDegreeRows,
  listPlacementRows,
  serializeDegree,
  serializePlacement,
} from './nested.js';
import { checkPlacement, MAX_DEGREES_PER_TRAINEE, MAX_PLACEMENTS_PER_TRAINEE, urnToLookUp } from './placements.js';
import {
  countDegrees,
  countPlacements,
  deleteDegree,
  deletePlacement,
  findDegree,
  findPlacement,
  findSchool,
  insertDegree,
  insertPlacement,
  updateDegree,
  updatePlacement,
} from './repository.js';
import {
  DeferBody,
  DegreeBody,
  DegreeParams,
  DegreeSchema,
  errorResponses,
  PlacementBody,
  PlacementParams,
  PlacementSchema,
  QtsBody,
  TraineeParams,
  TraineeSchema,
  withdrawBody,
} from './schemas.js';
import { checkDefer, checkQtsStatus, checkWithdraw, todayUtc, type Body } from './status.js';

export { actionPaths } from './openapi.js';

export interface TraineeActionRoutesOptions {
  db: Db;
  /** The version of the scope the routes are mounted in (documents the version's own field names). */
  version?: RegisterVersion;
}

/** What the register core's authentication puts on every request of a version scope. */
type ActionContext = RegisterContext;

function contextOf(request: FastifyRequest): ActionContext {
  return request.registerContext;
}

/** The `data` object of a write: missing, not an object or empty → 422 "Param is missing…". */
function dataOf(body: unknown): Body {
  const data = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).data : undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data) || Object.keys(data).length === 0) throw missingData();
  return data as Body;
}

type TraineeIdParams = { trainee_id: string };

/** When the deprecated QTS path was superseded by update-qts-or-eyts-status (v2026.1 release, 2026-03-20). */
const RECOMMEND_FOR_QTS_DEPRECATED_AT = '@1773964800';

/**
 * Defer, withdraw, QTS/EYTS status, placements and degrees of one trainee. Mounted by the register
 * API inside every version scope, after authentication, so `request` already carries the provider and version.
 * Every write runs in one transaction that starts by locking the trainee row, and is audited; a refused write
 * throws before anything is written, so the transaction rolls back with no change.
 */
export const traineeActionRoutes: FastifyPluginAsync<TraineeActionRoutesOptions> = async (app, { db, version: scopeVersion }) => {
  // The handlers validate bodies themselves, with the real service's messages; the schemas document them.
  app.setValidatorCompiler(() => (value) => ({ value }));
  // Described in each version's own document (actionPaths, merged by the register core), not in the service-wide one.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  const version = scopeVersion ?? versionOfScope(app);

  /**
   * Runs a write on the locked trainee: 404 when it is not the provider's, 412 when an `If-Match` does not name the
   * trainee's current ETag (as the core's trainee update), then `body` in the same transaction.
   */
  async function writeTrainee<T>(request: FastifyRequest, body: (trx: Tx, trainee: TraineeRow, context: ActionContext) => Promise<T>) {
    const context = contextOf(request);
    const { trainee_id: traineeId } = request.params as TraineeIdParams;
    return db.transaction().execute(async (trx) => {
      const trainee = await lockTraineeForUpdate(trx, context.provider.id, traineeId);
      if (!trainee) throw traineeNotFound();
      assertIfMatch(request.headers['if-match'], trainee);
      return body(trx, trainee, context);
    });
  }

  async function readTrainee(request: FastifyRequest): Promise<TraineeRow> {
    const context = contextOf(request);
    const { trainee_id: traineeId } = request.params as TraineeIdParams;
    const trainee = await findTraineeForProvider(db, context.provider.id, traineeId);
    if (!trainee) throw traineeNotFound();
    return trainee;
  }

  /** Applies a state change to the trainee, audits it, and returns the new trainee body. */
  async function changeTrainee(trx: Tx, trainee: TraineeRow, context: ActionContext, action: string, patch: TraineePatch) {
    const updated = await updateTraineeRow(trx, trainee.id, patch);
    const before = Object.fromEntries(Object.keys(patch).map((k) => [k, trainee[k as keyof TraineeRow] ?? null]));
    // The audit shows the reasons as the array they are, not as the JSON text the column is written with.
    const after = { ...patch, ...(typeof patch.withdrawal_reasons === 'string' ? { withdrawal_reasons: JSON.parse(patch.withdrawal_reasons) } : {}) };
    await recordAudit(trx, { traineeId: trainee.id, providerId: trainee.provider_id, tokenId: context.tokenId, action, before, after });
    return withBody(trx, updated, context);
  }

  /** The trainee's body and row (the row gives the response its ETag, as the core's trainee responses have). */
  async function withBody(trx: Tx, row: TraineeRow, context: ActionContext) {
    return { row, body: await traineeBody(trx, row, context.version, context.provider.ukprn) };
  }

  function sendTrainee(reply: FastifyReply, result: { row: TraineeRow; body: unknown }, status = 200) {
    return reply.code(status).header('etag', traineeEtag(result.row)).send({ data: result.body });
  }

  /** Nested writes move the trainee's `updated_at` and ETag too, and are audited on the trainee. */
  async function touchAndAudit(trx: Tx, trainee: TraineeRow, context: ActionContext, action: string, before: unknown, after: unknown) {
    const updated = await updateTraineeRow(trx, trainee.id, {});
    await recordAudit(trx, { traineeId: trainee.id, providerId: trainee.provider_id, tokenId: context.tokenId, action, before, after });
    return updated;
  }

  // ---- state changes ----

  app.post(
    '/trainees/:trainee_id/defer',
    {
      schema: {
        tags: ['Register'],
        summary: 'Defer a trainee',
        description: 'From `submitted_for_trn` or `trn_received` to `deferred`, with a defer date and an optional reason.',
        params: TraineeParams,
        body: DeferBody,
        response: { 200: Type.Object({ data: TraineeSchema }), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const result = await writeTrainee(request, async (trx, trainee, context) => {
        const input = dataOf(request.body);
        const checked = checkDefer(input, trainee.state as TraineeState);
        if (!checked.ok) throw unprocessable(checked.errors);
        return changeTrainee(trx, trainee, context, 'defer', {
          state: 'deferred',
          defer_date: checked.value.defer_date,
          defer_reason: checked.value.defer_reason,
        });
      });
      return sendTrainee(reply, result);
    },
  );

  app.post(
    '/trainees/:trainee_id/withdraw',
    {
      schema: {
        tags: ['Register'],
        summary: 'Withdraw a trainee',
        description:
          'From `submitted_for_trn`, `trn_received` or `deferred` (once ITT has started) to `withdrawn`. The reasons must ' +
          'be valid for the trigger (see `GET /reference-data?field=withdrawal_reasons` from v2026.1).',
        params: TraineeParams,
        body: withdrawBody(version),
        response: { 200: Type.Object({ data: TraineeSchema }), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const result = await writeTrainee(request, async (trx, trainee, context) => {
        assertWithdrawable(trainee, todayUtc());
        const checked = checkWithdraw(dataOf(request.body), trainee, context.version);
        if (!checked.ok) throw unprocessable(checked.errors);
        const w = checked.value;
        return changeTrainee(trx, trainee, context, 'withdraw', {
          state: 'withdrawn',
          withdrawal_date: w.date,
          withdrawal_reasons: JSON.stringify(w.reasons),
          withdrawal_trigger: w.trigger,
          withdrawal_future_interest: w.future_interest,
          withdrawal_another_reason: w.another_reason,
          withdrawal_safeguarding_concern_reasons: w.safeguarding_concern_reasons,
        });
      });
      return sendTrainee(reply, result);
    },
  );

  async function updateQtsStatus(request: FastifyRequest, reply: FastifyReply) {
    const result = await writeTrainee(request, async (trx, trainee, context) => {
      const input = dataOf(request.body);
      const [degreeCount, placementCount] = [await countDegrees(trx, trainee.id), await countPlacements(trx, trainee.id)];
      const checked = checkQtsStatus(
        input,
        {
          state: trainee.state as TraineeState,
          itt_start_date: trainee.itt_start_date,
          training_route: entryName('training_route', trainee.training_route) ?? trainee.training_route,
          degreeCount,
          placementCount,
        },
        todayUtc(),
      );
      if (!checked.ok) throw unprocessable(checked.errors);
      return changeTrainee(trx, trainee, context, 'recommend_for_award', {
        state: 'recommended_for_award',
        outcome_date: checked.value.qts_standards_met_date,
        recommended_for_award_at: new Date(),
      });
    });
    return sendTrainee(reply, result, 202);
  }

  const qtsSchema = {
    tags: ['Register'],
    params: TraineeParams,
    body: QtsBody,
    response: { 202: Type.Object({ data: TraineeSchema }), ...errorResponses(404, 422) },
  };
  const qtsDescription =
    'From `trn_received` to `recommended_for_award` (202). Every route except the undergraduate ones needs a degree; ' +
    'placements needed: 2 by default, 1 for iQTS, none for early years and assessment-only routes.';
  app.post(
    '/trainees/:trainee_id/update-qts-or-eyts-status',
    { schema: { ...qtsSchema, summary: 'Recommend a trainee for QTS or EYTS', description: qtsDescription } },
    updateQtsStatus,
  );
  app.post(
    '/trainees/:trainee_id/recommend-for-qts',
    {
      schema: {
        ...qtsSchema,
        summary: 'Recommend a trainee for QTS or EYTS (deprecated alias)',
        description: `Deprecated: use \`update-qts-or-eyts-status\`, which this path behaves exactly as. Answers with a \`Deprecation\` header. ${qtsDescription}`,
        deprecated: true,
      },
    },
    async (request, reply) => {
      const successor = request.url.split('?')[0].replace(/recommend-for-qts\/?$/, 'update-qts-or-eyts-status');
      reply.header('deprecation', RECOMMEND_FOR_QTS_DEPRECATED_AT);
      reply.header('link', `<${successor}>; rel="successor-version"`);
      return updateQtsStatus(request, reply);
    },
  );

  // ---- placements ----

  const placementResponse = Type.Object({ data: PlacementSchema });

  app.get(
    '/trainees/:trainee_id/placements',
    {
      schema: {
        tags: ['Register'],
        summary: 'List the placements of a trainee',
        params: TraineeParams,
        response: { 200: Type.Object({ data: Type.Array(PlacementSchema) }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const trainee = await readTrainee(request);
      return { data: (await listPlacementRows(db, [trainee.id])).map(serializePlacement) };
    },
  );

  app.post(
    '/trainees/:trainee_id/placements',
    {
      schema: {
        tags: ['Register'],
        summary: 'Add a placement',
        description: 'The school by URN, or by name (and postcode) when it has no URN. No duplicate check.',
        params: TraineeParams,
        body: PlacementBody,
        response: { 201: placementResponse, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const data = await writeTrainee(request, async (trx, trainee, context) => {
        assertTraineeModifiable(trainee, context.version);
        const input = dataOf(request.body);
        const { values, errors } = checkPlacement(input, await findSchool(trx, urnToLookUp(input)));
        if ((await listPlacementRows(trx, [trainee.id])).length >= MAX_PLACEMENTS_PER_TRAINEE) {
          errors.push(`placements is too long (maximum is ${MAX_PLACEMENTS_PER_TRAINEE} placements)`);
        }
        if (errors.length > 0) throw unprocessable(errors);
        const placement = serializePlacement(await insertPlacement(trx, trainee.id, values));
        await touchAndAudit(trx, trainee, context, 'placement.create', null, placement);
        return placement;
      });
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/trainees/:trainee_id/placements/:placement_id',
    {
      schema: {
        tags: ['Register'],
        summary: 'Get a placement',
        params: PlacementParams,
        response: { 200: placementResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const trainee = await readTrainee(request);
      const { placement_id: placementId } = request.params as { placement_id: string };
      const placement = await findPlacement(db, trainee.id, placementId);
      if (!placement) throw placementNotFound();
      return { data: serializePlacement(placement) };
    },
  );

  const changePlacement = async (request: FastifyRequest) => {
    const data = await writeTrainee(request, async (trx, trainee, context) => {
      assertTraineeModifiable(trainee, context.version);
      const { placement_id: placementId } = request.params as { placement_id: string };
      const existing = await findPlacement(trx, trainee.id, placementId);
      if (!existing) throw placementNotFound();
      const input = dataOf(request.body);
      const { values, errors } = checkPlacement(input, await findSchool(trx, urnToLookUp(input, existing)), existing);
      if (errors.length > 0) throw unprocessable(errors);
      const placement = serializePlacement(await updatePlacement(trx, existing.id, values));
      await touchAndAudit(trx, trainee, context, 'placement.update', serializePlacement(existing), placement);
      return placement;
    });
    return { data };
  };
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/trainees/:trainee_id/placements/:placement_id',
      {
        schema: {
          tags: ['Register'],
          summary: 'Change a placement',
          description: 'Partial: fields not sent keep their values. PUT and PATCH are the same.',
          params: PlacementParams,
          body: PlacementBody,
          response: { 200: placementResponse, ...errorResponses(404, 422) },
        },
      },
      changePlacement,
    );
  }

  app.delete(
    '/trainees/:trainee_id/placements/:placement_id',
    {
      schema: {
        tags: ['Register'],
        summary: 'Delete a placement',
        description: 'Returns the trainee after the deletion.',
        params: PlacementParams,
        response: { 200: Type.Object({ data: TraineeSchema }), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const result = await writeTrainee(request, async (trx, trainee, context) => {
        assertTraineeModifiable(trainee, context.version);
        const { placement_id: placementId } = request.params as { placement_id: string };
        const existing = await findPlacement(trx, trainee.id, placementId);
        if (!existing) throw placementNotFound();
        await deletePlacement(trx, existing.id);
        const updated = await touchAndAudit(trx, trainee, context, 'placement.delete', serializePlacement(existing), null);
        return withBody(trx, updated, context);
      });
      return sendTrainee(reply, result);
    },
  );

  // ---- degrees ----

  const degreeResponse = Type.Object({ data: DegreeSchema });

  app.get(
    '/trainees/:trainee_id/degrees',
    {
      schema: {
        tags: ['Register'],
        summary: 'List the degrees of a trainee',
        params: TraineeParams,
        response: { 200: Type.Object({ data: Type.Array(DegreeSchema) }), ...errorResponses(404) },
      },
    },
    async (request) => {
      const trainee = await readTrainee(request);
      return { data: (await listDegreeRows(db, [trainee.id])).map(serializeDegree) };
    },
  );

  app.post(
    '/trainees/:trainee_id/degrees',
    {
      schema: {
        tags: ['Register'],
        summary: 'Add a degree',
        description:
          'UK degree (country blank or XF/XG/XH/XI/XK, or an institution given): uk_degree, institution, grade required. ' +
          'Non-UK: non_uk_degree and a country. A degree equal to an existing one on the fields sent → 409.',
        params: TraineeParams,
        body: DegreeBody,
        response: { 201: degreeResponse, ...errorResponses(404, 409, 422) },
      },
    },
    async (request, reply) => {
      const data = await writeTrainee(request, async (trx, trainee, context) => {
        assertTraineeModifiable(trainee, context.version);
        const input = dataOf(request.body);
        const { values, errors } = checkDegree(input);
        // The duplicate check wins over the other validation errors, as in the real service.
        const stored = await listDegreeRows(trx, [trainee.id]);
        const duplicates = findDuplicateDegrees(values, stored);
        if (duplicates.length > 0) throw duplicateDegree(duplicates.map(serializeDegree));
        if (stored.length >= MAX_DEGREES_PER_TRAINEE) errors.push(`degrees is too long (maximum is ${MAX_DEGREES_PER_TRAINEE} degrees)`);
        if (errors.length > 0) throw unprocessable(errors);
        const degree = serializeDegree(await insertDegree(trx, trainee.id, values as DegreeValues));
        await touchAndAudit(trx, trainee, context, 'degree.create', null, degree);
        return degree;
      });
      return reply.code(201).send({ data });
    },
  );

  app.get(
    '/trainees/:trainee_id/degrees/:degree_id',
    {
      schema: {
        tags: ['Register'],
        summary: 'Get a degree',
        params: DegreeParams,
        response: { 200: degreeResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const trainee = await readTrainee(request);
      const { degree_id: degreeId } = request.params as { degree_id: string };
      const degree = await findDegree(db, trainee.id, degreeId);
      if (!degree) throw degreeNotFound();
      return { data: serializeDegree(degree) };
    },
  );

  const changeDegree = async (request: FastifyRequest) => {
    const data = await writeTrainee(request, async (trx, trainee, context) => {
      assertTraineeModifiable(trainee, context.version);
      const { degree_id: degreeId } = request.params as { degree_id: string };
      const existing = await findDegree(trx, trainee.id, degreeId);
      if (!existing) throw degreeNotFound();
      const input = dataOf(request.body);
      const { values, errors } = checkDegree(input, existing);
      const others = (await listDegreeRows(trx, [trainee.id])).filter((d) => d.id !== existing.id);
      const duplicates = findDuplicateDegrees(values, others);
      if (duplicates.length > 0) throw duplicateDegree(duplicates.map(serializeDegree));
      if (errors.length > 0) throw unprocessable(errors);
      const degree = serializeDegree(await updateDegree(trx, existing.id, values as DegreeValues));
      await touchAndAudit(trx, trainee, context, 'degree.update', serializeDegree(existing), degree);
      return degree;
    });
    return { data };
  };
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/trainees/:trainee_id/degrees/:degree_id',
      {
        schema: {
          tags: ['Register'],
          summary: 'Change a degree',
          description: 'Partial: fields not sent keep their values; sending uk_degree or non_uk_degree switches UK ↔ non-UK.',
          params: DegreeParams,
          body: DegreeBody,
          response: { 200: degreeResponse, ...errorResponses(404, 409, 422) },
        },
      },
      changeDegree,
    );
  }

  app.delete(
    '/trainees/:trainee_id/degrees/:degree_id',
    {
      schema: {
        tags: ['Register'],
        summary: 'Delete a degree',
        description: 'Returns the trainee after the deletion.',
        params: DegreeParams,
        response: { 200: Type.Object({ data: TraineeSchema }), ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const result = await writeTrainee(request, async (trx, trainee, context) => {
        assertTraineeModifiable(trainee, context.version);
        const { degree_id: degreeId } = request.params as { degree_id: string };
        const existing = await findDegree(trx, trainee.id, degreeId);
        if (!existing) throw degreeNotFound();
        await deleteDegree(trx, existing.id);
        const updated = await touchAndAudit(trx, trainee, context, 'degree.delete', serializeDegree(existing), null);
        return withBody(trx, updated, context);
      });
      return sendTrainee(reply, result);
    },
  );
};

/** `If-Match` (one or more tags, weak or strong, or `*`) must name the trainee's current ETag when sent. */
function assertIfMatch(ifMatch: string | undefined, trainee: TraineeRow): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (!tags.includes('*') && !tags.includes(traineeEtag(trainee))) throw new PreconditionFailedError();
}

/** The version a scope serves, from its prefix (`/api/v2025.0-rc` → v2025.0), for the version's documentation. */
function versionOfScope(app: FastifyInstance): RegisterVersion {
  const label = /\/v(20\d\d\.\d)/.exec(app.prefix)?.[1];
  return label === '2025.0' || label === '2026.0' ? (`v${label}` as RegisterVersion) : 'v2026.1';
}
