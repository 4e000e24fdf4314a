import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createProviderWithToken, currentCycle, validTrainee, type TestProvider } from '../helpers.js';
import { insertTraineeRow, duplicateLockKey, withDuplicateLocks } from '../../../src/register/trainees/repository.js';

let t: TestApp;
let p: TestProvider;
let other: TestProvider;

beforeAll(async () => {
  // Many requests from one token: the per-token rate limit is not under test here.
  t = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' });
  p = await createProviderWithToken(t.database.db);
  other = await createProviderWithToken(t.database.db);
  await t.database.db
    .insertInto('schools')
    .values({ urn: '131238', name: 'Hedgehog Primary', postcode: 'GU1 1AA', town: 'Guildford' })
    .execute();
  await t.database.db
    .insertInto('training_partners')
    .values([{ urn: '654321', ukprn: '87654321', name: 'Partner School' }])
    .execute();
});
afterAll(async () => {
  await t?.close();
});

type Version = 'v2025.0' | 'v2025.0-rc' | 'v2026.0' | 'v2026.1';

function post(version: Version, data: unknown, provider = p, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/api/${version}/trainees`,
    headers: { ...provider.auth, ...headers },
    payload: { data },
  });
}
function get(version: Version, id: string, provider = p) {
  return t.app.inject({ method: 'GET', url: `/api/${version}/trainees/${id}`, headers: provider.auth });
}
function patch(
  version: Version,
  id: string,
  data: unknown,
  headers: Record<string, string> = {},
  method: 'PATCH' | 'PUT' = 'PATCH',
) {
  return t.app.inject({
    method,
    url: `/api/${version}/trainees/${id}`,
    headers: { ...p.auth, ...headers },
    payload: { data },
  });
}

let unique = 0;
/** A valid trainee that does not duplicate any other (distinct last name). */
function fresh(overrides: Record<string, unknown> = {}) {
  unique += 1;
  return validTrainee({ last_name: `Doe${unique}`, ...overrides });
}

/** v2025.0 names for the fields v2026.0 renamed. */
function legacy(data: Record<string, unknown>) {
  const { course_subject_1, course_subject_2, course_subject_3, ...rest } = data;
  return {
    ...rest,
    course_subject_one: course_subject_1,
    course_subject_two: course_subject_2,
    course_subject_three: course_subject_3,
  };
}

const DEGREE = { grade: '02', subject: '100485', institution: '0117', uk_degree: '083', graduation_year: '2003' };

describe('POST /trainees', () => {
  it.each(['v2026.0', 'v2026.1'] as const)(
    '%s: creates a trainee in state submitted_for_trn (201, data, 24-character id)',
    async (version) => {
      const response = await post(
        version,
        fresh({ placements_attributes: [{ urn: '900020' }], degrees_attributes: [DEGREE] }),
      );
      expect(response.statusCode).toBe(201);
      const body = response.json().data;
      expect(body.trainee_id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{24}$/);
      expect(body).toMatchObject({
        state: 'submitted_for_trn',
        trn: null,
        ukprn: p.ukprn,
        record_source: 'api',
        course_subject_1: '100346',
        study_mode: '63',
        nationality: 'GB',
        disability_disclosure: 'disabled',
        disability1: '58',
        ethnicity: '997',
        course_min_age: 11,
        course_max_age: 16,
        course_education_phase: 'secondary',
        course_level: 'undergrad',
        course_year: 2,
      });
      expect(body.placements).toEqual([
        expect.objectContaining({ urn: '900020', name: 'Establishment does not have a URN', address: null }),
      ]);
      expect(body.degrees).toEqual([
        expect.objectContaining({
          subject: '100485',
          institution: '0117',
          grade: '02',
          graduation_year: 2003,
          country: null,
        }),
      ]);
      expect(response.headers.etag).toBe(`"${body.trainee_id}-0"`);
      const stored = await t.database.db
        .selectFrom('trainees')
        .selectAll()
        .where('id', '=', body.trainee_id)
        .executeTakeFirstOrThrow();
      expect(stored.provider_id).toBe(p.id);
    },
  );

  it.each(['v2025.0', 'v2025.0-rc'] as const)('%s: takes and returns the legacy field names', async (version) => {
    const response = await post(version, legacy(fresh({ course_subject_2: '100425' })));
    expect(response.statusCode).toBe(201);
    const body = response.json().data;
    expect(body).toMatchObject({ course_subject_one: '100346', course_subject_two: '100425', lead_partner_urn: null });
    expect(body).not.toHaveProperty('course_subject_1');
    expect(body).not.toHaveProperty('training_partner_urn');
    expect(body).not.toHaveProperty('iqts_country');
  });

  it('a renamed field is ignored under the other version’s name (as the real permit lists drop it)', async () => {
    const oldNameOnNew = await post('v2026.1', legacy(fresh()));
    expect(oldNameOnNew.statusCode).toBe(422);
    expect(oldNameOnNew.json().errors).toEqual(["course_subject_1 can't be blank"]);
    const newNameOnOld = await post('v2025.0', fresh());
    expect(newNameOnOld.statusCode).toBe(422);
    expect(newNameOnOld.json().errors).toEqual(["course_subject_one can't be blank"]);
  });

  it('lists every missing field with the real messages, in the real order', async () => {
    const response = await post('v2026.1', { email: 'Doe' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'Validation failed: 17 errors prohibited this trainee from being saved',
      errors: [
        "first_names can't be blank",
        "last_name can't be blank",
        "date_of_birth can't be blank",
        "sex can't be blank",
        "training_route can't be blank",
        "itt_start_date can't be blank",
        "itt_end_date can't be blank",
        "course_subject_1 can't be blank",
        "study_mode can't be blank",
        "hesa_id can't be blank",
        'email Enter an email address in the correct format, like name@example.com',
        "itt_aim can't be blank",
        'itt_qualification_aim must be entered if 202 selected for itt_aim',
        "course_year can't be blank",
        "course_age_range can't be blank",
        "fund_code can't be blank",
        "funding_method can't be blank",
      ],
    });
  });

  it.each([
    [{ provider_trainee_id: 'x'.repeat(51) }, ['provider_trainee_id is too long (maximum is 50 characters)']],
    [{ application_id: '12345678' }, ['application_id is too long (maximum is 7 characters)']],
    [{ date_of_birth: '2990-01-01' }, ['date_of_birth must be in the past']],
    [{ itt_start_date: '2023-02-30' }, ['itt_start_date is invalid']],
    [{ sex: '3' }, ["sex has invalid reference data value of '3'. Valid values are '10', '11', '12', '96', '99'."]],
    [
      { course_age_range: '1234' },
      [
        "course_age_range has invalid reference data value of '1234'. Example values include '13909', '13911', '13912', '13913', '13914', '13915', '13916', '13917', '13918', '13919'...",
      ],
    ],
    [{ course_year: 'abc' }, ['course_year is not a valid course year']],
    [{ course_subject_2: '100346' }, ['course_subject_2 might contain duplicate values']],
    [{ hesa_id: '123' }, ['hesa_id must be 13 or 17 characters']],
    [{ first_names: { nested: 'x' } }, ["first_names can't be blank"]],
    [
      { study_mode: 1 },
      ["study_mode has invalid reference data value of '1'. Valid values are '01', '02', '31', '63', '64'."],
    ],
    [{ disability2: '58' }, ['disabilities contain duplicate values']],
    [
      { training_route: 'provider_led_postgrad' },
      [
        "training_route has invalid reference data value of 'provider_led_postgrad'. Example values include '03', '09', '10', '11', '12', '14', '15', '16', '17', '18'...",
      ],
    ],
    [
      { training_route: '14', fund_code: '2', funding_method: 'D' },
      ["funding_method 'bursary' is not allowed when fund_code is '2' and course_subject_1 is 'biology'"],
    ],
    [
      { training_partner_ukprn: '99999999' },
      ["training_partner_ukprn is invalid. The UKPRN '99999999' does not match any known training partners"],
    ],
    [
      { training_partner_urn: '123456' },
      ["training_partner_urn is invalid. The URN '123456' does not match any known training partners"],
    ],
    [
      { employing_school_urn: '123456' },
      ["employing_school_id is invalid. The URN '123456' does not match any known schools"],
    ],
    [
      { training_route: '12', degrees_attributes: [] },
      ['degrees_attributes must be entered if specifying a postgraduate training_route'],
    ],
    [{ degrees_attributes: [DEGREE, DEGREE] }, ['degrees_attributes contains duplicate degrees']],
    [{ placements_attributes: [{ not_an_attribute: 'invalid' }] }, ["placements_attributes name can't be blank"]],
  ])('v2026.1 refuses %j with exactly %j and creates nothing', async (overrides, messages) => {
    const before = await t.database.db
      .selectFrom('trainees')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const response = await post('v2026.1', fresh(overrides));
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(messages);
    expect(response.json().message).toBe(
      `Validation failed: ${messages.length} error${messages.length === 1 ? '' : 's'} prohibited this trainee from being saved`,
    );
    const after = await t.database.db
      .selectFrom('trainees')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  it('dates: ISO only, start at most a year ahead, end after start and within the window (v2026.1)', async () => {
    const year = new Date().getUTCFullYear();
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [
        { itt_start_date: `${year + 2}-09-01`, itt_end_date: `${year + 3}-07-31` },
        ['itt_start_date must not be more than one year in the future'],
      ],
      [{ itt_end_date: '2020-01-01' }, ['itt_end_date must be after itt_start_date']],
      [
        {
          itt_start_date: `${year - 12}-09-01`,
          trainee_start_date: currentCycle().ittStart,
          itt_end_date: `${year - 11}-07-31`,
        },
        ['itt_end_date must be within the last 10 years'],
      ],
      [{ itt_end_date: `${year + 6}-07-31` }, ['itt_end_date must be within the next 5 years']],
      [{ trainee_start_date: '2023-04-31' }, ['trainee_start_date is invalid']],
      [{ date_of_birth: '01/01/1990' }, ['date_of_birth is invalid']],
    ];
    for (const [overrides, messages] of cases) {
      const response = await post('v2026.1', fresh(overrides));
      expect(response.statusCode, JSON.stringify(overrides)).toBe(422);
      expect(response.json().errors).toEqual(messages);
    }
    const defaulted = await post('v2026.1', fresh({ trainee_start_date: '' }));
    expect(defaulted.statusCode).toBe(201);
    expect(defaulted.json().data.trainee_start_date).toBe(defaulted.json().data.itt_start_date);
  });

  it('training initiatives must be offered in the trainee’s academic cycle', async () => {
    const cycle = currentCycle().year;
    const response = await post('v2026.1', fresh({ training_initiative: '025' }));
    if (cycle === 2025 || cycle === 2026) {
      expect(response.json().errors).toEqual([
        `training_initiative 'transition_to_teach' is not available in academic cycle '${cycle} to ${cycle + 1}'`,
      ]);
    }
    expect((await post('v2026.1', fresh({ training_initiative: '026' }))).statusCode).toBe(201);
    expect((await post('v2026.1', fresh({ training_initiative: 'now_teach' }))).json().errors[0]).toMatch(
      /^training_initiative has invalid reference data value of 'now_teach'/,
    );
  });

  it('funding method C sets the veterans bursary initiative, which has no code', async () => {
    const response = await post(
      'v2026.1',
      fresh({ fund_code: '7', funding_method: 'C', training_initiative: '026', course_subject_1: '100403' }),
    );
    expect(response.statusCode).toBe(201);
    expect(response.json().data).toMatchObject({ funding_method: 'C', fund_code: '7', training_initiative: null });
  });

  it('nested degrees: the real messages for a non-UK degree with only a country and for a far-future year', async () => {
    const nonUk = await post('v2026.1', fresh({ training_route: '12', degrees_attributes: [{ country: 'MX' }] }));
    expect(nonUk.json().errors).toEqual([
      'non_uk_degree must be entered if specifying a previous non-UK degree',
      'subject must be entered if specifying a previous UK degree or non-UK degree',
      'graduation_year must be entered if specifying a previous UK degree or non-UK degree',
    ]);
    const future = await post(
      'v2026.1',
      fresh({ training_route: '12', degrees_attributes: [{ ...DEGREE, graduation_year: '3000-01-01' }] }),
    );
    expect(future.json()).toEqual({
      message: 'Validation failed: 2 errors prohibited this trainee from being saved',
      errors: ['graduation_year must be in the past, for example 2014', 'graduation_year is invalid'],
    });
    // The same rules as POST /degrees: a UK degree needs its institution.
    const { institution: _omitted, ...withoutInstitution } = DEGREE;
    const noInstitution = await post(
      'v2026.1',
      fresh({ training_route: '12', degrees_attributes: [withoutInstitution] }),
    );
    expect(noInstitution.statusCode).toBe(422);
    expect(noInstitution.json().errors).toEqual(['institution must be entered if specifying a previous UK degree']);
    const nonUkOk = await post(
      'v2026.1',
      fresh({
        training_route: '12',
        degrees_attributes: [
          { subject: '100425', non_uk_degree: '083', graduation_year: 2015, country: 'GL', grade: '02' },
        ],
      }),
    );
    expect(nonUkOk.statusCode).toBe(201);
    expect(nonUkOk.json().data.degrees[0]).toMatchObject({
      country: 'GL',
      non_uk_degree: '083',
      uk_degree: null,
      institution: null,
      graduation_year: 2015,
    });
  });

  it('v2025.0 names the legacy fields in its messages and takes lead_partner_urn', async () => {
    const response = await post(
      'v2025.0',
      legacy(fresh({ course_subject_1: 'chemistry', lead_partner_urn: '123456', lead_partner_ukprn: '99999999' })),
    );
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([
      expect.stringMatching(
        /^course_subject_one has invalid reference data value of 'chemistry'\. Example values include /,
      ),
      "lead_partner_id is invalid. The URN '123456' does not match any known lead partners",
    ]);
    const ok = await post('v2025.0', legacy(fresh({ lead_partner_urn: '654321' })));
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data).toMatchObject({ lead_partner_urn: '654321', lead_partner_ukprn: '87654321' });
    // The v2026 name is not a v2025.0 field: ignored, the trainee has no partner.
    const ignored = await post('v2025.0', legacy(fresh({ training_partner_urn: '654321' })));
    expect(ignored.statusCode).toBe(201);
    expect(ignored.json().data.lead_partner_urn).toBeNull();
  });

  it('accepts known partners, schools and placements at a known school', async () => {
    const response = await post(
      'v2026.1',
      fresh({
        training_partner_urn: '654321',
        employing_school_urn: '131238',
        placements_attributes: [{ urn: '131238' }],
      }),
    );
    expect(response.statusCode).toBe(201);
    const body = response.json().data;
    expect(body).toMatchObject({
      training_partner_urn: '654321',
      training_partner_ukprn: '87654321',
      employing_school_urn: '131238',
    });
    expect(body.placements[0]).toMatchObject({
      urn: '131238',
      name: 'Hedgehog Primary',
      postcode: 'GU1 1AA',
      address: 'URN 131238, Guildford, GU1 1AA',
    });
  });

  it('several placements and degrees: the create response lists them as every later GET does', async () => {
    const created = await post(
      'v2026.1',
      fresh({
        training_route: '12',
        placements_attributes: [
          { urn: '900020' },
          { name: 'Hedgehogs Nursery', postcode: 'AB1 2CD' },
          { urn: '131238' },
        ],
        degrees_attributes: [
          DEGREE,
          { ...DEGREE, subject: '100425', graduation_year: '2001' },
          { ...DEGREE, subject: '100104' },
        ],
      }),
    );
    expect(created.statusCode).toBe(201);
    const body = created.json().data;
    expect(body.placements).toHaveLength(3);
    expect(body.degrees.map((d: { graduation_year: number }) => d.graduation_year)).toEqual([2001, 2003, 2003]);
    expect((await get('v2026.1', body.trainee_id)).json()).toEqual(body);
  });

  it('placements of one create list in the order sent (the real serial ids), in the body and GET …/placements', async () => {
    // Names that sort against the order sent, so neither name nor a random id could give this order by chance.
    const names = ['Zebra School', 'Apple School', 'Mango School', 'Banana School', 'Kiwi School'];
    const created = await post(
      'v2026.1',
      fresh({
        training_route: '12',
        placements_attributes: names.map((name) => ({ name, postcode: 'AB1 2CD' })),
        degrees_attributes: [DEGREE],
      }),
    );
    expect(created.statusCode).toBe(201);
    const body = created.json().data;
    expect(body.placements.map((pl: { name: string }) => pl.name)).toEqual(names);
    const listed = await t.app.inject({
      method: 'GET',
      url: `/api/v2026.1/trainees/${body.trainee_id}/placements`,
      headers: p.auth,
    });
    expect(listed.json().data.map((pl: { name: string }) => pl.name)).toEqual(names);
    // Every one shows the trainee's creation time.
    expect(new Set(body.placements.map((pl: { created_at: string }) => pl.created_at))).toEqual(
      new Set([body.created_at]),
    );
  });

  it('Enhanced-Errors: true returns the messages keyed by attribute', async () => {
    const response = await post('v2026.1', fresh({ disability2: '58', placements_attributes: [{}] }), p, {
      'enhanced-errors': 'true',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'Validation failed: 2 errors prohibited this trainee from being saved',
      errors: { disabilities: ['contain duplicate values'], placements_attributes: { name: ["can't be blank"] } },
    });
  });

  it('missing or empty data is 422, malformed JSON is 400', async () => {
    for (const payload of [
      { foo: { bar: 'Alice' } },
      { data: {} },
      { data: 'x' },
      [],
      { data: { not_a_field: 'x', trn: '1234567' } },
    ]) {
      const response = await t.app.inject({ method: 'POST', url: '/api/v2026.1/trainees', headers: p.auth, payload });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toEqual({ errors: ['Param is missing or the value is empty or invalid: data'] });
    }
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { ...p.auth, 'content-type': 'application/json' },
      payload: '{"data": ',
    });
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json())).toEqual(['errors']);
  });

  it('a duplicate of an existing trainee is 409 with the existing record in data; nothing is created', async () => {
    const first = await post('v2026.1', validTrainee({ last_name: 'Duplicate', first_names: 'Anne Marie' }));
    expect(first.statusCode).toBe(201);
    const second = await post(
      'v2026.1',
      validTrainee({ last_name: 'DUPLICATE', first_names: 'anne', email: 'other@example.com' }),
    );
    expect(second.statusCode).toBe(409);
    expect(second.json().errors).toEqual([{ error: 'Conflict', message: 'This trainee is already in Register' }]);
    expect(second.json().data).toHaveLength(1);
    expect(second.json().data[0].trainee_id).toBe(first.json().data.trainee_id);
    // Another first name and another email: not a duplicate.
    const third = await post(
      'v2026.1',
      validTrainee({ last_name: 'Duplicate', first_names: 'Beth', email: 'beth@example.com' }),
    );
    expect(third.statusCode).toBe(201);
    // Stored as a trainee with no candidate is (one statement checks and inserts that one), and read back the same.
    const unlike = (body: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(body).filter(
          ([key]) => !/^(trainee_id|last_name|created_at|updated_at|submitted_for_trn_at)$/.test(key),
        ),
      );
    const alone = await post(
      'v2026.1',
      validTrainee({ last_name: 'Alone', first_names: 'Beth', email: 'beth@example.com' }),
    );
    expect(alone.statusCode).toBe(201);
    expect(unlike(third.json().data)).toEqual(unlike(alone.json().data));
    expect((await get('v2026.1', third.json().data.trainee_id)).json()).toEqual(third.json().data);
    expect((await get('v2026.1', alone.json().data.trainee_id)).json()).toEqual(alone.json().data);
    // Another provider's trainee never counts.
    expect(
      (await post('v2026.1', validTrainee({ last_name: 'Duplicate', first_names: 'Anne' }), other)).statusCode,
    ).toBe(201);
    // Nor does the same person starting in another academic cycle.
    const { year } = currentCycle();
    const lastCycle = validTrainee({
      last_name: 'Duplicate',
      first_names: 'Anne',
      itt_start_date: `${year - 1}-09-01`,
      itt_end_date: `${year}-07-31`,
    });
    expect((await post('v2026.1', lastCycle)).statusCode).toBe(201);
  });
});

describe.each(['v2025.0', 'v2025.0-rc', 'v2026.0', 'v2026.1'] as const)('%s round trip', (version) => {
  it('create → get → list → update → get, each in this version’s field names', async () => {
    const provider = await createProviderWithToken(t.database.db);
    const subjectKey = version.startsWith('v2025.0') ? 'course_subject_two' : 'course_subject_2';
    const payload = version.startsWith('v2025.0')
      ? legacy(validTrainee({ course_subject_2: '100425' }))
      : validTrainee({ course_subject_2: '100425' });
    const created = await post(version, payload, provider);
    expect(created.statusCode).toBe(201);
    const body = created.json().data;
    expect(body).toMatchObject({ state: 'submitted_for_trn', [subjectKey]: '100425' });

    const fetched = await get(version, body.trainee_id, provider);
    expect(fetched.json()).toEqual(body);

    const list = await t.app.inject({
      method: 'GET',
      url: `/api/${version}/trainees?per_page=10&sort_order=asc&has_trn=false&status=in_training&since=2020-01-01&page=1&academic_cycle=${currentCycle().year}`,
      headers: provider.auth,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      data: [body],
      meta: { current_page: 1, total_pages: 1, total_count: 1, per_page: 10 },
    });
    const none = await t.app.inject({
      method: 'GET',
      url: `/api/${version}/trainees?status=withdrawn`,
      headers: provider.auth,
    });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual({ errors: [{ error: 'NotFound', message: 'No trainees found' }] });

    const updated = await t.app.inject({
      method: 'PUT',
      url: `/api/${version}/trainees/${body.trainee_id}`,
      headers: provider.auth,
      payload: { data: { [subjectKey]: '100321', middle_names: 'Q' } },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data).toMatchObject({ [subjectKey]: '100321', middle_names: 'Q', first_names: 'John' });
    expect((await get(version, body.trainee_id, provider)).json()).toEqual(updated.json().data);
  });
});

describe('concurrent duplicates', () => {
  it('a create waits for a concurrent create of a possible duplicate, then answers 409', async () => {
    const payload = validTrainee({ last_name: 'Race', first_names: 'Rita' });
    // Another create of the same trainee, still in its transaction.
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const other = withDuplicateLocks(
      t.database.db,
      [duplicateLockKey(p.id, String(payload.date_of_birth), 'RACE')],
      async (trx) => {
        await insertTraineeRow(trx, {
          id: 'RaceRaceRaceRaceRaceRace',
          provider_id: p.id,
          state: 'submitted_for_trn',
          first_names: 'Rita',
          last_name: 'Race',
          date_of_birth: String(payload.date_of_birth),
          sex: '11',
          training_route: '11',
          itt_start_date: String(payload.itt_start_date),
        });
        locked();
        await holding;
      },
    );
    await lockTaken;
    // `.then` starts the injected request now (an inject chain is lazy).
    let settled = false;
    const request = post('v2026.1', payload).then((r) => {
      settled = true;
      return r;
    });
    // The create is waiting for the other one's duplicate lock.
    let waiting = 0;
    for (let i = 0; i < 50 && waiting === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`.execute(
        t.database.db,
      );
      waiting = rows[0]!.n;
    }
    expect(waiting).toBe(1);
    expect(settled).toBe(false);
    release();
    await other;
    const response = await request;
    expect(response.statusCode).toBe(409);
    expect(response.json().data.map((d: { trainee_id: string }) => d.trainee_id)).toEqual(['RaceRaceRaceRaceRaceRace']);
    const rows = await t.database.db.selectFrom('trainees').select('id').where('last_name', '=', 'Race').execute();
    expect(rows).toHaveLength(1);
  });
});

