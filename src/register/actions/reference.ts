/**
 * The code lists the degree endpoints validate against (degree subject, degree type, grade, institution, country),
 * read once from the project's copy of the register reference data (`seed/register/reference-data/`).
 * Each code maps to the reference-data id, returned as the degree's `*_uuid` fields.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

interface ReferenceFile {
  data: Array<{ id: string | number; name?: string; display_name?: string; hesa_codes?: string[] | null }>;
}

export interface CodeList {
  /** HESA code → reference-data id. */
  ids: ReadonlyMap<string, string>;
  /** Every HESA code, sorted as strings (the order the inclusion messages list them in). */
  sortedCodes: readonly string[];
}

export type DegreeCodeField = 'degree_subject' | 'degree_type' | 'degree_grade' | 'institution' | 'country';

const referenceDir = fileURLToPath(new URL('../../../seed/register/reference-data/', import.meta.url));

function loadCodeList(file: string): CodeList & { byName: ReadonlyMap<string, string> } {
  const parsed = parse(readFileSync(`${referenceDir}${file}.yml`, 'utf8')) as ReferenceFile;
  const ids = new Map<string, string>();
  const byName = new Map<string, string>();
  for (const entry of parsed.data) {
    if (entry.name) byName.set(entry.name, String(entry.id));
    for (const code of entry.hesa_codes ?? []) ids.set(String(code), String(entry.id));
  }
  return { ids, byName, sortedCodes: [...ids.keys()].sort() };
}

let cache: Record<DegreeCodeField, CodeList & { byName: ReadonlyMap<string, string> }> | undefined;

function lists() {
  cache ??= {
    degree_subject: loadCodeList('degree_subject'),
    degree_type: loadCodeList('degree_type'),
    degree_grade: loadCodeList('degree_grade'),
    institution: loadCodeList('institution'),
    country: loadCodeList('country'),
  };
  return cache;
}

export function codeList(field: DegreeCodeField): CodeList {
  return lists()[field];
}

export function referenceId(field: DegreeCodeField, code: string): string | undefined {
  return lists()[field].ids.get(code);
}

/** The id of the "Other UK" institution, which unknown institution codes fall back to (§3.6). */
export function otherUkInstitutionId(): string | undefined {
  return lists().institution.byName.get('other_uk');
}

/**
 * The real inclusion message: all valid values when there are fewer than 10, else the first 10 sorted codes.
 */
export function inclusionMessage(attribute: string, value: unknown, field: DegreeCodeField): string {
  const codes = codeList(field).sortedCodes;
  const shown = `'${String(value)}'`;
  if (codes.length < 10) return `${attribute} has invalid reference data value of ${shown}. Valid values are ${codes.map((c) => `'${c}'`).join(', ')}.`;
  return `${attribute} has invalid reference data value of ${shown}. Example values include ${codes
    .slice(0, 10)
    .map((c) => `'${c}'`)
    .join(', ')}...`;
}
