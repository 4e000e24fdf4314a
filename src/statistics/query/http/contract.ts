import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { PagingViewModel, ref } from '../../schemas.js';
import { GEOGRAPHIC_LEVEL_CODES } from '../../standard/geographic-levels.js';

/**
 * The wire contract of `GET`/`POST /v1/data-sets/{dataSetId}/query`: the query parameters, the POST body and the
 * response, as TypeBox schemas (names as the reference's OpenAPI document names them). The routes declare them:
 * Fastify validates the bound parameters and the body against them after the reference's own binding rules have run
 * (parse-get.ts, parse-post.ts, which give the reference's error bodies), serializes the SQL engine's response with
 * the response schema, and @fastify/swagger documents all three. The row-index engine writes its JSON itself; a test
 * validates those bytes against the same response schema.
 */

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const LABELS_DESCRIPTION =
  'With `true`, the response adds `labels`: the label of every id in the page (results unchanged). Ignored for CSV, Parquet and Arrow, which hold labels.';

const GeographicLevelCode = Type.String({
  description: `A geographic level code: ${GEOGRAPHIC_LEVEL_CODES.join(', ')}.`,
});

export const DataSetQueryLocation = Type.Object(
  {
    level: GeographicLevelCode,
    id: Type.Optional(Type.String({ description: 'The location id (as in the meta).' })),
    code: Type.Optional(Type.String({ description: 'An ONS code (a code may match several locations of the level).' })),
    oldCode: Type.Optional(Type.String({ description: 'LA only: the old three-digit code.' })),
    urn: Type.Optional(Type.String({ description: 'SCH only: the school URN.' })),
    laEstab: Type.Optional(Type.String({ description: 'SCH only: the LA establishment number.' })),
    ukprn: Type.Optional(Type.String({ description: 'PROV only: the provider UKPRN.' })),
  },
  {
    $id: 'DataSetQueryLocation',
    additionalProperties: false,
    description: 'A location by its level and one identifying property.',
  },
);

export const DataSetQueryTimePeriod = Type.Object(
  {
    period: Type.String({ description: 'A year (`2023`) or a year range (`2023/2024`).' }),
    code: Type.String({ description: 'A time identifier code (`AY`, `CY`, `FY`, `W12`, `M3`, …).' }),
  },
  { $id: 'DataSetQueryTimePeriod', additionalProperties: false },
);

function comparators<T extends TSchema>(item: T, ordered: boolean, description: string) {
  const equality = {
    eq: Type.Optional(nullable(item)),
    notEq: Type.Optional(nullable(item)),
    in: Type.Optional(nullable(Type.Array(item))),
    notIn: Type.Optional(nullable(Type.Array(item))),
  };
  const order = {
    gt: Type.Optional(nullable(item)),
    gte: Type.Optional(nullable(item)),
    lt: Type.Optional(nullable(item)),
    lte: Type.Optional(nullable(item)),
  };
  return Type.Object(ordered ? { ...equality, ...order } : equality, { additionalProperties: false, description });
}

export const DataSetQueryCriteriaFacets = Type.Object(
  {
    filters: Type.Optional(nullable(comparators(Type.String(), false, 'Filter option ids.'))),
    geographicLevels: Type.Optional(nullable(comparators(GeographicLevelCode, false, 'Geographic level codes.'))),
    locations: Type.Optional(nullable(comparators(ref(DataSetQueryLocation), false, 'Locations.'))),
    timePeriods: Type.Optional(nullable(comparators(ref(DataSetQueryTimePeriod), true, 'Time periods.'))),
  },
  {
    $id: 'DataSetQueryCriteriaFacets',
    additionalProperties: false,
    description: 'Conditions on the facets, all of which must hold.',
  },
);

const CRITERIA_ID = 'DataSetQueryCriteria';
const criteriaRef = Type.Ref(CRITERIA_ID);

export const DataSetQueryCriteria = Type.Union(
  [
    Type.Object(
      { and: Type.Array(criteriaRef, { minItems: 1 }) },
      { additionalProperties: false, description: 'Every condition holds.' },
    ),
    Type.Object(
      { or: Type.Array(criteriaRef, { minItems: 1 }) },
      { additionalProperties: false, description: 'At least one condition holds.' },
    ),
    Type.Object({ not: criteriaRef }, { additionalProperties: false, description: 'The condition does not hold.' }),
    ref(DataSetQueryCriteriaFacets),
  ],
  {
    $id: CRITERIA_ID,
    description: 'Criteria: `and`, `or`, `not` (nested at most 32 deep, 1,000 conditions in all) or facets.',
  },
);

export const DataSetQuerySort = Type.Object(
  {
    field: Type.String({
      description:
        '`timePeriod`, `geographicLevel`, `location|{level}`, `filter|{filterId}` or `indicator|{indicatorId}`.',
    }),
    direction: Type.Union([Type.Literal('Asc'), Type.Literal('Desc')]),
  },
  { $id: 'DataSetQuerySort', additionalProperties: false },
);

