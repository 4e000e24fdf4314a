/**
 * The API versions served side by side, each an adapter over the one canonical trainee model:
 * input names → canonical names, canonical → output names, and every rule and wording that differs by version.
 * Canonical names are v2026.1's. Nothing else in the register branches on a version: adding a version is adding
 * an entry to VERSION_ADAPTERS (its OpenAPI document, scope and labels follow from it) plus its tests.
 */
import type { TraineeState } from '../state-machine.js';

/** The versions served, oldest first. */
export const REGISTER_VERSIONS = ['v2025.0', 'v2026.0', 'v2026.1'] as const;
export type RegisterVersion = (typeof REGISTER_VERSIONS)[number];

export const LATEST_VERSION: RegisterVersion = REGISTER_VERSIONS[REGISTER_VERSIONS.length - 1]!;

/** The syntax of a version segment (real route constraint); well-formed but unknown versions get the API's 401/404. */
export const VERSION_SEGMENT = /^v[.0-9]+(-pre|-rc)?$/;

export interface VersionAdapter {
  version: RegisterVersion;
  /** Request field names that differ from the canonical ones: external → canonical. */
  inputNames: Readonly<Record<string, string>>;
  /** Response (and error message) names that differ: canonical → external. */
  outputNames: Readonly<Record<string, string>>;
  /** Canonical trainee fields this version does not know at all (ignored on input, absent on output). */
  unknownFields: readonly string[];
  /** Training route codes accepted on create/update. */
  routes: readonly string[];
  /** Routes for which `study_mode` may be omitted. */
  studyModeOptionalRoutes: readonly string[];
  /** Primary age range with a non-primary first subject: `reorder` (v2025.0 moved 100511 first) or `error`. */
  primarySubjectRule: 'reorder' | 'error';
  /** Early-years routes need `course_subject_1` = 100510 (v2026.1). */
  earlyYearsSubjectRule: boolean;
  /** `itt_end_date` must be within the last 10 / next 5 years (from v2026.0). */
  ittEndDateWindow: boolean;
  /** `GET /reference-data` publishes data (v2026.1); older versions answer 404. */
  referenceData: boolean;
  /** Cycles (start years) in which a `fund_code` other than 7 does not block funding for the exception subjects. */
  fundCodeExceptionStartYears: readonly number[];
  /** States in which a trainee, its placements and degrees cannot be changed (422 StateTransitionError). */
  lockedStates: readonly TraineeState[];
  /** How an unknown training partner is named in messages (v2025.0 still said "lead partner"). */
  partnerLookup: { urnAttribute: string; ukprnAttribute: string; noun: string };
  /** Path aliases served by this version (`v2025.0-rc`, as the real alias did). */
  aliases: readonly string[];
  /**
   * This service's extensions of the real API (docs/compatibility.md), served by this version only: batch create
   * (`POST /trainees/batch`) and, in the sandbox environment, the sandbox tools (`/sandbox/...`).
   */
  extensions: { batchCreate: boolean; sandboxTools: boolean };
}

const LEGACY_NAMES: Record<string, string> = {
  lead_partner_urn: 'training_partner_urn',
  lead_partner_ukprn: 'training_partner_ukprn',
  course_subject_one: 'course_subject_1',
  course_subject_two: 'course_subject_2',
  course_subject_three: 'course_subject_3',
  withdraw_date: 'withdrawal_date',
};

const invert = (names: Record<string, string>) => Object.fromEntries(Object.entries(names).map(([a, b]) => [b, a]));

const V2026_ROUTES = ['03', '09', '10', '11', '12', '14'];

const LEAD_PARTNER_LOOKUP = {
  urnAttribute: 'lead_partner_id',
  ukprnAttribute: 'lead_partner_ukprn',
  noun: 'lead partners',
};
const TRAINING_PARTNER_LOOKUP = {
  urnAttribute: 'training_partner_urn',
  ukprnAttribute: 'training_partner_ukprn',
  noun: 'training partners',
};

