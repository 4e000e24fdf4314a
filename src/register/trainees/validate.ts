/**
 * Trainee checks with the real service's messages. Works on canonical names; the
 * caller renames attributes in messages for the requested version. Messages are "<attribute> <message>" with raw
 * attribute names, in the order the real service lists them: presence first, then each field, then the HESA
 * detail fields, then cross-field rules, then nested degrees and placements.
 */
import {
  checkDegree,
  MAX_DEGREES_PER_TRAINEE,
  type CheckedDegreeValues,
  type DegreeValues,
} from '../degrees/validate.js';
import { MAX_PLACEMENTS_PER_TRAINEE, PLACEMENT_NAME_MAX } from '../placements/validate.js';
import { isUkPostcode, isUrn } from '../../validators.js';
import { academicCycleOf, codeText, isBlank, isoDate, type Checked } from '../values.js';
import { isSpecialUrn, SPECIAL_URNS } from './nested.js';
import {
  ageRange,
  entryName,
  inclusionMessage,
  isValidCode,
  nameOrCode,
  type ReferenceField,
} from '../reference-data.js';
import type { VersionAdapter } from '../versions/index.js';
import { fundingErrors } from '../funding.js';
import { EARLY_YEARS_ROUTES, PRIMARY_AGE_RANGES, UNDERGRADUATE_ROUTES } from './serialize.js';

export type Attributes = Record<string, unknown>;

export const PRIMARY_SUBJECT = '100511';
export const EARLY_YEARS_SUBJECT = '100510';
export const EARLY_YEARS_AGE_RANGE = '13920';

export const DISABILITY_KEY = /^disability\d+$/;

/**
 * Free-text trainee fields and their maximum lengths: the real validators' (names 60, provider_trainee_id 50) and,
 * where the real service checks nothing, the documented HESA field lengths (previous_last_name 60, ni_number 9) or a
 * cap (pg_apprenticeship_start_date, a date). Code fields are bounded by their code lists; email has its own check.
 */
/** `email`: the real validator's length limit. */
export const EMAIL_MAX_LENGTH = 255;

export const TEXT_FIELD_MAX_LENGTHS: Readonly<Record<string, number>> = {
  first_names: 60,
  middle_names: 60,
  last_name: 60,
  previous_last_name: 60,
  provider_trainee_id: 50,
  ni_number: 9,
  pg_apprenticeship_start_date: 30,
};

/**
 * `course_year` (HESA YEARPRG): documented as 0 (foundation year) to 3, but the real service takes any integer its
 * column holds and its own request specs send 2012, so up to four digits are accepted; negative numbers and
 * anything larger are refused (beyond int32 they were a 500).
 */
export const COURSE_YEAR_MIN = 0;
export const COURSE_YEAR_MAX = 9999;

/**
 * The academic cycle the funding rules use: the one holding `trainee_start_date` (else `itt_start_date`); when that
 * date is not a valid date, the cycle holding today + 1 month (the real rules do not fall back to the other date).
 */
export function fundingCycle(attrs: Attributes, today: string): number {
  const chosen = isBlank(attrs.trainee_start_date) ? attrs.itt_start_date : attrs.trainee_start_date;
  const date = isoDate(chosen);
  if (date) return academicCycleOf(date);
  const next = new Date(`${today}T00:00:00Z`);
  next.setUTCMonth(next.getUTCMonth() + 1);
  return academicCycleOf(next.toISOString().slice(0, 10));
}

function traineeStartDateError(attrs: Attributes, today: string, ittStart: string | undefined): string | undefined {
  if (isBlank(attrs.trainee_start_date)) return undefined;
  const start = isoDate(attrs.trainee_start_date);
  if (!start) return 'trainee_start_date is invalid';
  if (start < yearsAgo(today, 10)) return 'trainee_start_date Cannot be more than 10 years in the past';
  if (start > today && start !== ittStart) return 'trainee_start_date must be in the past';
  return undefined;
}

function yearsAgo(today: string, years: number): string {
  return `${Number(today.slice(0, 4)) - years}${today.slice(4)}`;
}

