import { describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { validTrainee, type TestProvider, withRegisterApp } from '../helpers.js';

/** The list is assembled from serialized trainee bodies reused across requests: they must never be stale. */
let t: TestApp;
let p: TestProvider;
withRegisterApp((app, provider) => {
  t = app;
  p = provider;
});

const list = async (version: string) => {
  const response = await t.app.inject({ method: 'GET', url: `/api/${version}/trainees`, headers: p.auth });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  return response.json<{ data: Array<Record<string, unknown>>; meta: Record<string, number> }>();
};

describe('GET /trainees after changes', () => {
  it('shows each change at once: an update, a new placement, and the version’s own field names', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: p.auth,
      payload: { data: validTrainee({ last_name: 'Listed' }) },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.trainee_id as string;

    const first = await list('v2026.1');
    expect(first.data.map((d) => d.trainee_id)).toEqual([id]);
    expect(first.data[0]).toMatchObject({ last_name: 'Listed', placements: [] });
    expect(first.meta).toEqual({ current_page: 1, total_pages: 1, total_count: 1, per_page: 50 });

    const updated = await t.app.inject({
      method: 'PATCH',
      url: `/api/v2026.1/trainees/${id}`,
      headers: p.auth,
      payload: { data: { last_name: 'Renamed' } },
    });
    expect(updated.statusCode).toBe(200);
    expect((await list('v2026.1')).data[0]).toMatchObject({ last_name: 'Renamed' });

    const placement = await t.app.inject({
      method: 'POST',
      url: `/api/v2026.1/trainees/${id}/placements`,
      headers: p.auth,
      payload: { data: { urn: '900020', name: 'A school', postcode: 'GU1 1AA' } },
    });
    expect(placement.statusCode).toBe(201);
    const afterPlacement = (await list('v2026.1')).data[0]!;
    expect(afterPlacement.placements).toHaveLength(1);

    // The same trainee under v2025.0 uses that version's names, not the body cached for v2026.1.
    const legacy = (await list('v2025.0')).data[0]!;
    expect(legacy).toHaveProperty('course_subject_one');
    expect(legacy).not.toHaveProperty('course_subject_1');
    expect(legacy).toMatchObject({ last_name: 'Renamed' });

    // The list body equals the single-trainee body.
    const single = await t.app.inject({ method: 'GET', url: `/api/v2026.1/trainees/${id}`, headers: p.auth });
    expect(afterPlacement).toEqual(single.json());
  });
});
