import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { receiveTrn } from '../../src/register/transitions/service.js';
import { appendTraineeCreated } from '../../src/register/events/service.js';
import { deprecateVersion, publishVersion, withdrawVersion } from '../../src/statistics/lifecycle/service.js';
import { purgeEvents } from '../../src/events/outbox-repository.js';
import { registerFixture, SCHOOL, UK_DEGREE, validTrainee, type RegisterFixture } from '../register/helpers.js';
import { createDataSet, importFixtureVersion } from '../helpers/statistics.js';

let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

type Page = { data: Array<Record<string, any>>; meta: { next_cursor: string; has_more: boolean } };

async function feed(version: string, query = '', token?: string): Promise<Page> {
  const res = await f.call('GET', version, `/events${query}`, undefined, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Every event of the feed after `after`, following next cursors. */
async function all(version: string, filters = '', token?: string, after?: string) {
  const events: Array<Record<string, any>> = [];
  let cursor = after;
  for (;;) {
    const page = await feed(version, `?limit=2${filters}${cursor ? `&after=${cursor}` : ''}`, token);
    events.push(...page.data);
    cursor = page.meta.next_cursor;
    if (!page.meta.has_more) return { events, cursor };
  }
}

const today = () => new Date().toISOString().slice(0, 10);

describe('register events', () => {
  let traineeId: string;
  let placementId: string;
  let before: string;

  beforeAll(async () => {
    before = (await all('v2026.1')).cursor;
    const created = await f.call('POST', 'v2026.1', '/trainees', { data: validTrainee({ first_names: 'Ada' }) });
    expect(created.statusCode, created.body).toBe(201);
    traineeId = created.json().data.trainee_id;
    expect(
      (
        await f.call('PATCH', 'v2026.1', `/trainees/${traineeId}`, {
          data: { course_subject_1: '100425', first_names: 'Ada May' },
        })
      ).statusCode,
    ).toBe(200);
    const placement = await f.call('POST', 'v2026.1', `/trainees/${traineeId}/placements`, {
      data: { urn: SCHOOL.urn },
    });
    placementId = placement.json().data.placement_id;
    expect(
      (await f.call('PATCH', 'v2026.1', `/trainees/${traineeId}/placements/${placementId}`, { data: { name: 'x' } }))
        .statusCode,
    ).toBe(200);
    expect((await f.call('POST', 'v2026.1', `/trainees/${traineeId}/degrees`, { data: UK_DEGREE })).statusCode).toBe(
      201,
    );
    expect((await f.call('DELETE', 'v2026.1', `/trainees/${traineeId}/placements/${placementId}`)).statusCode).toBe(
      200,
    );
    await receiveTrn(f.database.db, traineeId, '1234567', 'sandbox');
    const withdrawn = await f.call('POST', 'v2026.1', `/trainees/${traineeId}/withdraw`, {
      data: {
        withdrawal_date: today(),
        trigger: 'provider',
        future_interest: 'no',
        reasons: ['record_added_in_error'],
      },
    });
    expect(withdrawn.statusCode, withdrawn.body).toBe(200);
    // A refused write (the trainee is withdrawn and locked in v2026.1) leaves no event.
    expect(
      (await f.call('PATCH', 'v2026.1', `/trainees/${traineeId}`, { data: { first_names: 'No' } })).statusCode,
    ).toBe(422);
  });

  it('lists every change in commit order, across pages, with the fields and state changes', async () => {
    const { events } = await all('v2026.1', '', undefined, before);
    expect(events.map((e) => e.type)).toEqual([
      'trainee.created',
      'trainee.updated',
      'placement.created',
      'placement.updated',
      'degree.created',
      'placement.deleted',
      'trainee.state_changed',
      'trainee.state_changed',
    ]);
    expect(events.every((e) => e.environment === 'sandbox')).toBe(true);
    expect(events[0]).toMatchObject({
      resource: { type: 'trainee', id: traineeId },
      data: { trainee_id: traineeId, state: 'submitted_for_trn' },
    });
    expect(events[1]!.data.changed_fields.sort()).toEqual(['course_subject_1', 'first_names']);
    expect(events[2]).toMatchObject({
      resource: { type: 'placement', id: placementId, trainee_id: traineeId },
      data: { placement: { urn: SCHOOL.urn } },
    });
    expect(events[5]).toMatchObject({
      type: 'placement.deleted',
      data: { placement_id: placementId, placement: null },
    });
    expect(events[6]!.data).toMatchObject({
      from: 'submitted_for_trn',
      to: 'trn_received',
      reason: 'trn_received',
      changes: { trn: '1234567' },
    });
    expect(events[7]!.data).toMatchObject({
      from: 'trn_received',
      to: 'withdrawn',
      reason: 'withdrawal',
      changes: { withdrawal_date: today() },
    });
    // Cursors are strictly increasing and unique; ids are uuids.
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it('uses the field names of the version read from', async () => {
    const { events } = await all('v2025.0', '', undefined, before);
    const updated = events.find((e) => e.type === 'trainee.updated')!;
    expect(updated.data.changed_fields.sort()).toEqual(['course_subject_one', 'first_names']);
    const withdrawal = events.find((e) => e.data.reason === 'withdrawal')!;
    expect(withdrawal.data.changes).toHaveProperty('withdraw_date', today());
    expect(withdrawal.data.changes).toHaveProperty('withdraw_reasons');
    expect(withdrawal.data.changes).not.toHaveProperty('withdrawal_date');
  });

  it('filters by type and by resource (a trainee includes its placements and degrees)', async () => {
    const byType = await all('v2026.1', '&type=placement.created,placement.deleted', undefined, before);
    expect(byType.events.map((e) => e.type)).toEqual(['placement.created', 'placement.deleted']);
    const byPlacement = await all('v2026.1', `&resource=${placementId}`, undefined, before);
    expect(byPlacement.events.map((e) => e.type)).toEqual([
      'placement.created',
      'placement.updated',
      'placement.deleted',
    ]);
    expect((await all('v2026.1', `&resource=${traineeId}`, undefined, before)).events).toHaveLength(8);
    const unknown = await f.call('GET', 'v2026.1', '/events?type=trainee.eaten');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors[0]).toMatch(/Unknown event type "trainee.eaten"/);
  });

  it('shows a provider only its own events', async () => {
    const other = await all('v2026.1', '', f.otherProvider.token, before);
    expect(other.events).toEqual([]);
    const created = await f.call(
      'POST',
      'v2026.1',
      '/trainees',
      { data: validTrainee({ first_names: 'Other', email: 'o@example.com' }) },
      f.otherProvider.token,
    );
    expect(created.statusCode).toBe(201);
    expect((await all('v2026.1', '', f.otherProvider.token, before)).events.map((e) => e.resource.id)).toEqual([
      created.json().data.trainee_id,
    ]);
    expect((await all('v2026.1', '', undefined, before)).events.map((e) => e.resource.id)).not.toContain(
      created.json().data.trainee_id,
    );
  });

  it('keeps production and sandbox apart: a production event never shows in the sandbox feed', async () => {
    // Each environment runs on its own database (tokens.ts refuses a mixed one); the events carry their environment
    // too, and a feed reads only its instance's. A production event written into this database stays invisible.
    await f.database.db
      .transaction()
      .execute((trx) =>
        appendTraineeCreated(
          trx,
          { providerId: f.provider.id, environment: 'production' },
          { id: 'production-only', state: 'submitted_for_trn' },
        ),
      );
    const ids = (await all('v2026.1', '', undefined, before)).events.map((e) => e.resource.id);
    expect(ids).toContain(traineeId);
    expect(ids).not.toContain('production-only');
  });

  it('refuses a malformed cursor (400) and one older than retention (410, with what to do)', async () => {
    expect((await f.call('GET', 'v2026.1', '/events?after=nope')).statusCode).toBe(400);
    const old = before;
    await purgeEvents(f.database.db, 90, new Date(Date.now() + 100 * 86_400_000));
    const gone = await f.call('GET', 'v2026.1', `/events?after=${old}`);
    expect(gone.statusCode).toBe(410);
    expect(gone.json().errors[0].message).toMatch(/kept 90 days.*Re-read the current state/);
    const statistics = await f.app.inject({ method: 'GET', url: `/v1/events?after=${old}` });
    expect(statistics.statusCode).toBe(410);
    expect(statistics.json()).toMatchObject({ status: 410, title: 'Gone' });
  });
});

describe('statistics events', () => {
  it('publishes data set and version events with the change summary and links', async () => {
    const start = (await f.app.inject({ method: 'GET', url: '/v1/events' })).json().nextCursor;
    const dataSetId = await createDataSet(f.database.db, { title: 'Events' });
    await importFixtureVersion(f.database, { dataSetId, version: '1.0' });
    await importFixtureVersion(f.database, { dataSetId, version: '1.1', status: 'Draft' });
    await publishVersion(f.database.db, dataSetId, '1.1');
    await deprecateVersion(f.database.db, dataSetId, '1.0');
    await withdrawVersion(f.database.db, dataSetId, '1.0');
    const res = await f.app.inject({ method: 'GET', url: `/v1/events?after=${start}&resource=${dataSetId}` });
    expect(res.statusCode).toBe(200);
    const events = res.json().events as Array<Record<string, any>>;
    expect(events.map((e) => [e.type, e.data.version?.number ?? null])).toEqual([
      ['data_set.created', null],
      ['data_set_version.published', '1.0'],
      ['data_set_version.published', '1.1'],
      ['data_set_version.deprecated', '1.0'],
      ['data_set_version.withdrawn', '1.0'],
    ]);
    const published = events[2]!;
    expect(published).toMatchObject({ resource: { type: 'data_set_version', id: `${dataSetId}@1.1`, dataSetId } });
    expect(published.data.version).toMatchObject({ number: '1.1', type: 'Minor', status: 'Published' });
    // The change summary is what the changes endpoint answers.
    const changes = await f.app.inject({ method: 'GET', url: `/v1/data-sets/${dataSetId}/versions/1.1/changes` });
    expect(published.data.changes).toEqual(changes.json());
    for (const [name, href] of Object.entries(
      published.data.links as Record<string, { href: string; method: string }>,
    )) {
      const linked = await f.app.inject({
        method: href.method as 'GET' | 'POST',
        url: href.href,
        ...(href.method === 'POST' ? { payload: {} } : {}),
      });
      expect(linked.statusCode, `${name} ${href.href}`).toBe(200);
    }
    // Register events never show in the public feed.
    expect(res.json().events.every((e: any) => e.type.startsWith('data_set'))).toBe(true);
  });
});
