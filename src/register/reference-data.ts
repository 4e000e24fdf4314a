/**
 * The register's HESA code lists, read once from the project's copy in `seed/register/reference-data/`,
 * with the display-name overrides applied. Validation (`isValidCode`, `inclusionMessage`), derivations
 * (`entryName`, `ageRange`) and the `GET /reference-data` payloads all come from here.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { projectPath } from '../paths.js';
import { parseYaml } from './yaml.js';

export const REFERENCE_DATA_FIELDS = [
  'country',
  'course_age_range',
  'course_subject',
  'degree_subject',
  'degree_grade',
  'degree_type',
  'disability',
  'ethnicity',
  'fund_code',
  'funding_method',
  'institution',
  'itt_aim',
  'nationality',
  'itt_qualification_aim',
  'sex',
  'study_mode',
  'training_route',
  'training_initiative',
] as const;
export type ReferenceField = (typeof REFERENCE_DATA_FIELDS)[number];

const FILES: Record<ReferenceField, string> = {
  country: 'country',
  course_age_range: 'course_age_range',
  course_subject: 'course_subject',
  degree_subject: 'degree_subject',
  degree_grade: 'degree_grade',
  degree_type: 'degree_type',
  disability: 'disability',
  ethnicity: 'ethnicities',
  fund_code: 'fund_code',
  funding_method: 'funding_method',
  institution: 'institution',
  itt_aim: 'itt_aim',
  nationality: 'nationality',
  itt_qualification_aim: 'itt_qualification_aim',
  sex: 'sex',
  study_mode: 'study_mode',
  training_route: 'training_route',
  training_initiative: 'training_initiative',
};

interface YamlValue {
  id: string | number;
  name?: string;
  display_name?: string;
  start_year?: number | null;
  end_year?: number | null;
  hesa_codes?: Array<string | number> | null;
}
interface YamlFile {
  metadata: Record<string, unknown>;
  data: YamlValue[];
}

export interface ReferenceEntry {
  code: string;
  display_name: string;
  start_year: number | null;
  end_year: number | null;
}

interface CodeInfo {
  id: string | number;
  name: string;
  entry: ReferenceEntry;
}

export interface LoadedField {
  metadata: Record<string, unknown>;
  entries: ReferenceEntry[];
  byCode: ReadonlyMap<string, CodeInfo>;
  /** Codes sorted as strings: the order of the inclusion messages. */
  sortedCodes: string[];
}

const referenceDir = `${projectPath('seed', 'register', 'reference-data')}/`;

function loadOverrides(): Record<string, Record<string, string>> {
  const result: Record<string, Record<string, string>> = {};
  const dir = `${referenceDir}display-name-overrides/`;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yml'))) {
    const parsed = parseYaml(readFileSync(dir + file, 'utf8')) as { en?: Record<string, Record<string, unknown>> };
    for (const [field, names] of Object.entries(parsed.en ?? {})) {
      const target = (result[field] ??= {});
      for (const [code, name] of Object.entries(names ?? {})) target[String(code)] = String(name);
    }
  }
  return result;
}

function loadField(field: ReferenceField, overrides: Record<string, string>): LoadedField {
  const parsed = parseYaml(readFileSync(`${referenceDir}${FILES[field]}.yml`, 'utf8')) as YamlFile;
  const { source: _source, change_log: _changeLog, ...metadata } = parsed.metadata;
  const byCode = new Map<string, CodeInfo>();
  for (const value of parsed.data) {
    for (const rawCode of value.hesa_codes ?? []) {
      const code = String(rawCode);
      const entry: ReferenceEntry = {
        code,
        display_name: overrides[code] ?? value.display_name ?? value.name ?? code,
        start_year: value.start_year ?? null,
        end_year: value.end_year ?? null,
      };
      byCode.set(code, { id: value.id, name: value.name ?? code, entry });
    }
  }
  const sortedCodes = [...byCode.keys()].sort();
  return { metadata, entries: sortedCodes.map((c) => byCode.get(c)!.entry), byCode, sortedCodes };
}

let loaded: Record<ReferenceField, LoadedField> | undefined;

/** All code lists (loaded on first use, then kept). */
export function referenceData(): Record<ReferenceField, LoadedField> {
  if (!loaded) {
    const overrides = loadOverrides();
    const result = {} as Record<ReferenceField, LoadedField>;
    for (const field of REFERENCE_DATA_FIELDS) result[field] = loadField(field, overrides[field] ?? {});
    loaded = result;
  }
  return loaded;
}

export function isValidCode(field: ReferenceField, code: unknown): boolean {
  return typeof code === 'string' && referenceData()[field].byCode.has(code);
}

/** The internal value name of a code (e.g. training route `12` → `provider_led_postgrad`). */
export function entryName(field: ReferenceField, code: string): string | undefined {
  return referenceData()[field].byCode.get(code)?.name;
}

/** The reference-data id of a code (the degree `*_uuid` fields). */
export function referenceId(field: ReferenceField, code: string): string | undefined {
  const id = referenceData()[field].byCode.get(code)?.id;
  return id === undefined ? undefined : String(id);
}

