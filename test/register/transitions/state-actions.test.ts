import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  registerFixture,
  snapshot,
  STATE_TRANSITION_BODY,
  today,
  UK_DEGREE,
  type RegisterFixture,
} from '../helpers.js';

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

async function audits(traineeId: string) {
  return f.database.db
    .selectFrom('trainee_audits')
    .selectAll()
    .where('trainee_id', '=', traineeId)
    .orderBy('id')
    .execute();
}

async function addPlacements(traineeId: string, count: number) {
  for (let i = 0; i < count; i++) {
    const res = await f.call('POST', 'v2026.1', `/trainees/${traineeId}/placements`, {
      data: { name: `School ${i}`, postcode: 'BN1 1AA' },
    });
    expect(res.statusCode).toBe(201);
  }
}

async function addDegree(traineeId: string) {
  const res = await f.call('POST', 'v2026.1', `/trainees/${traineeId}/degrees`, { data: UK_DEGREE });
  expect(res.statusCode).toBe(201);
}

describe('POST /trainees/{id}/defer', () => {
  it('defers a trainee with TRN: 200, state deferred, date and reason stored, audited', async () => {
    const id = await f.insertTrainee();
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/defer`, {
      data: { defer_date: today(), defer_reason: 'Illness' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toMatchObject({
      trainee_id: id,
      state: 'deferred',
      defer_date: today(),
      defer_reason: 'Illness',
    });
    // The response carries the trainee's new ETag, the one a GET now gives.
    const get = await f.call('GET', 'v2026.1', `/trainees/${id}`);
    expect(res.headers.etag).toBeDefined();
    expect(res.headers.etag).toBe(get.headers.etag);
    const rows = await audits(id);
    expect(rows.map((r) => r.action)).toEqual(['defer']);
    expect(rows[0]!.after).toMatchObject({ state: 'deferred', defer_date: today() });
    expect(rows[0]!.before).toMatchObject({ state: 'trn_received', defer_date: null });
  });

  it('honours If-Match: a stale ETag is a 412 that changes nothing, the current one goes through', async () => {
    const id = await f.insertTrainee();
    const stale = (await f.call('GET', 'v2026.1', `/trainees/${id}`)).headers.etag as string;
    await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { name: 'Moves the ETag' } });
    const before = await snapshot(f, 'v2026.1', id);
    const send = (etag: string) =>
      f.app.inject({
        method: 'POST',
        url: `/api/v2026.1/trainees/${id}/defer`,
        headers: { authorization: `Bearer ${f.provider.token}`, 'content-type': 'application/json', 'if-match': etag },
        payload: JSON.stringify({ data: { defer_date: today() } }),
      });
    const refused = await send(stale);
    expect(refused.statusCode).toBe(412);
    expect(refused.json().errors[0].error).toBe('PreconditionFailed');
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
    const accepted = await send(before.etag);
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().data.state).toBe('deferred');
  });

  it('defers from submitted_for_trn on v2025.0 too, the reason being optional', async () => {
    const id = await f.insertTrainee({ state: 'submitted_for_trn', trn: null });
    const res = await f.call('POST', 'v2025.0', `/trainees/${id}/defer`, { data: { defer_date: '2025-10-01' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ state: 'deferred', defer_date: '2025-10-01', defer_reason: null });
  });

  it.each([
    [{ defer_date: null }, ["defer_date can't be blank"]],
    [{ defer_date: '2025-02-30' }, ['defer_date is invalid']],
    [
      { defer_date: 'yesterday', defer_reason: 'x'.repeat(501) },
      ['defer_date is invalid', 'defer_reason is too long (maximum is 500 characters)'],
    ],
  ])('refuses %j with 422 and changes nothing', async (data, messages) => {
    const id = await f.insertTrainee();
    const before = await snapshot(f, 'v2026.1', id);
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/defer`, { data });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(unprocessable(...messages));
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('refuses a trainee that cannot be deferred from its state (after the body is valid)', async () => {
    for (const state of ['deferred', 'withdrawn', 'awarded', 'recommended_for_award', 'draft'] as const) {
      const id = await f.insertTrainee({ state });
      const before = await snapshot(f, 'v2026.1', id);
      const res = await f.call('POST', 'v2026.1', `/trainees/${id}/defer`, { data: { defer_date: today() } });
      expect(res.statusCode, state).toBe(422);
      expect(res.json()).toEqual(unprocessable('state is invalid must be one of [submitted_for_trn, trn_received]'));
      expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
    }
  });

  it('answers 404 for another provider’s trainee and an unknown id, 422 without data', async () => {
    const id = await f.insertTrainee();
    const other = await f.call(
      'POST',
      'v2026.1',
      `/trainees/${id}/defer`,
      { data: { defer_date: today() } },
      f.otherProvider.token,
    );
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Trainee(s) not found' }] });
    const unknown = await f.call('POST', 'v2026.1', '/trainees/nonexistent/defer', { data: { defer_date: today() } });
    expect(unknown.statusCode).toBe(404);
    const missing = await f.call('POST', 'v2026.1', `/trainees/${id}/defer`, { foo: { defer_date: today() } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({ errors: ['Param is missing or the value is empty or invalid: data'] });
    const unauthorized = await f.call(
      'POST',
      'v2026.1',
      `/trainees/${id}/defer`,
      { data: { defer_date: today() } },
      'not-a-valid-token',
    );
    expect(unauthorized.statusCode).toBe(401);
    expect((await snapshot(f, 'v2026.1', id)).body.state).toBe('trn_received');
  });
});

describe('POST /trainees/{id}/withdraw', () => {
  const valid = {
    withdrawal_date: today(),
    trigger: 'provider',
    future_interest: 'no',
    reasons: ['record_added_in_error'],
  };

  it('withdraws: 200, state withdrawn, the withdrawal fields echoed, audited', async () => {
    const id = await f.insertTrainee();
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/withdraw`, { data: valid });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      state: 'withdrawn',
      withdrawal_date: today(),
      withdrawal_reasons: ['record_added_in_error'],
      withdrawal_trigger: 'provider',
      withdrawal_future_interest: 'no',
    });
    const rows = await audits(id);
    expect(rows.map((r) => r.action)).toEqual(['withdraw']);
    expect(rows[0]!.after).toMatchObject({ state: 'withdrawn', withdrawal_reasons: ['record_added_in_error'] });
  });

  it('takes another_reason and safeguarding_concern_reasons with the reasons that need them', async () => {
    const id = await f.insertTrainee({ state: 'deferred' });
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/withdraw`, {
      data: {
        ...valid,
        reasons: ['had_to_withdraw_trainee_another_reason', 'safeguarding_concerns'],
        another_reason: 'Moved abroad',
        safeguarding_concern_reasons: 'Details',
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      state: 'withdrawn',
      withdrawal_another_reason: 'Moved abroad',
      withdrawal_safeguarding_concern_reasons: 'Details',
    });
  });

  it('uses withdraw_date in v2025.0, in the request, the messages and the response', async () => {
    const id = await f.insertTrainee();
    const missing = await f.call('POST', 'v2025.0', `/trainees/${id}/withdraw`, {
      data: { ...valid, withdrawal_date: undefined },
    });
    expect(missing.json()).toEqual(unprocessable('withdraw_date Choose a withdrawal date'));
    const { withdrawal_date: _unused, ...legacy } = valid;
    const res = await f.call('POST', 'v2025.0', `/trainees/${id}/withdraw`, {
      data: { ...legacy, withdraw_date: today() },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      state: 'withdrawn',
      withdraw_date: today(),
      withdraw_reasons: ['record_added_in_error'],
    });
    expect(res.json().data).not.toHaveProperty('withdrawal_date');
    // The v2025.0-rc alias is served by v2025.0.
    const rc = await f.insertTrainee();
    const viaAlias = await f.call('POST', 'v2025.0-rc', `/trainees/${rc}/withdraw`, {
      data: { ...legacy, withdraw_date: today() },
    });
    expect(viaAlias.statusCode).toBe(200);
    expect(viaAlias.json().data).toMatchObject({ state: 'withdrawn', withdraw_date: today() });
  });

  it.each([
    [{ ...valid, reasons: ['had_to_withdraw_trainee_another_reason'] }, ['another_reason Enter another reason']],
    [{ ...valid, reasons: ['safeguarding_concerns'] }, ['safeguarding_concern_reasons Enter the concerns']],
    [{ ...valid, withdrawal_date: null }, ['withdrawal_date Choose a withdrawal date']],
    [{ ...valid, withdrawal_date: '2025-08-31' }, ['withdrawal_date must be after itt_start_date']],
    [{ ...valid, withdrawal_date: '31/08/2025' }, ['withdrawal_date Choose a valid withdrawal date']],
    [{ ...valid, reasons: [] }, ['reasons Choose one or more reasons why the trainee withdrew from the course']],
    [
      { ...valid, trigger: 'trainee', reasons: ['record_added_in_error'] },
      ['reasons entered not valid for selected trigger eg unacceptable_behaviour for a trainee trigger'],
    ],
    [
      { reasons: ['invalid_reason'] },
      [
        'withdrawal_date Choose a withdrawal date',
        'reasons entered not valid for selected trigger eg unacceptable_behaviour for a trainee trigger',
        'future_interest is not included in the list',
        'trigger is not included in the list',
      ],
    ],
  ])('refuses %j with the real messages and changes nothing', async (data, messages) => {
    const id = await f.insertTrainee();
    const before = await snapshot(f, 'v2026.1', id);
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/withdraw`, { data });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(unprocessable(...messages));
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('is a StateTransitionError before ITT starts and from a closed state, in every version', async () => {
    const future = await f.insertTrainee({ itt_start_date: '2099-09-01', trainee_start_date: '2099-09-01' });
    for (const version of ['v2026.1', 'v2025.0']) {
      const res = await f.call('POST', version, `/trainees/${future}/withdraw`, { data: valid });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual(STATE_TRANSITION_BODY);
    }
    for (const state of ['withdrawn', 'awarded', 'recommended_for_award', 'draft'] as const) {
      const id = await f.insertTrainee({ state });
      const before = await snapshot(f, 'v2025.0', id);
      const res = await f.call('POST', 'v2025.0', `/trainees/${id}/withdraw`, {
        data: { ...valid, withdraw_date: today() },
      });
      expect(res.json(), state).toEqual(STATE_TRANSITION_BODY);
      expect(await snapshot(f, 'v2025.0', id)).toEqual(before);
    }
    const unknown = await f.call('POST', 'v2026.1', '/trainees/unknown-trainee/withdraw', { data: valid });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('POST /trainees/{id}/update-qts-or-eyts-status and recommend-for-qts', () => {
  it('recommends a trainee with a degree and two placements: 202, recommended_for_award, outcome date', async () => {
    const id = await f.insertTrainee();
    await addDegree(id);
    await addPlacements(id, 2);
    const started = Date.now();
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/update-qts-or-eyts-status`, {
      data: { qts_standards_met_date: today() },
    });
    expect(res.statusCode).toBe(202);
    const data = res.json().data;
    expect(data).toMatchObject({ state: 'recommended_for_award', outcome_date: today() });
    expect(Date.parse(data.recommended_for_award_at)).toBeGreaterThanOrEqual(Math.floor(started / 1000) * 1000);
    expect(res.headers.deprecation).toBeUndefined();
    expect((await audits(id)).at(-1)?.action).toBe('recommend_for_award');
  });

  it('answers on the deprecated alias the same way, with a Deprecation header and the successor link', async () => {
    const id = await f.insertTrainee();
    await addDegree(id);
    await addPlacements(id, 2);
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/recommend-for-qts`, {
      data: { qts_standards_met_date: today() },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json().data.state).toBe('recommended_for_award');
    expect(res.headers.deprecation).toBe('@1773964800');
    expect(res.headers.link).toBe(`</api/v2026.1/trainees/${id}/update-qts-or-eyts-status>; rel="successor-version"`);
  });

  it('serves update-qts-or-eyts-status on v2025.0 and v2026.0 too', async () => {
    for (const version of ['v2025.0', 'v2026.0']) {
      const id = await f.insertTrainee();
      await addDegree(id);
      await addPlacements(id, 2);
      const res = await f.call('POST', version, `/trainees/${id}/update-qts-or-eyts-status`, {
        data: { qts_standards_met_date: today() },
      });
      expect(res.statusCode, version).toBe(202);
    }
  });

  it.each([
    ['12', 'provider_led_postgrad', 0, 2],
    ['03', 'school_direct_salaried', 1, 2],
    ['15', 'iqts', 0, 1],
  ])('route %s (%s) with %i placements is refused until it has %i', async (route, name, have, need) => {
    const id = await f.insertTrainee({ training_route: route, ...(route === '15' ? { iqts_country: 'BO' } : {}) });
    await addDegree(id);
    await addPlacements(id, have);
    const before = await snapshot(f, 'v2026.1', id);
    const refused = await f.call('POST', 'v2026.1', `/trainees/${id}/update-qts-or-eyts-status`, {
      data: { qts_standards_met_date: today() },
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual(unprocessable(`placements must be at least ${need} for the ${name} training route`));
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
    await addPlacements(id, need - have);
    const accepted = await f.call('POST', 'v2026.1', `/trainees/${id}/update-qts-or-eyts-status`, {
      data: { qts_standards_met_date: today() },
    });
    expect(accepted.statusCode).toBe(202);
  });

  it.each([
    ['16', 'assessment only: a degree, no placements'],
    ['19', 'early years postgrad: a degree, no placements'],
  ])('route %s needs no placements (%s)', async (route) => {
    const id = await f.insertTrainee({
      training_route: route,
      ...(route === '19' ? { course_subject_1: '100510', course_age_range: '13920' } : {}),
    });
    await addDegree(id);
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/update-qts-or-eyts-status`, {
      data: { qts_standards_met_date: today() },
    });
    expect(res.statusCode).toBe(202);
  });

  it('needs no degree on an undergraduate route, but a degree on a postgraduate one', async () => {
    const undergrad = await f.insertTrainee({ training_route: '11' });
    await addPlacements(undergrad, 2);
    const ok = await f.call('POST', 'v2026.1', `/trainees/${undergrad}/update-qts-or-eyts-status`, {
      data: { qts_standards_met_date: today() },
    });
    expect(ok.statusCode).toBe(202);
    const postgrad = await f.insertTrainee({ training_route: '12' });
    await addPlacements(postgrad, 2);
    const refused = await f.call('POST', 'v2026.1', `/trainees/${postgrad}/update-qts-or-eyts-status`, {
      data: { qts_standards_met_date: today() },
    });
    expect(refused.json()).toEqual(unprocessable('degree_id must be completed before qts_standards_met_date'));
  });

  it.each([
    [
      { qts_standards_met_date: null },
      "qts_standards_met_date can't be blank. Enter a date the trainee met the QTS or EYTS requirements.",
    ],
    [{ qts_standards_met_date: '2025-13-01' }, 'qts_standards_met_date is invalid'],
    [{ qts_standards_met_date: '2099-01-01' }, 'qts_standards_met_date must not be in the future'],
    [{ qts_standards_met_date: '2025-08-31' }, 'qts_standards_met_date must be after itt_start_date'],
  ])('refuses %j', async (data, message) => {
    const id = await f.insertTrainee();
    await addDegree(id);
    await addPlacements(id, 2);
    const before = await snapshot(f, 'v2026.1', id);
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/update-qts-or-eyts-status`, { data });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(unprocessable(message));
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('lists every problem at once, the state last', async () => {
    const id = await f.insertTrainee({ state: 'submitted_for_trn', trn: null });
    const res = await f.call('POST', 'v2026.1', `/trainees/${id}/recommend-for-qts`, {
      data: { qts_standards_met_date: null },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(
      unprocessable(
        "qts_standards_met_date can't be blank. Enter a date the trainee met the QTS or EYTS requirements.",
        'degree_id must be completed before qts_standards_met_date',
        'placements must be at least 2 for the provider_led_postgrad training route',
        'state must be selected as trn_received',
      ),
    );
  });
});

describe('OpenAPI documents', () => {
  it('describe the action, placement and degree endpoints in each version’s own document', async () => {
    for (const version of ['v2025.0', 'v2026.0', 'v2026.1']) {
      const res = await f.app.inject({ method: 'GET', url: `/api/${version}/openapi.json` });
      expect(res.statusCode).toBe(200);
      const paths = res.json().paths;
      for (const path of [
        '/trainees/{trainee_id}/defer',
        '/trainees/{trainee_id}/withdraw',
        '/trainees/{trainee_id}/update-qts-or-eyts-status',
        '/trainees/{trainee_id}/recommend-for-qts',
        '/trainees/{trainee_id}/placements',
        '/trainees/{trainee_id}/placements/{placement_id}',
        '/trainees/{trainee_id}/degrees',
        '/trainees/{trainee_id}/degrees/{degree_id}',
      ]) {
        expect(paths[path], `${version} ${path}`).toBeDefined();
      }
      expect(Object.keys(paths['/trainees/{trainee_id}/degrees/{degree_id}']).sort()).toEqual([
        'delete',
        'get',
        'parameters',
        'patch',
        'put',
      ]);
      expect(paths['/trainees/{trainee_id}/recommend-for-qts'].post.deprecated).toBe(true);
      expect(paths['/trainees/{trainee_id}/degrees'].post.responses['409']).toBeDefined();
      const withdraw = paths['/trainees/{trainee_id}/withdraw'].post.requestBody.content['application/json'].schema;
      const dateField = version === 'v2025.0' ? 'withdraw_date' : 'withdrawal_date';
      expect(Object.keys(withdraw.properties.data.properties)).toContain(dateField);
    }
    // Not repeated per version in the service-wide document.
    const global = await f.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(Object.keys(global.json().paths).filter((p) => p.includes('/degrees'))).toEqual([]);
  });
});