describe('a create whose wait for a duplicate lock fails', () => {
  it('answers with an error and leaves its connection out of any transaction: the next create on it is stored', async () => {
    const small = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' });
    try {
      const provider = await createProviderWithToken(small.database.db);
      const payload = validTrainee({ last_name: 'Waiting', first_names: 'Wanda' });
      let release!: () => void;
      const holding = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const key = duplicateLockKey(provider.id, String(payload.date_of_birth), 'WAITING');
      const holder = withDuplicateLocks(small.database.db, [key], async () => {
        locked();
        await holding;
      });
      await lockTaken;
      const post = () =>
        small.app.inject({
          method: 'POST',
          url: '/api/v2026.1/trainees',
          headers: provider.auth,
          payload: { data: payload },
        });
      const refusing = post().then((r) => r);
      // Once the create waits for the lock, its statement is cancelled on the server (as a statement timeout or an
      // operator's pg_cancel_backend would): the connection stays open, inside the transaction the create began.
      let cancelled = false;
      for (let i = 0; i < 100 && !cancelled; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const { rows } = await sql<{ cancelled: boolean }>`
          select pg_cancel_backend(pid) as cancelled from pg_locks
          where locktype = 'advisory' and not granted
            and database = (select oid from pg_database where datname = current_database())`.execute(small.database.db);
        cancelled = rows.some((r) => r.cancelled);
      }
      expect(cancelled).toBe(true);
      expect((await refusing).statusCode).toBeGreaterThanOrEqual(500);
      release();
      await holder;
      // No pooled connection is left inside a transaction (an aborted one would fail whatever used it next).
      const { rows: open } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`.execute(small.database.db);
      expect(open).toEqual([{ n: 0 }]);
      const created = await post();
      expect(created.statusCode, created.body).toBe(201);
      const stored = await small.database.db
        .selectFrom('trainees')
        .select('id')
        .where('last_name', '=', 'Waiting')
        .execute();
      expect(stored).toEqual([{ id: created.json().data.trainee_id }]);
    } finally {
      await small.close();
    }
  });
});

describe('conditional rules by version', () => {
  it('primary age range: v2026.x requires course_subject_1 100511, v2025.0 moves it first', async () => {
    const v2026 = await post('v2026.1', fresh({ course_age_range: '13914', course_subject_1: '100346' }));
    expect(v2026.statusCode).toBe(422);
    expect(v2026.json().errors).toEqual([
      'course_subject_1 is invalid. It should be `100511` for the course_age_range provided',
    ]);
    expect((await post('v2026.0', fresh({ course_age_range: '13914', course_subject_1: '100346' }))).statusCode).toBe(
      422,
    );
    const ok = await post(
      'v2026.1',
      fresh({ course_age_range: '13914', course_subject_1: '100511', course_subject_2: '100346' }),
    );
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data).toMatchObject({
      course_subject_1: '100511',
      course_subject_2: '100346',
      course_education_phase: 'primary',
    });
    const v2025 = await post(
      'v2025.0',
      legacy(fresh({ course_age_range: '13914', course_subject_1: '100346', course_subject_2: '100511' })),
    );
    expect(v2025.statusCode).toBe(201);
    expect(v2025.json().data).toMatchObject({ course_subject_one: '100511', course_subject_two: '100346' });
  });

  it('early-years routes (v2026.1): course_subject_1 100510 and age range 13920', async () => {
    const wrongSubject = await post(
      'v2026.1',
      fresh({ training_route: '18', course_age_range: '13920', course_subject_1: '100346' }),
    );
    expect(wrongSubject.json().errors).toEqual([
      'course_subject_1 is invalid. It should be `100510` for the training_route provided',
    ]);
    const wrongRange = await post(
      'v2026.1',
      fresh({ training_route: '18', course_age_range: '13918', course_subject_1: '100510' }),
    );
    expect(wrongRange.json().errors).toEqual([
      'course_age_range is invalid. It should be `13920` for the training_route provided',
    ]);
    const notEarlyYears = await post('v2026.1', fresh({ course_age_range: '13920', course_subject_1: '100511' }));
    expect(notEarlyYears.json().errors).toEqual([
      'course_age_range is invalid. It can only be used for early years training routes',
    ]);
    const ok = await post(
      'v2026.1',
      fresh({ training_route: '18', course_age_range: '13920', course_subject_1: '100510' }),
    );
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data).toMatchObject({ course_qualification: 'EYTS', course_education_phase: 'early_years' });
  });

  it('routes 15–21 only from v2026.1; route 02 only in v2025.0', async () => {
    const onV2026 = await post(
      'v2026.0',
      fresh({ training_route: '18', course_age_range: '13920', course_subject_1: '100510' }),
    );
    // A known route is named by its name, as the real mapper turns the code into the route before validating.
    expect(onV2026.json().errors).toEqual([
      "training_route has invalid reference data value of 'early_years_undergrad'. Valid values are '03', '09', '10', '11', '12', '14'.",
    ]);
    expect(
      (await post('v2025.0', legacy(fresh({ training_route: '16', degrees_attributes: [DEGREE] })))).statusCode,
    ).toBe(422);
    expect(
      (await post('v2025.0', legacy(fresh({ training_route: '02', degrees_attributes: [DEGREE] })))).statusCode,
    ).toBe(201);
    expect((await post('v2026.1', fresh({ training_route: '02', degrees_attributes: [DEGREE] }))).statusCode).toBe(422);
  });

  it('study_mode is optional for routes 16 and 17 from v2026.1 only', async () => {
    const withoutMode = { training_route: '16', study_mode: undefined, degrees_attributes: [DEGREE] };
    const ok = await post('v2026.1', fresh(withoutMode));
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data.study_mode).toBeNull();
    const v2026 = await post('v2026.0', fresh({ ...withoutMode, training_route: '12' }));
    expect(v2026.json().errors).toContain("study_mode can't be blank");
  });

  it('iqts_country: required for route 15, blank otherwise, a known country (v2026.1)', async () => {
    const iqts = { training_route: '15', degrees_attributes: [DEGREE] };
    expect((await post('v2026.1', fresh(iqts))).json().errors).toEqual(["iqts_country can't be blank"]);
    expect((await post('v2026.1', fresh({ iqts_country: 'BO' }))).json().errors).toEqual([
      'iqts_country must be blank',
    ]);
    expect((await post('v2026.1', fresh({ ...iqts, iqts_country: 'InvalidCountry' }))).json().errors).toEqual([
      "iqts_country has invalid reference data value of 'InvalidCountry'. Example values include 'AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO', 'AR', 'AS'...",
    ]);
    const ok = await post('v2026.1', fresh({ ...iqts, iqts_country: 'BO' }));
    expect(ok.statusCode).toBe(201);
    expect(ok.json().data.iqts_country).toBe('BO');
    // Leaving the iQTS route clears the country.
    const changed = await patch('v2026.1', ok.json().data.trainee_id, { training_route: '12' });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().data).toMatchObject({ training_route: '12', iqts_country: null });
  });
});

describe('GET /trainees/{trainee_id}', () => {
  it('returns the trainee unwrapped with an ETag; another provider’s or an unknown id is 404', async () => {
    const created = (await post('v2026.1', fresh())).json().data;
    const response = await get('v2026.1', created.trainee_id);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(created);
    expect(response.headers.etag).toBe(`"${created.trainee_id}-0"`);
    const notModified = await t.app.inject({
      method: 'GET',
      url: `/api/v2026.1/trainees/${created.trainee_id}`,
      headers: { ...p.auth, 'if-none-match': response.headers.etag as string },
    });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    const stale = await t.app.inject({
      method: 'GET',
      url: `/api/v2026.1/trainees/${created.trainee_id}`,
      headers: { ...p.auth, 'if-none-match': '"other-0"' },
    });
    expect(stale.statusCode).toBe(200);
    for (const [id, provider] of [
      [created.trainee_id, other],
      ['nonexistent', p],
    ] as const) {
      const missing = await get('v2026.1', id, provider);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Trainee(s) not found' }] });
    }
  });
});

describe('PUT/PATCH /trainees/{trainee_id}', () => {
  it('updates some fields, re-validates the whole record, audits the change and moves the ETag', async () => {
    const created = (await post('v2026.1', fresh())).json().data;
    const response = await patch(
      'v2026.1',
      created.trainee_id,
      { first_names: 'Alice', provider_trainee_id: '99157234/2/01', trn: '1234567', state: 'awarded' },
      {},
      'PUT',
    );
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({
      trainee_id: created.trainee_id,
      first_names: 'Alice',
      provider_trainee_id: '99157234/2/01',
      last_name: created.last_name,
      trn: null,
      state: 'submitted_for_trn',
    });
    expect(response.headers.etag).toBe(`"${created.trainee_id}-1"`);
    const audits = await t.database.db
      .selectFrom('trainee_audits')
      .selectAll()
      .where('trainee_id', '=', created.trainee_id)
      .orderBy('id')
      .execute();
    expect(audits.map((a) => a.action)).toEqual(['create', 'update']);
    expect(audits[1]).toMatchObject({ provider_id: p.id, token_id: p.tokenId });
    expect((audits[1]!.before as Record<string, unknown>).first_names).toBe('John');
    expect((audits[1]!.after as Record<string, unknown>).first_names).toBe('Alice');
  });

  it('refuses invalid changes with 422 and changes nothing', async () => {
    const created = (await post('v2026.1', fresh())).json().data;
    const response = await patch('v2026.1', created.trainee_id, {
      first_names: 'x'.repeat(72),
      email: 'invalid',
      nationality: 'XX',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([
      'first_names is too long (maximum is 60 characters)',
      'email Enter an email address in the correct format, like name@example.com',
      "nationality has invalid reference data value of 'XX'. Example values include 'AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO', 'AR', 'AT'...",
    ]);
    expect((await get('v2026.1', created.trainee_id)).json()).toEqual(created);
  });

  it('clears a subject with null, resets ethnicity with null, replaces disabilities by key', async () => {
    const created = (
      await post('v2026.1', fresh({ course_subject_2: '100425', ethnicity: '160', disability2: '57' }))
    ).json().data;
    expect(created).toMatchObject({ ethnicity: '160', ethnic_group: 'white_ethnic_group' });
    const response = await patch('v2026.1', created.trainee_id, {
      course_subject_2: null,
      ethnicity: null,
      disability1: '55',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({
      course_subject_2: null,
      ethnicity: '997',
      ethnic_group: 'not_provided_ethnic_group',
      disability1: '55',
      disability2: '57',
    });
  });

  it('disability codes 95 and 98 give no_disability and disability_not_provided; degrees_attributes is ignored', async () => {
    const created = (await post('v2026.1', fresh({ training_route: '12', degrees_attributes: [DEGREE] }))).json().data;
    const none = await patch('v2026.1', created.trainee_id, { disability1: '95' });
    expect(none.json().data).toMatchObject({ disability_disclosure: 'no_disability', disability1: '95' });
    const refused = await patch('v2026.1', created.trainee_id, {
      disability1: '98',
      degrees_attributes: [{ ...DEGREE, subject: '100425' }],
    });
    expect(refused.statusCode).toBe(200);
    expect(refused.json().data.disability_disclosure).toBe('disability_not_provided');
    expect(refused.json().data.degrees).toEqual(created.degrees);
  });

  it('authentication runs before the body is read: bad JSON with a bad token is 401', async () => {
    const response = await t.app.inject({
      method: 'PUT',
      url: '/api/v2026.1/trainees/any',
      headers: { authorization: 'Bearer nope', 'content-type': 'application/json' },
      payload: '{bad',
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: 'Unauthorized' });
  });

  it('missing data is 422, malformed JSON 400, another provider’s trainee 404, a bad token 401 — none changes anything', async () => {
    const created = (await post('v2026.1', fresh())).json().data;
    const missing = await t.app.inject({
      method: 'PUT',
      url: `/api/v2026.1/trainees/${created.trainee_id}`,
      headers: p.auth,
      payload: { foo: { bar: 'Alice' } },
    });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({ errors: ['Param is missing or the value is empty or invalid: data'] });
    const bad = await t.app.inject({
      method: 'PUT',
      url: `/api/v2026.1/trainees/${created.trainee_id}`,
      headers: { ...p.auth, 'content-type': 'application/json' },
      payload: '{bad',
    });
    expect(bad.statusCode).toBe(400);
    const foreign = await t.app.inject({
      method: 'PATCH',
      url: `/api/v2026.1/trainees/${created.trainee_id}`,
      headers: other.auth,
      payload: { data: { first_names: 'Mallory' } },
    });
    expect(foreign.statusCode).toBe(404);
    const unauthorised = await t.app.inject({
      method: 'PATCH',
      url: `/api/v2026.1/trainees/${created.trainee_id}`,
      headers: { authorization: 'Bearer not-a-valid-token' },
      payload: { data: { first_names: 'Mallory' } },
    });
    expect(unauthorised.statusCode).toBe(401);
    expect((await get('v2026.1', created.trainee_id)).json()).toEqual(created);
  });

  it('If-Match with a stale ETag is 412 and changes nothing; the current one succeeds', async () => {
    const created = await post('v2026.1', fresh());
    const id = created.json().data.trainee_id;
    const tag = created.headers.etag as string;
    const first = await patch('v2026.1', id, { first_names: 'One' }, { 'if-match': tag });
    expect(first.statusCode).toBe(200);
    const stale = await patch('v2026.1', id, { first_names: 'Two' }, { 'if-match': tag });
    expect(stale.statusCode).toBe(412);
    expect((await get('v2026.1', id)).json().first_names).toBe('One');
    const current = await patch('v2026.1', id, { first_names: 'Three' }, { 'if-match': first.headers.etag as string });
    expect(current.statusCode).toBe(200);
  });

  it('a trainee in a locked state: 422 StateTransitionError on v2026.1, updatable on v2025.0 and v2026.0', async () => {
    for (const state of ['recommended_for_award', 'withdrawn', 'awarded'] as const) {
      const created = (await post('v2026.1', fresh())).json().data;
      await t.database.db.updateTable('trainees').set({ state }).where('id', '=', created.trainee_id).execute();
      const locked = await patch('v2026.1', created.trainee_id, { first_names: 'Locked' });
      expect(locked.statusCode).toBe(422);
      expect(locked.json()).toEqual({
        errors: [
          {
            error: 'StateTransitionError',
            message: 'It’s not possible to perform this action while the trainee is in its current state',
          },
        ],
      });
      expect((await get('v2026.1', created.trainee_id)).json().first_names).toBe('John');
      expect((await patch('v2025.0', created.trainee_id, { first_names: 'Old' })).statusCode).toBe(200);
      expect((await patch('v2026.0', created.trainee_id, { first_names: 'Older' })).statusCode).toBe(200);
    }
  });
});

describe('GET /trainees', () => {
  let lister: TestProvider;
  const ids: string[] = [];
  const cycle = currentCycle();

  beforeAll(async () => {
    lister = await createProviderWithToken(t.database.db);
    for (let i = 0; i < 6; i++) {
      const response = await post('v2026.1', validTrainee({ last_name: `List${i}` }), lister);
      ids.push(response.json().data.trainee_id);
    }
    // Distinct updated_at, oldest first; states and TRNs for the filters; one draft and one of last cycle.
    const db = t.database.db;
    for (const [i, id] of ids.entries()) {
      await db
        .updateTable('trainees')
        .set({ updated_at: new Date(Date.UTC(2026, 0, 1 + i)) })
        .where('id', '=', id)
        .execute();
    }
    await db.updateTable('trainees').set({ state: 'deferred' }).where('id', '=', ids[0]!).execute();
    await db
      .updateTable('trainees')
      .set({ state: 'trn_received', trn: '1234567' })
      .where('id', 'in', [ids[1]!, ids[2]!])
      .execute();
    await db.updateTable('trainees').set({ state: 'draft' }).where('id', '=', ids[5]!).execute();
    const lastCycle = (
      await post(
        'v2026.1',
        validTrainee({
          last_name: 'Old',
          itt_start_date: `${cycle.year - 1}-09-01`,
          itt_end_date: `${cycle.year}-07-31`,
        }),
        lister,
      )
    ).json().data;
    ids.push(lastCycle.trainee_id);
  });

  const list = (query = '', provider?: TestProvider) =>
    t.app.inject({ method: 'GET', url: `/api/v2026.1/trainees${query}`, headers: (provider ?? lister).auth });

  it('lists the provider’s trainees of the current cycle, newest first, without drafts, with meta', async () => {
    const response = await list();
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.data.map((d: { trainee_id: string }) => d.trainee_id)).toEqual([
      ids[4],
      ids[3],
      ids[2],
      ids[1],
      ids[0],
    ]);
    expect(body.meta).toEqual({ current_page: 1, total_pages: 1, total_count: 5, per_page: 50 });
    expect(body.data[0].placements).toEqual([]);
  });

  it('academic_cycle selects another cycle; an unknown one is 422 keyed by parameter', async () => {
    const previous = await list(`?academic_cycle=${cycle.year - 1}`);
    expect(previous.json().data.map((d: { trainee_id: string }) => d.trainee_id)).toEqual([ids[6]]);
    const bad = await list('?academic_cycle=not-a-number');
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({
      message: 'Validation failed: 1 error prohibited this request being run',
      errors: { academic_cycle: ['not-a-number is not a valid academic cycle year'] },
    });
  });

  it('a trainee’s cycle runs from 1 August to 31 July of its trainee_start_date, else its itt_start_date', async () => {
    const boundary = await createProviderWithToken(t.database.db);
    const created: string[] = [];
    for (const name of ['August', 'July', 'StartedLater']) {
      created.push((await post('v2026.1', validTrainee({ last_name: name }), boundary)).json().data.trainee_id);
    }
    const db = t.database.db;
    await db
      .updateTable('trainees')
      .set({ itt_start_date: `${cycle.year}-08-01`, trainee_start_date: null })
      .where('id', '=', created[0]!)
      .execute();
    await db
      .updateTable('trainees')
      .set({ itt_start_date: `${cycle.year}-07-31`, trainee_start_date: null })
      .where('id', '=', created[1]!)
      .execute();
    await db
      .updateTable('trainees')
      .set({ itt_start_date: `${cycle.year - 1}-09-01`, trainee_start_date: `${cycle.year}-08-01` })
      .where('id', '=', created[2]!)
      .execute();
    const idsOf = async (query: string) =>
      (await list(query, boundary))
        .json()
        .data.map((d: { trainee_id: string }) => d.trainee_id)
        .sort();
    expect(await idsOf(`?academic_cycle=${cycle.year}`)).toEqual([created[0], created[2]].sort());
    expect(await idsOf(`?academic_cycle=${cycle.year - 1}`)).toEqual([created[1]]);
  });

  it('status filters; an unknown status is 422', async () => {
    expect((await list('?status=deferred')).json().data.map((d: { trainee_id: string }) => d.trainee_id)).toEqual([
      ids[0],
    ]);
    expect((await list('?status=in_training')).json().meta.total_count).toBe(4);
    const bad = await list('?status=invalid_state');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual({ status: ['invalid_state is not a valid status'] });
  });

  it('since includes trainees updated at or after it; an invalid date is 422', async () => {
    const since = await list('?since=2026-01-03T00:00:00.000Z');
    expect(since.json().data.map((d: { trainee_id: string }) => d.trainee_id)).toEqual([ids[4], ids[3], ids[2]]);
    expect((await list('?since=2026-01-03')).json().meta.total_count).toBe(3);
    expect((await list('?since=2026-01-03T01:00:00+01:00')).json().meta.total_count).toBe(3);
    expect((await list('?since=2026-01-03T01:00:00%2B01:00')).json().meta.total_count).toBe(3);
    expect((await list('?since=2026-01-03T00:00:01')).json().meta.total_count).toBe(2);
    const bad = await list('?since=2023-13-01');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual({ since: ['2023-13-01 is not a valid date'] });
  });

  it('has_trn filters with and without a TRN; empty means all', async () => {
    expect((await list('?has_trn=true')).json().meta.total_count).toBe(2);
    expect((await list('?has_trn=false')).json().meta.total_count).toBe(3);
    expect((await list('?has_trn=')).json().meta.total_count).toBe(5);
  });

  it('pages with page and per_page; per_page is capped at 1000', async () => {
    const second = await list('?page=2&per_page=2');
    expect(second.json().data.map((d: { trainee_id: string }) => d.trainee_id)).toEqual([ids[2], ids[1]]);
    expect(second.json().meta).toEqual({ current_page: 2, total_pages: 3, total_count: 5, per_page: 2 });
    expect((await list('?per_page=5000')).json().meta.per_page).toBe(1000);
  });

  it('sort_order asc reverses the order; another value is 422', async () => {
    expect((await list('?sort_order=asc')).json().data.map((d: { trainee_id: string }) => d.trainee_id)).toEqual([
      ids[0],
      ids[1],
      ids[2],
      ids[3],
      ids[4],
    ]);
    const bad = await list('?sort_order=sideways');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual({ sort_order: ['is not included in the list'] });
  });

  it('no results is 404 "No trainees found" (past the last page, per_page=0, a provider with none)', async () => {
    const empty = await createProviderWithToken(t.database.db);
    for (const response of [await list('?page=9'), await list('?per_page=0'), await list('', empty)]) {
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ error: 'NotFound', message: 'No trainees found' }] });
    }
  });

  it('v2025.0 lists with its own field names', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/v2025.0/trainees?per_page=1',
      headers: lister.auth,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data[0]).toHaveProperty('course_subject_one', '100346');
    expect(response.json().data[0]).not.toHaveProperty('course_subject_1');
  });
});