export interface ValidationContext {
  adapter: VersionAdapter;
  today: string;
  /** Creating (nested degrees/placements are validated and degrees are required) or updating. */
  mode: 'create' | 'update';
  /** Degrees already stored (update): they satisfy the postgraduate "degree required" rule. */
  existingDegreeCount: number;
  /** URNs of `placements_attributes` that are known schools (their name then comes from the school). */
  knownSchoolUrns: ReadonlySet<string>;
}

/** Training initiatives offered per academic cycle (start year), by internal name. */
const INITIATIVES_BY_CYCLE: Record<number, readonly string[]> = {
  2025: [
    'international_relocation_payment',
    'now_teach',
    'veterans_teaching_undergraduate_bursary',
    'primary_mathematics_specialist',
  ],
  2026: ['now_teach', 'veterans_teaching_undergraduate_bursary', 'primary_mathematics_specialist'],
};

function inclusion(errors: string[], attribute: string, value: unknown, field: ReferenceField): void {
  if (!isBlank(value) && !isValidCode(field, value)) errors.push(inclusionMessage(attribute, codeText(value), field));
}

/** What a trainee check reads from its input: the values the writes store. */
export interface TraineeValues {
  /**
   * The trainee's attributes, normalised where the real service normalises (v2025.0's subject re-ordering,
   * `trainee_start_date` defaulting); the input itself is left as it was.
   */
  attributes: Attributes;
  /** Create: the nested degrees that passed their checks, normalised as a degree added on its own. */
  degrees: DegreeInput[];
  /** Create: the nested placements, normalised (all of them; only written when there are no errors). */
  placements: PlacementInput[];
}

/** What each step of a trainee check reads: the attributes (normalised as it goes), the version and the errors so far. */
interface TraineeCheck {
  attrs: Attributes;
  adapter: VersionAdapter;
  today: string;
  /** The training route's code, when given. */
  route: string | undefined;
  errors: string[];
}

/** 1. Presence. */
function checkPresence({ attrs, adapter, route, errors }: TraineeCheck): void {
  const required = [
    'first_names',
    'last_name',
    'date_of_birth',
    'sex',
    'training_route',
    'itt_start_date',
    'itt_end_date',
    'course_subject_1',
  ];
  if (!(route && adapter.studyModeOptionalRoutes.includes(route))) required.push('study_mode');
  required.push('hesa_id');
  for (const field of required) if (isBlank(attrs[field])) errors.push(`${field} can't be blank`);
}

/** 2. Trainee fields: names, ids, date of birth, sex, email, nationality, ethnicity, disabilities. */
function checkPersonalFields({ attrs, today, errors }: TraineeCheck): void {
  for (const [field, maximum] of Object.entries(TEXT_FIELD_MAX_LENGTHS)) {
    const value = attrs[field];
    if (!isBlank(value) && codeText(value).length > maximum)
      errors.push(`${field} is too long (maximum is ${maximum} characters)`);
  }
  if (!isBlank(attrs.application_id)) {
    const text = codeText(attrs.application_id).trim();
    if (!/^\d+$/.test(text)) errors.push('application_id is not a number');
    else if (text.length > 7) errors.push('application_id is too long (maximum is 7 characters)');
  }
  if (!isBlank(attrs.date_of_birth)) {
    const dob = isoDate(attrs.date_of_birth);
    if (!dob || dob < yearsAgo(today, 100)) errors.push('date_of_birth is invalid');
    else if (dob > today) errors.push('date_of_birth must be in the past');
    else if (dob > yearsAgo(today, 16)) errors.push('date_of_birth cannot be less than 16 years ago');
  }
  inclusion(errors, 'sex', attrs.sex, 'sex');
  if (!isBlank(attrs.email)) {
    const email = typeof attrs.email === 'string' ? attrs.email.trim() : '';
    if (email.length > EMAIL_MAX_LENGTH) errors.push(`email is too long (maximum is ${EMAIL_MAX_LENGTH} characters)`);
    else if (
      !/^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/.test(
        email,
      )
    ) {
      errors.push('email Enter an email address in the correct format, like name@example.com');
    }
  } else {
    errors.push('email Enter an email address in the correct format, like name@example.com');
  }
  inclusion(errors, 'nationality', attrs.nationality, 'nationality');
  inclusion(errors, 'ethnicity', attrs.ethnicity, 'ethnicity');

  const disabilityCodes: string[] = [];
  for (const [key, value] of Object.entries(attrs)) {
    if (!DISABILITY_KEY.test(key) || isBlank(value)) continue;
    if (!isValidCode('disability', value)) errors.push(inclusionMessage(key, codeText(value), 'disability'));
    disabilityCodes.push(codeText(value));
  }
  if (new Set(disabilityCodes).size !== disabilityCodes.length) errors.push('disabilities contain duplicate values');
}

