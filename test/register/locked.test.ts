/**
 * The locked states: from v2026.1 a trainee that is recommended for award, withdrawn or awarded
 * cannot be modified (422 StateTransitionError, nothing changes); v2025.0 and v2026.0 have no such lock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import {
  registerFixture,
  type RegisterFixture,
  SCHOOL,
  snapshot,
  STATE_TRANSITION_BODY,
  UK_DEGREE,
  validTrainee,
} from './helpers.js';

let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

const LOCKED_STATES = ['recommended_for_award', 'withdrawn', 'awarded'] as const;

interface Target {
  traineeId: string;
  placementId: string;
  degreeId: string;
}

async function createTarget(lastName: string): Promise<Target> {
  const created = await f.call('POST', 'v2026.1', '/trainees', { data: validTrainee({ last_name: lastName }) });
  expect(created.statusCode, created.body).toBe(201);
  const traineeId = created.json().data.trainee_id as string;
  const placement = await f.call('POST', 'v2026.1', `/trainees/${traineeId}/placements`, { data: { urn: SCHOOL.urn } });
  const degree = await f.call('POST', 'v2026.1', `/trainees/${traineeId}/degrees`, { data: UK_DEGREE });
  return { traineeId, placementId: placement.json().data.placement_id, degreeId: degree.json().data.degree_id };
}

async function setState(traineeId: string, state: (typeof LOCKED_STATES)[number]) {
  await f.database.db.updateTable('trainees').set({ state }).where('id', '=', traineeId).execute();
}

type Operation = [name: string, run: (version: string, t: Target) => Promise<LightMyRequestResponse>, success: number];

/** Every modifying operation the lock covers. Deletions last, so the same target serves the whole list. */
const OPERATIONS: Operation[] = [
  ['PUT trainee', (v, t) => f.call('PUT', v, `/trainees/${t.traineeId}`, { data: { first_names: 'Grace' } }), 200],
  ['PATCH trainee', (v, t) => f.call('PATCH', v, `/trainees/${t.traineeId}`, { data: { middle_names: 'Ann' } }), 200],
  [
    'POST placement',
    (v, t) => f.call('POST', v, `/trainees/${t.traineeId}/placements`, { data: { name: 'New school' } }),
    201,
  ],
  [
    'PUT placement',
    (v, t) =>
      f.call('PUT', v, `/trainees/${t.traineeId}/placements/${t.placementId}`, { data: { urn: '654321', name: 'X' } }),
    200,
  ],
  [
    'PATCH placement',
    (v, t) =>
      f.call('PATCH', v, `/trainees/${t.traineeId}/placements/${t.placementId}`, { data: { postcode: 'BN1 1AA' } }),
    200,
  ],
  [
    'POST degree',
    (v, t) => f.call('POST', v, `/trainees/${t.traineeId}/degrees`, { data: { ...UK_DEGREE, subject: '100105' } }),
    201,
  ],
  [
    'PUT degree',
    (v, t) => f.call('PUT', v, `/trainees/${t.traineeId}/degrees/${t.degreeId}`, { data: { grade: '01' } }),
    200,
  ],
  [
    'PATCH degree',
    (v, t) => f.call('PATCH', v, `/trainees/${t.traineeId}/degrees/${t.degreeId}`, { data: { graduation_year: 2016 } }),
    200,
  ],
  ['DELETE placement', (v, t) => f.call('DELETE', v, `/trainees/${t.traineeId}/placements/${t.placementId}`), 200],
  ['DELETE degree', (v, t) => f.call('DELETE', v, `/trainees/${t.traineeId}/degrees/${t.degreeId}`), 200],
];

describe.each(LOCKED_STATES)('a trainee in %s', (state) => {
  it('cannot be modified on v2026.1: every operation is a 422 StateTransitionError and nothing changes', async () => {
    const target = await createTarget(`Locked-${state}`);
    await setState(target.traineeId, state);
    const before = await snapshot(f, 'v2026.1', target.traineeId);
    expect(before.body.state).toBe(state);
    for (const [name, run] of OPERATIONS) {
      const res = await run('v2026.1', target);
      expect(res.statusCode, name).toBe(422);
      expect(res.json(), name).toEqual(STATE_TRANSITION_BODY);
    }
    // The lock is checked before the body: even a body without `data` gets the StateTransitionError.
    const noData = await f.call('POST', 'v2026.1', `/trainees/${target.traineeId}/degrees`, { foo: 1 });
    expect(noData.json()).toEqual(STATE_TRANSITION_BODY);
    expect(await snapshot(f, 'v2026.1', target.traineeId)).toEqual(before);
    // Reading is never locked.
    const reads = [
      await f.call('GET', 'v2026.1', `/trainees/${target.traineeId}/placements`),
      await f.call('GET', 'v2026.1', `/trainees/${target.traineeId}/placements/${target.placementId}`),
      await f.call('GET', 'v2026.1', `/trainees/${target.traineeId}/degrees`),
      await f.call('GET', 'v2026.1', `/trainees/${target.traineeId}/degrees/${target.degreeId}`),
    ];
    expect(reads.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
  });

  it('can still be modified on v2025.0, which has no lock', async () => {
    const target = await createTarget(`Open-${state}`);
    await setState(target.traineeId, state);
    for (const [name, run, success] of OPERATIONS) {
      const res = await run('v2025.0', target);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(success);
    }
    const after = await f.call('GET', 'v2025.0', `/trainees/${target.traineeId}`);
    expect(after.json()).toMatchObject({ state, first_names: 'Grace', middle_names: 'Ann' });
    expect(after.json().placements.map((p: { name: string }) => p.name)).toEqual(['New school']);
    expect(after.json().degrees.map((d: { subject: string }) => d.subject)).toEqual(['100105']);
  });
});

describe('v2026.0', () => {
  it('has no lock either', async () => {
    const target = await createTarget('Open-v2026.0');
    await setState(target.traineeId, 'awarded');
    const res = await f.call('POST', 'v2026.0', `/trainees/${target.traineeId}/placements`, {
      data: { name: 'Another school' },
    });
    expect(res.statusCode).toBe(201);
  });
});
