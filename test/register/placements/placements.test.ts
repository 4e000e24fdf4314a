import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFixture, SCHOOL, snapshot, validTrainee, type RegisterFixture } from '../helpers.js';

let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

const unprocessable = (...messages: string[]) => ({
  errors: messages.map((message) => ({ error: 'UnprocessableEntity', message })),
});
const PLACEMENT_KEYS = ['address', 'created_at', 'name', 'placement_id', 'postcode', 'updated_at', 'urn'];

async function post(traineeId: string, data: unknown) {
  return f.call('POST', 'v2026.1', `/trainees/${traineeId}/placements`, { data });
}

describe('placements', () => {
  it('takes and refuses the same postcodes on POST /placements and inside POST /trainees (any spaces between the halves)', async () => {
    const id = await f.insertTrainee();
    const created = await f.call('POST', 'v2026.1', '/trainees', {
      data: validTrainee({
        first_names: 'Postcode',
        last_name: 'Spaces',
        placements_attributes: [{ name: 'Two Spaces School', postcode: 'BN1  1AA' }],
      }),
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.placements).toMatchObject([{ name: 'Two Spaces School', postcode: 'BN1  1AA' }]);
    const added = await post(id, { name: 'Two Spaces School', postcode: 'BN1  1AA' });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json().data).toMatchObject({ postcode: 'BN1  1AA' });

    for (const postcode of ['BN1 1A', 'BN11AA1']) {
      const refusedInCreate = await f.call('POST', 'v2026.1', '/trainees', {
        data: validTrainee({
          first_names: 'Postcode',
          last_name: 'Refused',
          placements_attributes: [{ name: 'School', postcode }],
        }),
      });
      expect(refusedInCreate.statusCode, postcode).toBe(422);
      expect(refusedInCreate.body).toContain(
        'placements_attributes postcode Enter a valid postcode (for example, BN1 1AA)',
      );
      const refused = await post(id, { name: 'School', postcode });
      expect(refused.statusCode, postcode).toBe(422);
      expect(refused.json()).toEqual(unprocessable('postcode Enter a valid postcode (for example, BN1 1AA)'));
    }
  });

  it('lists none as an empty list', async () => {
    const id = await f.insertTrainee();
    const res = await f.call('GET', 'v2026.1', `/trainees/${id}/placements`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [] });
  });

  it('adds a known school by URN: the school’s name, postcode and address; twice is two placements', async () => {
    const id = await f.insertTrainee();
    const first = await post(id, { urn: SCHOOL.urn, name: 'ignored', postcode: 'ZZ1 1ZZ' });
    expect(first.statusCode).toBe(201);
    const placement = first.json().data;
    expect(Object.keys(placement).sort()).toEqual(PLACEMENT_KEYS);
    expect(placement).toMatchObject({
      urn: SCHOOL.urn,
      name: SCHOOL.name,
      postcode: SCHOOL.postcode,
      address: `URN ${SCHOOL.urn}, ${SCHOOL.town}, ${SCHOOL.postcode}`,
    });
    expect(placement.placement_id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{24}$/);
    const second = await post(id, { urn: SCHOOL.urn });
    expect(second.statusCode).toBe(201);
    const list = await f.call('GET', 'v2026.1', `/trainees/${id}/placements`);
    expect(list.json().data.map((p: { placement_id: string }) => p.placement_id)).toEqual([
      placement.placement_id,
      second.json().data.placement_id,
    ]);
    const one = await f.call('GET', 'v2026.1', `/trainees/${id}/placements/${placement.placement_id}`);
    expect(one.json()).toEqual({ data: placement });
    // Ids are matched without regard to case, as the real citext slugs.
    const upper = await f.call(
      'GET',
      'v2026.1',
      `/trainees/${id.toUpperCase()}/placements/${placement.placement_id.toUpperCase()}`,
    );
    expect(upper.json()).toEqual({ data: placement });
    const trainee = await f.call('GET', 'v2026.1', `/trainees/${id}`);
    expect(trainee.json().placements).toHaveLength(2);
  });

  it('adds a school without URN by name and postcode, and special URNs have no address', async () => {
    const id = await f.insertTrainee();
    const byName = await post(id, { name: 'Hedgehogs Nursery', postcode: 'AB1 2CD' });
    expect(byName.statusCode).toBe(201);
    expect(byName.json().data).toMatchObject({
      urn: null,
      name: 'Hedgehogs Nursery',
      postcode: 'AB1 2CD',
      address: 'AB1 2CD',
    });
    const special = await post(id, { urn: '900020', name: 'Somewhere abroad' });
    expect(special.statusCode).toBe(201);
    expect(special.json().data).toMatchObject({ urn: '900020', name: 'Somewhere abroad', address: null });
  });

  it.each([
    [{ urn: null, name: null, postcode: null }, ["name can't be blank"]],
    [{ urn: '900020' }, ["name can't be blank"]],
    [{ urn: '12345', name: 'X' }, ['urn is invalid']],
    [{ name: 'X', postcode: 'not a postcode' }, ['postcode Enter a valid postcode (for example, BN1 1AA)']],
    [
      { urn: 'abcdef', postcode: '123' },
      ['urn is invalid', "name can't be blank", 'postcode Enter a valid postcode (for example, BN1 1AA)'],
    ],
  ])('refuses %j with the real messages and adds nothing', async (data, messages) => {
    const id = await f.insertTrainee();
    const before = await snapshot(f, 'v2026.1', id);
    const res = await post(id, data);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(unprocessable(...messages));
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('changes a placement partially with PUT and PATCH', async () => {
    const id = await f.insertTrainee();
    const linked = (await post(id, { urn: SCHOOL.urn })).json().data;
    // A new, unknown URN drops the school: the sent name, no postcode, the URN as address.
    const put = await f.call('PUT', 'v2026.1', `/trainees/${id}/placements/${linked.placement_id}`, {
      data: { urn: '654321', name: 'X' },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json().data).toMatchObject({
      placement_id: linked.placement_id,
      urn: '654321',
      name: 'X',
      postcode: null,
      address: 'URN 654321',
    });
    const patch = await f.call('PATCH', 'v2026.1', `/trainees/${id}/placements/${linked.placement_id}`, {
      data: { postcode: 'GU1 1AA' },
    });
    expect(patch.statusCode).toBe(200);
    expect(patch.json().data).toMatchObject({
      urn: '654321',
      name: 'X',
      postcode: 'GU1 1AA',
      address: 'URN 654321, GU1 1AA',
    });
    const audits = await f.database.db
      .selectFrom('trainee_audits')
      .select('action')
      .where('trainee_id', '=', id)
      .orderBy('id')
      .execute();
    expect(audits.map((a) => a.action)).toEqual(['placement.create', 'placement.update', 'placement.update']);
  });

  it('keeps a school link when a partial change does not resend the URN', async () => {
    const id = await f.insertTrainee();
    const linked = (await post(id, { urn: SCHOOL.urn })).json().data;
    const res = await f.call('PATCH', 'v2026.1', `/trainees/${id}/placements/${linked.placement_id}`, {
      data: { name: 'Renamed' },
    });
    expect(res.statusCode).toBe(200);
    // The school's own name wins while the placement is linked to it.
    expect(res.json().data).toMatchObject({ urn: SCHOOL.urn, name: SCHOOL.name, postcode: SCHOOL.postcode });
  });

  it('refuses a bad change and leaves the placement as it was', async () => {
    const id = await f.insertTrainee();
    const placement = (await post(id, { name: 'A school', postcode: 'BN1 1AA' })).json().data;
    const before = await snapshot(f, 'v2026.1', id);
    const res = await f.call('PUT', 'v2026.1', `/trainees/${id}/placements/${placement.placement_id}`, {
      data: { name: '', postcode: 'nope' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(
      unprocessable("name can't be blank", 'postcode Enter a valid postcode (for example, BN1 1AA)'),
    );
    const missing = await f.call('PUT', 'v2026.1', `/trainees/${id}/placements/${placement.placement_id}`, {
      data: {},
    });
    expect(missing.json()).toEqual({ errors: ['Param is missing or the value is empty or invalid: data'] });
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('answers 400 to a body that is not JSON, and adds nothing', async () => {
    const id = await f.insertTrainee();
    const before = await snapshot(f, 'v2026.1', id);
    const res = await f.app.inject({
      method: 'POST',
      url: `/api/v2026.1/trainees/${id}/placements`,
      headers: { authorization: `Bearer ${f.provider.token}`, 'content-type': 'application/json' },
      payload: '{"data": {"name": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ errors: [expect.any(String)] });
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('deletes a placement and returns the trainee without it', async () => {
    const id = await f.insertTrainee();
    const a = (await post(id, { name: 'A', postcode: 'BN1 1AA' })).json().data;
    const b = (await post(id, { name: 'B' })).json().data;
    const res = await f.call('DELETE', 'v2026.1', `/trainees/${id}/placements/${a.placement_id}`);
    expect(res.statusCode).toBe(200);
    const trainee = res.json().data;
    expect(trainee.trainee_id).toBe(id);
    expect(trainee.placements.map((p: { placement_id: string }) => p.placement_id)).toEqual([b.placement_id]);
    const gone = await f.call('GET', 'v2026.1', `/trainees/${id}/placements/${a.placement_id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Placement(s) not found' }] });
  });

  it('answers 404 for unknown trainees and placements, other trainees’ placements and other providers', async () => {
    const id = await f.insertTrainee();
    const otherTrainee = await f.insertTrainee();
    const placement = (await post(id, { name: 'A' })).json().data;
    const cases = [
      await f.call('DELETE', 'v2026.1', `/trainees/unknown/placements/${placement.placement_id}`),
      await f.call('DELETE', 'v2026.1', `/trainees/${id}/placements/unknown`),
      await f.call('PATCH', 'v2026.1', `/trainees/${otherTrainee}/placements/${placement.placement_id}`, {
        data: { name: 'B' },
      }),
      await f.call('GET', 'v2026.1', `/trainees/${id}/placements`, undefined, f.otherProvider.token),
      await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { name: 'B' } }, f.otherProvider.token),
    ];
    expect(cases.map((r) => r.statusCode)).toEqual([404, 404, 404, 404, 404]);
    expect(cases.map((r) => r.json().errors[0].message)).toEqual([
      'Trainee(s) not found',
      'Placement(s) not found',
      'Placement(s) not found',
      'Trainee(s) not found',
      'Trainee(s) not found',
    ]);
    const list = await f.call('GET', 'v2026.1', `/trainees/${id}/placements`);
    expect(list.json().data).toEqual([placement]);
  });
});