/** 2. Trainee fields: the training route and the ITT and trainee start dates. */
function checkRouteAndDates(
  { attrs, adapter, today, route, errors }: TraineeCheck,
  ittStart: string | undefined,
): void {
  const currentYear = Number(today.slice(0, 4));
  // The real route check is skipped when trainee_start_date is already wrong (the route's validity depends on it).
  const traineeStartError = traineeStartDateError(attrs, today, isoDate(attrs.itt_start_date));
  if (route !== undefined && traineeStartError === undefined) {
    const startYear = isoDate(attrs.itt_start_date)
      ? Number(String(isoDate(attrs.itt_start_date)).slice(0, 4))
      : undefined;
    const tooEarly = route === '12' && startYear !== undefined && startYear < 2022;
    // The message names a known route as the real service does, by its name (`'provider_led_postgrad'`, not `'12'`).
    if (!adapter.routes.includes(route) || tooEarly)
      errors.push(inclusionMessage('training_route', nameOrCode('training_route', route), adapter.routes));
  }

  if (!isBlank(attrs.itt_start_date)) {
    if (!ittStart) errors.push('itt_start_date is invalid');
    else if (Number(ittStart.slice(0, 4)) > currentYear + 1)
      errors.push('itt_start_date must not be more than one year in the future');
  }
  if (!isBlank(attrs.itt_end_date)) {
    const ittEnd = isoDate(attrs.itt_end_date);
    // One message at most, the first that applies (the real validator stops there); the window and order checks
    // run only when both dates are valid dates, as the real validator returns early otherwise.
    if (!ittEnd) errors.push('itt_end_date is invalid');
    else if (!ittStart) {
      // itt_start_date is blank or invalid: reported on its own.
    } else if (adapter.ittEndDateWindow && Number(ittEnd.slice(0, 4)) > currentYear + 5)
      errors.push('itt_end_date must be within the next 5 years');
    else if (adapter.ittEndDateWindow && ittEnd < yearsAgo(today, 10))
      errors.push('itt_end_date must be within the last 10 years');
    else if (ittEnd <= ittStart) errors.push('itt_end_date must be after itt_start_date');
  }
  if (traineeStartError !== undefined) errors.push(traineeStartError);
}

/** 2. Trainee fields: subjects, study mode, HESA id, IQTS country (subjects after v2025.0's re-ordering). */
function checkCourse({ attrs, adapter, route, errors }: TraineeCheck, earlyYears: boolean): void {
  inclusion(errors, 'course_subject_1', attrs.course_subject_1, 'course_subject');
  inclusion(errors, 'course_subject_2', attrs.course_subject_2, 'course_subject');
  inclusion(errors, 'course_subject_3', attrs.course_subject_3, 'course_subject');
  if (!earlyYears) {
    const [s1, s2, s3] = [attrs.course_subject_1, attrs.course_subject_2, attrs.course_subject_3].map((s) =>
      isBlank(s) ? undefined : codeText(s),
    );
    if (s2 !== undefined && s2 === s1) errors.push('course_subject_2 might contain duplicate values');
    if (s3 !== undefined && (s3 === s1 || s3 === s2)) errors.push('course_subject_3 might contain duplicate values');
  }
  inclusion(errors, 'study_mode', attrs.study_mode, 'study_mode');
  if (!isBlank(attrs.hesa_id)) {
    const length = codeText(attrs.hesa_id).length;
    if (length !== 13 && length !== 17) errors.push('hesa_id must be 13 or 17 characters');
  }
  if (!adapter.unknownFields.includes('iqts_country')) {
    if (route === '15' && isBlank(attrs.iqts_country)) errors.push("iqts_country can't be blank");
    else if (route !== '15' && !isBlank(attrs.iqts_country)) errors.push('iqts_country must be blank');
    else inclusion(errors, 'iqts_country', attrs.iqts_country, 'country');
  }
}

