/**
 * Bounded record sizes: every free-text register field has a length rule (the real validators', the documented
 * HESA field lengths, or a documented cap), placements and degrees per trainee are capped, and the list body cache
 * is bounded by bytes. Oversized input is a 422 naming the field and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraineeBodyCache } from '../../../src/register/trainees/body-cache.js';
import { MAX_DEGREES_PER_TRAINEE } from '../../../src/register/degrees/validate.js';
import { MAX_PLACEMENTS_PER_TRAINEE } from '../../../src/register/placements/validate.js';
import { registerFixture, type RegisterFixture, snapshot, today, validTrainee } from '../helpers.js';

let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

const DEGREE = { grade: '02', subject: '100485', institution: '0117', uk_degree: '083', graduation_year: '2003' };
let unique = 0;
const trainee = (overrides: Record<string, unknown> = {}) => {
  unique += 1;
  return validTrainee({ last_name: `Limits${unique}`, ...overrides });
};

async function traineeCount(): Promise<number> {
  const row = await f.database.db
    .selectFrom('trainees')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('field lengths on POST /trainees', () => {
  it.each([
    [
      'a 100,000-character ni_number',
      { ni_number: 'A'.repeat(100_000) },
      'ni_number is too long (maximum is 9 characters)',
    ],
    ['a 9-character ni_number', { ni_number: 'QQ1234567' }, null],
    [
      'a 61-character previous_last_name',
      { previous_last_name: 'x'.repeat(61) },
      'previous_last_name is too long (maximum is 60 characters)',
    ],
    [
      'a 61-character middle_names',
      { middle_names: 'x'.repeat(61) },
      'middle_names is too long (maximum is 60 characters)',
    ],
    [
      'a 31-character pg_apprenticeship_start_date',
      { pg_apprenticeship_start_date: '2'.repeat(31) },
      'pg_apprenticeship_start_date is too long (maximum is 30 characters)',
    ],
    [
      'a 900 KB placement name',
      { placements_attributes: [{ name: 'n'.repeat(900_000) }] },
      'placements_attributes name is too long (maximum is 255 characters)',
    ],
    ['a 255-character placement name', { placements_attributes: [{ name: 'n'.repeat(255) }] }, null],
  ])('%s → %s', async (_title, overrides, message) => {
    const before = await traineeCount();
    const response = await f.call('POST', 'v2026.1', '/trainees', { data: trainee(overrides) });
    if (message === null) {
      expect(response.statusCode).toBe(201);
      return;
    }
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([message]);
    expect(await traineeCount()).toBe(before);
  });

  it(`more than ${MAX_PLACEMENTS_PER_TRAINEE} placements or ${MAX_DEGREES_PER_TRAINEE} degrees in one trainee are refused`, async () => {
    const placements = Array.from({ length: MAX_PLACEMENTS_PER_TRAINEE + 1 }, () => ({ urn: '900020' }));
    const degrees = Array.from({ length: MAX_DEGREES_PER_TRAINEE + 1 }, (_, i) => ({
      ...DEGREE,
      graduation_year: String(1980 + i),
    }));
    const response = await f.call('POST', 'v2026.1', '/trainees', {
      data: trainee({
        training_route: '12',
        fund_code: '7',
        course_subject_1: '100425',
        placements_attributes: placements,
        degrees_attributes: degrees,
      }),
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([
      `degrees_attributes is too long (maximum is ${MAX_DEGREES_PER_TRAINEE} degrees)`,
      `placements_attributes is too long (maximum is ${MAX_PLACEMENTS_PER_TRAINEE} placements)`,
    ]);
  });
});

describe('field lengths on updates and actions', () => {
  it('PUT with an over-long ni_number is 422 and changes nothing', async () => {
    const id = await f.insertTrainee({ training_route: '11' });
    const before = await snapshot(f, 'v2026.1', id);
    const response = await f.call('PUT', 'v2026.1', `/trainees/${id}`, { data: { ni_number: 'A'.repeat(10) } });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(['ni_number is too long (maximum is 9 characters)']);
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('POST/PUT /placements with a name over 255 characters is 422 naming name', async () => {
    const id = await f.insertTrainee();
    const refused = await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { name: 'n'.repeat(256) } });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors).toEqual([
      { error: 'UnprocessableEntity', message: 'name is too long (maximum is 255 characters)' },
    ]);
    const created = await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { name: 'Oak Academy' } });
    expect(created.statusCode).toBe(201);
    const placementId = created.json().data.placement_id;
    const update = await f.call('PATCH', 'v2026.1', `/trainees/${id}/placements/${placementId}`, {
      data: { name: 'n'.repeat(900_000) },
    });
    expect(update.statusCode).toBe(422);
  });

  it(`a trainee holds at most ${MAX_PLACEMENTS_PER_TRAINEE} placements and ${MAX_DEGREES_PER_TRAINEE} degrees`, async () => {
    const id = await f.insertTrainee();
    for (let i = 0; i < MAX_PLACEMENTS_PER_TRAINEE; i++) {
      expect(
        (await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { name: `School ${i}` } })).statusCode,
      ).toBe(201);
    }
    const placement = await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { name: 'One too many' } });
    expect(placement.statusCode).toBe(422);
    expect(placement.json().errors).toEqual([
      {
        error: 'UnprocessableEntity',
        message: `placements is too long (maximum is ${MAX_PLACEMENTS_PER_TRAINEE} placements)`,
      },
    ]);
    for (let i = 0; i < MAX_DEGREES_PER_TRAINEE; i++) {
      const degree = await f.call('POST', 'v2026.1', `/trainees/${id}/degrees`, {
        data: { ...DEGREE, graduation_year: String(1980 + i) },
      });
      expect(degree.statusCode).toBe(201);
    }
    const degree = await f.call('POST', 'v2026.1', `/trainees/${id}/degrees`, {
      data: { ...DEGREE, graduation_year: '2010' },
    });
    expect(degree.statusCode).toBe(422);
    expect(degree.json().errors).toEqual([
      { error: 'UnprocessableEntity', message: `degrees is too long (maximum is ${MAX_DEGREES_PER_TRAINEE} degrees)` },
    ]);
  });

  it('withdraw: another_reason and safeguarding_concern_reasons over 500 characters are refused', async () => {
    const id = await f.insertTrainee();
    const response = await f.call('POST', 'v2026.1', `/trainees/${id}/withdraw`, {
      data: {
        withdrawal_date: today(),
        trigger: 'provider',
        future_interest: 'no',
        reasons: ['had_to_withdraw_trainee_another_reason', 'safeguarding_concerns'],
        another_reason: 'x'.repeat(501),
        safeguarding_concern_reasons: 'y'.repeat(501),
      },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors.map((e: { message: string }) => e.message)).toEqual([
      'another_reason is too long (maximum is 500 characters)',
      'safeguarding_concern_reasons is too long (maximum is 500 characters)',
    ]);
  });
});

describe('list body cache', () => {
  it('is bounded by bytes: least recently used bodies go first, and an oversized body is not kept', () => {
    const cache = new TraineeBodyCache(16_000);
    const body = Buffer.alloc(1_000, 'x');
    for (let i = 0; i < 40; i++) cache.set(TraineeBodyCache.key(`t${i}`, 1, 'v2026.1'), body);
    expect(cache.bytes).toBeLessThanOrEqual(16_000);
    expect(cache.size).toBeLessThan(16);
    expect(cache.get(TraineeBodyCache.key('t0', 1, 'v2026.1'))).toBeUndefined();
    expect(cache.get(TraineeBodyCache.key('t39', 1, 'v2026.1'))).toBe(body);
    cache.set(TraineeBodyCache.key('big', 1, 'v2026.1'), Buffer.alloc(4_000));
    expect(cache.get(TraineeBodyCache.key('big', 1, 'v2026.1'))).toBeUndefined();
  });
});
