/** Kysely table types of the register schema (migrations 2026-11-23T1100-register, T1300 and T1400). */
import type { ColumnType, Generated, GeneratedAlways, JSONColumnType } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface ProvidersTable {
  id: Generated<number>;
  ukprn: string;
  name: string;
  accredited: Generated<boolean>;
  discarded_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AuthenticationTokensTable {
  id: Generated<number>;
  provider_id: number;
  name: string;
  token_hash: string;
  environment: 'production' | 'sandbox';
  /** 'YYYY-MM-DD'; the token is invalid on this date. */
  expires_at: string;
  last_used_at: NullableTimestamp;
  status: Generated<'active' | 'expired' | 'revoked'>;
  revoked_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface SchoolsTable {
  urn: string;
  name: string;
  postcode: string | null;
  town: string | null;
}

export interface TrainingPartnersTable {
  id: Generated<number>;
  urn: string | null;
  ukprn: string | null;
  name: string;
  discarded_at: NullableTimestamp;
}

/** Trainee columns under their canonical (v2026.1) names; codes as the API takes them; dates 'YYYY-MM-DD'. */
export interface TraineesTable {
  id: string;
  provider_id: number;
  state:
    | 'draft'
    | 'submitted_for_trn'
    | 'trn_received'
    | 'recommended_for_award'
    | 'withdrawn'
    | 'deferred'
    | 'awarded';
  trn: string | null;
  lock_version: Generated<number>;
  record_source: Generated<string>;
  provider_trainee_id: string | null;
  application_id: number | null;
  hesa_id: string | null;
  first_names: string;
  middle_names: string | null;
  last_name: string;
  previous_last_name: string | null;
  date_of_birth: string;
  sex: string;
  email: string | null;
  nationality: string | null;
  ni_number: string | null;
  ethnicity: string | null;
  disabilities: JSONColumnType<Record<string, string>, string | undefined, string>;
  training_route: string;
  itt_aim: string | null;
  itt_qualification_aim: string | null;
  course_subject_1: string | null;
  course_subject_2: string | null;
  course_subject_3: string | null;
  course_age_range: string | null;
  course_min_age: number | null;
  course_max_age: number | null;
  study_mode: string | null;
  itt_start_date: string | null;
  itt_end_date: string | null;
  trainee_start_date: string | null;
  course_year: number | null;
  fund_code: string | null;
  funding_method: string | null;
  training_initiative: string | null;
  additional_training_initiative: string | null;
  pg_apprenticeship_start_date: string | null;
  training_partner_urn: string | null;
  training_partner_ukprn: string | null;
  employing_school_urn: string | null;
  iqts_country: string | null;
  submitted_for_trn_at: NullableTimestamp;
  recommended_for_award_at: NullableTimestamp;
  awarded_at: NullableTimestamp;
  outcome_date: string | null;
  defer_date: string | null;
  defer_reason: string | null;
  reinstate_date: string | null;
  withdrawal_date: string | null;
  /** Array of reason codes, or null. Write with JSON.stringify. */
  withdrawal_reasons: JSONColumnType<string[] | null, string | null, string | null>;
  withdrawal_trigger: string | null;
  withdrawal_future_interest: string | null;
  withdrawal_another_reason: string | null;
  withdrawal_safeguarding_concern_reasons: string | null;
  discarded_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Sandbox only (migration 2026-11-29T0800): when the simulated TRN or award is due; null when none is. */
  sandbox_due_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Academic cycle (start year) of coalesce(trainee_start_date, itt_start_date), computed by the database. */
  start_academic_cycle: GeneratedAlways<number | null>;
}

export interface TraineeAuditsTable {
  id: Generated<number>;
  trainee_id: string;
  provider_id: number;
  token_id: number | null;
  action: string;
  before: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  after: JSONColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Generated<Date>;
}

/** Kept by triggers on `trainees` (migration 2026-11-23T1400): the list's unfiltered count is the sum over shards. */
export interface TraineeListCountsTable {
  provider_id: number;
  academic_cycle: number;
  shard: number;
  trainees: number;
}

// ---- Placements and degrees (migration 2026-11-23T1200) ----

export interface TraineePlacementsTable {
  id: string;
  trainee_id: string;
  urn: string | null;
  name: string | null;
  postcode: string | null;
  school_linked: Generated<boolean>;
  town: string | null;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface TraineeDegreesTable {
  id: string;
  trainee_id: string;
  locale_code: 'uk' | 'non_uk';
  subject: string;
  subject_uuid: string | null;
  uk_degree: string | null;
  uk_degree_uuid: string | null;
  non_uk_degree: string | null;
  institution: string | null;
  institution_uuid: string | null;
  grade: string | null;
  grade_uuid: string | null;
  other_grade: string | null;
  country: string | null;
  graduation_year: number;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** Every table of the register. */
/** A register write's Idempotency-Key: held while its first request runs, then that request's response. */
export interface IdempotencyKeysTable {
  provider_id: number;
  environment: string;
  key: string;
  fingerprint: string;
  owner: string | null;
  locked_until: NullableTimestamp;
  response_status: number | null;
  response_headers: JSONColumnType<Record<string, string> | null, string | null, string | null>;
  response_body: string | null;
  created_at: Generated<Date>;
  expires_at: Timestamp;
}

export interface RegisterTables {
  providers: ProvidersTable;
  authentication_tokens: AuthenticationTokensTable;
  schools: SchoolsTable;
  training_partners: TrainingPartnersTable;
  trainees: TraineesTable;
  trainee_audits: TraineeAuditsTable;
  trainee_list_counts: TraineeListCountsTable;
  trainee_placements: TraineePlacementsTable;
  trainee_degrees: TraineeDegreesTable;
  idempotency_keys: IdempotencyKeysTable;
}