/** 3. HESA detail fields: aims, course year and age range, funding, initiatives. */
function checkHesaDetails(
  { attrs, adapter, today, route, errors }: TraineeCheck,
  ageCode: string | undefined,
  ittStart: string | undefined,
): void {
  if (isBlank(attrs.itt_aim)) errors.push("itt_aim can't be blank");
  else inclusion(errors, 'itt_aim', attrs.itt_aim, 'itt_aim');
  if (isBlank(attrs.itt_qualification_aim)) {
    if (isBlank(attrs.itt_aim) || codeText(attrs.itt_aim) === '202')
      errors.push('itt_qualification_aim must be entered if 202 selected for itt_aim');
  } else inclusion(errors, 'itt_qualification_aim', attrs.itt_qualification_aim, 'itt_qualification_aim');
  if (isBlank(attrs.course_year)) errors.push("course_year can't be blank");
  else {
    // An integer (as the real service), from 0 (foundation year) to four digits.
    const text = codeText(attrs.course_year).trim();
    if (!/^[-+]?\d+$/.test(text)) errors.push('course_year is not a valid course year');
    else if (Number(text) < COURSE_YEAR_MIN)
      errors.push(`course_year must be greater than or equal to ${COURSE_YEAR_MIN}`);
    else if (Number(text) > COURSE_YEAR_MAX)
      errors.push(`course_year must be less than or equal to ${COURSE_YEAR_MAX}`);
  }
  if (ageCode === undefined) errors.push("course_age_range can't be blank");
  else if (!isValidCode('course_age_range', ageCode))
    errors.push(inclusionMessage('course_age_range', ageCode, 'course_age_range'));
  else if (route && EARLY_YEARS_ROUTES.includes(route) && ageCode !== EARLY_YEARS_AGE_RANGE) {
    errors.push('course_age_range is invalid. It should be `13920` for the training_route provided');
  } else if (route && !EARLY_YEARS_ROUTES.includes(route) && ageCode === EARLY_YEARS_AGE_RANGE) {
    errors.push('course_age_range is invalid. It can only be used for early years training routes');
  }
  if (isBlank(attrs.fund_code)) errors.push("fund_code can't be blank");
  if (isBlank(attrs.funding_method)) errors.push("funding_method can't be blank");
  // The funding rules run after the presence checks and before the code-list checks of the two fields.
  errors.push(
    ...fundingErrors({
      trainingRoute: route,
      courseSubject1: isBlank(attrs.course_subject_1) ? undefined : codeText(attrs.course_subject_1),
      courseAgeRange: ageCode,
      fundCode: isBlank(attrs.fund_code) ? undefined : codeText(attrs.fund_code),
      fundingMethod: isBlank(attrs.funding_method) ? undefined : codeText(attrs.funding_method),
      cycle: fundingCycle(attrs, today),
      exceptionStartYears: adapter.fundCodeExceptionStartYears,
    }),
  );
  if (!isBlank(attrs.funding_method)) inclusion(errors, 'funding_method', attrs.funding_method, 'funding_method');
  if (!isBlank(attrs.fund_code)) inclusion(errors, 'fund_code', attrs.fund_code, 'fund_code');
  for (const field of ['training_initiative', 'additional_training_initiative']) {
    const value = attrs[field];
    if (isBlank(value)) continue;
    if (!isValidCode('training_initiative', value))
      errors.push(inclusionMessage(field, codeText(value), 'training_initiative'));
    else {
      // Initiatives are offered per academic cycle; the lists are known from 2025/26 on.
      const cycle = academicCycleOf(isoDate(attrs.trainee_start_date) ?? ittStart ?? today);
      const available = INITIATIVES_BY_CYCLE[cycle];
      const name = entryName('training_initiative', codeText(value)) ?? codeText(value);
      if (available && !available.includes(name))
        errors.push(`${field} '${name}' is not available in academic cycle '${cycle} to ${cycle + 1}'`);
    }
  }
}

