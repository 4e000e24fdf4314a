/**
 * The code lists the degree endpoints validate against (degree subject, degree type, grade, institution, country):
 * the register's shared reference data, plus the one value it does not index because it has no HESA code, the
 * "Other UK" institution that unknown institution codes fall back to.
 */
import { readFileSync } from 'node:fs';
import { projectPath } from '../../paths.js';
import { parseYaml } from '../yaml.js';
import { inclusionMessage as sharedInclusionMessage, referenceId as sharedReferenceId } from '../reference-data.js';

export type DegreeCodeField = 'degree_subject' | 'degree_type' | 'degree_grade' | 'institution' | 'country';

export function referenceId(field: DegreeCodeField, code: string): string | undefined {
  return sharedReferenceId(field, code);
}

export function inclusionMessage(attribute: string, value: unknown, field: DegreeCodeField): string {
  return sharedInclusionMessage(attribute, value, field);
}

let otherUkId: string | null | undefined;

/** The reference-data id of the "Other UK" institution. */
export function otherUkInstitutionId(): string | undefined {
  if (otherUkId === undefined) {
    const file = projectPath('seed', 'register', 'reference-data', 'institution.yml');
    const parsed = parseYaml(readFileSync(file, 'utf8')) as { data: Array<{ id: unknown; name?: string }> };
    const entry = parsed.data.find((e) => e.name === 'other_uk');
    otherUkId = entry ? String(entry.id) : null;
  }
  return otherUkId ?? undefined;
}
