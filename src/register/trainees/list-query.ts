/**
 * The query string of `GET /trainees` as the real service reads it: its filter errors (422) and its lenient
 * readings (Kaminari's page and per_page rules). Pure: the route passes the query, the service gets the filters.
 */
import { filterValidationError, noTraineesFound } from '../errors.js';
import { academicCycleOf, codeText, isBlank, isoDate } from '../values.js';

export const DEFAULT_PER_PAGE = 50;
/** The real service has no maximum; an unbounded page is a denial-of-service lever, so pages stop at 1000. */
export const MAX_PER_PAGE = 1000;
/** The largest `page` (PostgreSQL int4, the real service's limit for a page number). */
export const MAX_PAGE = 2147483647;
export const LIST_STATUSES = ['course_not_yet_started', 'in_training', 'deferred', 'awarded', 'withdrawn'];
/** The oldest academic cycle the register knows (start year). */
export const FIRST_ACADEMIC_CYCLE = 2019;

export interface TraineeListQuery {
  /** Start year of the academic cycle (August to July) of the trainees' start dates. */
  academicCycle: number;
  /** Any of these list statuses (OR); empty = all. */
  statuses: string[];
  since?: Date;
  hasTrn?: boolean;
  page: number;
  perPage: number;
  sortOrder: 'asc' | 'desc';
}

/** The list's filters from its query string; throws the real 422 (and 404 for `per_page=0`). */
export function parseTraineeListQuery(query: Record<string, unknown>, today: string): TraineeListQuery {
  const errors: Record<string, string[]> = {};
  const one = (value: unknown): unknown => (Array.isArray(value) ? (value as unknown[])[value.length - 1] : value);

  let academicCycle = academicCycleOf(today);
  const cycleParam = one(query.academic_cycle);
  if (!isBlank(cycleParam)) {
    const value = codeText(cycleParam);
    if (!/^\d{4}$/.test(value) || Number(value) < FIRST_ACADEMIC_CYCLE || Number(value) > academicCycleOf(today) + 1) {
      errors.academic_cycle = [`${value} is not a valid academic cycle year`];
    } else academicCycle = Number(value);
  }
  const statuses = (Array.isArray(query.status) ? query.status : isBlank(query.status) ? [] : [query.status]).map(
    codeText,
  );
  const badStatus = statuses.find((s) => !LIST_STATUSES.includes(s));
  if (badStatus !== undefined) errors.status = [`${badStatus} is not a valid status`];
  let since: Date | undefined;
  const sinceParam = one(query.since);
  if (!isBlank(sinceParam)) {
    const value = codeText(sinceParam);
    // An unencoded `+01:00` offset arrives as ` 01:00` (form decoding of `+`).
    const text = value.replace(/(T[\d:.]+) (\d{2}:?\d{2})$/, '$1+$2');
    const zoned = /T/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text}Z` : text;
    const parsed = isoDate(text) ? new Date(/T/.test(text) ? zoned : `${text}T00:00:00Z`) : undefined;
    if (!parsed || Number.isNaN(parsed.getTime())) errors.since = [`${value} is not a valid date`];
    else since = parsed;
  }
  // Kaminari reads a non-numeric or negative page as page 1; a page beyond int32 cannot be an offset (it was a 500).
  const pageParam = one(query.page);
  const pageNumber = isBlank(pageParam) ? 1 : Number.parseInt(codeText(pageParam), 10);
  if (Number.isFinite(pageNumber) && pageNumber > MAX_PAGE) errors.page = [`must be less than or equal to ${MAX_PAGE}`];
  const sortParam = one(query.sort_order);
  const sortOrder = isBlank(sortParam) ? 'desc' : codeText(sortParam);
  if (sortOrder !== 'asc' && sortOrder !== 'desc') errors.sort_order = ['is not included in the list'];
  if (Object.keys(errors).length > 0) throw filterValidationError(errors);

  const hasTrnParam = one(query.has_trn);
  const hasTrn = isBlank(hasTrnParam) ? undefined : codeText(hasTrnParam) === 'true';
  const page = Number.isFinite(pageNumber) && pageNumber >= 1 ? pageNumber : 1;
  const perPageParam = one(query.per_page);
  let perPage = DEFAULT_PER_PAGE;
  if (!isBlank(perPageParam)) {
    const parsed = Number.parseInt(codeText(perPageParam), 10);
    perPage = Number.isNaN(parsed) || parsed === 0 ? 0 : parsed < 0 ? 100 : Math.min(parsed, MAX_PER_PAGE);
  }
  if (perPage === 0) throw noTraineesFound();
  return { academicCycle, statuses, since, hasTrn, page, perPage, sortOrder: sortOrder as 'asc' | 'desc' };
}
