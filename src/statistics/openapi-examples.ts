/**
 * The statistics document's groups, descriptions and examples: one tag and description per operationId, and example
 * requests on the "Absence rates by school and geography" data set, which every catalogue holds (the seed imports
 * it first, the test template too). test/docs/examples.test.ts sends them to a fresh server and records the answers
 * in openapi-examples.recorded.json, which the document shows (applied by the swagger transform in
 * src/plugins/openapi.ts).
 */
import { projectPath } from '../paths.js';
import {
  recordedExamples,
  withExamples,
  type ExampleRequest,
  type OperationDocs,
} from '../plugins/openapi-examples.js';

type Json = Record<string, unknown>;

export const EXAMPLE_PUBLICATION_ID = '3f1c2a9e-7d4b-4c55-9a61-2b8f0e6d4a10';
export const EXAMPLE_DATA_SET_ID = '7d4e2f60-1b3c-4a8e-9f25-6c0a3b9d8e71';
/**
 * A data set whose only version is a draft, made by test/docs/examples.test.ts before it records the 403 of every
 * operation that documents one (without a preview token, neither the data set nor its version is available).
 */
export const EXAMPLE_DRAFT_DATA_SET_ID = '5b0c8e1a-3d2f-4c6b-8e9a-7f1d2c3b4a50';
/** A well-formed id that names nothing. */
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

export const STATISTICS_TAGS = [
  { name: 'Publications', description: 'Statistics publications with data available for querying' },
  { name: 'Data sets', description: 'Statistics data sets, their versions, changes, metadata, CSV and Parquet files' },
  { name: 'Query', description: 'Rows of a data set version that match criteria, as JSON or CSV' },
  { name: 'Events', description: 'Changes to data sets and their versions, in commit order' },
  { name: 'Health', description: 'Liveness and readiness of the service' },
];

export const STATISTICS_OPERATION_DOCS: OperationDocs = {
  ListPublications: {
    tag: 'Publications',
    description:
      'Finds publications by words in their title or summary, or lists them all, a page at a time. Start here to find the data sets of a topic.',
  },
  GetPublication: {
    tag: 'Publications',
    description: 'Reads one publication’s title, summary and last publication date.',
  },
  ListPublicationDataSets: {
    tag: 'Publications',
    description: 'Lists the data sets of a publication with their latest version: the ids a query needs.',
  },
  GetDataSet: {
    tag: 'Data sets',
    description:
      'Reads a data set’s summary: its status, its latest version with the time periods, geographic levels, filters and indicators it covers.',
  },
  ListDataSetVersions: {
    tag: 'Data sets',
    description: 'Lists the versions of a data set, newest first, with their status and what each covers.',
  },
  GetDataSetVersion: { tag: 'Data sets', description: 'Reads one version of a data set, by number or by wildcard.' },
  GetDataSetVersionChanges: {
    tag: 'Data sets',
    description:
      'Says what a version changed relative to the one before: filters, options, indicators, locations and time periods added, updated or deleted.',
  },
  GetDataSetMeta: {
    tag: 'Data sets',
    description:
      'Lists what a query can ask for: the filters and their options, indicators, geographic levels, locations and time periods of a version, each with the id a query uses.',
  },
  DownloadDataSetCsv: {
    tag: 'Data sets',
    description: 'Downloads a whole version as the CSV file it was published as, with labels instead of ids.',
  },
  DownloadDataSetParquet: {
    tag: 'Data sets',
    description:
      'Downloads a whole version as a Parquet file (typed columns, labels), or one byte range of it: what R, Python and DuckDB read directly, over HTTP too.',
  },
  QueryDataSetGet: {
    tag: 'Query',
    description:
      'Queries a version with criteria in the query string: each criterion narrows the rows (filters of one kind match any option listed). For criteria combined with `and`, `or` and `not`, use the POST form.',
  },
  QueryDataSetPost: {
    tag: 'Query',
    description:
      'Queries a version with criteria in a JSON body, combined with `and`, `or` and `not`: the form clients such as eesyapi use.',
  },
  ListEvents: {
    tag: 'Events',
    description:
      'Follows what changed in the catalogue (data sets created, versions published, deprecated or withdrawn), oldest first: keep the `nextCursor` of each page and send it as `after` next time.',
  },
  GetLiveness: {
    tag: 'Health',
    description: 'Answers 200 while the process runs, without touching the database (for a liveness probe).',
  },
  GetReadiness: {
    tag: 'Health',
    description:
      'Answers 200 when the database answers and 503 when it does not (for a readiness probe and load balancers).',
  },
};

