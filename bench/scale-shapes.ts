import http from 'node:http';
import { shuffle } from './datasets.js';

/**
 * The five query shapes of `npm run bench`, built from a version's `/meta` answer, each variant in two forms: the
 * HTTP request to this service and the same question as SQL for DuckDB over the source CSV's columns (written as
 * Parquet with a `row_id` column in file order), so both engines answer exactly the same questions.
 */

interface MetaOption {
  id: string;
  label: string;
  code?: string;
}
export interface ApiMeta {
  filters: Array<{ id: string; column: string; label: string; options: MetaOption[] }>;
  indicators: Array<{ id: string; column: string; label: string }>;
  geographicLevels: Array<{ code: string; label: string }>;
  locations: Array<{ level: { code: string; label: string }; options: MetaOption[] }>;
  timePeriods: Array<{ code: string; period: string; label: string }>;
}

export interface ShapeVariant {
  http: { method: 'GET' | 'POST'; path: string; body?: string };
  /** DuckDB: the WHERE clause ('true' for none), the selected indicator columns, paging. */
  duck: { where: string; indicators: string[]; page: number; pageSize: number };
}

export interface Shape {
  name: string;
  description: string;
  variants: ShapeVariant[];
}

/** The source file's non-indicator columns (spc_pupils_fsm_ethnicity_yrgp), returned with every DuckDB page. */
export const DUCK_FIXED_COLUMNS = [
  'time_period',
  'time_identifier',
  'geographic_level',
  'country_code',
  'country_name',
  'region_name',
  'region_code',
  'old_la_code',
  'la_name',
  'new_la_code',
  'phase_type_grouping',
  'characteristic_group',
  'characteristic',
  'fsm_eligibility',
];

/** The location column of the source CSV that holds a level's code (as the API's `LA|code|…` compares). */
const LOCATION_CODE_COLUMN: Record<string, string> = { NAT: 'country_code', REG: 'region_code', LA: 'new_la_code' };

const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** `2018/2019` → 201819, as the CSV's `time_period` holds it. */
function csvPeriod(period: string): number {
  const start = Number(period.slice(0, 4));
  return start * 100 + ((start + 1) % 100);
}

/** The shapes of a data set, from the `/meta` answer of the server at `url`. */
export async function fetchShapes(url: string, dataSetId: string): Promise<Shape[]> {
  return buildShapes(dataSetId, (await (await fetch(`${url}/v1/data-sets/${dataSetId}/meta`)).json()) as ApiMeta);
}

/** Sends one variant's request to the server at `url`, as a client does. */
export function fetchVariant(url: string, variant: ShapeVariant): Promise<Response> {
  return fetch(`${url}${variant.http.path}`, {
    method: variant.http.method,
    headers: variant.http.body ? { 'content-type': 'application/json' } : {},
    body: variant.http.body,
  });
}

/**
 * Sends one variant's request to the server at `url` by node:http (on `agent`'s connection when given), asking for
 * gzip or deflate as fetch does; resolves with the answer as sent: status, headers and body still encoded.
 */
