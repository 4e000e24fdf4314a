import { describe, expect, it } from 'vitest';
import { enhanceErrors, traineeValidationError } from '../../src/register/errors.js';
import { inclusionMessage } from '../../src/register/reference-data.js';
import { addMonths, hashToken, tokenFromHeader } from '../../src/register/tokens.js';
import { messageInVersion, toCanonicalInput, toVersionOutput } from '../../src/register/versions/index.js';
import { academicCycleOf, isoDate } from '../../src/register/values.js';

describe('enhanced errors', () => {
  it('nests degree and placement attributes and keeps the rest flat', () => {
    expect(
      enhanceErrors([
        'graduation_year must be in the past, for example 2014',
        'graduation_year is invalid',
        "uk_degree has invalid reference data value of 'Bachelor of Arts'. Example values include '001'...",
        'degrees_attributes contains duplicate degrees',
        "placements_attributes name can't be blank",
        'disabilities contain duplicate values',
      ]),
    ).toEqual({
      degrees_attributes: {
        graduation_year: ['must be in the past, for example 2014', 'is invalid'],
        uk_degree: ["has invalid reference data value of 'Bachelor of Arts'. Example values include '001'..."],
      },
      placements_attributes: { name: ["can't be blank"] },
      disabilities: ['contain duplicate values'],
    });
  });

  it('counts errors in the message with the right plural', () => {
    expect((traineeValidationError(['a x']).body as { message: string }).message).toBe(
      'Validation failed: 1 error prohibited this trainee from being saved',
    );
    expect((traineeValidationError(['a x', 'b y']).body as { message: string }).message).toBe(
      'Validation failed: 2 errors prohibited this trainee from being saved',
    );
  });
});

describe('tokens', () => {
  it('takes `Bearer <token>` or the bare token, trimmed; never a lower-case scheme or an empty token', () => {
    expect(tokenFromHeader('Bearer abc')).toBe('abc');
    expect(tokenFromHeader('  abc  ')).toBe('abc');
    expect(tokenFromHeader('bearer abc')).toBe('bearer abc');
    expect(tokenFromHeader('Bearer   ')).toBeUndefined();
    expect(tokenFromHeader(undefined)).toBeUndefined();
  });

  it('hashes differently per environment and per secret', () => {
    const token = 'sandbox_00';
    expect(hashToken(token, 'sandbox', 's'.repeat(16))).not.toBe(hashToken(token, 'production', 's'.repeat(16)));
    expect(hashToken(token, 'sandbox', 's'.repeat(16))).not.toBe(hashToken(token, 'sandbox', 't'.repeat(16)));
    expect(hashToken(token, 'sandbox', 's'.repeat(16))).toMatch(/^[0-9a-f]{64}$/);
  });

  it('adds months without overflowing short months', () => {
    expect(addMonths('2026-08-31', 6)).toBe('2027-02-28');
    expect(addMonths('2026-01-15', 6)).toBe('2026-07-15');
  });
});

describe('version adapters', () => {
  it('v2025.0 maps its names to the canonical ones and drops the v2026 names and unknown fields', () => {
    expect(
      toCanonicalInput('v2025.0', {
        lead_partner_urn: '1',
        course_subject_one: 'a',
        training_partner_urn: '2',
        course_subject_1: 'b',
        iqts_country: 'BO',
      }),
    ).toEqual({
      training_partner_urn: '1',
      course_subject_1: 'a',
    });
    expect(toCanonicalInput('v2026.1', { lead_partner_urn: '1', course_subject_1: 'b', iqts_country: 'BO' })).toEqual({
      course_subject_1: 'b',
      iqts_country: 'BO',
    });
    expect(
      toVersionOutput('v2025.0', {
        course_subject_1: 'a',
        withdrawal_reasons: null,
        withdrawal_date: null,
        iqts_country: null,
      }),
    ).toEqual({
      course_subject_one: 'a',
      withdraw_reasons: null,
      withdraw_date: null,
    });
    expect(messageInVersion('v2025.0', "course_subject_1 can't be blank")).toBe("course_subject_one can't be blank");
    expect(messageInVersion('v2026.0', "course_subject_1 can't be blank")).toBe("course_subject_1 can't be blank");
  });
});

describe('validation helpers', () => {
  it('ISO dates only, real calendar dates', () => {
    expect(isoDate('2024-02-29')).toBe('2024-02-29');
    expect(isoDate('2023-02-29')).toBeUndefined();
    expect(isoDate('2024-03-15T13:15:37.880Z')).toBe('2024-03-15');
    expect(isoDate('15/03/2024')).toBeUndefined();
  });

  it('academic cycles start on 1 August', () => {
    expect(academicCycleOf('2025-07-31')).toBe(2024);
    expect(academicCycleOf('2025-08-01')).toBe(2025);
  });

  it('inclusion messages list all codes under 10, else the first 10', () => {
    expect(inclusionMessage('itt_aim', '3', 'itt_aim')).toBe(
      "itt_aim has invalid reference data value of '3'. Valid values are '201', '202'.",
    );
    expect(inclusionMessage('course_subject_1', 'x', 'course_subject')).toMatch(
      /Example values include ('\d+', ){9}'\d+'\.\.\.$/,
    );
  });
});