/** An example request of the statistics API (its paths as the document shows them, under `/v1`). */
export interface StatisticsExample extends ExampleRequest {
  operationId: string;
  name: string;
  summary: string;
  status: number;
  /** A CSV answer is shown by its first lines; the test checks that the real one starts with them. */
  firstLines?: number;
  /** A binary answer is shown by its first characters (a Parquet file: its magic number). */
  firstCharacters?: number;
  /** The events older than now are deleted first, as retention would after 90 days. */
  purgesEvents?: boolean;
}

const dataSet = { dataSetId: EXAMPLE_DATA_SET_ID };
const publication = { publicationId: EXAMPLE_PUBLICATION_ID };
const QUERY = '/v1/data-sets/{dataSetId}/query';

export const STATISTICS_EXAMPLES: StatisticsExample[] = [
  {
    operationId: 'ListPublications',
    name: 'search',
    summary: 'Publications about absence',
    status: 200,
    method: 'GET',
    path: '/v1/publications',
    query: { search: 'absence', pageSize: '5' },
  },
  {
    operationId: 'ListPublications',
    name: 'short-search',
    summary: 'A search shorter than 3 characters',
    status: 400,
    method: 'GET',
    path: '/v1/publications',
    query: { search: 'ab' },
  },
  {
    operationId: 'GetPublication',
    name: 'publication',
    summary: 'One publication',
    status: 200,
    method: 'GET',
    path: '/v1/publications/{publicationId}',
    pathParams: publication,
  },
  {
    operationId: 'GetPublication',
    name: 'unknown',
    summary: 'An id no publication has',
    status: 404,
    method: 'GET',
    path: '/v1/publications/{publicationId}',
    pathParams: { publicationId: UNKNOWN_ID },
  },
  {
    operationId: 'GetPublication',
    name: 'unknown-parameter',
    summary: 'A query parameter the operation does not have',
    status: 400,
    method: 'GET',
    path: '/v1/publications/{publicationId}',
    pathParams: publication,
    query: { fields: 'title' },
  },
  {
    operationId: 'ListPublicationDataSets',
    name: 'data-sets',
    summary: 'The publication’s data sets',
    status: 200,
    method: 'GET',
    path: '/v1/publications/{publicationId}/data-sets',
    pathParams: publication,
  },
  {
    operationId: 'ListPublicationDataSets',
    name: 'bad-page-size',
    summary: 'A page size over 20',
    status: 400,
    method: 'GET',
    path: '/v1/publications/{publicationId}/data-sets',
    pathParams: publication,
    query: { pageSize: '50' },
  },
  {
    operationId: 'ListPublicationDataSets',
    name: 'not-an-id',
    summary: 'An id that is not a uuid',
    status: 404,
    method: 'GET',
    path: '/v1/publications/{publicationId}/data-sets',
    pathParams: { publicationId: 'absence' },
  },
  {
    operationId: 'GetDataSet',
    name: 'data-set',
    summary: 'The absence data set',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}',
    pathParams: dataSet,
  },
  {
    operationId: 'GetDataSet',
    name: 'unknown',
    summary: 'An id no data set has',
    status: 404,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}',
    pathParams: { dataSetId: UNKNOWN_ID },
  },
  {
    operationId: 'GetDataSet',
    name: 'unknown-parameter',
    summary: 'A query parameter the operation does not have',
    status: 400,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}',
    pathParams: dataSet,
    query: { fields: 'title' },
  },
  {
    operationId: 'ListDataSetVersions',
    name: 'versions',
    summary: 'Its versions',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions',
    pathParams: dataSet,
  },
  {
    operationId: 'ListDataSetVersions',
    name: 'bad-page',
    summary: 'Page 0',
    status: 400,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions',
    pathParams: dataSet,
    query: { page: '0' },
  },
  {
    operationId: 'ListDataSetVersions',
    name: 'unknown',
    summary: 'An id no data set has',
    status: 404,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions',
    pathParams: { dataSetId: UNKNOWN_ID },
  },
  {
    operationId: 'GetDataSetVersion',
    name: 'version',
    summary: 'Version 1.0',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}',
    pathParams: { ...dataSet, dataSetVersion: '1.0' },
  },
  {
    operationId: 'GetDataSetVersion',
    name: 'wildcard',
    summary: 'The latest 1.x version',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}',
    pathParams: { ...dataSet, dataSetVersion: '1.*' },
  },
  {
    operationId: 'GetDataSetVersion',
    name: 'unknown',
    summary: 'A version that does not exist',
    status: 404,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}',
    pathParams: { ...dataSet, dataSetVersion: '9.0' },
  },
  {
    operationId: 'GetDataSetVersion',
    name: 'unknown-parameter',
    summary: 'A query parameter the operation does not have',
    status: 400,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}',
    pathParams: { ...dataSet, dataSetVersion: '1.0' },
    query: { fields: 'title' },
  },
  {
    operationId: 'GetDataSetVersionChanges',
    name: 'changes',
    summary: 'What version 1.0 changed (a first version adds everything)',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}/changes',
    pathParams: { ...dataSet, dataSetVersion: '1.0' },
  },
  {
    operationId: 'GetDataSetVersionChanges',
    name: 'unknown',
    summary: 'A version that does not exist',
    status: 404,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}/changes',
    pathParams: { ...dataSet, dataSetVersion: '9.0' },
  },
  {
    operationId: 'GetDataSetVersionChanges',
    name: 'bad-flag',
    summary: 'includePatchHistory that is not a boolean',
    status: 400,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}/changes',
    pathParams: { ...dataSet, dataSetVersion: '1.0' },
    query: { includePatchHistory: 'maybe' },
  },
  {
    operationId: 'GetDataSetMeta',
    name: 'indicators-and-periods',
    summary: 'Indicators and time periods only',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/meta',
    pathParams: dataSet,
    query: { types: 'Indicators,TimePeriods' },
  },
  {
    operationId: 'GetDataSetMeta',
    name: 'unknown-type',
    summary: 'A section that does not exist',
    status: 400,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/meta',
    pathParams: dataSet,
    query: { types: 'Colours' },
  },
  {
    operationId: 'GetDataSetMeta',
    name: 'unknown',
    summary: 'An id no data set has',
    status: 404,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/meta',
    pathParams: { dataSetId: UNKNOWN_ID },
  },
  {
    operationId: 'DownloadDataSetCsv',
    name: 'csv',
    summary: 'The CSV file (its first lines)',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/csv',
    pathParams: dataSet,
    firstLines: 3,
  },
  {
    operationId: 'DownloadDataSetCsv',
    name: 'unknown-version',
    summary: 'A version that does not exist',
    status: 404,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/csv',
    pathParams: dataSet,
    query: { dataSetVersion: '9.0' },
  },
  {
    operationId: 'DownloadDataSetParquet',
    name: 'parquet',
    summary: 'The Parquet file (its first 4 bytes: the magic number)',
    status: 200,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/parquet',
    pathParams: dataSet,
    firstCharacters: 4,
  },
  {
    operationId: 'DownloadDataSetParquet',
    name: 'magic',
    summary: 'The first 4 bytes of the Parquet file (a range: the magic number)',
    status: 206,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/parquet',
    pathParams: dataSet,
    headers: { range: 'bytes=0-3' },
  },
  {
    operationId: 'DownloadDataSetParquet',
    name: 'range-past-end',
    summary: 'A range that starts past the end of the file',
    status: 416,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/parquet',
    pathParams: dataSet,
    headers: { range: 'bytes=999999999-' },
  },
  {
    operationId: 'DownloadDataSetParquet',
    name: 'unknown-version',
    summary: 'A version that does not exist',
    status: 404,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/parquet',
    pathParams: dataSet,
    query: { dataSetVersion: '9.0' },
  },
  {
    operationId: 'DownloadDataSetParquet',
    name: 'unknown-parameter',
    summary: 'A parameter the operation does not have',
    status: 400,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/parquet',
    pathParams: dataSet,
    query: { format: 'csv' },
  },
  {
    operationId: 'DownloadDataSetCsv',
    name: 'unknown-parameter',
    summary: 'A parameter the operation does not have',
    status: 400,
    method: 'GET',
    path: '/v1/data-sets/{dataSetId}/csv',
    pathParams: dataSet,
    query: { version: '1.0' },
  },
  {
    operationId: 'QueryDataSetGet',
    name: 'national-enrolments',
    summary:
      'Enrolments and absence, national rows of England in 2020/21 (a location alone would match every row within it), 2 rows a page',
    status: 200,
    method: 'GET',
    path: QUERY,
    pathParams: dataSet,
    query: {
      indicators: 'dP0Zw,IzBzg',
      'geographicLevels.in': 'NAT',
      'locations.in': 'NAT|code|E92000001',
      'timePeriods.in': '2020/2021|AY',
      pageSize: '2',
    },
  },
  {
    operationId: 'QueryDataSetGet',
    name: 'bad-period',
    summary: 'A time period without its code',
    status: 400,
    method: 'GET',
    path: QUERY,
    pathParams: dataSet,
    query: { indicators: 'dP0Zw', 'timePeriods.in': '2020/2021' },
  },
  {
    operationId: 'QueryDataSetGet',
    name: 'unknown',
    summary: 'An id no data set has',
    status: 404,
    method: 'GET',
    path: QUERY,
    pathParams: { dataSetId: UNKNOWN_ID },
    query: { indicators: 'dP0Zw' },
  },
  {
    operationId: 'QueryDataSetGet',
    name: 'labels',
    summary: 'The same page with the labels of its ids (`labels=true`)',
    status: 200,
    method: 'GET',
    path: QUERY,
    pathParams: dataSet,
    query: {
      indicators: 'dP0Zw',
      'locations.in': 'LA|code|E09000003',
      'timePeriods.in': '2020/2021|AY',
      pageSize: '1',
      labels: 'true',
    },
  },
  {
    operationId: 'QueryDataSetGet',
    name: 'not-acceptable',
    summary: 'An Accept header that allows none of the types the query answers in',
    status: 406,
    method: 'GET',
    path: QUERY,
    pathParams: dataSet,
    headers: { accept: 'text/html' },
  },
  {
    operationId: 'QueryDataSetPost',
    name: 'criteria',
    summary:
      'Year 4 or Year 6, national rows of England (the level too: the location alone matches every row within England), 2020/21',
    status: 200,
    method: 'POST',
    path: QUERY,
    pathParams: dataSet,
    body: {
      criteria: {
        and: [
          { geographicLevels: { eq: 'NAT' } },
          { locations: { in: [{ level: 'NAT', code: 'E92000001' }] } },
          { timePeriods: { eq: { period: '2020/2021', code: 'AY' } } },
          { filters: { in: ['IzBzg', 'it6Xr'] } },
        ],
      },
      indicators: ['dP0Zw', 'IzBzg'],
      sorts: [{ field: 'timePeriod', direction: 'Desc' }],
      pageSize: 2,
    },
  },
  {
    operationId: 'QueryDataSetPost',
    name: 'bad-criteria',
    summary: 'An unknown geographic level and no indicators',
    status: 400,
    method: 'POST',
    path: QUERY,
    pathParams: dataSet,
    body: { criteria: { geographicLevels: { eq: 'Country' } }, indicators: [] },
  },
  {
    operationId: 'QueryDataSetPost',
    name: 'unknown',
    summary: 'An id no data set has',
    status: 404,
    method: 'POST',
    path: QUERY,
    pathParams: { dataSetId: UNKNOWN_ID },
    body: { indicators: ['dP0Zw'] },
  },
  {
    operationId: 'QueryDataSetPost',
    name: 'not-acceptable',
    summary: 'An Accept header that allows none of the types the query answers in',
    status: 406,
    method: 'POST',
    path: QUERY,
    pathParams: dataSet,
    headers: { accept: 'application/xml' },
    body: { indicators: ['dP0Zw'] },
  },
  {
    operationId: 'ListEvents',
    name: 'page',
    summary: 'The first 2 events kept',
    status: 200,
    method: 'GET',
    path: '/v1/events',
    query: { limit: '2' },
  },
  {
    operationId: 'ListEvents',
    name: 'unknown-type',
    summary: 'An event type that does not exist',
    status: 400,
    method: 'GET',
    path: '/v1/events',
    query: { type: 'data_set.exploded' },
  },
  {
    operationId: 'ListEvents',
    name: 'expired',
    summary: 'A cursor older than the retention period (its events were deleted)',
    status: 410,
    method: 'GET',
    path: '/v1/events',
    query: { after: Buffer.from('ev1.1', 'latin1').toString('base64url') },
    purgesEvents: true,
  },
  {
    operationId: 'GetLiveness',
    name: 'live',
    summary: 'The process runs',
    status: 200,
    method: 'GET',
    path: '/health/live',
  },
  {
    operationId: 'GetReadiness',
    name: 'ready',
    summary: 'The database answers',
    status: 200,
    method: 'GET',
    path: '/health/ready',
  },
];

/** The answers this service gave to STATISTICS_EXAMPLES (written by test/docs/examples.test.ts). */
export const statisticsRecordedExamples = recordedExamples(
  projectPath('src/statistics/openapi-examples.recorded.json'),
);

/** The service document with the groups, descriptions and recorded examples. */
export function withStatisticsExamples(document: Json): Json {
  return withExamples(
    { ...document, tags: STATISTICS_TAGS },
    STATISTICS_OPERATION_DOCS,
    statisticsRecordedExamples().statistics ?? {},
  );
}
