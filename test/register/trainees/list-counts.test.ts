import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator, sql } from 'kysely';
import { migrations } from '../../../migrations/index.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createProviderWithToken, currentCycle, validTrainee, type TestProvider } from '../helpers.js';

/**
 * The list's unfiltered total_count comes from trainee_list_counts, kept by triggers on trainees; filtered lists count
 * the index. These tests change list membership by every route there is (API, SQL) and check the two agree.
 */
let t: TestApp;
const cycle = currentCycle();

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' });
});
afterAll(async () => {
  await t?.close();
});

async function totals(provider: TestProvider, academicCycle = cycle.year) {
  const get = async (query: string) => {
    const response = await t.app.inject({
      method: 'GET',
      url: `/api/v2026.1/trainees?academic_cycle=${academicCycle}${query}`,
      headers: provider.auth,
    });
    return response.statusCode === 404 ? 0 : (response.json().meta.total_count as number);
  };
  // has_trn=true plus has_trn=false partition the list, and each is counted from the index.
  return { fromCounts: await get(''), counted: (await get('&has_trn=true')) + (await get('&has_trn=false')) };
}

describe('GET /trainees total_count', () => {
  it('follows creates, drafts, discards, cycle moves and deletes, whichever way they are made', async () => {
    const provider = await createProviderWithToken(t.database.db);
    const db = t.database.db;
    const ids: string[] = [];
    for (const name of ['Ada', 'Ben', 'Cy', 'Di']) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: provider.auth,
        payload: { data: validTrainee({ first_names: name, last_name: `Count${name}` }) },
      });
      expect(response.statusCode).toBe(201);
      ids.push(response.json().data.trainee_id);
    }
    expect(await totals(provider)).toEqual({ fromCounts: 4, counted: 4 });

    await db.updateTable('trainees').set({ state: 'draft' }).where('id', '=', ids[0]!).execute();
    expect(await totals(provider)).toEqual({ fromCounts: 3, counted: 3 });
    await db.updateTable('trainees').set({ state: 'trn_received', trn: '7654321' }).where('id', '=', ids[0]!).execute();
    expect(await totals(provider)).toEqual({ fromCounts: 4, counted: 4 });

    await db.updateTable('trainees').set({ discarded_at: new Date() }).where('id', '=', ids[1]!).execute();
    expect(await totals(provider)).toEqual({ fromCounts: 3, counted: 3 });

    await db
      .updateTable('trainees')
      .set({ itt_start_date: `${cycle.year - 1}-09-01`, trainee_start_date: `${cycle.year - 1}-09-01` })
      .where('id', '=', ids[2]!)
      .execute();
    expect(await totals(provider)).toEqual({ fromCounts: 2, counted: 2 });
    expect(await totals(provider, cycle.year - 1)).toEqual({ fromCounts: 1, counted: 1 });

    // A change that leaves membership alone leaves the count alone.
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/api/v2026.1/trainees/${ids[3]}`,
      headers: provider.auth,
      payload: { data: { first_names: 'Dee' } },
    });
    expect(patched.statusCode).toBe(200);
    expect(await totals(provider)).toEqual({ fromCounts: 2, counted: 2 });

    await sql`DELETE FROM trainee_audits WHERE trainee_id = ${ids[3]}`.execute(db);
    await sql`DELETE FROM trainee_placements WHERE trainee_id = ${ids[3]}`.execute(db);
    await sql`DELETE FROM trainee_degrees WHERE trainee_id = ${ids[3]}`.execute(db);
    await db.deleteFrom('trainees').where('id', '=', ids[3]!).execute();
    expect(await totals(provider)).toEqual({ fromCounts: 1, counted: 1 });
  });

  it('a rolled-back change leaves the count as it was', async () => {
    const provider = await createProviderWithToken(t.database.db);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: provider.auth,
      payload: { data: validTrainee({ last_name: 'Rollback' }) },
    });
    expect(created.statusCode).toBe(201);
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await trx.updateTable('trainees').set({ state: 'draft' }).where('provider_id', '=', provider.id).execute();
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    expect(await totals(provider)).toEqual({ fromCounts: 1, counted: 1 });
  });
});

describe('migration 2026-11-23T1400-trainee-list-counts', () => {
  it('counts the trainees already there when it runs, and down then up again keeps them', async () => {
    const provider = await createProviderWithToken(t.database.db);
    for (const name of ['Eve', 'Fay', 'Gus']) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: provider.auth,
        payload: { data: validTrainee({ first_names: name, last_name: `Backfill${name}` }) },
      });
      expect(response.statusCode).toBe(201);
    }
    const migrator = new Migrator({ db: t.database.db, provider: { getMigrations: async () => migrations } });
    const down = await migrator.migrateTo('2026-11-23T1300-trainee-list-index');
    expect(down.error).toBeUndefined();
    // Written while no trigger keeps counts: only the backfill can count it.
    await t.database.db
      .updateTable('trainees')
      .set({ state: 'draft' })
      .where('last_name', '=', 'BackfillGus')
      .execute();
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    expect(await totals(provider)).toEqual({ fromCounts: 2, counted: 2 });
  });
});