export const DataSetQueryRequest = Type.Object(
  {
    criteria: Type.Optional(nullable(Type.Ref(CRITERIA_ID))),
    indicators: Type.Optional(
      nullable(Type.Array(nullable(Type.String()), { description: 'Indicator ids; all indicators when absent.' })),
    ),
    sorts: Type.Optional(nullable(Type.Array(ref(DataSetQuerySort)))),
    debug: Type.Optional(nullable(Type.Boolean({ description: 'Labels instead of ids in the results.' }))),
    labels: Type.Optional(nullable(Type.Boolean({ description: LABELS_DESCRIPTION }))),
    page: Type.Optional(nullable(Type.Integer({ description: 'Page number (from 1).' }))),
    pageSize: Type.Optional(nullable(Type.Integer({ description: 'Results per page (1–10000, default 1000).' }))),
  },
  {
    $id: 'DataSetQueryRequest',
    additionalProperties: false,
    description:
      'Member names are matched case-insensitively, `//` and `/* */` comments are allowed and numbers may be sent as strings; unknown members are errors.',
  },
);

/** The GET query's parameters, as bound (lists accept repeated keys, `key[0]=` and comma-separated values). */
export function dataSetQueryParameters() {
  const list = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));
  const one = (description: string) => Type.Optional(Type.String({ description }));
  const facet = (name: string, itemDescription: string, ordered: boolean) => ({
    [`${name}.eq`]: one(itemDescription),
    [`${name}.notEq`]: one(itemDescription),
    [`${name}.in`]: list(`${itemDescription} (a list)`),
    [`${name}.notIn`]: list(`${itemDescription} (a list)`),
    ...(ordered
      ? {
          [`${name}.gt`]: one(itemDescription),
          [`${name}.gte`]: one(itemDescription),
          [`${name}.lt`]: one(itemDescription),
          [`${name}.lte`]: one(itemDescription),
        }
      : {}),
  });
  return Type.Object(
    {
      ...facet('filters', 'A filter option id', false),
      ...facet('geographicLevels', 'A geographic level code', false),
      ...facet('locations', 'A location: `{level}|{property}|{value}`, e.g. `LA|code|E09000003`', false),
      ...facet('timePeriods', 'A time period: `{period}|{code}`, e.g. `2023/2024|AY`', true),
      indicators: list('Indicator ids; all indicators when absent.'),
      sorts: list('Sorts: `{field}|{Asc|Desc}`.'),
      debug: Type.Optional(Type.Boolean({ description: 'Labels instead of ids in the results.' })),
      labels: Type.Optional(Type.Boolean({ description: LABELS_DESCRIPTION })),
      page: Type.Optional(Type.Integer({ description: 'Page number (from 1).' })),
      pageSize: Type.Optional(Type.Integer({ description: 'Results per page (1–10000, default 1000).' })),
      dataSetVersion: one('The version to query (`1.0`, `1.*`, `*`); the latest published when absent.'),
    },
    { additionalProperties: false, description: 'Parameter names are matched case-insensitively.' },
  );
}

export const DataSetQueryResultTimePeriod = Type.Object(
  { code: Type.String(), period: Type.String() },
  { $id: 'DataSetQueryResultTimePeriod', additionalProperties: false },
);

export const DataSetQueryResult = Type.Object(
  {
    timePeriod: ref(DataSetQueryResultTimePeriod),
    geographicLevel: Type.String({ description: 'The geographic level code of the row.' }),
    locations: Type.Record(Type.String(), Type.String(), { description: 'Location id by geographic level code.' }),
    filters: Type.Record(Type.String(), Type.String(), { description: 'Filter option id by filter id.' }),
    values: Type.Record(Type.String(), Type.String(), {
      description: 'Value by indicator id (as text, as in the file).',
    }),
  },
  { $id: 'DataSetQueryResultViewModel', additionalProperties: false },
);

export const DataSetQueryWarning = Type.Object(
  {
    code: Type.String({ description: 'e.g. `FiltersNotFound`, `DebugEnabled`, `NoResults`.' }),
    message: Type.String(),
    path: Type.Optional(Type.String()),
    detail: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'WarningViewModel', additionalProperties: false },
);

const labelsById = (description: string) => Type.Record(Type.String(), Type.String(), { description });

export const DataSetQueryLabels = Type.Object(
  {
    timePeriods: labelsById('Label by time period, keyed `{period}|{code}` (`2021/2022|AY` → `2021/22`).'),
    geographicLevels: labelsById('Label by geographic level code.'),
    locations: labelsById('Label by location id.'),
    filters: labelsById('Label by filter id.'),
    filterOptions: labelsById('Label by filter option id.'),
    indicators: labelsById('Label by indicator id.'),
  },
  {
    $id: 'DataSetQueryLabelsViewModel',
    additionalProperties: false,
    description: 'The labels of every id in the page (only with `labels`).',
  },
);

export const DataSetQueryPaginatedList = Type.Object(
  {
    paging: ref(PagingViewModel),
    results: Type.Array(ref(DataSetQueryResult)),
    warnings: Type.Array(ref(DataSetQueryWarning)),
    labels: Type.Optional(ref(DataSetQueryLabels)),
  },
  { $id: 'DataSetQueryPaginatedListViewModel', additionalProperties: false },
);

/** In the order they reference each other. */
const QUERY_SCHEMAS = [
  DataSetQueryLocation,
  DataSetQueryTimePeriod,
  DataSetQueryCriteriaFacets,
  DataSetQueryCriteria,
  DataSetQuerySort,
  DataSetQueryRequest,
  DataSetQueryResultTimePeriod,
  DataSetQueryResult,
  DataSetQueryWarning,
  DataSetQueryLabels,
  DataSetQueryPaginatedList,
];

export function registerQuerySchemas(app: FastifyInstance): void {
  for (const schema of QUERY_SCHEMAS) app.addSchema(schema);
}
