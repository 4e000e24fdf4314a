/**
 * Degree input rules: UK or non-UK from the country (and institution), codes checked against
 * the reference data, graduation year window, and duplicate detection against the trainee's other degrees.
 */
import type { Selectable } from 'kysely';
import type { TraineeDegreesTable } from '../tables.js';
import type { DegreeRow } from '../trainees/nested.js';
import { isBlankOrEmptyList, type Checked } from '../values.js';
import { inclusionMessage, otherUkInstitutionId, referenceId } from './reference-codes.js';

type Body = Record<string, unknown>;

/** Degrees one trainee may hold (the real service has no limit; a few are normal). */
export const MAX_DEGREES_PER_TRAINEE = 20;

/** Countries that make a degree a UK degree: England, Northern Ireland, Scotland, Wales, UK n.o.s. */
export const UK_COUNTRIES: ReadonlySet<string> = new Set(['XF', 'XG', 'XH', 'XI', 'XK']);

/** A degree's stored values: its table row without the keys and time stamps. */
export type DegreeValues = Omit<Selectable<TraineeDegreesTable>, 'id' | 'trainee_id' | 'created_at' | 'updated_at'>;

/** The fields a degree is compared on for duplicates (only those the incoming degree has). */
export const DUPLICATE_FIELDS = [
  'subject',
  'graduation_year',
  'country',
  'uk_degree',
  'non_uk_degree',
  'grade',
] as const;

type Raw = Record<(typeof RAW_FIELDS)[number], unknown>;
const RAW_FIELDS = [
  'subject',
  'graduation_year',
  'country',
  'uk_degree',
  'non_uk_degree',
  'institution',
  'grade',
  'other_grade',
] as const;

