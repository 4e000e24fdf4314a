/**
 * The register tests' fixtures: providers with a token, valid request bodies, an app on its own database with two
 * providers (`registerFixture`), and trainees inserted straight into the table in whatever state a test needs (the
 * API itself only creates `submitted_for_trn` trainees; the other states come from TRS and the operator CLI).
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { newSlug } from '../../src/register/ids.js';
import type { TraineeState } from '../../src/register/state-machine.js';
import { createToken, type RegisterEnvironment } from '../../src/register/tokens.js';
import type { TraineeInsert } from '../../src/register/trainees/repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

export interface TestProvider {
  id: number;
  ukprn: string;
  token: string;
  tokenId: number;
  auth: { authorization: string };
}

let counter = 0;

/** A provider with one active token of `environment` (the default sandbox app's), for request tests. */
export async function createProviderWithToken(
  db: Db,
  options: { ukprn?: string; name?: string; environment?: RegisterEnvironment; secret?: string } = {},
): Promise<TestProvider> {
  counter += 1;
  const ukprn = options.ukprn ?? String(10000000 + process.pid * 10 + counter).slice(-8);
  const provider = await db
    .insertInto('providers')
    .values({ ukprn, name: options.name ?? `Test provider ${counter}` })
    .returning(['id', 'ukprn'])
    .executeTakeFirstOrThrow();
  const created = await createToken(db, {
    providerUkprn: ukprn,
    environment: options.environment ?? 'sandbox',
    secret: options.secret,
  });
  return {
    id: provider.id,
    ukprn,
    token: created.token,
    tokenId: created.id,
    auth: { authorization: `Bearer ${created.token}` },
  };
}

/** The current academic cycle's start year and a start date inside it that is already past. */
export function currentCycle(today = new Date()): { year: number; ittStart: string; ittEnd: string } {
  const y = today.getUTCFullYear();
  const year = today.getUTCMonth() + 1 >= 8 ? y : y - 1;
  return { year, ittStart: `${year}-09-01`, ittEnd: `${year + 1}-07-31` };
}

/** A valid v2026.1 create payload (route 11, undergraduate: no degree needed), overridable field by field. */
export function validTrainee(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const cycle = currentCycle();
  return {
    first_names: 'John',
    last_name: 'Doe',
    date_of_birth: '1990-01-01',
    sex: '11',
    email: 'john.doe@example.com',
    nationality: 'GB',
    training_route: '11',
    itt_start_date: cycle.ittStart,
    itt_end_date: cycle.ittEnd,
    course_subject_1: '100346',
    study_mode: '63',
    course_age_range: '13918',
    itt_aim: '202',
    itt_qualification_aim: '001',
    course_year: '2',
    fund_code: '2',
    funding_method: '6',
    hesa_id: '0310261553101',
    disability1: '58',
    ...overrides,
  };
}

/**
 * A register test app (its rate limit raised, so a file's many requests are not throttled) with one provider, made
 * before the enclosing tests and closed after them; `use` receives both.
 */
export function withRegisterApp(use: (t: TestApp, p: TestProvider) => void): void {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' });
    use(app, await createProviderWithToken(app.database.db));
  });
  afterAll(async () => {
    await app?.close();
  });
}

export interface RegisterFixture extends TestApp {
  provider: TestProvider;
  otherProvider: TestProvider;
  /** A request to `/api/<version><path>` with the provider's token (or `token`). */
  call(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    version: string,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<LightMyRequestResponse>;
  insertTrainee(overrides?: Partial<TraineeInsert> & { state?: TraineeState }): Promise<string>;
}

export const SCHOOL = { urn: '137404', name: 'Hedgehog Primary School', postcode: 'GU1 1AA', town: 'Guildford' };

export async function registerFixture(): Promise<RegisterFixture> {
  const app = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' });
  const environment = app.config.REGISTER_ENVIRONMENT;
  const provider = await createProviderWithToken(app.database.db, {
    ukprn: '10000001',
    name: 'Test Teacher Training',
    environment,
  });
  const otherProvider = await createProviderWithToken(app.database.db, {
    ukprn: '10000002',
    name: 'Other Provider',
    environment,
  });
  await app.database.db.insertInto('schools').values(SCHOOL).execute();

  return {
    ...app,
    provider,
    otherProvider,
    call(method, version, path, body, token = provider.token) {
      return app.app.inject({
        method,
        url: `/api/${version}${path}`,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    },
    async insertTrainee(overrides = {}) {
      const id = newSlug();
      await app.database.db
        .insertInto('trainees')
        .values({
          id,
          provider_id: provider.id,
          state: 'trn_received',
          trn: '1234567',
          first_names: 'Ada',
          last_name: 'Lovelace',
          date_of_birth: '1990-01-01',
          sex: '10',
          email: 'ada@example.com',
          training_route: '12',
          itt_aim: '202',
          itt_qualification_aim: '020',
          course_subject_1: '100425',
          course_age_range: '13918',
          course_min_age: 11,
          course_max_age: 16,
          study_mode: '01',
          itt_start_date: '2025-09-01',
          itt_end_date: '2026-07-31',
          trainee_start_date: '2025-09-01',
          course_year: 1,
          fund_code: '7',
          funding_method: '6',
          hesa_id: '0310261553101',
          submitted_for_trn_at: new Date('2025-09-02T10:00:00Z'),
          ...overrides,
          disabilities: overrides.disabilities ?? '{}',
        })
        .execute();
      return id;
    },
  };
}

/** Everything a refused write must leave alone: the trainee body (with its placements and degrees) and the audit count. */
export async function snapshot(fixture: RegisterFixture, version: string, traineeId: string) {
  const trainee = await fixture.call('GET', version, `/trainees/${traineeId}`);
  const { audits } = await fixture.database.db
    .selectFrom('trainee_audits')
    .select((eb) => eb.fn.countAll<number>().as('audits'))
    .where('trainee_id', '=', traineeId)
    .executeTakeFirstOrThrow();
  return {
    status: trainee.statusCode,
    body: trainee.json(),
    etag: trainee.headers.etag as string,
    audits: Number(audits),
  };
}

export const UK_DEGREE = {
  grade: '02',
  subject: '100425',
  institution: '1166',
  uk_degree: '014',
  graduation_year: '2015-01-01',
  country: 'XF',
};

export const NON_UK_DEGREE = {
  subject: '100425',
  non_uk_degree: '083',
  graduation_year: '2015',
  country: 'GL',
  grade: '02',
};

export const STATE_TRANSITION_BODY = {
  errors: [
    {
      error: 'StateTransitionError',
      message: 'It\u2019s not possible to perform this action while the trainee is in its current state',
    },
  ],
};

export function today(): string {
  return new Date().toISOString().slice(0, 10);
}