/** 4. Cross-field rules. */
function checkCrossFields(
  { attrs, adapter, errors }: TraineeCheck,
  ageCode: string | undefined,
  primaryRange: boolean,
  earlyYears: boolean,
): void {
  const subject1 = isBlank(attrs.course_subject_1) ? undefined : codeText(attrs.course_subject_1);
  if (
    primaryRange &&
    adapter.primarySubjectRule === 'error' &&
    subject1 !== undefined &&
    subject1 !== PRIMARY_SUBJECT &&
    ageCode !== EARLY_YEARS_AGE_RANGE
  ) {
    errors.push('course_subject_1 is invalid. It should be `100511` for the course_age_range provided');
  }
  if (earlyYears && subject1 !== undefined && subject1 !== EARLY_YEARS_SUBJECT) {
    errors.push('course_subject_1 is invalid. It should be `100510` for the training_route provided');
  }
}

/** 5. Nested degrees and placements (create only; updates use the nested endpoints). */
function checkNested(
  { attrs, adapter, today, route, errors }: TraineeCheck,
  context: ValidationContext,
  values: TraineeValues,
): void {
  const knownRoute = route !== undefined && adapter.routes.includes(route);
  if (context.mode === 'create') {
    const degrees = Array.isArray(attrs.degrees_attributes) ? attrs.degrees_attributes : [];
    if (knownRoute && !UNDERGRADUATE_ROUTES.includes(route) && degrees.length === 0) {
      errors.push('degrees_attributes must be entered if specifying a postgraduate training_route');
    }
    // A list over its maximum is refused as a whole, before its items are checked: its error count stays fixed.
    if (degrees.length > MAX_DEGREES_PER_TRAINEE)
      errors.push(`degrees_attributes is too long (maximum is ${MAX_DEGREES_PER_TRAINEE} degrees)`);
    else {
      for (const degree of degrees) {
        const checked = checkNestedDegree(degree, today);
        errors.push(...checked.errors);
        // Only valid degrees are compared for duplicates (an invalid one is refused on its own).
        if (checked.errors.length === 0) values.degrees.push(checked.values as DegreeInput);
      }
      const keys = values.degrees.map(degreeKey);
      if (new Set(keys).size !== keys.length) errors.push('degrees_attributes contains duplicate degrees');
    }
    const placements = Array.isArray(attrs.placements_attributes) ? attrs.placements_attributes : [];
    if (placements.length > MAX_PLACEMENTS_PER_TRAINEE)
      errors.push(`placements_attributes is too long (maximum is ${MAX_PLACEMENTS_PER_TRAINEE} placements)`);
    else {
      for (const placement of placements) {
        const checked = checkNestedPlacement(placement, context.knownSchoolUrns);
        errors.push(...checked.errors);
        values.placements.push(checked.values);
      }
    }
  } else if (knownRoute && !UNDERGRADUATE_ROUTES.includes(route) && context.existingDegreeCount === 0) {
    errors.push('degrees_attributes must be entered if specifying a postgraduate training_route');
  }
}

/**
 * Checks a whole trainee (create, or the merged record of an update): the messages (canonical names) and the
 * normalised values. Never throws for bad input.
 */
