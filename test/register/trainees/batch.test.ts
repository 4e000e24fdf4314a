/**
 * `POST /trainees/batch`: up to 100 creates in one request, each row answered as its own create would be (201, 422
 * with the register's validation body, 409 with the duplicate), with its index; events in row order; over 100 rows
 * a 400 before anything is written; a body of junk a bounded error like any body; an Idempotency-Key covers the
 * whole batch.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFixture, validTrainee, type RegisterFixture } from '../helpers.js';

let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => f?.close());

const row = (i: number, overrides: Record<string, unknown> = {}) =>
  validTrainee({
    first_names: `Batch${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`,
    last_name: `Row${i}`,
    email: `row${i}@example.com`,
    ...overrides,
  });

async function count(table: 'trainees' | 'trainee_audits') {
  const { n } = await f.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

async function createdEvents(): Promise<string[]> {
  // Sequenced or still in the inbox, in append order either way; one statement, so the sequencer's moves between
  // the two tables are seen whole.
  const { rows } = await sql<{ resource_id: string }>`
    select resource_id from (
      select resource_id, 0 as part, position as n from events where type = 'trainee.created'
      union all select resource_id, 1, seq from event_inbox where type = 'trainee.created'
    ) e order by part, n`.execute(f.database.db);
  return rows.map((e) => e.resource_id);
}

describe('POST /trainees/batch', () => {
  it('100 rows with 7 bad ones: 93 created and 7 per-row errors with their indexes, in one answer; events in row order', async () => {
    const bad = new Map<number, Record<string, unknown>>([
      [3, { sex: 'zz' }],
      [17, { date_of_birth: 'not a date' }],
      [28, { training_route: '12' }], // a postgraduate route without a degree
      [41, { email: '' }],
      [56, { first_names: '' }],
      [77, { course_subject_1: '999999' }],
      [99, { hesa_id: '12' }],
    ]);
    const rows = Array.from({ length: 100 }, (_, i) => row(i, bad.get(i)));
    const eventsBefore = await createdEvents();
    const res = await f.call('POST', 'v2026.1', '/trainees/batch', { data: rows });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    const body = res.json<{
      data: Array<{
        index: number;
        status: number;
        data?: { trainee_id: string; last_name: string };
        message?: string;
        errors?: string[];
      }>;
      meta: unknown;
    }>();
    expect(body.meta).toEqual({ rows: 100, created: 93, failed: 7 });
    expect(body.data.map((r) => r.index)).toEqual(rows.map((_, i) => i));
    const failed = body.data.filter((r) => r.status !== 201);
    expect(failed.map((r) => r.index)).toEqual([...bad.keys()]);
    for (const r of failed) {
      expect(r.status).toBe(422);
      expect(r.message).toMatch(/^Validation failed: \d+ errors? prohibited this trainee from being saved$/);
      expect(r.errors!.length).toBeGreaterThan(0);
    }
    // The same error body a single create of that row gets.
    const single = await f.call('POST', 'v2026.1', '/trainees', { data: rows[3] });
    expect(single.statusCode).toBe(422);
    const { index: _i, status: _s, ...rowBody } = failed[0]!;
    expect(rowBody).toEqual(single.json());

    const created = body.data.filter((r) => r.status === 201);
    expect(created.map((r) => r.data!.last_name)).toEqual(rows.filter((_, i) => !bad.has(i)).map((r) => r.last_name));
    for (const r of created.slice(0, 3)) {
      const got = await f.call('GET', 'v2026.1', `/trainees/${r.data!.trainee_id}`);
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual(r.data);
    }
    const events = (await createdEvents()).slice(eventsBefore.length);
    expect(events).toEqual(created.map((r) => r.data!.trainee_id));
  });

  it('reports duplicates within the batch and of stored trainees as the single create does (409 with the existing trainee)', async () => {
    const stored = row(200, { last_name: 'Stored' });
    const first = await f.call('POST', 'v2026.1', '/trainees', { data: stored });
    expect(first.statusCode).toBe(201);
    const fresh = row(201, { last_name: 'Fresh' });
    const res = await f.call('POST', 'v2026.1', '/trainees/batch', {
      data: [stored, fresh, { ...fresh, email: 'other@example.com' }],
    });
    expect(res.statusCode).toBe(200);
    const [a, b, c] = res.json().data;
    const single = await f.call('POST', 'v2026.1', '/trainees', { data: stored });
    expect(single.statusCode).toBe(409);
    expect(a).toEqual({ index: 0, status: 409, ...single.json() });
    expect(b).toMatchObject({ index: 1, status: 201 });
    expect(c).toMatchObject({
      index: 2,
      status: 409,
      errors: [{ error: 'Conflict', message: 'This trainee is already in Register' }],
      data: [b.data],
    });
  });

  it('101 rows: 400 before any write; no rows or not a list: 422 as a create without data', async () => {
    // One statement: an event the sequencer moves from the inbox meanwhile is counted once.
    const events = async () =>
      Number(
        (
          await sql<{
            n: string;
          }>`select (select count(*) from event_inbox) + (select count(*) from events) as n`.execute(f.database.db)
        ).rows[0]!.n,
      );
    const before = await Promise.all([count('trainees'), count('trainee_audits'), events()]);
    const res = await f.call('POST', 'v2026.1', '/trainees/batch', {
      data: Array.from({ length: 101 }, (_, i) => row(300 + i)),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ errors: ['data holds 101 trainees; a batch holds at most 100'] });
    for (const data of [[], {}, row(1), 'x']) {
      const refused = await f.call('POST', 'v2026.1', '/trainees/batch', { data });
      expect(refused.statusCode).toBe(422);
      expect(refused.json()).toEqual({ errors: ['Param is missing or the value is empty or invalid: data'] });
    }
    // A row that is not a trainee object is that row's 422.
    const odd = await f.call('POST', 'v2026.1', '/trainees/batch', { data: ['x', null] });
    expect(odd.json().data).toEqual([
      { index: 0, status: 422, errors: ['Param is missing or the value is empty or invalid: data'] },
      { index: 1, status: 422, errors: ['Param is missing or the value is empty or invalid: data'] },
    ]);
    expect(await Promise.all([count('trainees'), count('trainee_audits'), events()])).toEqual(before);
  });

  it('concurrent batches all succeed (no deadlock on the list counts) and the list total stays exact', async () => {
    const before = (await f.call('GET', 'v2026.1', '/trainees?per_page=1')).json().meta.total_count as number;
    const answers = await Promise.all(
      [0, 1, 2, 3].map((b) =>
        f.call('POST', 'v2026.1', '/trainees/batch', {
          data: Array.from({ length: 30 }, (_, i) => row(1000 + b * 30 + i, { last_name: `Concurrent${b}x${i}` })),
        }),
      ),
    );
    for (const res of answers) {
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      expect(res.json().meta).toEqual({ rows: 30, created: 30, failed: 0 });
    }
    expect((await f.call('GET', 'v2026.1', '/trainees?per_page=1')).json().meta.total_count).toBe(before + 120);
  });

  it('1 MB of junk: a bounded error, as for any body', async () => {
    const junk = 'x'.repeat(1024 * 1024);
    for (const payload of [
      junk,
      `{"data":[${'"x",'.repeat(200_000)}"x"]}`,
      `{"data":"${'x'.repeat(1024 * 1024 - 20)}"}`,
    ]) {
      const res = await f.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees/batch',
        payload,
        headers: { ...f.provider.auth, 'content-type': 'application/json' },
      });
      expect([400, 413, 422]).toContain(res.statusCode);
      expect(res.body.length).toBeLessThan(1000);
    }
  });

  it('is an extension of v2026.1 only: the older versions know no such path (405: GET would read a trainee "batch")', async () => {
    for (const version of ['v2025.0', 'v2026.0']) {
      const res = await f.call('POST', version, '/trainees/batch', { data: [row(400)] });
      expect(res.statusCode).toBe(405);
    }
    expect(await count('trainees')).toBe(215);
  });

  it('honours Idempotency-Key for the batch as a whole: a retry replays the answer and creates nothing again', async () => {
    const send = (data: unknown[]) =>
      f.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees/batch',
        payload: { data },
        headers: { ...f.provider.auth, 'idempotency-key': 'batch-retry-1' },
      });
    const rows = [row(500), row(501, { sex: 'zz' }), row(502)];
    const before = await count('trainees');
    const first = await send(rows);
    expect(first.statusCode).toBe(200);
    expect(first.json().meta).toEqual({ rows: 3, created: 2, failed: 1 });
    expect(await count('trainees')).toBe(before + 2);

    const retry = await send(rows);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    expect(await count('trainees')).toBe(before + 2);
    // The same key with another batch is refused, and writes nothing.
    const other = await send([row(503)]);
    expect(other.statusCode).toBe(422);
    expect(await count('trainees')).toBe(before + 2);
  });
});
