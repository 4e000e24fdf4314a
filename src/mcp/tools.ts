/**
 * The MCP server's tools: read-only questions on the public statistics catalogue, answered by the statistics API's
 * own services (the same visibility rules, validation and query engine, so the same numbers as the API), each answer
 * citing its data set, version and the explorer's permalink of the same query. No register data is reachable here.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Db } from '../db/database.js';
import { AppError, NotFoundError, ValidationError } from '../errors.js';
import { isUuid } from '../validators.js';
import { listPublicationDataSets, getDataSet } from '../statistics/data-sets/service.js';
import { getDataSetMeta } from '../statistics/meta/service.js';
import type { StatisticsSharedState } from '../statistics/index.js';
import { listPublications } from '../statistics/publications/service.js';
import { canonicalMemberNames, parsePostQuery } from '../statistics/query/http/parse-post.js';
import type { QueryService } from '../statistics/query/service.js';
import type { QueryLabels } from '../statistics/query/labels.js';
import type { DataSetMetaView, DataSetView, PublicationSummary } from '../statistics/schemas.js';
import { explorerPermalink } from './permalink.js';

export interface McpToolDeps {
  db: Db;
  queries: QueryService;
  /** The statistics API's caches (its shared state). */
  caches: Pick<StatisticsSharedState, 'metaViews' | 'resolvedVersions' | 'versionSummaries'>;
  /** Where the explorer is, for links (`https://host`). */
  origin: string;
  /** A tool still running after this is answered with a tool error (REQUEST_TIMEOUT_MS). */
  timeoutMs: number;
  log: { error(object: unknown, message: string): void };
}

/** Rows a query answer shows at most (the total is always stated). */
export const MAX_QUERY_ROWS = 100;
const DEFAULT_QUERY_ROWS = 20;
/** Options listed per filter or geographic level in a metadata answer (the count of the rest is stated). */
export const MAX_META_OPTIONS = 100;
/** Publications whose data sets a search looks through. */
const MAX_SEARCHED_PUBLICATIONS = 100;

const SERVER_INSTRUCTIONS = `Official education statistics for England (the public statistics data set API). Find a data set with
search_data_sets, read its filters, indicators, locations and time periods with get_data_set_metadata, then run
query_data_set with ids from the metadata. Cite the data set, version and explorer link each answer gives.`;

function text(value: string, structured?: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(structured ? { structuredContent: structured } : {}) };
}

/** An error a tool reports to the assistant: what the API would have said, never a stack or a 500. */
function toolError(error: unknown, log: McpToolDeps['log']): CallToolResult {
  let message: string;
  if (error instanceof ValidationError) {
    message = `${error.title} ${error.errors.map((e) => `${e.path ? `${e.path}: ` : ''}${e.message}${e.code ? ` (${e.code})` : ''}`).join('; ')}`;
  } else if (error instanceof AppError) {
    message = `${error.status} ${error.title}: ${error.detail ?? ''}`.trim();
  } else {
    log.error({ err: error }, 'MCP tool failed');
    message = 'The statistics service could not answer this (an internal error); try again shortly.';
  }
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** Runs a tool under the time bound; any failure becomes a tool error. */
async function guarded(deps: McpToolDeps, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AppError(504, 'Gateway Timeout', `The tool did not complete within ${deps.timeoutMs} ms.`)),
      deps.timeoutMs,
    );
  });
  try {
    return await Promise.race([run(), timeout]);
  } catch (error) {
    return toolError(error, deps.log);
  } finally {
    clearTimeout(timer);
  }
}

