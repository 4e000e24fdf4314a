import type { FastifyInstance } from 'fastify';
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * Response schemas of the statistics API. One file (over 400 lines) on purpose: it is the wire contract of every
 * read endpoint in one place, each schema a few lines, registered together; the query endpoints' own contract is
 * in query/contract.ts.
 * Each has an `$id`, is added once to the `/v1` scope (registerStatisticsSchemas) and is referenced with `ref()`,
 * so /openapi.json lists them under components.schemas. Fields that the reference omits when null are optional.
 */

/** A `$ref` to a registered schema, typed as that schema. */
export function ref<T extends TSchema & { $id?: string }>(schema: T) {
  if (!schema.$id) throw new Error('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
}

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

// -- errors ----------------------------------------------------------------------------------

export const ErrorViewModel = Type.Object(
  {
    message: Type.String({ description: 'What is wrong, in words.' }),
    code: Type.String({
      description:
        'A machine-readable code such as `UnknownField`, `InvalidValue`, `AllowedValue`, `InclusiveBetween`.',
    }),
    path: Type.Optional(
      Type.String({
        description:
          'Where the problem is: a query parameter or JSON path such as `types[1]` or `criteria.filters.in[2]`. Omitted for problems with the whole request.',
      }),
    ),
    detail: Type.Optional(
      Type.Unknown({ description: 'Details of the problem, such as the `value` given and the `allowed` values.' }),
    ),
  },
  { $id: 'ErrorViewModel', additionalProperties: false },
);

export const ValidationProblemViewModel = Type.Object(
  {
    type: Type.String({ examples: ['https://tools.ietf.org/html/rfc9110#section-15.5.1'] }),
    title: Type.String({ examples: ['One or more validation errors occurred.'] }),
    status: Type.Integer({ examples: [400] }),
    errors: Type.Array(ref(ErrorViewModel)),
    omittedErrors: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Problems found beyond the first 100 listed in `errors`, only counted (not in the reference service).',
      }),
    ),
    traceId: Type.String(),
  },
  {
    $id: 'ValidationProblemViewModel',
    additionalProperties: false,
    description: 'A 400 response: every problem with the request.',
    examples: [
      {
        type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
        title: 'One or more validation errors occurred.',
        status: 400,
        errors: [
          {
            message: 'Must be between 1 and 40 (inclusive).',
            code: 'InclusiveBetween',
            path: 'pageSize',
            detail: { from: 1, to: 40, value: 41 },
          },
          {
            message: 'The field was not expected in the request and should be removed.',
            code: 'UnknownField',
            path: 'foo',
          },
        ],
        traceId: '0HN7VQ7K3LJ5S:00000001',
      },
    ],
  },
);

export const ProblemDetailsViewModel = Type.Object(
  {
    type: Type.String({ examples: ['https://tools.ietf.org/html/rfc9110#section-15.5.5'] }),
    title: Type.String({ examples: ['Not Found'] }),
    status: Type.Integer({ examples: [404] }),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    traceId: Type.Optional(Type.String()),
  },
  {
    $id: 'ProblemDetailsViewModel',
    additionalProperties: true,
    description: 'RFC 9457 problem details (403, 404, 429, 5xx).',
  },
);

// -- paging ----------------------------------------------------------------------------------------------------

export const PagingViewModel = Type.Object(
  {
    page: Type.Integer({ description: 'The current page number.' }),
    pageSize: Type.Integer({ description: 'The maximum number of results per page.' }),
    totalResults: Type.Integer({ description: 'The total number of results across all pages.' }),
    totalPages: Type.Integer({ description: 'The total number of pages (1 when there are no results).' }),
  },
  { $id: 'PagingViewModel', additionalProperties: false },
);

// -- publications ----------------------------------------------------------------------------------------------

export const PublicationSummaryViewModel = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    title: Type.String(),
    slug: Type.String(),
    summary: Type.String(),
    lastPublished: DateTime('When the publication last had a data set version published.'),
  },
  {
    $id: 'PublicationSummaryViewModel',
    additionalProperties: false,
    examples: [
      {
        id: '3f1c2a9e-7d4b-4c55-9a61-2b8f0e6d4a10',
        title: 'Pupil absence in schools in England',
        slug: 'pupil-absence-in-schools-in-england',
        summary: 'Absence by school, local authority, region and nation.',
        lastPublished: '2024-03-21T09:30:00.000Z',
      },
    ],
  },
);