function code(value: unknown): string | null {
  if (isBlankOrEmptyList(value)) return null;
  return typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/** `2003`, `"2003"` and `"2003-01-01"` are the year 2003; anything else is invalid (NaN); blank is null. */
export function parseGraduationYear(value: unknown): number | null {
  if (isBlankOrEmptyList(value)) return null;
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number.NaN;
  if (typeof value !== 'string') return Number.NaN;
  const match = /^(\d+)(?:-\d{2}-\d{2})?$/.exec(value.trim());
  return match ? Number(match[1]) : Number.NaN;
}

export function graduationYearErrors(year: number | null, now: Date = new Date()): string[] {
  if (year === null) return ['graduation_year must be entered if specifying a previous UK degree or non-UK degree'];
  const nextYear = now.getUTCFullYear() + 1;
  const errors: string[] = [];
  if (!Number.isNaN(year) && year > nextYear) errors.push('graduation_year must be in the past, for example 2014');
  if (Number.isNaN(year) || year < nextYear - 60 || year > nextYear) errors.push('graduation_year is invalid');
  return errors;
}

/** The normalized degree (what would be stored), read even when there are errors (for the duplicate check). */
export type CheckedDegreeValues = Omit<DegreeValues, 'graduation_year'> & { graduation_year: number | null };

/** UK or non-UK: from the institution and country on create; on a change, from what is sent, else as stored. */
function degreeLocale(data: Body, existing: DegreeRow | undefined): 'uk' | 'non_uk' {
  const sentCountry = code(data.country);
  if (!existing) {
    return code(data.institution) !== null || sentCountry === null || UK_COUNTRIES.has(sentCountry) ? 'uk' : 'non_uk';
  } else if ('uk_degree' in data) {
    return 'uk';
  } else if ('non_uk_degree' in data) {
    return 'non_uk';
  } else if ('country' in data) {
    return sentCountry === null || UK_COUNTRIES.has(sentCountry) ? 'uk' : 'non_uk';
  } else {
    return existing.locale_code;
  }
}

/** The degree type of the locale (and a non-UK degree's country). */
function checkDegreeType(
  locale: 'uk' | 'non_uk',
  raw: Partial<Raw>,
  values: CheckedDegreeValues,
  errors: string[],
): void {
  if (locale === 'uk') {
    const ukDegree = code(raw.uk_degree);
    if (ukDegree === null) errors.push('uk_degree must be entered if specifying a previous UK degree');
    else if (!referenceId('degree_type', ukDegree)) errors.push(inclusionMessage('uk_degree', ukDegree, 'degree_type'));
    else Object.assign(values, { uk_degree: ukDegree, uk_degree_uuid: referenceId('degree_type', ukDegree) });
  } else {
    const nonUkDegree = code(raw.non_uk_degree);
    if (nonUkDegree === null) errors.push('non_uk_degree must be entered if specifying a previous non-UK degree');
    else if (!referenceId('degree_type', nonUkDegree))
      errors.push(inclusionMessage('non_uk_degree', nonUkDegree, 'degree_type'));
    else values.non_uk_degree = nonUkDegree;
    const country = code(raw.country);
    // Only a change (PUT/PATCH) can reach this without a country: on create a blank country means a UK degree.
    if (country === null) errors.push('country must be entered if specifying a previous non-UK degree');
    else if (!referenceId('country', country)) errors.push(inclusionMessage('country', country, 'country'));
    else values.country = country;
  }
}

/**
 * The institution: kept as stored on a non-UK degree (only the locale fields switch), required for UK degrees.
 * `changing`: a PUT/PATCH of a stored degree.
 */
function checkInstitution(
  locale: 'uk' | 'non_uk',
  raw: Partial<Raw>,
  values: CheckedDegreeValues,
  errors: string[],
  keepsOtherUk: boolean,
  changing: boolean,
): void {
  if (keepsOtherUk) {
    values.institution_uuid = otherUkInstitutionId() ?? null;
  } else {
    let institution = code(raw.institution);
    if (institution === '0133') institution = '0149'; // Institute of Education is now part of UCL.
    if (institution === null) {
      if (locale === 'uk') errors.push('institution must be entered if specifying a previous UK degree');
    } else if (referenceId('institution', institution)) {
      Object.assign(values, { institution, institution_uuid: referenceId('institution', institution) });
    } else if (locale === 'uk' || changing) {
      // Unknown institutions silently become "Other UK institution", as the real service does.
      values.institution_uuid = otherUkInstitutionId() ?? null;
    }
  }
}

/**
 * Normalizes and validates one degree. `existing` is the stored degree on PUT/PATCH: only the fields present in
 * `data` change, and the locale is recomputed only when the degree type or country is sent.
 */
export function checkDegree(data: Body, existing?: DegreeRow, now: Date = new Date()): Checked<CheckedDegreeValues> {
  const raw: Partial<Raw> = {};
  if (existing) {
    Object.assign(raw, {
      subject: existing.subject,
      graduation_year: existing.graduation_year,
      country: existing.country,
      uk_degree: existing.uk_degree,
      non_uk_degree: existing.non_uk_degree,
      institution: existing.institution,
      grade: existing.grade,
      other_grade: existing.other_grade,
    });
  }
  for (const field of RAW_FIELDS) if (field in data) raw[field] = data[field];
  // A stored "Other UK" institution has no code; it stays unless an institution is sent.
  const keepsOtherUk =
    !!existing && existing.institution === null && existing.institution_uuid !== null && !('institution' in data);

  const locale = degreeLocale(data, existing);

  const errors: string[] = [];
  const values: CheckedDegreeValues = {
    locale_code: locale,
    subject: '',
    subject_uuid: null,
    uk_degree: null,
    uk_degree_uuid: null,
    non_uk_degree: null,
    institution: null,
    institution_uuid: null,
    grade: null,
    grade_uuid: null,
    other_grade: null,
    country: null,
    graduation_year: null,
  };

  checkDegreeType(locale, raw, values, errors);

  const subject = code(raw.subject);
  const subjectId = subject === null ? undefined : referenceId('degree_subject', subject);
  if (!subjectId) errors.push('subject must be entered if specifying a previous UK degree or non-UK degree');
  else Object.assign(values, { subject, subject_uuid: subjectId });

  checkInstitution(locale, raw, values, errors, keepsOtherUk, !!existing);

  let grade = code(raw.grade);
  if (grade === '09') grade = '14'; // "Pass (honours course)" is stored as Pass.
  if (grade !== null && referenceId('degree_grade', grade)) {
    Object.assign(values, { grade, grade_uuid: referenceId('degree_grade', grade) });
  } else if (locale === 'uk') {
    // An unknown grade counts as missing.
    errors.push('grade must be entered if specifying a previous UK degree or non-UK degree');
  }
  values.other_grade = null; // Only kept for the grade "Other", which no HESA code maps to.

  const year = parseGraduationYear(raw.graduation_year);
  errors.push(...graduationYearErrors(year, now));
  values.graduation_year = year === null || Number.isNaN(year) ? null : year;

  return { values, errors };
}

/**
 * The trainee's degrees that `candidate` duplicates: equal on every duplicate field the candidate has.
 * A candidate with none of those fields duplicates nothing.
 */
export function findDuplicateDegrees(candidate: CheckedDegreeValues, others: DegreeRow[]): DegreeRow[] {
  const compared = DUPLICATE_FIELDS.filter((f) => candidate[f] !== null && candidate[f] !== '');
  if (compared.length === 0) return [];
  return others.filter((other) => compared.every((f) => other[f] === candidate[f]));
}
