/**
 * The trainee response object, built from the canonical row and then renamed for the requested
 * version. Every trainee body the API returns (list, get, create, update, actions) goes through `serializeTrainee`.
 */
import type { PlacementsAndDegrees } from './nested.js';
import { entryName } from '../reference-data.js';
import { toVersionOutput, type RegisterVersion } from '../versions/index.js';
import type { TraineeRow } from './repository.js';

export const EARLY_YEARS_ROUTES = ['17', '18', '19', '20'];
export const UNDERGRADUATE_ROUTES = ['09', '11', '14', '18'];
export const PRIMARY_AGE_RANGES = ['13909', '13911', '13912', '13913', '13914', '13915'];
export const NOT_PROVIDED_ETHNICITY = '997';

export interface SerializeExtras extends PlacementsAndDegrees {
  /** The UKPRN of the trainee's provider (`ukprn` in the body). */
  ukprn: string;
}

function iso(value: Date | string | null): string | null {
  if (value === null) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

function ethnicGroup(code: string): string {
  const n = Number(code);
  if (n >= 100 && n < 120) return 'asian_ethnic_group';
  if (n >= 120 && n < 140) return 'black_ethnic_group';
  if (n >= 140 && n < 160) return 'mixed_ethnic_group';
  if (n >= 160 && n < 180) return 'white_ethnic_group';
  if (n >= 997) return 'not_provided_ethnic_group';
  return 'other_ethnic_group';
}

export function disabilityDisclosure(
  disabilities: Record<string, string>,
): 'disabled' | 'no_disability' | 'disability_not_provided' {
  const codes = Object.values(disabilities).filter((c) => typeof c === 'string' && c !== '');
  if (codes.length === 0 || codes.every((c) => c === '98' || c === '99')) return 'disability_not_provided';
  if (codes.every((c) => c === '95')) return 'no_disability';
  return 'disabled';
}

export function educationPhase(
  route: string,
  maxAge: number | null,
  ageRange: string | null,
): 'early_years' | 'primary' | 'secondary' {
  if (EARLY_YEARS_ROUTES.includes(route)) return 'early_years';
  if (maxAge !== null && maxAge <= 11 && ageRange !== '13920') return 'primary';
  return 'secondary';
}

/** The canonical (v2026.1-named) body; `serializeTrainee` renames it per version. */
export function canonicalTraineeBody(row: TraineeRow, extras: SerializeExtras): Record<string, unknown> {
  const ethnicity = row.ethnicity ?? NOT_PROVIDED_ETHNICITY;
  const disabilities = row.disabilities ?? {};
  const disclosure = disabilityDisclosure(disabilities);
  const ethnicityDisclosed = Number(ethnicity) < 997;
  return {
    trainee_id: row.id,
    provider_trainee_id: row.provider_trainee_id,
    application_id: row.application_id,
    hesa_id: row.hesa_id,
    trn: row.trn,
    ukprn: extras.ukprn,
    first_names: row.first_names,
    middle_names: row.middle_names,
    last_name: row.last_name,
    previous_last_name: row.previous_last_name,
    date_of_birth: row.date_of_birth,
    sex: row.sex,
    email: row.email,
    nationality: row.nationality,
    ni_number: row.ni_number,
    diversity_disclosure:
      ethnicityDisclosed || disclosure !== 'disability_not_provided'
        ? 'diversity_disclosed'
        : 'diversity_not_disclosed',
    ethnic_group: ethnicGroup(ethnicity),
    ethnic_background: ethnicityDisclosed ? (entryName('ethnicity', ethnicity) ?? null) : 'Not provided',
    additional_ethnic_background: null,
    ethnicity,
    disability_disclosure: disclosure,
    ...disabilities,
    training_route: row.training_route,
    course_subject_1: row.course_subject_1,
    course_subject_2: row.course_subject_2,
    course_subject_3: row.course_subject_3,
    course_min_age: row.course_min_age,
    course_max_age: row.course_max_age,
    course_age_range: row.course_age_range,
    course_education_phase: educationPhase(row.training_route, row.course_max_age, row.course_age_range),
    course_qualification: EARLY_YEARS_ROUTES.includes(row.training_route) ? 'EYTS' : 'QTS',
    course_level: UNDERGRADUATE_ROUTES.includes(row.training_route) ? 'undergrad' : 'postgrad',
    course_title: null,
    course_itt_start_date: row.itt_start_date,
    study_mode: row.study_mode,
    itt_start_date: row.itt_start_date,
    itt_end_date: row.itt_end_date,
    trainee_start_date: row.trainee_start_date,
    itt_aim: row.itt_aim,
    itt_qualification_aim: row.itt_qualification_aim,
    course_year: row.course_year,
    pg_apprenticeship_start_date: row.pg_apprenticeship_start_date,
    iqts_country: row.iqts_country,
    training_partner_urn: row.training_partner_urn,
    training_partner_ukprn: row.training_partner_ukprn,
    employing_school_urn: row.employing_school_urn,
    fund_code: row.fund_code,
    funding_method: row.funding_method,
    training_initiative: row.training_initiative,
    additional_training_initiative: row.additional_training_initiative,
    state: row.state,
    record_source: row.record_source,
    submitted_for_trn_at: iso(row.submitted_for_trn_at),
    recommended_for_award_at: row.recommended_for_award_at
      ? iso(row.recommended_for_award_at)!.replace(/\.\d{3}Z$/, 'Z')
      : null,
    awarded_at: iso(row.awarded_at),
    outcome_date: row.outcome_date,
    defer_date: row.defer_date,
    defer_reason: row.defer_reason,
    reinstate_date: row.reinstate_date,
    withdrawal_date: row.withdrawal_date,
    withdrawal_reasons: row.withdrawal_reasons,
    withdrawal_trigger: row.withdrawal_trigger,
    withdrawal_future_interest: row.withdrawal_future_interest,
    withdrawal_another_reason: row.withdrawal_another_reason,
    withdrawal_safeguarding_concern_reasons: row.withdrawal_safeguarding_concern_reasons,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    placements: extras.placements,
    degrees: extras.degrees,
  };
}

/** The trainee as `version` returns it. */
export function serializeTrainee(
  row: TraineeRow,
  version: RegisterVersion,
  extras: SerializeExtras,
): Record<string, unknown> {
  return toVersionOutput(version, canonicalTraineeBody(row, extras));
}

/** The trainee's entity tag: changes with every write (lock_version is bumped by updateTraineeWithRecords). */
export function traineeEtag(row: Pick<TraineeRow, 'id' | 'lock_version'>): string {
  return `"${row.id}-${row.lock_version}"`;
}