export const PublicationPaginatedListViewModel = Type.Object(
  { paging: ref(PagingViewModel), results: Type.Array(ref(PublicationSummaryViewModel)) },
  { $id: 'PublicationPaginatedListViewModel', additionalProperties: false },
);

// -- data sets and versions ------------------------------------------------------------------------------------

export const DataSetStatusSchema = Type.Union(
  [Type.Literal('Published'), Type.Literal('Deprecated'), Type.Literal('Withdrawn'), Type.Literal('Draft')],
  { description: 'Published, Deprecated or Withdrawn (Draft only with a preview token).' },
);
export const DataSetVersionStatusSchema = DataSetStatusSchema;
export const DataSetVersionTypeSchema = Type.Union([
  Type.Literal('Major'),
  Type.Literal('Minor'),
  Type.Literal('Patch'),
]);

export const FileViewModel = Type.Object(
  { id: Type.String({ format: 'uuid', description: 'The id of the data set file.' }) },
  { $id: 'FileViewModel', additionalProperties: false },
);

export const TimePeriodRangeViewModel = Type.Object(
  {
    start: Type.String({ description: 'The first time period, as a label such as `2020/21`.' }),
    end: Type.String({ description: 'The last time period, as a label such as `2022/23`.' }),
  },
  { $id: 'TimePeriodRangeViewModel', additionalProperties: false },
);

const versionSummaryFields = {
  totalResults: Type.Integer({ description: 'The number of data rows in the version.' }),
  file: ref(FileViewModel),
  timePeriods: ref(TimePeriodRangeViewModel),
  geographicLevels: Type.Array(Type.String(), {
    description: 'The geographic levels, as labels (e.g. `Local authority`).',
  }),
  filters: Type.Array(Type.String(), { description: 'The filters, as labels.' }),
  indicators: Type.Array(Type.String(), { description: 'The indicators, as labels.' }),
};

export const DataSetLatestVersionViewModel = Type.Object(
  {
    version: Type.String({ description: 'The version number, such as `1.0` or `2.1.1` (patch only when > 0).' }),
    published: Type.Optional(DateTime('When the version was published.')),
    ...versionSummaryFields,
  },
  { $id: 'DataSetLatestVersionViewModel', additionalProperties: false },
);

export const DataSetViewModel = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    title: Type.String(),
    summary: Type.String(),
    status: DataSetStatusSchema,
    supersedingDataSetId: Type.Optional(
      Type.String({ format: 'uuid', description: 'The data set that supersedes this one.' }),
    ),
    latestVersion: Type.Optional(ref(DataSetLatestVersionViewModel)),
  },
  {
    $id: 'DataSetViewModel',
    additionalProperties: false,
    examples: [
      {
        id: '7d4e2f60-1b3c-4a8e-9f25-6c0a3b9d8e71',
        title: 'Absence rates by school and geography',
        summary:
          'Enrolments and authorised and unauthorised absence sessions by school type, academy type and national curriculum year.',
        status: 'Published',
        latestVersion: {
          version: '1.0',
          published: '2024-03-21T09:30:00.000Z',
          totalResults: 216,
          file: { id: 'a099dd20-afbd-41d0-ae27-674d541372ff' },
          timePeriods: { start: '2020/21', end: '2022/23' },
          geographicLevels: ['Local authority', 'National', 'Regional', 'School'],
          filters: ['Academy type', 'National Curriculum year', 'School type'],
          indicators: ['Enrolments', 'Number of authorised sessions'],
        },
      },
    ],
  },
);

export const DataSetPaginatedListViewModel = Type.Object(
  { paging: ref(PagingViewModel), results: Type.Array(ref(DataSetViewModel)) },
  { $id: 'DataSetPaginatedListViewModel', additionalProperties: false },
);

export const ReleaseViewModel = Type.Object(
  { title: Type.String(), slug: Type.String() },
  { $id: 'ReleaseViewModel', additionalProperties: false },
);

