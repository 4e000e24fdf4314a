/**
 * Placement input rules: a school identified by its 6-digit URN, or by name (and postcode) when the
 * school has no URN or is not known. No duplicate detection (the real service has none for placements).
 */
import type { SchoolsTable } from '../tables.js';
import type { PlacementRow } from '../trainees/nested.js';
import { isUkPostcode, isUrn } from '../../validators.js';
import { scalarText, type Checked } from '../values.js';

type Body = Record<string, unknown>;

export type School = SchoolsTable;

export interface PlacementValues {
  urn: string | null;
  name: string | null;
  postcode: string | null;
  school_linked: boolean;
  town: string | null;
}

function text(value: unknown): string | null {
  const scalar = scalarText(value);
  return scalar === null ? null : scalar.trim() || null;
}

/** The URN to look up as a school, when the request (or the merge on PUT) has a well-formed one. */
export function urnToLookUp(data: Body, existing?: PlacementRow): string | null {
  const urn = 'urn' in data ? text(data.urn) : (existing?.urn ?? null);
  return urn !== null && isUrn(urn) ? urn : null;
}

/**
 * Validates and normalizes one placement. On PUT/PATCH (`existing`), fields not sent keep their values; a
 * school-linked placement stays linked unless a new `urn` is sent, and a new `urn` replaces the school's name and
 * postcode (the real service stores those blank for linked rows).
 */
/** A placement's name: the documented field length. */
export const PLACEMENT_NAME_MAX = 255;
/** Placements one trainee may hold (the real service has no limit; a few are normal). */
export const MAX_PLACEMENTS_PER_TRAINEE = 50;

export function checkPlacement(
  data: Body,
  school: School | undefined,
  existing?: PlacementRow,
): Checked<PlacementValues> {
  const relinking = existing?.school_linked && 'urn' in data;
  const base =
    existing && !relinking
      ? { urn: existing.urn, name: existing.name, postcode: existing.postcode }
      : { urn: existing?.urn ?? null, name: null, postcode: null };
  const urn = 'urn' in data ? text(data.urn) : base.urn;
  const errors: string[] = [];
  if (urn !== null && !isUrn(urn)) errors.push('urn is invalid');

  if (school && urn === school.urn) {
    // A known school: its own name and postcode win over what was sent.
    return {
      values: { urn, name: school.name, postcode: school.postcode, town: school.town, school_linked: true },
      errors,
    };
  }
  const name = 'name' in data ? text(data.name) : base.name;
  const postcode = 'postcode' in data ? text(data.postcode) : base.postcode;
  if (name === null) errors.push("name can't be blank");
  else if (name.length > PLACEMENT_NAME_MAX)
    errors.push(`name is too long (maximum is ${PLACEMENT_NAME_MAX} characters)`);
  if (postcode !== null && !isUkPostcode(postcode))
    errors.push('postcode Enter a valid postcode (for example, BN1 1AA)');
  return { values: { urn, name, postcode, town: null, school_linked: false }, errors };
}
