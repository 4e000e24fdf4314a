import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../helpers.js';
import {
  updatedTraineeRow,
  updateTraineeWithRecords,
  type AuditEntry,
  type TraineeChange,
  type TraineeRow,
} from '../../../src/register/trainees/repository.js';
import type { NewEvent } from '../../../src/events/outbox-repository.js';

let t: TestApp;
let p: TestProvider;

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' });
  p = await createProviderWithToken(t.database.db);
});
afterAll(async () => {
  await t?.close();
});

async function createTrainee(overrides: Record<string, unknown> = {}): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v2026.1/trainees',
    headers: p.auth,
    payload: { data: validTrainee({ last_name: `Update${Math.random().toString(36).slice(2, 10)}`, ...overrides }) },
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.trainee_id as string;
}

async function storedRow(id: string): Promise<TraineeRow> {
  return t.database.db.selectFrom('trainees').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The trainee's audit rows and events (inbox and log in one statement: the sequencer moves events between them). */
async function records(id: string) {
  const { rows } = await sql<{ audits: string[]; events: number }>`select
    array(select action from trainee_audits where trainee_id = ${id} order by id) as audits,
    (select count(*) from event_inbox where resource_id = ${id}) + (select count(*) from events where resource_id = ${id})
    as events`.execute(t.database.db);
  return { audits: rows[0]!.audits, events: Number(rows[0]!.events) };
}

function audit(id: string): AuditEntry {
  return { traineeId: id, providerId: p.id, tokenId: p.tokenId, action: 'update', before: { a: 1 }, after: { a: 2 } };
}

function event(id: string): NewEvent {
  return {
    api: 'register',
    providerId: p.id,
    environment: 'sandbox',
    type: 'trainee.updated',
    resourceType: 'trainee',
    resourceId: id,
    payload: { trainee_id: id, changed: ['first_names'] },
  };
}

describe('an update in one statement (updateTraineeWithRecords)', () => {
  it('stores the row the update answers from (updatedTraineeRow), column by column, with its audit and event', async () => {
    const id = await createTrainee();
    const before = await storedRow(id);
    const change: TraineeChange = {
      first_names: 'Ada',
      middle_names: null,
      // The next cycle: the stored cycle is generated from it.
      trainee_start_date: `${before.start_academic_cycle! + 1}-08-15`,
      disabilities: JSON.stringify({ disability1: '57' }),
      course_min_age: 11,
      submitted_for_trn_at: new Date('2026-11-30T20:10:00.123Z'),
      // Not named in the statement: the stored email stays.
      email: undefined,
      updated_at: new Date('2026-11-30T20:10:01.456Z'),
    };
    const updated = await updateTraineeWithRecords(t.database.db, before, change, audit(id), event(id));
    const after = await storedRow(id);
    expect(updated).toEqual(after);
    expect(after).toEqual(updatedTraineeRow(before, change));
    expect(after).toMatchObject({
      lock_version: before.lock_version + 1,
      start_academic_cycle: before.start_academic_cycle! + 1,
      disabilities: { disability1: '57' },
      email: before.email,
    });
    expect(await records(id)).toEqual({ audits: ['create', 'update'], events: 2 });
  });

  it('writes nothing, and answers undefined, when another write moved the lock version since the read', async () => {
    const id = await createTrainee();
    const read = await storedRow(id);
    await t.database.db
      .updateTable('trainees')
      .set({ lock_version: read.lock_version + 1 })
      .where('id', '=', id)
      .execute();
    const moved = await storedRow(id);
    const change: TraineeChange = { first_names: 'Lost', updated_at: new Date() };
    expect(await updateTraineeWithRecords(t.database.db, read, change, audit(id), event(id))).toBeUndefined();
    expect(await storedRow(id)).toEqual(moved);
    expect(await records(id)).toEqual({ audits: ['create'], events: 1 });
  });
});

describe('PATCH /trainees/{id} read and written without a lock', () => {
  it('ten concurrent updates of one trainee, each of another field: all ten kept, audited and announced', async () => {
    const id = await createTrainee();
    const changes: Record<string, unknown>[] = [
      { first_names: 'Ada' },
      { middle_names: 'Augusta' },
      { email: 'ada@example.com' },
      { provider_trainee_id: '99157234/2/01' },
      { ethnicity: '160' },
      { disability2: '57' },
      { course_subject_2: '100425' },
      { study_mode: '01' },
      { fund_code: '7' },
      { application_id: 123456 },
    ];
    const responses = await Promise.all(
      changes.map((change) =>
        t.app.inject({
          method: 'PATCH',
          url: `/api/v2026.1/trainees/${id}`,
          headers: p.auth,
          payload: { data: change },
        }),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(changes.map(() => 200));
    // Each answer is the trainee after its own update: ten distinct ETags, one per lock version.
    expect(new Set(responses.map((r) => r.headers.etag)).size).toBe(10);

    const read = await t.app.inject({ method: 'GET', url: `/api/v2026.1/trainees/${id}`, headers: p.auth });
    const body = read.json() as Record<string, unknown>;
    expect(body).toMatchObject(Object.assign({}, ...changes));
    expect((await storedRow(id)).lock_version).toBe(10);
    expect(await records(id)).toEqual({ audits: ['create', ...changes.map(() => 'update')], events: 11 });
  });
});
