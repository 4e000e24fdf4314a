import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createProviderWithToken, type TestProvider } from '../helpers.js';
import {
  auditColumns,
  duplicateLockKey,
  insertNestedRecords,
  insertTraineeUnlessCandidates,
  insertTraineeWithRecords,
  newTraineeRow,
  type DuplicateCandidateKey,
  type NewTraineeRecords,
  type NewTraineeValues,
} from '../../../src/register/trainees/repository.js';

let t: TestApp;
let p: TestProvider;

beforeAll(async () => {
  t = await buildTestApp();
  p = await createProviderWithToken(t.database.db);
});
afterAll(async () => {
  await t?.close();
});

const at = new Date('2026-11-30T18:30:01.234Z');

/** A new trainee's values with most optional columns given (the rest left to the table's defaults). */
function values(id: string, overrides: Partial<NewTraineeValues> = {}): NewTraineeValues {
  return {
    id,
    provider_id: p.id,
    state: 'submitted_for_trn',
    record_source: 'api',
    first_names: 'Ada',
    middle_names: 'Byron',
    last_name: 'Lovelace',
    previous_last_name: 'King',
    date_of_birth: '1990-12-10',
    sex: '11',
    email: 'ada@example.com',
    nationality: 'GB',
    ni_number: 'QQ123456C',
    ethnicity: '80',
    disabilities: JSON.stringify({ disability1: '58', disability2: '57' }),
    training_route: '11',
    itt_aim: '202',
    itt_qualification_aim: '001',
    course_subject_1: '100346',
    course_age_range: '13918',
    course_min_age: 11,
    course_max_age: 16,
    study_mode: '63',
    itt_start_date: '2025-09-01',
    itt_end_date: '2026-07-31',
    // In the next cycle: the stored cycle comes from this date, not the ITT start.
    trainee_start_date: '2026-08-15',
    course_year: 2,
    fund_code: '2',
    funding_method: '6',
    application_id: 123456,
    hesa_id: '0310261553101',
    training_partner_urn: null,
    employing_school_urn: null,
    submitted_for_trn_at: at,
    sandbox_due_at: new Date('2026-11-30T18:30:06.234Z'),
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

function candidateKey(row: NewTraineeValues, startAcademicCycle: number): DuplicateCandidateKey {
  return {
    providerId: p.id,
    dateOfBirth: row.date_of_birth,
    lastName: row.last_name,
    trainingRoute: row.training_route,
    startAcademicCycle,
  };
}

function records(id: string): NewTraineeRecords {
  const stamp = { created_at: '2026-11-30T18:30:01.234000Z', updated_at: '2026-11-30T18:30:01.234000Z' };
  return {
    degrees: [
      {
        id: `${id}-degree`,
        trainee_id: id,
        locale_code: 'uk',
        subject: 'Mathematics',
        uk_degree: 'BSc',
        graduation_year: 2012,
        ...stamp,
      },
    ],
    placements: [
      {
        id: `${id}-placement`,
        trainee_id: id,
        urn: null,
        name: 'A school',
        postcode: null,
        school_linked: false,
        town: null,
        ...stamp,
      },
    ],
    audit: { traineeId: id, providerId: p.id, tokenId: p.tokenId, action: 'create', before: null, after: { a: 1 } },
    event: {
      api: 'register',
      providerId: p.id,
      environment: 'sandbox',
      type: 'trainee.created',
      resourceType: 'trainee',
      resourceId: id,
      payload: { trainee_id: id, state: 'submitted_for_trn' },
    },
  };
}

/** What is stored of trainee `id`: its row, and how many nested, audit and event rows it has. */
async function stored(id: string) {
  const db = t.database.db;
  const count = async (table: 'trainee_degrees' | 'trainee_placements' | 'trainee_audits', column: 'trainee_id') =>
    Number(
      (
        await db
          .selectFrom(table)
          .where(column, '=', id)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  // One statement, one snapshot: the sequencer moves an event from the inbox to the log in one transaction.
  const events = async () => {
    const { rows } = await sql<{ n: number }>`select
      (select count(*) from event_inbox where resource_id = ${id}) + (select count(*) from events where resource_id = ${id})
      as n`.execute(db);
    return Number(rows[0]!.n);
  };
  return {
    row: await db.selectFrom('trainees').selectAll().where('id', '=', id).executeTakeFirst(),
    degrees: await count('trainee_degrees', 'trainee_id'),
    placements: await count('trainee_placements', 'trainee_id'),
    audits: await count('trainee_audits', 'trainee_id'),
    events: await events(),
  };
}

describe('a create in one statement (insertTraineeWithRecords)', () => {
  it('stores the row the create answers from (newTraineeRow), column by column, with its other rows', async () => {
    const row = values('OneStatementRowOneStatem');
    const inserted = await insertTraineeWithRecords(
      t.database.db,
      row,
      [duplicateLockKey(p.id, row.date_of_birth, row.last_name)],
      candidateKey(row, 2025),
      records(row.id),
    );
    expect(inserted).toBe(true);
    const after = await stored(row.id);
    expect(after.row).toEqual(newTraineeRow(row));
    expect(after.row?.start_academic_cycle).toBe(2026);
    expect(after.row?.disabilities).toEqual({ disability1: '58', disability2: '57' });
    expect(after).toMatchObject({ degrees: 1, placements: 1, audits: 1, events: 1 });
  });

  it('a trainee left to the defaults: the row it answers from is still the stored one', async () => {
    const row: NewTraineeValues = {
      id: 'OneStatementDefaultsOneS',
      provider_id: p.id,
      state: 'submitted_for_trn',
      first_names: 'Grace',
      last_name: 'Hopper',
      date_of_birth: '1991-12-09',
      sex: '12',
      training_route: '11',
      itt_start_date: '2025-09-01',
      // Left out of the insert's JSON: the table's default.
      email: undefined,
      created_at: at,
      updated_at: at,
    };
    expect(
      await insertTraineeWithRecords(
        t.database.db,
        row,
        [duplicateLockKey(p.id, row.date_of_birth, row.last_name)],
        candidateKey(row, 2025),
        { ...records(row.id), degrees: [], placements: [] },
      ),
    ).toBe(true);
    const after = await stored(row.id);
    expect(after.row).toEqual(newTraineeRow(row));
    expect(after.row).toMatchObject({ lock_version: 0, record_source: 'api', disabilities: {}, trn: null });
  });

  it('writes nothing, and answers false, when the provider has a trainee it may duplicate', async () => {
    const first = values('OneStatementFirstOneStat', { trainee_start_date: null, last_name: 'Babbage' });
    const key = candidateKey(first, 2025);
    const lock = [duplicateLockKey(p.id, first.date_of_birth, first.last_name)];
    expect(await insertTraineeWithRecords(t.database.db, first, lock, key, records(first.id))).toBe(true);

    // Another first name, the same candidate key (provider, date of birth, last name in any case, route, cycle).
    const second = values('OneStatementSecondOneSta', {
      trainee_start_date: null,
      last_name: 'BABBAGE',
      first_names: 'Charles',
    });
    expect(await insertTraineeWithRecords(t.database.db, second, lock, key, records(second.id))).toBe(false);
    expect(await stored(second.id)).toEqual({ row: undefined, degrees: 0, placements: 0, audits: 0, events: 0 });
    expect(await stored(first.id)).toMatchObject({ degrees: 1, placements: 1, audits: 1, events: 1 });
  });
});

describe('the create in steps (a possible duplicate, or nested rows read back)', () => {
  it('a column given as undefined gets its default, as in the one statement, not NULL', async () => {
    const row = values('InStepsDefaultsInStepsDe', {
      last_name: 'Shannon',
      record_source: undefined,
      disabilities: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    const inserted = await insertTraineeUnlessCandidates(t.database.db, row, candidateKey(row, 2025));
    expect(inserted).toMatchObject({ id: row.id, record_source: 'api', disabilities: {}, lock_version: 0 });
    expect(inserted?.created_at).toBeInstanceOf(Date);

    const nested = records(row.id);
    const placement = { ...nested.placements[0]!, school_linked: undefined, created_at: undefined };
    await insertNestedRecords(t.database.db, [], [placement], { ...auditColumns(nested.audit), created_at: undefined });
    const stored = await t.database.db
      .selectFrom('trainee_placements')
      .select(['school_linked', 'created_at'])
      .where('trainee_id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(stored.school_linked).toBe(false);
    expect(stored.created_at).toBeInstanceOf(Date);
    const audits = await t.database.db
      .selectFrom('trainee_audits')
      .select('created_at')
      .where('trainee_id', '=', row.id)
      .execute();
    expect(audits).toHaveLength(1);
    expect(audits[0]!.created_at).toBeInstanceOf(Date);
  });
});