export const DataSetVersionViewModel = Type.Object(
  {
    version: Type.String({ description: 'The version number, such as `1.0` or `2.1.1` (patch only when > 0).' }),
    type: DataSetVersionTypeSchema,
    status: DataSetVersionStatusSchema,
    published: Type.Optional(DateTime('When the version was published.')),
    withdrawn: Type.Optional(DateTime('When the version was withdrawn.')),
    notes: Type.String({ description: 'Notes about the version ("" when none).' }),
    ...versionSummaryFields,
    release: ref(ReleaseViewModel),
  },
  { $id: 'DataSetVersionViewModel', additionalProperties: false },
);

export const DataSetVersionPaginatedListViewModel = Type.Object(
  { paging: ref(PagingViewModel), results: Type.Array(ref(DataSetVersionViewModel)) },
  { $id: 'DataSetVersionPaginatedListViewModel', additionalProperties: false },
);

// -- metadata ---------------------------------------------------------------------------------------

// The meta and the changes endpoints name their view models separately (as the reference does) but an indicator
// and a location option have the same properties in both.
function indicatorProperties(unit: { description?: string } = {}) {
  return {
    id: Type.String(),
    column: Type.String(),
    label: Type.String(),
    unit: Type.Optional(Type.String(unit)),
    decimalPlaces: Type.Optional(Type.Integer()),
  };
}

function locationOptionProperties() {
  return {
    id: Type.String(),
    label: Type.String(),
    code: Type.Optional(Type.String()),
    oldCode: Type.Optional(Type.String()),
    urn: Type.Optional(Type.String()),
    laEstab: Type.Optional(Type.String()),
    ukprn: Type.Optional(Type.String()),
  };
}

export const GeographicLevelViewModel = Type.Object(
  { code: Type.String({ description: 'A geographic level code such as `LA`.' }), label: Type.String() },
  { $id: 'GeographicLevelViewModel', additionalProperties: false },
);

export const FilterOptionMetaViewModel = Type.Object(
  { id: Type.String(), label: Type.String() },
  { $id: 'FilterOptionMetaViewModel', additionalProperties: false },
);

export const FilterMetaViewModel = Type.Object(
  {
    id: Type.String(),
    column: Type.String(),
    label: Type.String(),
    hint: Type.String(),
    options: Type.Array(ref(FilterOptionMetaViewModel)),
  },
  { $id: 'FilterMetaViewModel', additionalProperties: false },
);

export const IndicatorMetaViewModel = Type.Object(
  indicatorProperties({ description: 'One of "%", "£", "£m", "pp", "string"; absent when the indicator has no unit.' }),
  { $id: 'IndicatorMetaViewModel', additionalProperties: false },
);

export const LocationOptionMetaViewModel = Type.Object(locationOptionProperties(), {
  $id: 'LocationOptionMetaViewModel',
  additionalProperties: false,
  description: 'A location; the identifying properties present depend on its level.',
});

export const LocationGroupOptionsMetaViewModel = Type.Object(
  { level: ref(GeographicLevelViewModel), options: Type.Array(ref(LocationOptionMetaViewModel)) },
  { $id: 'LocationGroupOptionsMetaViewModel', additionalProperties: false },
);

export const TimePeriodOptionMetaViewModel = Type.Object(
  {
    code: Type.String({ description: 'A time period code such as `AY`, `CY`, `M1`.' }),
    period: Type.String({ description: '`2020/2021` for a range, `2020` for a single year.' }),
    label: Type.String({ description: 'A human-readable label such as `2020/21`.' }),
  },
  { $id: 'TimePeriodOptionMetaViewModel', additionalProperties: false },
);

export const DataSetMetaViewModel = Type.Object(
  {
    filters: Type.Array(ref(FilterMetaViewModel)),
    indicators: Type.Array(ref(IndicatorMetaViewModel)),
    geographicLevels: Type.Array(ref(GeographicLevelViewModel)),
    locations: Type.Array(ref(LocationGroupOptionsMetaViewModel)),
    timePeriods: Type.Array(ref(TimePeriodOptionMetaViewModel)),
  },
  { $id: 'DataSetMetaViewModel', additionalProperties: false },
);

// -- changes ----------------------------------------------------------------------------------------

