import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type {
  FilterMeta,
  FilterOptionMeta,
  IndicatorMeta,
  LocationMeta,
  VersionMeta,
} from '../../../../src/statistics/query/engine/version-meta-cache.js';
import { timePeriodKey } from '../../../../src/statistics/query/engine/version-meta-cache.js';

/** A Kysely that only compiles (for SQL snapshots). */
export const compiler = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** A version shaped like the AbsenceSchool fixture (ids as the reference gives them), without a database. */
export function absenceLikeMeta(): VersionMeta {
  const filters: FilterMeta[] = [
    { publicId: 'dP0Zw', columnName: 'academy_type', label: 'Academy type', column: 'f1' },
    { publicId: 'O7CLF', columnName: 'ncyear', label: 'National Curriculum year', column: 'f2' },
    { publicId: '7zXob', columnName: 'school_type', label: 'School type', column: 'f3' },
  ];
  const option = (id: number, publicId: string, label: string, filter: number): FilterOptionMeta => ({
    id,
    publicId,
    label,
    filter: filters[filter]!,
  });
  const options = [
    option(1, 'dP0Zw', 'Primary sponsor led academy', 0),
    option(2, 'O7CLF', 'Secondary free school', 0),
    option(3, '7zXob', 'Secondary sponsor led academy', 0),
    option(4, 'pTSoj', 'Year 10', 1),
    option(5, 'IzBzg', 'Year 4', 1),
    option(6, 'it6Xr', 'Year 6', 1),
    option(7, 'LxWjE', 'Year 8', 1),
    option(8, '6jrfe', 'State-funded primary', 2),
    option(9, '0kT5D', 'State-funded secondary', 2),
    option(10, 'HTzLj', 'Total', 2),
  ];
  const indicators: IndicatorMeta[] = [
    { publicId: 'dP0Zw', columnName: 'enrolments', label: 'Enrolments', column: 'i1' },
    { publicId: 'O7CLF', columnName: 'sess_authorised', label: 'Number of authorised sessions', column: 'i2' },
  ];
  const loc = (
    id: number,
    level: string,
    label: string,
    publicId: string,
    extra: Partial<LocationMeta> = {},
  ): LocationMeta => ({
    id,
    level,
    label,
    publicId,
    code: null,
    oldCode: null,
    urn: null,
    laEstab: null,
    ukprn: null,
    ...extra,
  });
  const locations = [
    loc(1, 'LA', 'Barnet', '7zXob', { code: 'E09000003', oldCode: '302' }),
    loc(2, 'LA', 'Barnsley', 'dP0Zw', { code: 'E08000016', oldCode: '370' }),
    loc(3, 'LA', 'Kingston upon Thames / Richmond upon Thames', 'pTSoj', {
      code: 'E09000021 / E09000027',
      oldCode: '314',
    }),
    loc(4, 'LA', 'Sheffield', 'O7CLF', { code: 'E08000019', oldCode: '373' }),
    loc(5, 'NAT', 'England', 'IzBzg', { code: 'E92000001' }),
    loc(6, 'REG', 'Outer London', 'LxWjE', { code: 'E13000002' }),
    loc(7, 'REG', 'Yorkshire and The Humber', 'it6Xr', { code: 'E12000003' }),
    loc(12, 'SCH', 'Newfield Secondary', 'YPHKM', { urn: '140821', laEstab: '3734008' }),
  ];
  const locationsByLevel = new Map<string, LocationMeta[]>();
  for (const l of locations) locationsByLevel.set(l.level, [...(locationsByLevel.get(l.level) ?? []), l]);
  const timePeriods = [
    { id: 1, period: '2020/2021', code: 'AY' },
    { id: 2, period: '2021/2022', code: 'AY' },
    { id: 3, period: '2022/2023', code: 'AY' },
  ];
  return {
    versionId: 1,
    rowsTable: 'v1',
    hasRowTable: true,
    filters,
    filtersByPublicId: new Map(filters.map((f) => [f.publicId, f])),
    optionsByPublicId: new Map(options.map((o) => [o.publicId, o])),
    optionsById: new Map(options.map((o) => [o.id, o])),
    indicators,
    indicatorsByPublicId: new Map(indicators.map((i) => [i.publicId, i])),
    levels: new Set(['LA', 'NAT', 'REG', 'SCH']),
    locationLevels: ['LA', 'NAT', 'REG', 'SCH'],
    locationsById: new Map(locations.map((l) => [l.id, l])),
    locationsByLevel,
    timePeriods,
    timePeriodsById: new Map(timePeriods.map((t) => [t.id, t])),
    timePeriodIdByKey: new Map(timePeriods.map((t) => [timePeriodKey(t.period, t.code), t.id])),
    levelsByLabel: [
      'EDA',
      'INST',
      'LA',
      'LAD',
      'LEP',
      'LSIP',
      'MAT',
      'MCA',
      'NAT',
      'OA',
      'PA',
      'PCON',
      'PFA',
      'PROV',
      'REG',
      'RSC',
      'SCH',
      'SPON',
      'WARD',
    ],
    rowCount: 0,
  };
}