export function checkTrainee(input: Attributes, context: ValidationContext): Checked<TraineeValues> {
  const { adapter, today } = context;
  const errors: string[] = [];
  const attrs: Attributes = { ...input };
  const values: TraineeValues = { attributes: attrs, degrees: [], placements: [] };
  const route = isBlank(attrs.training_route) ? undefined : codeText(attrs.training_route);
  const earlyYears = route !== undefined && EARLY_YEARS_ROUTES.includes(route) && adapter.earlyYearsSubjectRule;
  const check: TraineeCheck = { attrs, adapter, today, route, errors };

  if (isBlank(attrs.trainee_start_date) && isoDate(attrs.itt_start_date))
    attrs.trainee_start_date = attrs.itt_start_date;

  checkPresence(check);
  checkPersonalFields(check);
  const ittStart = isoDate(attrs.itt_start_date);
  checkRouteAndDates(check, ittStart);
  // v2025.0 put the primary subject first instead of refusing.
  const ageCode = isBlank(attrs.course_age_range) ? undefined : codeText(attrs.course_age_range);
  const primaryRange =
    ageCode !== undefined && PRIMARY_AGE_RANGES.includes(ageCode) && !(route && EARLY_YEARS_ROUTES.includes(route));
  if (
    primaryRange &&
    adapter.primarySubjectRule === 'reorder' &&
    codeText(attrs.course_subject_1) !== PRIMARY_SUBJECT
  ) {
    const subjects = [attrs.course_subject_1, attrs.course_subject_2, attrs.course_subject_3].filter(
      (s) => !isBlank(s) && codeText(s) !== PRIMARY_SUBJECT,
    );
    [attrs.course_subject_1, attrs.course_subject_2, attrs.course_subject_3] = [
      PRIMARY_SUBJECT,
      subjects[0] ?? null,
      subjects[1] ?? null,
    ];
  }
  checkCourse(check, earlyYears);
  checkHesaDetails(check, ageCode, ittStart);
  checkCrossFields(check, ageCode, primaryRange, earlyYears);
  checkNested(check, context, values);
  return { values, errors };
}

// ---- Nested degrees and placements of POST /trainees ----

/** A normalised `degrees_attributes` item: the same values a degree added on its own would store. */
export type DegreeInput = DegreeValues;

function degreeKey(d: DegreeInput): string {
  return [d.subject, d.graduation_year, d.country, d.uk_degree, d.non_uk_degree, d.grade].join('|');
}

/**
 * Checks one `degrees_attributes` item with the same rules and messages as `POST /degrees` (checkDegree), so a
 * degree nested in a new trainee and a degree added later are held to one standard.
 */
export function checkNestedDegree(raw: unknown, today: string): Checked<CheckedDegreeValues> {
  const data = (raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  return checkDegree(data, undefined, new Date(`${today}T00:00:00Z`));
}

export interface PlacementInput {
  urn: string | null;
  name: string | null;
  postcode: string | null;
}

/** Checks one `placements_attributes` item (messages prefixed `placements_attributes`, as the real service). */
export function checkNestedPlacement(raw: unknown, knownSchoolUrns: ReadonlySet<string>): Checked<PlacementInput> {
  const errors: string[] = [];
  const p = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const urn = isBlank(p.urn) ? null : codeText(p.urn).trim();
  const postcode = isBlank(p.postcode) ? null : codeText(p.postcode).trim();
  let name = isBlank(p.name) ? null : codeText(p.name);
  if (urn !== null && !isUrn(urn)) errors.push('placements_attributes urn is invalid');
  if (urn !== null && isSpecialUrn(urn)) name = SPECIAL_URNS[urn]!;
  if (name === null && !(urn !== null && knownSchoolUrns.has(urn)))
    errors.push("placements_attributes name can't be blank");
  else if (name !== null && name.length > PLACEMENT_NAME_MAX)
    errors.push(`placements_attributes name is too long (maximum is ${PLACEMENT_NAME_MAX} characters)`);
  if (postcode !== null && !isUkPostcode(postcode))
    errors.push('placements_attributes postcode Enter a valid postcode (for example, BN1 1AA)');
  return { values: { urn, name, postcode }, errors };
}

/** `[min, max]` ages for the stored row. */
export function agesOf(code: string | null): [number | null, number | null] {
  const range = code ? ageRange(code) : undefined;
  return range ? range : [null, null];
}