export const FilterViewModel = Type.Object(
  { id: Type.String(), column: Type.String(), label: Type.String(), hint: Type.String() },
  { $id: 'FilterViewModel', additionalProperties: false },
);
export const FilterOptionViewModel = Type.Object(
  { id: Type.String(), label: Type.String() },
  { $id: 'FilterOptionViewModel', additionalProperties: false },
);
export const IndicatorViewModel = Type.Object(indicatorProperties(), {
  $id: 'IndicatorViewModel',
  additionalProperties: false,
});
export const LocationGroupViewModel = Type.Object(
  { level: ref(GeographicLevelViewModel) },
  { $id: 'LocationGroupViewModel', additionalProperties: false },
);
export const LocationOptionViewModel = Type.Object(locationOptionProperties(), {
  $id: 'LocationOptionViewModel',
  additionalProperties: false,
});
export const TimePeriodOptionViewModel = Type.Object(
  { code: Type.String(), period: Type.String(), label: Type.String() },
  { $id: 'TimePeriodOptionViewModel', additionalProperties: false },
);

/** A change: addition has only currentState, deletion only previousState, update both. */
function change<T extends TSchema & { $id?: string }>(state: T, id: string) {
  return Type.Object(
    { previousState: Type.Optional(ref(state)), currentState: Type.Optional(ref(state)) },
    { $id: id, additionalProperties: false },
  );
}

export const FilterChangeViewModel = change(FilterViewModel, 'FilterChangeViewModel');
export const FilterOptionChangeViewModel = change(FilterOptionViewModel, 'FilterOptionChangeViewModel');
export const GeographicLevelChangeViewModel = change(GeographicLevelViewModel, 'GeographicLevelChangeViewModel');
export const IndicatorChangeViewModel = change(IndicatorViewModel, 'IndicatorChangeViewModel');
export const LocationGroupChangeViewModel = change(LocationGroupViewModel, 'LocationGroupChangeViewModel');
export const LocationOptionChangeViewModel = change(LocationOptionViewModel, 'LocationOptionChangeViewModel');
export const TimePeriodOptionChangeViewModel = change(TimePeriodOptionViewModel, 'TimePeriodOptionChangeViewModel');

export const FilterOptionChangesViewModel = Type.Object(
  { filter: ref(FilterViewModel), options: Type.Array(ref(FilterOptionChangeViewModel)) },
  { $id: 'FilterOptionChangesViewModel', additionalProperties: false },
);
export const LocationOptionChangesViewModel = Type.Object(
  { level: ref(GeographicLevelViewModel), options: Type.Array(ref(LocationOptionChangeViewModel)) },
  { $id: 'LocationOptionChangesViewModel', additionalProperties: false },
);

export const ChangeSetViewModel = Type.Object(
  {
    filters: Type.Optional(Type.Array(ref(FilterChangeViewModel))),
    filterOptions: Type.Optional(Type.Array(ref(FilterOptionChangesViewModel))),
    geographicLevels: Type.Optional(Type.Array(ref(GeographicLevelChangeViewModel))),
    indicators: Type.Optional(Type.Array(ref(IndicatorChangeViewModel))),
    locationGroups: Type.Optional(Type.Array(ref(LocationGroupChangeViewModel))),
    locationOptions: Type.Optional(Type.Array(ref(LocationOptionChangesViewModel))),
    timePeriods: Type.Optional(Type.Array(ref(TimePeriodOptionChangeViewModel))),
  },
  { $id: 'ChangeSetViewModel', additionalProperties: false, description: 'Lists without changes are omitted.' },
);

export const PatchChangesViewModel = Type.Object(
  {
    versionNumber: Type.String(),
    notes: Type.String(),
    majorChanges: ref(ChangeSetViewModel),
    minorChanges: ref(ChangeSetViewModel),
  },
  { $id: 'PatchChangesViewModel', additionalProperties: false },
);

export const DataSetVersionChangesViewModel = Type.Object(
  {
    versionNumber: Type.String(),
    notes: Type.String(),
    majorChanges: ref(ChangeSetViewModel),
    minorChanges: ref(ChangeSetViewModel),
    patchHistory: Type.Array(ref(PatchChangesViewModel), {
      description:
        'The changes of the earlier patches of this minor version (with includePatchHistory=true), oldest first; [] otherwise.',
    }),
  },
  { $id: 'DataSetVersionChangesViewModel', additionalProperties: false },
);