/** A code as the real service names it in messages (`provider_led_postgrad`, `physics`): its name when known, else the code. */
export function nameOrCode(field: ReferenceField, code: string): string {
  return isValidCode(field, code) ? (entryName(field, code) ?? code) : code;
}

/** `[min, max]` ages of a course age range code. */
export function ageRange(code: string): [number, number] | undefined {
  const id = referenceData().course_age_range.byCode.get(code)?.id;
  return Array.isArray(id) && id.length === 2 ? [Number(id[0]), Number(id[1])] : undefined;
}

function quoteList(codes: readonly string[]): string {
  return codes.map((c) => `'${c}'`).join(', ');
}

/**
 * The real inclusion message: the whole list when it has fewer than 10 codes, else the first 10 as examples.
 * `codes` defaults to the field's list; pass a narrower list where the version accepts fewer codes.
 */
export function inclusionMessage(attribute: string, value: unknown, field: ReferenceField | readonly string[]): string {
  const codes = typeof field === 'string' ? referenceData()[field].sortedCodes : [...field].sort();
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return codes.length < 10
    ? `${attribute} has invalid reference data value of '${shown}'. Valid values are ${quoteList(codes)}.`
    : `${attribute} has invalid reference data value of '${shown}'. Example values include ${quoteList(codes.slice(0, 10))}...`;
}

// ---- Withdrawal reasons ----

export const WITHDRAWAL_TRIGGERS = ['provider', 'trainee'] as const;
export const WITHDRAWAL_FUTURE_INTEREST = ['yes', 'no', 'unknown'] as const;

export const WITHDRAWAL_REASONS_BY_TRIGGER: Readonly<Record<(typeof WITHDRAWAL_TRIGGERS)[number], readonly string[]>> =
  {
    provider: [
      'record_added_in_error',
      'mandatory_reasons',
      'stopped_responding_to_messages',
      'unacceptable_behaviour',
      'lack_of_progress_during_placements',
      'did_not_make_progress',
      'not_meeting_qts_standards',
      'safeguarding_concerns',
      'had_to_withdraw_trainee_another_reason',
    ],
    trainee: [
      'unacceptable_behaviour',
      'did_not_make_progress',
      'lack_of_progress_during_placements',
      'trainee_workload_issues',
      'not_meeting_qts_standards',
      'change_in_personal_or_health_circumstances',
      'does_not_want_to_become_a_teacher',
      'never_intended_to_obtain_qts',
      'moved_to_different_itt_course',
      'safeguarding_concerns',
      'trainee_chose_to_withdraw_another_reason',
    ],
  };

export const WITHDRAWAL_REASON_NAMES: Readonly<Record<string, string>> = {
  record_added_in_error: 'This training record was added in error',
  mandatory_reasons: 'Trainee removed for mandatory reasons',
  stopped_responding_to_messages: 'They stopped attending/communicating',
  unacceptable_behaviour: 'Trainee behaviour or attitude',
  lack_of_progress_during_placements: 'Lack of progress during placements',
  did_not_make_progress: 'Lack of academic progress',
  not_meeting_qts_standards: 'Not meeting QTS or EYTS requirements',
  safeguarding_concerns: 'Safeguarding concerns',
  had_to_withdraw_trainee_another_reason: 'Another reason',
  trainee_workload_issues: 'Trainee workload issues',
  change_in_personal_or_health_circumstances: 'Change in their personal or health situation',
  does_not_want_to_become_a_teacher: 'No longer want to pursue a teaching career',
  never_intended_to_obtain_qts: 'They never intended to obtain QTS',
  moved_to_different_itt_course: 'They moved to a different ITT course',
  trainee_chose_to_withdraw_another_reason: 'Another reason',
};

export function withdrawalReasonsPayload() {
  return {
    metadata: { name: 'withdrawal_reasons', display_name: 'Withdrawal reasons' },
    triggers: [...WITHDRAWAL_TRIGGERS],
    future_interest: [...WITHDRAWAL_FUTURE_INTEREST],
    entries: WITHDRAWAL_TRIGGERS.flatMap((trigger) =>
      WITHDRAWAL_REASONS_BY_TRIGGER[trigger].map((code) => ({
        code,
        display_name: WITHDRAWAL_REASON_NAMES[code],
        trigger,
        requires_another_reason: code.includes('another_reason'),
        requires_safeguarding_concern_reasons: code === 'safeguarding_concerns',
      })),
    ),
  };
}

export const REFERENCE_DATA_KEYS = [...REFERENCE_DATA_FIELDS, 'withdrawal_reasons'] as const;

/** The payload of one `GET /reference-data?field=` key, or undefined for an unknown key. */
export function referenceDataPayload(field: string): unknown {
  if (field === 'withdrawal_reasons') return withdrawalReasonsPayload();
  if (!(REFERENCE_DATA_FIELDS as readonly string[]).includes(field)) return undefined;
  const data = referenceData()[field as ReferenceField];
  return { metadata: data.metadata, entries: data.entries };
}

/** The whole `GET /reference-data` body: every key. */
export function allReferenceData(): Record<string, unknown> {
  return Object.fromEntries(REFERENCE_DATA_KEYS.map((key) => [key, referenceDataPayload(key)]));
}
