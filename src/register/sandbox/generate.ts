/**
 * Realistic trainees for a provider's sandbox: every route family (postgraduate, undergraduate, salaried, iQTS,
 * early years, assessment only) with what it needs (degrees, placements, age range, subject), in the current academic
 * cycle, with made-up names and dates of birth. The payloads are what a vendor would send; service.ts creates them
 * through the batch create, so they pass the same validation as any create.
 */
import { randomInt } from 'node:crypto';

type Json = Record<string, unknown>;

const FIRST_NAMES = [
  'Amira',
  'Ben',
  'Chloe',
  'Daniel',
  'Ella',
  'Farah',
  'George',
  'Hannah',
  'Isaac',
  'Jade',
  'Kwame',
  'Leah',
  'Mohammed',
  'Niamh',
  'Oliver',
  'Priya',
  'Rhys',
  'Sofia',
  'Tom',
  'Zara',
];
const LAST_NAMES = [
  'Adeyemi',
  'Brown',
  'Chen',
  'Davies',
  'Evans',
  'Fraser',
  'Gill',
  'Hughes',
  'Iqbal',
  'Jones',
  'Khan',
  'Lewis',
  'Murphy',
  'Nowak',
  'Okafor',
  'Patel',
  'Roberts',
  'Smith',
  'Taylor',
  'Williams',
];
const SCHOOLS = [
  { name: 'Oak Lane Primary School', postcode: 'LS1 4AB' },
  { name: 'Elm Street Academy', postcode: 'M1 2CD' },
  { name: 'Riverside Community College', postcode: 'B2 5EF' },
  { name: 'St Mary’s Church of England School', postcode: 'BS1 6GH' },
];
const DEGREE = { uk_degree: '083', subject: '100485', institution: '0117', grade: '02' };

/** A route family's fields beyond the common ones. */
const ROUTE_FAMILIES: Json[] = [
  {
    training_route: '12',
    course_subject_1: '100425',
    course_age_range: '13918',
    itt_qualification_aim: '004',
    degree: true,
  },
  {
    training_route: '11',
    course_subject_1: '100346',
    course_age_range: '13918',
    itt_qualification_aim: '001',
    years: 3,
  },
  {
    training_route: '03',
    course_subject_1: '100425',
    course_age_range: '13918',
    itt_qualification_aim: '004',
    degree: true,
  },
  {
    training_route: '15',
    course_subject_1: '100425',
    course_age_range: '13918',
    itt_qualification_aim: '004',
    iqts_country: 'FR',
    degree: true,
  },
  {
    training_route: '18',
    course_subject_1: '100510',
    course_age_range: '13920',
    itt_aim: '201',
    itt_qualification_aim: undefined,
    years: 3,
  },
  {
    training_route: '16',
    course_subject_1: '100425',
    course_age_range: '13918',
    itt_qualification_aim: '004',
    study_mode: undefined,
    degree: true,
  },
];

const pick = <T>(list: readonly T[]): T => list[randomInt(list.length)]!;

/** The academic cycle that has started by `today` (September to July). */
export function startedCycle(today: string): { start: string; year: number } {
  const [y, m] = today.split('-').map(Number) as [number, number];
  const year = m >= 9 ? y : y - 1;
  return { start: `${year}-09-01`, year };
}

/** The create payload of the `n`th generated trainee (route families in turn), in v2026.1 names. */
export function generatedTrainee(n: number, today: string): Json {
  const { start, year } = startedCycle(today);
  const { degree, years, ...family } = ROUTE_FAMILIES[n % ROUTE_FAMILIES.length]!;
  const first = pick(FIRST_NAMES);
  const last = pick(LAST_NAMES);
  const birthYear = year - 21 - randomInt(20);
  const [school1, school2] = [pick(SCHOOLS), pick(SCHOOLS)];
  const trainee: Json = {
    first_names: first,
    last_name: last,
    date_of_birth: `${birthYear}-${String(1 + randomInt(12)).padStart(2, '0')}-${String(1 + randomInt(28)).padStart(2, '0')}`,
    sex: pick(['10', '11', '12']),
    email: `${first}.${last}.${randomInt(1_000_000)}@example.com`.toLowerCase(),
    nationality: 'GB',
    itt_start_date: start,
    itt_end_date: `${year + ((years as number | undefined) ?? 1)}-07-31`,
    study_mode: pick(['01', '02']),
    itt_aim: '202',
    course_year: '1',
    fund_code: '2',
    funding_method: '6',
    hesa_id: `${String(year).slice(2)}${String(randomInt(10 ** 11)).padStart(11, '0')}`,
    provider_trainee_id: `SBX-${String(randomInt(10 ** 8)).padStart(8, '0')}`,
    placements_attributes: [school1, school2],
    ...family,
  };
  if (degree) trainee.degrees_attributes = [{ ...DEGREE, graduation_year: String(birthYear + 21) }];
  return Object.fromEntries(Object.entries(trainee).filter(([, value]) => value !== undefined));
}