export function sendVariantRaw(
  url: string,
  asked: ShapeVariant['http'],
  agent?: http.Agent,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate' };
  if (asked.body) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${asked.path}`, { method: asked.method, headers, agent });
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    });
    request.end(asked.body);
  });
}

export function buildShapes(dataSetId: string, meta: ApiMeta): Shape[] {
  const base = `/v1/data-sets/${dataSetId}/query`;
  const post = (body: unknown) => ({ method: 'POST' as const, path: base, body: JSON.stringify(body) });
  const get = (query: Record<string, string>) => ({
    method: 'GET' as const,
    path: `${base}?${new URLSearchParams(query).toString()}`,
  });
  const filter = (column: string) => {
    const found = meta.filters.find((f) => f.column === column);
    if (!found) throw new Error(`No filter ${column} in the meta`);
    return found;
  };
  const option = (column: string, label: string) => {
    const found = filter(column).options.find((o) => o.label === label);
    if (!found) throw new Error(`No option "${label}" in filter ${column}`);
    return found;
  };
  const levelLabel = (code: string) => meta.geographicLevels.find((l) => l.code === code)?.label ?? code;
  const allIndicators = meta.indicators.map((i) => i.column);
  const indicatorIds = (columns: string[]) => columns.map((c) => meta.indicators.find((i) => i.column === c)!.id);
  const subsets = Array.from({ length: (1 << allIndicators.length) - 1 }, (_, mask) =>
    allIndicators.filter((_, i) => ((mask + 1) >> i) & 1),
  );
  const periods = meta.timePeriods
    .filter((t) => t.code === 'AY')
    .map((t) => t.period)
    .sort();
  const recent = periods.slice(-7);
  const tp = (period: string) => ({ period, code: 'AY' });
  const regions = meta.locations.find((l) => l.level.code === 'REG')?.options ?? [];
  const las = meta.locations.find((l) => l.level.code === 'LA')?.options ?? [];
  const ay = `time_identifier = 'Academic year'`;

  // 1. phase, characteristic, level, one year.
  const simple: ShapeVariant[] = [];
  for (const level of ['LA', 'REG', 'NAT'])
    for (const period of recent)
      for (const phase of filter('phase_type_grouping').options) {
        for (const characteristic of filter('characteristic').options) {
          simple.push({
            http: post({
              criteria: {
                and: [
                  { filters: { eq: phase.id } },
                  { filters: { eq: characteristic.id } },
                  { geographicLevels: { eq: level } },
                  { timePeriods: { eq: tp(period) } },
                ],
              },
            }),
            duck: {
              where: `phase_type_grouping = ${quote(phase.label)} AND characteristic = ${quote(characteristic.label)} AND geographic_level = ${quote(levelLabel(level))} AND time_period = ${csvPeriod(period)} AND ${ay}`,
              indicators: allIndicators,
              page: 1,
              pageSize: 1000,
            },
          });
        }
      }

  // 2. (characteristic in [...] OR fsm known eligible) AND NOT one region AND >= a year AND level in (REG, LA), pages 2–9.
  const characteristics = ['Asian - Indian', 'Black - Black African', 'Year 7'].map((l) => option('characteristic', l));
  const fsmKnown = filter('fsm_eligibility').options.find((o) => /^Known to be eligible/.test(o.label))!;
  const complex: ShapeVariant[] = [];
  for (const page of [2, 3, 4, 5, 6, 7, 8, 9])
    for (const from of periods.slice(-5))
      for (const region of regions) {
        if (!region.code) continue;
        complex.push({
          http: post({
            criteria: {
              and: [
                { or: [{ filters: { in: characteristics.map((c) => c.id) } }, { filters: { eq: fsmKnown.id } }] },
                { not: { locations: { eq: { level: 'REG', code: region.code } } } },
                { timePeriods: { gte: tp(from) } },
                { geographicLevels: { in: ['REG', 'LA'] } },
              ],
            },
            page,
            pageSize: 1000,
          }),
          duck: {
            where:
              `(characteristic IN (${characteristics.map((c) => quote(c.label)).join(', ')}) OR fsm_eligibility = ${quote(fsmKnown.label)})` +
              ` AND region_code IS DISTINCT FROM ${quote(region.code)} AND time_period >= ${csvPeriod(from)} AND ${ay}` +
              ` AND geographic_level IN (${quote(levelLabel('REG'))}, ${quote(levelLabel('LA'))})`,
            indicators: allIndicators,
            page,
            pageSize: 1000,
          },
        });
      }

  // 3. unfiltered, pages 1–400 of 1000.
  const unfiltered: ShapeVariant[] = [];
  for (let page = 1; page <= 400; page++)
    unfiltered.push({
      http: get({ page: String(page) }),
      duck: { where: 'true', indicators: allIndicators, page, pageSize: 1000 },
    });

  // 4. one LA, all years.
  const oneLocation: ShapeVariant[] = las
    .filter((la) => la.code)
    .map((la) => ({
      http: get({ 'locations.eq': `LA|code|${la.code}` }),
      duck: {
        where: `${LOCATION_CODE_COLUMN.LA} = ${quote(la.code!)}`,
        indicators: allIndicators,
        page: 1,
        pageSize: 1000,
      },
    }));

  // 5. level REG, pageSize 10000, pages 1–2, one year left out or none, indicator subsets.
  const bigPage: ShapeVariant[] = [];
  for (const page of [1, 2])
    for (const left of ['', ...recent])
      for (const subset of subsets) {
        const query: Record<string, string> = {
          'geographicLevels.eq': 'REG',
          pageSize: '10000',
          page: String(page),
          indicators: indicatorIds(subset).join(','),
        };
        let where = `geographic_level = ${quote(levelLabel('REG'))}`;
        if (left) {
          query['timePeriods.notEq'] = `${left}|AY`;
          where += ` AND NOT (time_period = ${csvPeriod(left)} AND ${ay})`;
        }
        bigPage.push({ http: get(query), duck: { where, indicators: subset, page, pageSize: 10000 } });
      }

  return [
    {
      name: '1-simple',
      description: 'phase, characteristic, level LA (then REG, NAT), one academic year',
      variants: shuffle(simple),
    },
    {
      name: '2-complex',
      description:
        '(characteristic in 3 OR fsm known eligible) AND NOT one region AND >= a year AND level in [REG, LA], pages 2–9 of 1000',
      variants: shuffle(complex),
    },
    { name: '3-unfiltered', description: 'no criteria, pages of 1000', variants: unfiltered },
    { name: '4-one-location', description: 'one LA, all years', variants: shuffle(oneLocation) },
    { name: '5-big-page', description: 'level REG, pageSize 10000', variants: shuffle(bigPage) },
  ];
}

/** The DuckDB statements of a variant: the count and the page, in the API's default order. */
export function duckStatements(variant: ShapeVariant['duck'], table: string): { count: string; page: string } {
  const columns = [...DUCK_FIXED_COLUMNS, ...variant.indicators].join(', ');
  return {
    count: `SELECT count(*) AS n FROM ${table} WHERE ${variant.where}`,
    page: `SELECT ${columns} FROM ${table} WHERE ${variant.where} ORDER BY time_period DESC, row_id LIMIT ${variant.pageSize} OFFSET ${(variant.page - 1) * variant.pageSize}`,
  };
}
