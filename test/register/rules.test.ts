/** The pure rules behind the action endpoints, at their edges (the request tests cover the common paths). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkDegree,
  findDuplicateDegrees,
  graduationYearErrors,
  parseGraduationYear,
} from '../../src/register/degrees/validate.js';
import type { DegreeRow, PlacementRow } from '../../src/register/trainees/nested.js';
import { placementAddress } from '../../src/register/trainees/nested.js';
import { checkPlacement } from '../../src/register/placements/validate.js';
import {
  checkDefer,
  checkWithdraw,
  minimumPlacements,
  UNDERGRADUATE_ROUTES,
} from '../../src/register/transitions/validate.js';
import { checkTrainee, type ValidationContext } from '../../src/register/trainees/validate.js';
import { isoDate, todayUtc } from '../../src/register/values.js';
import { adapterFor, type RegisterVersion } from '../../src/register/versions/index.js';
import { UK_DEGREE, validTrainee } from './helpers.js';

const now = new Date('2026-11-23T12:00:00Z');

describe('dates', () => {
  it('accepts exactly the real calendar dates, and the date of a date-time', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2100-12-31T00:00:00Z'), noInvalidDate: true }),
        (date) => {
          const iso = date.toISOString();
          expect(isoDate(iso.slice(0, 10))).toBe(iso.slice(0, 10));
          expect(isoDate(iso)).toBe(iso.slice(0, 10));
        },
      ),
    );
    for (const bad of ['2025-02-29', '2025-04-31', '2025-13-01', '25-01-01', '2025/01/01', '', 20250101, null]) {
      expect(isoDate(bad), String(bad)).toBeUndefined();
    }
    expect(isoDate('2024-02-29')).toBe('2024-02-29');
  });

  it('takes graduation years from years, dates and integers, within 60 years up to next year', () => {
    expect(parseGraduationYear('2003')).toBe(2003);
    expect(parseGraduationYear('2003-06-30')).toBe(2003);
    expect(parseGraduationYear(2003)).toBe(2003);
    expect(parseGraduationYear(2003.5)).toBeNaN();
    expect(parseGraduationYear('')).toBeNull();
    expect(graduationYearErrors(2027, now)).toEqual([]);
    expect(graduationYearErrors(1967, now)).toEqual([]);
    expect(graduationYearErrors(1966, now)).toEqual(['graduation_year is invalid']);
    expect(graduationYearErrors(2028, now)).toEqual([
      'graduation_year must be in the past, for example 2014',
      'graduation_year is invalid',
    ]);
  });
});

describe('QTS/EYTS minimums', () => {
  it('needs 2 placements by default, 1 for iQTS, none for early years and assessment only; degrees except undergraduate routes', () => {
    const expected: Record<string, number> = {
      school_direct_salaried: 2,
      pg_teaching_apprenticeship: 2,
      provider_led_postgrad: 2,
      hpitt_postgrad: 2,
      opt_in_undergrad: 2,
      provider_led_undergrad: 2,
      teacher_degree_apprenticeship: 2,
      iqts: 1,
      assessment_only: 0,
      early_years_assessment_only: 0,
      early_years_undergrad: 0,
      early_years_postgrad: 0,
      early_years_salaried: 0,
    };
    for (const [route, minimum] of Object.entries(expected)) expect(minimumPlacements(route), route).toBe(minimum);
    expect([...UNDERGRADUATE_ROUTES].sort()).toEqual([
      'early_years_undergrad',
      'opt_in_undergrad',
      'provider_led_undergrad',
      'teacher_degree_apprenticeship',
    ]);
  });
});

describe('withdrawal', () => {
  it('checks reasons against the trainee list when the trigger is missing', () => {
    const result = checkWithdraw(
      { withdrawal_date: '2026-01-01', future_interest: 'yes', reasons: ['trainee_workload_issues'] },
      { itt_start_date: '2025-09-01' },
      'v2026.1',
    );
    expect(result.errors).toEqual(['trigger is not included in the list']);
  });

  it('keeps another_reason and safeguarding details only with the reasons that use them', () => {
    const result = checkWithdraw(
      {
        withdrawal_date: '2026-01-01',
        trigger: 'trainee',
        future_interest: 'unknown',
        reasons: ['trainee_workload_issues'],
        another_reason: 'x',
        safeguarding_concern_reasons: 'y',
      },
      { itt_start_date: '2025-09-01' },
      'v2026.1',
    );
    expect(result.errors).toEqual([]);
    expect(result.values).toMatchObject({
      another_reason: null,
      safeguarding_concern_reasons: null,
      date: '2026-01-01',
    });
  });
});

const placement = (over: Partial<PlacementRow>): PlacementRow => ({
  id: 'p',
  trainee_id: 't',
  urn: null,
  name: null,
  postcode: null,
  school_linked: false,
  town: null,
  created_at: now,
  updated_at: now,
  ...over,
});

describe('placements', () => {
  const school = { urn: '137404', name: 'Hedgehog Primary', postcode: 'GU1 1AA', town: 'Guildford' };

  it('computes the address the real service shows', () => {
    expect(
      placementAddress(placement({ urn: '137404', postcode: 'GU1 1AA', town: 'Guildford', school_linked: true })),
    ).toBe('URN 137404, Guildford, GU1 1AA');
    expect(placementAddress(placement({ urn: '654321', postcode: 'BN1 1AA' }))).toBe('URN 654321, BN1 1AA');
    expect(placementAddress(placement({ urn: '654321' }))).toBe('URN 654321');
    expect(placementAddress(placement({ postcode: 'BN1 1AA' }))).toBe('BN1 1AA');
    expect(placementAddress(placement({ urn: '900000', postcode: 'BN1 1AA' }))).toBeNull();
    expect(placementAddress(placement({}))).toBeNull();
  });

  it('unlinks a school only when a new URN is sent, then without the school’s name and postcode', () => {
    const linked = placement({
      urn: school.urn,
      name: school.name,
      postcode: school.postcode,
      town: school.town,
      school_linked: true,
    });
    expect(checkPlacement({ postcode: 'BN1 1AA' }, school, linked).values).toMatchObject({
      school_linked: true,
      name: school.name,
      postcode: school.postcode,
    });
    expect(checkPlacement({ urn: '654321' }, undefined, linked)).toEqual({
      values: { urn: '654321', name: null, postcode: null, town: null, school_linked: false },
      errors: ["name can't be blank"],
    });
    expect(checkPlacement({ urn: null, name: 'Own name' }, undefined, linked).values).toEqual({
      urn: null,
      name: 'Own name',
      postcode: null,
      town: null,
      school_linked: false,
    });
  });

  it('treats objects and arrays in text fields as absent, never as "[object Object]"', () => {
    expect(checkPlacement({ name: { first: 'x' }, postcode: ['BN1 1AA'] }, undefined)).toEqual({
      values: { urn: null, name: null, postcode: null, town: null, school_linked: false },
      errors: ["name can't be blank"],
    });
    expect(checkDefer({ defer_date: '2026-01-01', defer_reason: { a: 1 } }, 'trn_received')).toEqual({
      values: { defer_date: '2026-01-01', defer_reason: null },
      errors: [],
    });
  });

  it('accepts UK postcodes with or without the space (or several), in any case', () => {
    for (const postcode of ['BN1 1AA', 'bn11aa', 'SW1A 2AA', 'M1 1AE', 'GIR 0AA', 'EC1A1BB', 'BN1  1AA']) {
      expect(checkPlacement({ name: 'X', postcode }, undefined).errors, postcode).toEqual([]);
    }
    for (const postcode of ['BN1', '12345', 'BN1 1A', 'Q1 1AA!']) {
      expect(checkPlacement({ name: 'X', postcode }, undefined).errors, postcode).toEqual([
        'postcode Enter a valid postcode (for example, BN1 1AA)',
      ]);
    }
  });
});

const degree = (over: Partial<DegreeRow>): DegreeRow => ({
  id: 'd',
  trainee_id: 't',
  locale_code: 'uk',
  subject: '100425',
  subject_uuid: null,
  uk_degree: '014',
  uk_degree_uuid: null,
  non_uk_degree: null,
  institution: '1166',
  institution_uuid: null,
  grade: '02',
  grade_uuid: null,
  other_grade: null,
  country: null,
  graduation_year: 2015,
  created_at: now,
  updated_at: now,
  ...over,
});

describe('degrees', () => {
  it('is a UK degree when an institution is sent, whatever the country', () => {
    const result = checkDegree(
      { subject: '100425', uk_degree: '014', institution: '1166', grade: '02', graduation_year: 2015, country: 'FR' },
      undefined,
      now,
    );
    expect(result.errors).toEqual([]);
    expect(result.values).toMatchObject({ locale_code: 'uk', country: null });
  });

  it('switches locale on a change of country alone', () => {
    const result = checkDegree({ country: 'FR' }, degree({}), now);
    expect(result.values.locale_code).toBe('non_uk');
    expect(result.errors).toEqual(['non_uk_degree must be entered if specifying a previous non-UK degree']);
  });

  it('keeps a stored Other UK institution through a change, and needs a country for a non-UK degree', () => {
    const otherUk = degree({ institution: null, institution_uuid: '5070f34a-2887-e711-80d8-005056ac45bb' });
    const changed = checkDegree({ grade: '01' }, otherUk, now);
    expect(changed.errors).toEqual([]);
    expect(changed.values).toMatchObject({
      institution: null,
      institution_uuid: '5070f34a-2887-e711-80d8-005056ac45bb',
      grade: '01',
    });
    expect(checkDegree({ non_uk_degree: '083' }, degree({}), now).errors).toEqual([
      'country must be entered if specifying a previous non-UK degree',
    ]);
  });

  it('compares duplicates only on the fields the new degree has', () => {
    const existing = [degree({ id: 'a' }), degree({ id: 'b', subject: '100105' })];
    const looser = checkDegree(
      { subject: '100425', graduation_year: 2015, country: 'XF', uk_degree: '014', institution: '1166' },
      undefined,
      now,
    );
    expect(findDuplicateDegrees(looser.values, existing).map((d) => d.id)).toEqual(['a']);
    const different = checkDegree(
      { ...{ subject: '100425', graduation_year: 2016, uk_degree: '014', institution: '1166', grade: '02' } },
      undefined,
      now,
    );
    expect(findDuplicateDegrees(different.values, existing)).toEqual([]);
    const nothing = checkDegree({ institution: 'x' }, undefined, now);
    expect(findDuplicateDegrees(nothing.values, existing)).toEqual([]);
  });
});

describe('trainee check', () => {
  const createIn = (version: RegisterVersion): ValidationContext => ({
    adapter: adapterFor(version),
    today: todayUtc(),
    mode: 'create',
    existingDegreeCount: 0,
    knownSchoolUrns: new Set(),
  });

  it('returns the normalised attributes, degrees and placements, and leaves its input as it was', () => {
    const input = validTrainee({
      course_age_range: '13914',
      course_subject_1: '100346',
      course_subject_2: '100511',
      degrees_attributes: [UK_DEGREE],
      placements_attributes: [{ urn: '900000', name: 'Sent name', postcode: ' BN1 1AA ' }],
    });
    const sent = structuredClone(input);
    const checked = checkTrainee(input, createIn('v2025.0'));
    expect(checked.errors).toEqual([]);
    expect(input).toEqual(sent);
    // v2025.0 puts the primary subject first; trainee_start_date defaults to itt_start_date.
    expect(checked.values.attributes).toMatchObject({
      course_subject_1: '100511',
      course_subject_2: '100346',
      course_subject_3: null,
      trainee_start_date: input.itt_start_date,
    });
    expect(checked.values.degrees).toEqual([
      checkDegree(UK_DEGREE, undefined, new Date(`${todayUtc()}T00:00:00Z`)).values,
    ]);
    expect(checked.values.placements).toEqual([
      { urn: '900000', name: 'Placement outside England and Wales', postcode: 'BN1 1AA' },
    ]);
  });

  it('leaves an invalid nested degree out of its values and out of the duplicate comparison', () => {
    const checked = checkTrainee(
      validTrainee({ degrees_attributes: [UK_DEGREE, { ...UK_DEGREE, grade: null }, UK_DEGREE] }),
      createIn('v2026.1'),
    );
    expect(checked.errors).toEqual([
      'grade must be entered if specifying a previous UK degree or non-UK degree',
      'degrees_attributes contains duplicate degrees',
    ]);
    expect(checked.values.degrees).toHaveLength(2);
  });
});
