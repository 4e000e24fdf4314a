import { afterAll, beforeAll } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createToken, type RegisterEnvironment } from '../../src/register/tokens.js';

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
  const created = await createToken(db, { providerUkprn: ukprn, environment: options.environment ?? 'sandbox', secret: options.secret });
  return { id: provider.id, ukprn, token: created.token, tokenId: created.id, auth: { authorization: `Bearer ${created.token}` } };
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
