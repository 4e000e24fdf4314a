/**
 * The register's two funding rules (`fund_code` and `funding_method`), decided from the per-cycle funding tables in
 * `seed/register/funding/` exactly as the real service decides them (see docs/compatibility.md). The tables are data:
 * a new academic cycle is a new entry under `cycles:` in `funding-rules.yml`, no code change.
 */
import { readFileSync } from 'node:fs';
import { projectPath } from '../paths.js';
import { parseYaml } from './yaml.js';
import { nameOrCode } from './reference-data.js';

export type FundingType = 'scholarship' | 'bursary' | 'grant';

interface FundingRulesFile {
  meta: {
    funding_method_codes: Record<string, { funding_type: FundingType | null }>;
    valid_course_age_range_codes: string[];
    fund_code_exception: { cycles_start_years: number[]; allocation_subjects: string[] };
  };
  cycles: Record<
    string,
    {
      start_year: number;
      funded_training_routes?: Array<{ name: string; code: string }>;
      funding_methods?: Array<{ funding_type: FundingType; training_route: string; allocation_subjects: string[] }>;
    }
  >;
}

interface AllocationSubjectsFile {
  course_subject_1_index: Record<string, { name: string; allocation_subject: string }>;
}

export interface FundingTables {
  /** HESA funding method code → funding type (`null` for "none"). */
  fundingTypes: ReadonlyMap<string, FundingType | null>;
  ageRangeCodes: ReadonlySet<string>;
  exceptionStartYears: readonly number[];
  exceptionSubjects: ReadonlySet<string>;
  /** Course subject HESA code → allocation subject name. */
  allocationSubject: ReadonlyMap<string, string>;
  /** Cycle start year → route names with at least one funding method. */
  fundedRoutes: ReadonlyMap<number, ReadonlySet<string>>;
  /** Cycle start year → `type|route name|allocation subject` of every funding method row. */
  methods: ReadonlyMap<number, ReadonlySet<string>>;
}

const fundingDir = `${projectPath('seed', 'register', 'funding')}/`;

export function loadFundingTables(dir = fundingDir): FundingTables {
  const rules = parseYaml(readFileSync(`${dir}funding-rules.yml`, 'utf8')) as FundingRulesFile;
  const subjects = parseYaml(readFileSync(`${dir}allocation-subjects.yml`, 'utf8')) as AllocationSubjectsFile;
  const fundedRoutes = new Map<number, Set<string>>();
  const methods = new Map<number, Set<string>>();
  for (const cycle of Object.values(rules.cycles)) {
    const rows = cycle.funding_methods ?? [];
    fundedRoutes.set(
      cycle.start_year,
      new Set([...(cycle.funded_training_routes ?? []).map((r) => r.name), ...rows.map((r) => r.training_route)]),
    );
    methods.set(
      cycle.start_year,
      new Set(rows.flatMap((r) => r.allocation_subjects.map((s) => `${r.funding_type}|${r.training_route}|${s}`))),
    );
  }
  return {
    fundingTypes: new Map(
      Object.entries(rules.meta.funding_method_codes).map(([code, v]) => [code, v.funding_type ?? null]),
    ),
    ageRangeCodes: new Set(rules.meta.valid_course_age_range_codes.map(String)),
    exceptionStartYears: rules.meta.fund_code_exception.cycles_start_years,
    exceptionSubjects: new Set(rules.meta.fund_code_exception.allocation_subjects),
    allocationSubject: new Map(
      Object.entries(subjects.course_subject_1_index).map(([code, v]) => [code, v.allocation_subject]),
    ),
    fundedRoutes,
    methods,
  };
}

let tables: FundingTables | undefined;
export function fundingTables(): FundingTables {
  return (tables ??= loadFundingTables());
}

export interface FundingInput {
  /** Raw values as sent (codes as strings; blank as undefined). */
  trainingRoute: string | undefined;
  courseSubject1: string | undefined;
  courseAgeRange: string | undefined;
  fundCode: string | undefined;
  fundingMethod: string | undefined;
  /** Start year of the academic cycle the rules use. */
  cycle: number;
  /** Start years in which the fund-code exception applies (per API version). */
  exceptionStartYears: readonly number[];
}

/**
 * The funding errors of one trainee, in the real order (`fund_code` rule first, then `funding_method`), as full
 * messages with canonical attribute names. At most one error per rule.
 */
export function fundingErrors(input: FundingInput, data: FundingTables = fundingTables()): string[] {
  const errors: string[] = [];
  const { trainingRoute, courseSubject1, fundCode, fundingMethod, cycle } = input;
  if (trainingRoute === undefined) return errors;
  const route = nameOrCode('training_route', trainingRoute);

  // fund_code 7 ("eligible") needs a funded route in the cycle and a known age range.
  if (fundCode === '7') {
    const funded = data.fundedRoutes.get(cycle)?.has(route) ?? false;
    if (!funded || input.courseAgeRange === undefined || !data.ageRangeCodes.has(input.courseAgeRange)) {
      errors.push('fund_code is not valid for this trainee');
    }
  }

  const type = fundingMethod === undefined ? undefined : data.fundingTypes.get(fundingMethod);
  if (!type) return errors; // blank, "none" (6) or an unknown code (the inclusion check reports that)
  const subjectName = courseSubject1 === undefined ? '' : nameOrCode('course_subject', courseSubject1);
  const allocation = courseSubject1 === undefined ? undefined : data.allocationSubject.get(courseSubject1);
  if (fundCode !== '7') {
    const exception =
      input.exceptionStartYears.includes(cycle) && allocation !== undefined && data.exceptionSubjects.has(allocation);
    if (!exception) {
      errors.push(
        `funding_method '${type}' is not allowed when fund_code is '${fundCode ?? ''}' and course_subject_1 is '${subjectName}'`,
      );
      return errors;
    }
  }
  const exists = allocation !== undefined && (data.methods.get(cycle)?.has(`${type}|${route}|${allocation}`) ?? false);
  if (!exists) {
    errors.push(
      `funding_method '${type}' is not allowed when training_route is '${route}' and course_subject_1 is '${subjectName}' in academic cycle '${cycle} to ${cycle + 1}'`,
    );
  }
  return errors;
}
