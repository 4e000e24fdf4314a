/**
 * A trainee request's `data` as the service reads it: canonical names, the real permit lists (unknown and
 * read-only members dropped), `null` handling on update, and the mapping between attributes and columns. Pure.
 */
import { missingData } from '../errors.js';
import { codeText, isBlank, isoDate } from '../values.js';
import { toCanonicalInput, type RegisterVersion } from '../versions/index.js';
import type { TraineePatch, TraineeRow } from './repository.js';
import { agesOf, DISABILITY_KEY, type Attributes } from './validate.js';

/** Request fields that map one-to-one onto trainee columns. */
export const SCALAR_FIELDS = [
  'provider_trainee_id',
  'hesa_id',
  'first_names',
  'middle_names',
  'last_name',
  'previous_last_name',
  'sex',
  'email',
  'nationality',
  'ni_number',
  'ethnicity',
  'training_route',
  'itt_aim',
  'itt_qualification_aim',
  'course_subject_1',
  'course_subject_2',
  'course_subject_3',
  'course_age_range',
  'study_mode',
  'fund_code',
  'funding_method',
  'training_initiative',
  'additional_training_initiative',
  'pg_apprenticeship_start_date',
  'iqts_country',
] as const;
export const DATE_FIELDS = ['date_of_birth', 'itt_start_date', 'itt_end_date', 'trainee_start_date'] as const;
const ACCEPTED_FIELDS = new Set<string>([
  ...SCALAR_FIELDS,
  ...DATE_FIELDS,
  'application_id',
  'course_year',
  'training_partner_urn',
  'training_partner_ukprn',
  'employing_school_urn',
  'degrees_attributes',
  'placements_attributes',
]);

/**
 * Members the real permit lists accept but the API derives or ignores (`ethnic_group` comes from `ethnicity`, …):
 * they keep a body from being "missing" but change nothing. `trn` is not among them (never permitted).
 */
const IGNORED_FIELDS = new Set<string>([
  'ethnic_group',
  'ethnic_background',
  'diversity_disclosure',
  'disability_disclosure',
  'course_education_phase',
  'course_allocation_subject_id',
  'progress',
  'applying_for_bursary',
  'applying_for_grant',
  'applying_for_scholarship',
  'bursary_tier',
  'course_study_mode',
  'hesa_disabilities',
  'nationalisations_attributes',
]);

/**
 * Fields the real service stores "squished": surrounding white space (non-breaking and other Unicode spaces too)
 * removed and inner runs made one space. Names compared by the duplicate check are therefore compared squished.
 */
const SQUISHED_FIELDS = new Set<string>(['first_names', 'middle_names', 'last_name', 'email', 'hesa_id']);

export function squish(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

/** Members a `PUT`/`PATCH` may clear with `null`; any other `null` leaves the stored value as it is. */
const CLEARABLE_BY_NULL = new Set<string>(['course_subject_2', 'course_subject_3', 'ethnicity']);

/** `{"0": {...}, "1": {...}}` (form keys `data[placements_attributes][0][urn]`) as the list Rails reads it as. */
function indexedHashAsArray(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((k) => /^\d+$/.test(k))) return value;
  return keys.sort((a, b) => Number(a) - Number(b)).map((k) => (value as Record<string, unknown>)[k]);
}

/**
 * The request's fields in canonical names, unknown and read-only keys dropped (the real permit lists). `null`
 * members are dropped as the real mapper drops them, except those `mode` lets a client clear.
 */
export function acceptedInput(
  version: RegisterVersion,
  data: Record<string, unknown>,
  mode: 'create' | 'update' = 'create',
): Attributes {
  const canonical = toCanonicalInput(version, data);
  const result: Attributes = {};
  let permitted = 0;
  for (const [key, value] of Object.entries(canonical)) {
    const nested =
      key === 'degrees_attributes' || key === 'placements_attributes' || key === 'nationalisations_attributes';
    // Scalar fields permit scalars only (as Rails' permit lists): an object or array there is dropped.
    if (!nested && value !== null && typeof value === 'object') continue;
    if (IGNORED_FIELDS.has(key)) {
      permitted += 1;
      continue;
    }
    if (!(ACCEPTED_FIELDS.has(key) || DISABILITY_KEY.test(key))) continue;
    permitted += 1;
    if (value === null && !(mode === 'update' && CLEARABLE_BY_NULL.has(key))) continue;
    result[key] = nested
      ? indexedHashAsArray(value)
      : SQUISHED_FIELDS.has(key) && typeof value === 'string'
        ? squish(value)
        : value;
  }
  // Rails' `params.expect` finds nothing it permits: the same 422 as a missing `data`.
  if (permitted === 0) throw missingData();
  return result;
}

export function rowToAttributes(row: TraineeRow): Attributes {
  const attrs: Attributes = {};
  for (const field of [...SCALAR_FIELDS, ...DATE_FIELDS]) attrs[field] = row[field];
  attrs.application_id = row.application_id;
  attrs.course_year = row.course_year;
  attrs.training_partner_urn = row.training_partner_urn;
  attrs.training_partner_ukprn = row.training_partner_ukprn;
  attrs.employing_school_urn = row.employing_school_urn;
  Object.assign(attrs, row.disabilities ?? {});
  return attrs;
}

/** A code or free-text value as stored: blank → null, numbers as their text. */
export const codeOrNull = (value: unknown): string | null => (isBlank(value) ? null : codeText(value));

/** Column values of a validated attribute set. */
export function attributesToColumns(attrs: Attributes): TraineePatch {
  const columns: Record<string, unknown> = {};
  for (const field of SCALAR_FIELDS) columns[field] = codeOrNull(attrs[field]);
  // Funding method C (veteran teaching undergraduate bursary) sets that initiative, which has no HESA code.
  if (columns.funding_method === 'C') columns.training_initiative = null;
  for (const field of DATE_FIELDS) columns[field] = isBlank(attrs[field]) ? null : (isoDate(attrs[field]) ?? null);
  columns.application_id = isBlank(attrs.application_id) ? null : Number.parseInt(codeText(attrs.application_id), 10);
  columns.course_year = isBlank(attrs.course_year) ? null : Number.parseInt(codeText(attrs.course_year), 10);
  const [min, max] = agesOf(codeOrNull(attrs.course_age_range));
  columns.course_min_age = min;
  columns.course_max_age = max;
  const disabilities: Record<string, string> = {};
  for (const [key, value] of Object.entries(attrs))
    if (DISABILITY_KEY.test(key) && !isBlank(value)) disabilities[key] = codeText(value);
  columns.disabilities = JSON.stringify(disabilities);
  return columns;
}