export const VERSION_ADAPTERS: Readonly<Record<RegisterVersion, VersionAdapter>> = {
  'v2025.0': {
    version: 'v2025.0',
    inputNames: LEGACY_NAMES,
    outputNames: { ...invert(LEGACY_NAMES), withdrawal_reasons: 'withdraw_reasons' },
    unknownFields: ['iqts_country'],
    routes: ['02', ...V2026_ROUTES],
    studyModeOptionalRoutes: [],
    primarySubjectRule: 'reorder',
    earlyYearsSubjectRule: false,
    ittEndDateWindow: false,
    referenceData: false,
    fundCodeExceptionStartYears: [2025],
    lockedStates: [],
    partnerLookup: LEAD_PARTNER_LOOKUP,
    aliases: ['v2025.0-rc'],
    extensions: { batchCreate: false, sandboxTools: false },
  },
  'v2026.0': {
    version: 'v2026.0',
    inputNames: {},
    outputNames: {},
    unknownFields: ['iqts_country'],
    routes: V2026_ROUTES,
    studyModeOptionalRoutes: [],
    primarySubjectRule: 'error',
    earlyYearsSubjectRule: false,
    ittEndDateWindow: true,
    referenceData: false,
    fundCodeExceptionStartYears: [2025, 2026],
    lockedStates: [],
    partnerLookup: TRAINING_PARTNER_LOOKUP,
    aliases: [],
    extensions: { batchCreate: false, sandboxTools: false },
  },
  'v2026.1': {
    version: 'v2026.1',
    inputNames: {},
    outputNames: {},
    unknownFields: [],
    routes: [...V2026_ROUTES, '15', '16', '17', '18', '19', '20', '21'],
    studyModeOptionalRoutes: ['16', '17'],
    primarySubjectRule: 'error',
    earlyYearsSubjectRule: true,
    ittEndDateWindow: true,
    referenceData: true,
    fundCodeExceptionStartYears: [2025, 2026],
    lockedStates: ['recommended_for_award', 'withdrawn', 'awarded'],
    partnerLookup: TRAINING_PARTNER_LOOKUP,
    aliases: [],
    extensions: { batchCreate: true, sandboxTools: true },
  },
};

export function adapterFor(version: RegisterVersion): VersionAdapter {
  return VERSION_ADAPTERS[version];
}

/** Path version label → canonical version: every version under its own name and its aliases. */
export const VERSION_LABELS: Readonly<Record<string, RegisterVersion>> = Object.fromEntries(
  REGISTER_VERSIONS.flatMap((version) =>
    [...VERSION_ADAPTERS[version].aliases, version].map((label) => [label, version]),
  ),
);

/** The name a canonical field has in this version's requests, responses and messages. */
export function externalName(version: RegisterVersion, canonical: string): string {
  return VERSION_ADAPTERS[version].outputNames[canonical] ?? canonical;
}

/**
 * A request `data` object in canonical names: this version's names are translated, the other versions' names
 * and fields this version does not know are dropped (the real permit lists drop unknown keys silently).
 */
export function toCanonicalInput(version: RegisterVersion, data: Record<string, unknown>): Record<string, unknown> {
  const adapter = VERSION_ADAPTERS[version];
  const foreign = new Set<string>(adapter.unknownFields);
  // Names that belong to another version: the canonical name when this version renames it, and vice versa.
  for (const [external, canonical] of Object.entries(LEGACY_NAMES))
    foreign.add(adapter.inputNames[external] ? canonical : external);
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (foreign.has(key)) continue;
    result[adapter.inputNames[key] ?? key] = value;
  }
  return result;
}

/** A canonical response object in this version's names (unknown fields removed). */
export function toVersionOutput<T extends Record<string, unknown>>(
  version: RegisterVersion,
  body: T,
): Record<string, unknown> {
  const adapter = VERSION_ADAPTERS[version];
  if (Object.keys(adapter.outputNames).length === 0 && adapter.unknownFields.length === 0) return body;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (adapter.unknownFields.includes(key)) continue;
    result[adapter.outputNames[key] ?? key] = value;
  }
  return result;
}

/** Rewrites canonical attribute names at the start of validation messages to this version's names. */
export function messageInVersion(version: RegisterVersion, message: string): string {
  const space = message.indexOf(' ');
  const attribute = space < 0 ? message : message.slice(0, space);
  const renamed = VERSION_ADAPTERS[version].outputNames[attribute];
  return renamed ? renamed + message.slice(attribute.length) : message;
}
