/** Kysely table types of the register schema. Filled in by the register migration's owner. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RegisterTables {}

// ---- Placements and degrees (register issue 6, owned by the actions module; migration 2026-11-23T1200) ----
import type { ColumnType, Generated } from 'kysely';

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

export interface RegisterActionTables {
  trainee_placements: TraineePlacementsTable;
  trainee_degrees: TraineeDegreesTable;
}

// Declaration merging: adds these tables to RegisterTables without touching the core's declaration above.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RegisterTables extends RegisterActionTables {}
// ---- end of the actions block ----