export type PublicationSummary = Static<typeof PublicationSummaryViewModel>;
export type DataSetView = Static<typeof DataSetViewModel>;
export type DataSetLatestVersionView = Static<typeof DataSetLatestVersionViewModel>;
export type DataSetVersionView = Static<typeof DataSetVersionViewModel>;
export type DataSetMetaView = Static<typeof DataSetMetaViewModel>;
export type FilterMetaView = Static<typeof FilterMetaViewModel>;
export type IndicatorMetaView = Static<typeof IndicatorMetaViewModel>;
export type LocationOptionMetaView = Static<typeof LocationOptionMetaViewModel>;
export type LocationGroupOptionsMetaView = Static<typeof LocationGroupOptionsMetaViewModel>;
export type TimePeriodOptionMetaView = Static<typeof TimePeriodOptionMetaViewModel>;
export type GeographicLevelView = Static<typeof GeographicLevelViewModel>;
export type ChangeSetView = Static<typeof ChangeSetViewModel>;
export type DataSetVersionChangesView = Static<typeof DataSetVersionChangesViewModel>;

/** Every schema above, in an order where each comes after the schemas it references. */
export const STATISTICS_SCHEMAS = [
  ErrorViewModel,
  ValidationProblemViewModel,
  ProblemDetailsViewModel,
  PagingViewModel,
  PublicationSummaryViewModel,
  PublicationPaginatedListViewModel,
  FileViewModel,
  TimePeriodRangeViewModel,
  DataSetLatestVersionViewModel,
  DataSetViewModel,
  DataSetPaginatedListViewModel,
  ReleaseViewModel,
  DataSetVersionViewModel,
  DataSetVersionPaginatedListViewModel,
  GeographicLevelViewModel,
  FilterOptionMetaViewModel,
  FilterMetaViewModel,
  IndicatorMetaViewModel,
  LocationOptionMetaViewModel,
  LocationGroupOptionsMetaViewModel,
  TimePeriodOptionMetaViewModel,
  DataSetMetaViewModel,
  FilterViewModel,
  FilterOptionViewModel,
  IndicatorViewModel,
  LocationGroupViewModel,
  LocationOptionViewModel,
  TimePeriodOptionViewModel,
  FilterChangeViewModel,
  FilterOptionChangeViewModel,
  GeographicLevelChangeViewModel,
  IndicatorChangeViewModel,
  LocationGroupChangeViewModel,
  LocationOptionChangeViewModel,
  TimePeriodOptionChangeViewModel,
  FilterOptionChangesViewModel,
  LocationOptionChangesViewModel,
  ChangeSetViewModel,
  PatchChangesViewModel,
  DataSetVersionChangesViewModel,
];

/** Adds the schemas to the `/v1` scope, so routes (catalogue and query) can reference them with `ref()`. */
export function registerStatisticsSchemas(app: FastifyInstance): void {
  for (const schema of STATISTICS_SCHEMAS) app.addSchema(schema);
}

/**
 * The error responses of a statistics route, for its `response` schema. They match statisticsErrorFormatter's
 * bodies exactly (fast-json-stringify serialises error bodies with these too).
 */
export function errorResponses(statuses: ReadonlyArray<400 | 403 | 404 | 406>) {
  const descriptions: Record<number, string> = {
    429: 'Too Many Requests: the rate limit of the client was exceeded (see `Retry-After`).',
    504: 'Gateway Timeout: the request took longer than the service allows.',
    400: 'The request is not valid: a ValidationProblem listing every problem (`UnknownField`, `InvalidValue`, `AllowedValue`, `InclusiveBetween`, ...).',
    403: 'Forbidden: the data set or version is not available (not published, or no valid preview token).',
    404: 'Not Found: no such publication, data set or version (an id that is not a uuid, or a version that does not match).',
    406: 'Not Acceptable: the `Accept` header allows none of the media types the endpoint answers in (listed in `accepted`).',
  };
  const responses: Record<number, unknown> = {};
  for (const status of [...statuses, 429, 504]) {
    const schema = status === 400 ? ValidationProblemViewModel : ProblemDetailsViewModel;
    responses[status] = {
      description: descriptions[status],
      content: { 'application/problem+json': { schema: Type.Ref(schema.$id!) } },
    };
  }
  return responses;
}

/** A 200 response: the registered schema `schema`, with a description. */
export function okResponse<T extends TSchema & { $id?: string }>(schema: T, description: string) {
  return Type.Unsafe<Static<T>>({ ...Type.Ref(schema.$id!), description });
}