function words(search: string): string[] {
  return search.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function dataSetId(id: string): string {
  if (!isUuid(id)) throw new NotFoundError(`No data set ${id}: data set ids are uuids (search_data_sets finds them).`);
  return id;
}

function markdownCell(value: string): string {
  return value.replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}

function markdownTable(columns: string[], rows: string[][]): string {
  return [columns, columns.map(() => '---'), ...rows]
    .map((cells) => `| ${cells.map(markdownCell).join(' | ')} |`)
    .join('\n');
}

function cite(dataSet: DataSetView, version: string, permalink: { url: string; exact: boolean }): string {
  const link = permalink.exact
    ? permalink.url
    : `${permalink.url} (the nearest the explorer can show; the query itself is in the API's form)`;
  return `Source: "${dataSet.title}" (data set ${dataSet.id}, version ${version}), Department for Education. Explorer: ${link}`;
}

/** Every tool only reads, and asking twice gives the same answer. */
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

export function createMcpServer(deps: McpToolDeps): McpServer {
  const server = new McpServer(
    { name: 'education-statistics', version: '1.0.0' },
    { instructions: SERVER_INSTRUCTIONS },
  );
  registerSearchPublications(server, deps);
  registerSearchDataSets(server, deps);
  registerMetadataTool(server, deps);
  registerQueryTool(server, deps);
  return server;
}

/** search_publications: publications by words of their title or summary. */
function registerSearchPublications(server: McpServer, deps: McpToolDeps): void {
  server.registerTool(
    'search_publications',
    {
      title: 'Search publications',
      description:
        'Publications (statistical releases) whose title or summary matches every word of `query` (prefixes match), best first.',
      inputSchema: { query: z.string().min(1).max(200).describe('Words to look for, e.g. "pupil absence".') },
      annotations: READ_ONLY,
    },
    ({ query }) =>
      guarded(deps, async () => {
        const { paging, results } = await listPublications(deps.db, { search: query, page: 1, pageSize: 20 });
        const lines = results.map((p) => `- ${p.title} (publication ${p.id}): ${p.summary}`);
        return text(
          results.length === 0
            ? `No publication matches "${query}".`
            : `${paging.totalResults} publication(s) match "${query}"${paging.totalResults > results.length ? `; the first ${results.length}` : ''}:\n${lines.join('\n')}`,
          { totalResults: paging.totalResults, publications: results },
        );
      }),
  );
}

/** search_data_sets: data sets by words of their title or summary. */
function registerSearchDataSets(server: McpServer, deps: McpToolDeps): void {
  server.registerTool(
    'search_data_sets',
    {
      title: 'Search data sets',
      description:
        "Data sets whose title or summary, or whose publication's title or summary, holds every word of `query` (prefixes match). Gives each data set's id, latest version, time periods and levels covered.",
      inputSchema: {
        query: z.string().min(1).max(200).describe('Words to look for, e.g. "absence" or "attendance weekly".'),
      },
      annotations: READ_ONLY,
    },
    ({ query }) =>
      guarded(deps, async () => {
        const wanted = words(query);
        if (wanted.length === 0)
          throw new ValidationError([
            { path: 'query', code: 'NotEmpty', message: 'Give at least one word to look for.' },
          ]);
        const { results: publications } = await listPublications(deps.db, {
          page: 1,
          pageSize: MAX_SEARCHED_PUBLICATIONS,
        });
        const found: Array<{ publication: PublicationSummary; dataSet: DataSetView }> = [];
        for (const publication of publications) {
          const { results } = await listPublicationDataSets(deps.db, deps.caches.versionSummaries, publication.id, {
            page: 1,
            pageSize: 100,
          });
          for (const dataSet of results) {
            const haystack = words(`${dataSet.title} ${dataSet.summary} ${publication.title} ${publication.summary}`);
            if (wanted.every((w) => haystack.some((h) => h.startsWith(w)))) found.push({ publication, dataSet });
          }
        }
        const lines = found.map(({ publication, dataSet }) => {
          const latest = dataSet.latestVersion;
          const coverage = latest
            ? `, version ${latest.version}, ${latest.timePeriods.start} to ${latest.timePeriods.end}, levels ${latest.geographicLevels.join(', ')}`
            : '';
          return `- "${dataSet.title}" (data set ${dataSet.id}${coverage}) in "${publication.title}". Explorer: ${deps.origin}/data-sets/${dataSet.id}`;
        });
        return text(
          found.length === 0
            ? `No data set matches "${query}".`
            : `${found.length} data set(s) match "${query}":\n${lines.join('\n')}`,
          {
            dataSets: found.map(({ publication, dataSet }) => ({
              ...dataSet,
              publication: { id: publication.id, title: publication.title },
              explorerUrl: `${deps.origin}/data-sets/${dataSet.id}`,
            })),
          },
        );
      }),
  );
}

/** get_data_set_metadata: a version's filters, indicators, levels, locations and periods with ids and labels. */
function registerMetadataTool(server: McpServer, deps: McpToolDeps): void {
  server.registerTool(
    'get_data_set_metadata',
    {
      title: "Read a data set's metadata",
      description: `A data set version's filters (with their options), indicators, geographic levels and locations, and time periods, each with its id and label: the ids query_data_set takes. At most ${MAX_META_OPTIONS} options per filter or level are listed (the number of the rest is stated; query by location code instead).`,
      inputSchema: {
        dataSetId: z.string().describe('The data set id (a uuid, from search_data_sets).'),
        dataSetVersion: z
          .string()
          .max(20)
          .optional()
          .describe('A version (`1.0`, `1.*`); the latest published when absent.'),
      },
      annotations: READ_ONLY,
    },
    ({ dataSetId: id, dataSetVersion }) =>
      guarded(deps, async () => {
        const dataSet = await getDataSet(deps.db, deps.caches.versionSummaries, dataSetId(id));
        const meta = await getDataSetMeta(deps.db, deps.caches, { dataSetId: id, dataSetVersion });
        const version = dataSetVersion ?? dataSet.latestVersion?.version ?? '';
        const capped = <T>(items: T[]) => ({
          items: items.slice(0, MAX_META_OPTIONS),
          more: Math.max(0, items.length - MAX_META_OPTIONS),
        });
        const filters = meta.filters.map((f) => {
          const { items, more } = capped(f.options);
          return { id: f.id, column: f.column, label: f.label, options: items, ...(more ? { moreOptions: more } : {}) };
        });
        const locations = meta.locations.map((l) => {
          const { items, more } = capped(l.options);
          return { level: l.level, options: items, ...(more ? { moreOptions: more } : {}) };
        });
        const lines = [
          `"${dataSet.title}" (data set ${dataSet.id}, version ${version}).`,
          `Indicators: ${meta.indicators.map((i) => `${i.label} [${i.id}]${i.unit ? ` (${i.unit})` : ''}`).join('; ')}.`,
          ...filters.map(
            (f) =>
              `Filter ${f.label} [${f.id}]: ${f.options.map((o) => `${o.label} [${o.id}]`).join('; ')}${f.moreOptions ? `; and ${f.moreOptions} more` : ''}.`,
          ),
          `Geographic levels: ${meta.geographicLevels.map((l) => `${l.label} [${l.code}]`).join('; ')}.`,
          ...locations.map(
            (l) =>
              `Locations at ${l.level.label}: ${l.options.map((o) => `${o.label} [${o.id}]`).join('; ')}${l.moreOptions ? `; and ${l.moreOptions} more` : ''}.`,
          ),
          `Time periods: ${meta.timePeriods.map((t) => `${t.label} [${t.period}|${t.code}]`).join('; ')}.`,
          `Explorer: ${deps.origin}/data-sets/${dataSet.id}`,
        ];
        return text(lines.join('\n'), {
          dataSet: { id: dataSet.id, title: dataSet.title, version },
          filters,
          indicators: meta.indicators,
          geographicLevels: meta.geographicLevels,
          locations,
          timePeriods: meta.timePeriods,
        });
      }),
  );
}

/** query_data_set: a query in the API's POST form, answered as a labelled table citing its source. */
function registerQueryTool(server: McpServer, deps: McpToolDeps): void {
  const Sort = z.object({
    field: z
      .string()
      .describe(
        '`timePeriod`, `geographicLevel`, `location|{level}`, `filter|{filterId}` or `indicator|{indicatorId}`.',
      ),
    direction: z.enum(['Asc', 'Desc']),
  });
  server.registerTool(
    'query_data_set',
    {
      title: 'Query a data set',
      description: `Runs a query on a data set, in the API's own POST form: \`criteria\` (facets \`filters\`, \`geographicLevels\`, \`locations\`, \`timePeriods\` with \`eq\`, \`notEq\`, \`in\`, \`notIn\` (and \`gt\`, \`gte\`, \`lt\`, \`lte\` for periods), combined with \`and\`, \`or\`, \`not\`), \`indicators\` (ids), \`sorts\`. Answers a labelled table of at most \`maxRows\` rows (up to ${MAX_QUERY_ROWS}) with the total number of matching rows, citing the data set, version and the explorer's link to the same query. Example criteria: {"and": [{"geographicLevels": {"eq": "REG"}}, {"timePeriods": {"eq": {"period": "2023/2024", "code": "AY"}}}, {"filters": {"eq": "<option id>"}}]}; a location: {"locations": {"eq": {"level": "LA", "code": "E08000019"}}}.`,
      inputSchema: {
        dataSetId: z.string().describe('The data set id (a uuid).'),
        dataSetVersion: z.string().max(20).optional().describe('A version; the latest published when absent.'),
        criteria: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("Criteria in the API's POST form; no criteria: every row."),
        indicators: z.array(z.string()).max(100).optional().describe('Indicator ids; every indicator when absent.'),
        sorts: z.array(Sort).max(10).optional(),
        maxRows: z
          .number()
          .int()
          .min(1)
          .max(MAX_QUERY_ROWS)
          .optional()
          .describe(`Rows to show (default ${DEFAULT_QUERY_ROWS}).`),
      },
      annotations: READ_ONLY,
    },
    (input) =>
      guarded(deps, async () => {
        const id = dataSetId(input.dataSetId);
        const given = {
          criteria: input.criteria,
          indicators: input.indicators,
          sorts: input.sorts,
          pageSize: input.maxRows ?? DEFAULT_QUERY_ROWS,
        };
        // The members given, as the API reads a POST body.
        const body = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
        const { query } = parsePostQuery(canonicalMemberNames(body));
        const dataSet = await getDataSet(deps.db, deps.caches.versionSummaries, id);
        const version = input.dataSetVersion ?? dataSet.latestVersion?.version;
        const answer = await deps.queries.page(
          { dataSetId: id, dataSetVersion: version, previewToken: undefined },
          query,
          { labels: true },
        );
        const meta = await getDataSetMeta(deps.db, deps.caches, { dataSetId: id, dataSetVersion: version });
        const page = JSON.parse(answer.json.toString('utf8')) as QueryPageJson;
        const table = labelledTable(page, meta);
        const permalink = explorerPermalink(
          deps.origin,
          id,
          input.dataSetVersion,
          { criteria: input.criteria, indicators: input.indicators, sorts: input.sorts },
          meta,
        );
        const total = page.paging.totalResults;
        const shown = `Showing ${page.results.length} of ${total} matching row(s)${total > page.results.length ? ' (narrow the criteria, or download every row from the explorer link)' : ''}.`;
        const warnings = page.warnings
          .filter((w) => w.code !== 'NoResults')
          .map((w) => `Warning: ${w.message}${w.detail ? ` ${JSON.stringify(w.detail)}` : ''}`);
        return text(
          [
            shown,
            ...warnings,
            '',
            markdownTable(table.columns, table.rows),
            '',
            cite(dataSet, version ?? '', permalink),
          ].join('\n'),
          {
            source: {
              dataSetId: id,
              title: dataSet.title,
              version,
              permalink: permalink.url,
              permalinkExact: permalink.exact,
            },
            totalResults: total,
            columns: table.columns,
            rows: table.rows,
            warnings: page.warnings,
          },
        );
      }),
  );
}

interface QueryPageJson {
  paging: { totalResults: number };
  results: Array<{
    timePeriod: { period: string; code: string };
    geographicLevel: string;
    locations: Record<string, string>;
    filters: Record<string, string>;
    values: Record<string, string>;
  }>;
  warnings: Array<{ code: string; message: string; detail?: unknown }>;
  labels: QueryLabels;
}

/** The page as a table of labels: time period, level, a column per level's location, per filter, per indicator. */
function labelledTable(page: QueryPageJson, meta: DataSetMetaView): { columns: string[]; rows: string[][] } {
  const levels = meta.locations
    .map((l) => l.level)
    .filter((level) => page.results.some((r) => r.locations[level.code] !== undefined));
  const filters = meta.filters.filter((f) => page.results.some((r) => r.filters[f.id] !== undefined));
  const indicators = meta.indicators.filter((i) => page.results.some((r) => r.values[i.id] !== undefined));
  const columns = [
    'Time period',
    'Geographic level',
    ...levels.map((l) => l.label),
    ...filters.map((f) => f.label),
    ...indicators.map((i) => (i.unit ? `${i.label} (${i.unit})` : i.label)),
  ];
  const { labels } = page;
  const rows = page.results.map((r) => [
    labels.timePeriods[`${r.timePeriod.period}|${r.timePeriod.code}`] ?? r.timePeriod.period,
    labels.geographicLevels[r.geographicLevel] ?? r.geographicLevel,
    ...levels.map((l) => (r.locations[l.code] ? (labels.locations[r.locations[l.code]!] ?? '') : '')),
    ...filters.map((f) => (r.filters[f.id] ? (labels.filterOptions[r.filters[f.id]!] ?? '') : '')),
    ...indicators.map((i) => r.values[i.id] ?? ''),
  ]);
  return { columns, rows };
}
