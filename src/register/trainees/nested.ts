/**
 * The placements and degrees of trainees as the API returns them, for the trainee serializer
 * (which nests them in every trainee body) and for the placement and degree endpoints.
 */
import type { Selectable } from 'kysely';
import type { TraineeDegreesTable, TraineePlacementsTable } from '../tables.js';

export type PlacementRow = Selectable<TraineePlacementsTable>;
export type DegreeRow = Selectable<TraineeDegreesTable>;

export interface PlacementResponse {
  placement_id: string;
  urn: string | null;
  name: string | null;
  postcode: string | null;
  address: string | null;
  created_at: string;
  updated_at: string;
}

export interface DegreeResponse {
  degree_id: string;
  uk_degree: string | null;
  non_uk_degree: string | null;
  subject: string | null;
  institution: string | null;
  grade: string | null;
  country: string | null;
  graduation_year: number;
  other_grade: string | null;
  institution_uuid: string | null;
  uk_degree_uuid: string | null;
  subject_uuid: string | null;
  grade_uuid: string | null;
  created_at: string;
  updated_at: string;
}

export interface PlacementsAndDegrees {
  placements: PlacementResponse[];
  degrees: DegreeResponse[];
}

/** URNs meaning "no school" (outside England and Wales, not applicable, no URN, not available). */
export const SPECIAL_URNS: Readonly<Record<string, string>> = {
  '900000': 'Placement outside England and Wales',
  '900010': 'Not applicable or not available',
  '900020': 'Establishment does not have a URN',
  '900030': 'Not available',
};

/** One of the URNs meaning "no school". */
export function isSpecialUrn(urn: string): boolean {
  return Object.hasOwn(SPECIAL_URNS, urn);
}

function timestamp(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** `address` is computed, never stored: school-linked "URN u, town, postcode"; else what is known; special URNs none. */
export function placementAddress(
  row: Pick<PlacementRow, 'urn' | 'postcode' | 'town' | 'school_linked'>,
): string | null {
  if (row.urn && isSpecialUrn(row.urn)) return null;
  const parts = [row.urn ? `URN ${row.urn}` : null, row.school_linked ? row.town : null, row.postcode];
  const present = parts.filter((p): p is string => typeof p === 'string' && p.length > 0);
  return present.length > 0 ? present.join(', ') : null;
}

export function serializePlacement(row: PlacementRow): PlacementResponse {
  return {
    placement_id: row.id,
    urn: row.urn,
    name: row.name,
    postcode: row.postcode,
    address: placementAddress(row),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

export function serializeDegree(row: DegreeRow): DegreeResponse {
  return {
    degree_id: row.id,
    uk_degree: row.uk_degree,
    non_uk_degree: row.non_uk_degree,
    subject: row.subject,
    institution: row.institution,
    grade: row.grade,
    country: row.country,
    graduation_year: row.graduation_year,
    other_grade: row.other_grade,
    institution_uuid: row.institution_uuid,
    uk_degree_uuid: row.uk_degree_uuid,
    subject_uuid: row.subject_uuid,
    grade_uuid: row.grade_uuid,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}
