/** The statistics API's shapes the explorer reads (see /openapi.json) and a small fetch wrapper. */
export interface Paging {
  page: number;
  pageSize: number;
  totalResults: number;
  totalPages: number;
}
export interface Publication {
  id: string;
  title: string;
  slug: string;
  summary: string;
  lastPublished: string;
}
export interface LatestVersion {
  version: string;
  published?: string;
  totalResults: number;
  timePeriods: { start: string; end: string };
  geographicLevels: string[];
  filters: string[];
  indicators: string[];
}
export interface DataSet {
  id: string;
  title: string;
  summary: string;
  status: string;
  supersedingDataSetId?: string;
  latestVersion?: LatestVersion;
}
export interface DataSetVersion {
  version: string;
  type: 'Major' | 'Minor' | 'Patch';
  status: string;
  published?: string;
  withdrawn?: string;
  notes: string;
  totalResults: number;
  timePeriods: { start: string; end: string };
  geographicLevels: string[];
  filters: string[];
  indicators: string[];
  release: { title: string; slug: string };
}
export interface Option {
  id: string;
  label: string;
}
export interface FilterMeta {
  id: string;
  column: string;
  label: string;
  hint: string;
  options: Option[];
}
export interface IndicatorMeta {
  id: string;
  column: string;
  label: string;
  unit?: string;
  decimalPlaces?: number;
}
export interface LevelMeta {
  code: string;
  label: string;
}
export interface LocationMeta {
  id: string;
  label: string;
  code?: string;
  oldCode?: string;
  urn?: string;
  laEstab?: string;
  ukprn?: string;
}
export interface TimePeriodMeta {
  code: string;
  period: string;
  label: string;
}
export interface Meta {
  filters: FilterMeta[];
  indicators: IndicatorMeta[];
  geographicLevels: LevelMeta[];
  locations: Array<{ level: LevelMeta; options: LocationMeta[] }>;
  timePeriods: TimePeriodMeta[];
}
export interface ChangeState {
  id?: string;
  label?: string;
  code?: string;
  period?: string;
  column?: string;
  level?: LevelMeta;
}
export interface Change {
  previousState?: ChangeState;
  currentState?: ChangeState;
}
export interface ChangeSet {
  filters?: Change[];
  filterOptions?: Array<{ filter: FilterMeta | Omit<FilterMeta, 'options'>; options: Change[] }>;
  geographicLevels?: Change[];
  indicators?: Change[];
  locationGroups?: Change[];
  locationOptions?: Array<{ level: LevelMeta; options: Change[] }>;
  timePeriods?: Change[];
}
export interface VersionChanges {
  versionNumber: string;
  notes: string;
  majorChanges: ChangeSet;
  minorChanges: ChangeSet;
}
export interface ResultRow {
  timePeriod: { period: string; code: string };
  geographicLevel: string;
  locations: Record<string, string>;
  filters: Record<string, string>;
  values: Record<string, string>;
}
export interface Warning {
  code: string;
  message: string;
  path?: string;
  detail?: { items?: unknown[] };
}
export interface QueryResponse {
  paging: Paging;
  results: ResultRow[];
  warnings?: Warning[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/** The problem's words: every validation error's message, or the title and detail. */
export function problemMessage(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { title?: string; detail?: string; errors?: Array<{ message: string; path?: string }> };
    if (b.errors?.length) return b.errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join(' ');
    if (b.detail || b.title) return [b.title, b.detail].filter(Boolean).join(': ');
  }
  return `The statistics API answered ${status}.`;
}

export async function apiGet<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, { headers: { accept: 'application/json' }, signal });
  const body = await readJson(response);
  if (!response.ok) throw new ApiError(response.status, problemMessage(response.status, body), body);
  return body as T;
}

export async function apiPost<T>(path: string, payload: unknown, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    signal,
  });
  const body = await readJson(response);
  if (!response.ok) throw new ApiError(response.status, problemMessage(response.status, body), body);
  return body as T;
}
