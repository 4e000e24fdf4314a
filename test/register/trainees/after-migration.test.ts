import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFixture, validTrainee, type RegisterFixture } from '../helpers.js';

/**
 * A create, an update and a read prepare their statements on their connection (src/db/prepared-statements.ts); a migration
 * that adds a column to `trainees` while the instance runs (a rolling upgrade) makes those statements stale. The next
 * request on each connection is not refused: its transaction (or read) runs once more with the statements prepared
 * afresh.
 */
let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

describe('register writes across a migration', () => {
  it('creates, updates and reads with 201/200 after a column is added to trainees, storing each write once', async () => {
    // Sequential requests reuse the pool's most recently released connection: it prepares the statements here.
    const first = await f.call('POST', 'v2026.1', '/trainees', { data: validTrainee({ last_name: 'Before' }) });
    expect(first.statusCode).toBe(201);
    const id = first.json().data.trainee_id as string;
    expect((await f.call('PATCH', 'v2026.1', `/trainees/${id}`, { data: { middle_names: 'One' } })).statusCode).toBe(
      200,
    );

    await sql`alter table trainees add column added_by_a_later_release text`.execute(f.database.db);

    const second = await f.call('POST', 'v2026.1', '/trainees', { data: validTrainee({ last_name: 'After' }) });
    expect(second.statusCode).toBe(201);
    const updated = await f.call('PATCH', 'v2026.1', `/trainees/${id}`, { data: { middle_names: 'Two' } });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data.middle_names).toBe('Two');
    const read = await f.call('GET', 'v2026.1', `/trainees/${id}`);
    expect(read.statusCode).toBe(200);
    // GET of one trainee answers the trainee itself, as the real service does.
    expect(read.json().middle_names).toBe('Two');
    expect((await f.call('GET', 'v2026.1', '/trainees')).json().data).toHaveLength(2);

    const stored = await sql<{ last_name: string; middle_names: string | null }>`
      select last_name, middle_names from trainees where provider_id = ${f.provider.id} order by last_name`.execute(
      f.database.db,
    );
    expect(stored.rows).toEqual([
      { last_name: 'After', middle_names: null },
      { last_name: 'Before', middle_names: 'Two' },
    ]);
    const audits = await sql<{ action: string; n: number }>`
      select action, count(*)::int as n from trainee_audits where provider_id = ${f.provider.id}
      group by action order by action`.execute(f.database.db);
    expect(audits.rows).toEqual([
      { action: 'create', n: 2 },
      { action: 'update', n: 2 },
    ]);
  });
});
