/** The current academic cycle's usual course dates (September to July), so benchmark trainees always validate. */
function currentCycleDates(): { start: string; end: string } {
  const now = new Date();
  const year = now.getUTCMonth() + 1 >= 8 ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
  return { start: `${year}-09-01`, end: `${year + 1}-07-31` };
}

/** A valid v2026.1 create payload for the register benchmarks; `extra` adds fields (nested placements, degrees). */
export function benchTrainee(
  firstNames: string,
  lastName: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const cycle = currentCycleDates();
  return {
    first_names: firstNames,
    last_name: lastName,
    date_of_birth: '1990-01-01',
    sex: '11',
    email: `${lastName.toLowerCase()}@example.com`,
    nationality: 'GB',
    training_route: '11',
    itt_start_date: cycle.start,
    itt_end_date: cycle.end,
    course_subject_1: '100346',
    study_mode: '63',
    course_age_range: '13918',
    itt_aim: '202',
    itt_qualification_aim: '001',
    course_year: '2',
    fund_code: '2',
    funding_method: '6',
    hesa_id: '0310261553101',
    disability1: '58',
    ...extra,
  };
}
