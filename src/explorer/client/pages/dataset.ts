import {
  apiGet,
  type DataSet,
  type DataSetVersion,
  type LatestVersion,
  type Paging,
  type VersionChanges,
} from '../api.js';
import { describeChangeSet } from '../changes.js';
import { h, s, replace } from '../dom.js';
import { formatDate, plural } from '../format.js';
import { statusTag } from './find.js';
import { dataSetEvents, eventLine, type DataSetEvent } from '../events.js';

export async function allVersions(dataSetId: string): Promise<DataSetVersion[]> {
  const out: DataSetVersion[] = [];
  for (let page = 1; ; page++) {
    const list = await apiGet<{ paging: Paging; results: DataSetVersion[] }>(
      `/v1/data-sets/${encodeURIComponent(dataSetId)}/versions?page=${page}&pageSize=20`,
    );
    out.push(...list.results);
    if (page >= list.paging.totalPages) return out;
  }
}

function summaryList(rows: Array<[string, string | Node]>): HTMLElement {
  return h(
    'dl',
    { class: 'govuk-summary-list' },
    rows.map(([key, value]) =>
      h(
        'div',
        { class: 'govuk-summary-list__row' },
        h('dt', { class: 'govuk-summary-list__key' }, key),
        h('dd', { class: 'govuk-summary-list__value' }, value),
      ),
    ),
  );
}

function changesOf(changes: VersionChanges | undefined, error: string | undefined, first: boolean): HTMLElement {
  if (error) return h('p', { class: 'govuk-body' }, `The changes could not be loaded: ${error}`);
  if (!changes) return h('p', { class: 'govuk-body' }, 'No changes listed.');
  const major = describeChangeSet(changes.majorChanges);
  const minor = describeChangeSet(changes.minorChanges);
  if (major.length === 0 && minor.length === 0) {
    return h(
      'p',
      { class: 'govuk-body' },
      first ? 'This is the first version.' : 'No changes to the filters, locations, time periods or indicators.',
    );
  }
  return h(
    'div',
    null,
    major.length
      ? [
          h('h4', { class: 'govuk-heading-s govuk-!-margin-bottom-1' }, 'Major changes (may break existing queries)'),
          h(
            'ul',
            { class: 'govuk-list govuk-list--bullet', 'data-changes': 'major' },
            major.map((c) => h('li', null, c)),
          ),
        ]
      : null,
    minor.length
      ? [
          h('h4', { class: 'govuk-heading-s govuk-!-margin-bottom-1' }, 'Minor changes'),
          h(
            'ul',
            { class: 'govuk-list govuk-list--bullet', 'data-changes': 'minor' },
            minor.map((c) => h('li', null, c)),
          ),
        ]
      : null,
  );
}

/** A warning above a data set that is no longer Published (Deprecated or Withdrawn). */
function statusWarning(dataSet: DataSet): HTMLElement | null {
  if (dataSet.status === 'Published') return null;
  return h(
    'div',
    { class: 'govuk-warning-text' },
    h('span', { class: 'govuk-warning-text__icon', 'aria-hidden': 'true' }, '!'),
    h(
      'strong',
      { class: 'govuk-warning-text__text' },
      h('span', { class: 'govuk-visually-hidden' }, 'Warning'),
      `This data set is ${dataSet.status.toLowerCase()}.`,
    ),
  );
}

/** The latest published version in brief, the start button to query it and its Parquet download. */
function latestVersionSummary(dataSet: DataSet, latest: LatestVersion): HTMLElement[] {
  return [
    summaryList([
      ['Status', statusTag(dataSet.status)],
      ['Latest version', `${latest.version}, published ${formatDate(latest.published)}`],
      ['Rows', latest.totalResults.toLocaleString('en-GB')],
      ['Time periods', `${latest.timePeriods.start} to ${latest.timePeriods.end}`],
      ['Geographic levels', latest.geographicLevels.join(', ')],
      ['Filters', latest.filters.join(', ')],
      ['Indicators', latest.indicators.join(', ')],
    ]),
    h(
      'a',
      {
        class: 'govuk-button govuk-button--start',
        href: `/data-sets/${dataSet.id}/query`,
        role: 'button',
        draggable: 'false',
      },
      'Build a query',
      s(
        'svg',
        {
          class: 'govuk-button__start-icon',
          width: '17.5',
          height: '19',
          viewBox: '0 0 33 40',
          'aria-hidden': 'true',
          focusable: 'false',
        },
        s('path', { fill: 'currentColor', d: 'M0 0h13l20 20-20 20H0l20-20z' }),
      ),
    ),
    h(
      'p',
      { class: 'govuk-body' },
      h(
        'a',
        {
          class: 'govuk-link',
          href: `/v1/data-sets/${dataSet.id}/parquet?dataSetVersion=${encodeURIComponent(latest.version)}`,
          download: '',
        },
        'Download Parquet',
      ),
      ` (every row of version ${latest.version}, for R, Python or DuckDB)`,
    ),
  ];
}

/** The change log (undefined: it could not be loaded) and how to follow it. */
function changeLog(dataSet: DataSet, versions: DataSetVersion[], events: DataSetEvent[] | undefined): HTMLElement[] {
  return [
    h('h2', { class: 'govuk-heading-l' }, 'Change log'),
    events === undefined
      ? h('p', { class: 'govuk-body' }, 'The change log could not be loaded.')
      : events.length === 0
        ? h('p', { class: 'govuk-body' }, 'No changes recorded yet.')
        : h(
            'ul',
            { class: 'govuk-list', 'data-events': '' },
            events.map((e) =>
              h(
                'li',
                null,
                eventLine(e, (number) => versions.find((v) => v.version === number)?.published, formatDate),
              ),
            ),
          ),
    h(
      'p',
      { class: 'govuk-body' },
      'Follow these changes: ',
      h('code', null, `GET /v1/events?resource=${dataSet.id}`),
      ' (or as a live stream with ',
      h('code', null, 'Accept: text/event-stream'),
      ').',
    ),
  ];
}

/** The changes of a version from the previous one, or why they are not shown. */
interface LoadedChanges {
  changes: VersionChanges | undefined;
  error: string | undefined;
}

/** One version (the `i`th, newest first; `first`: the data set's first): its summary, its changes and a link to query it. */
function versionSection(
  dataSet: DataSet,
  v: DataSetVersion,
  i: number,
  changes: LoadedChanges,
  first: boolean,
): HTMLElement {
  return h(
    'section',
    { class: 'app-version', 'data-version': v.version, 'aria-labelledby': `version-${i}` },
    h('h3', { class: 'govuk-heading-m', id: `version-${i}` }, `Version ${v.version} `, statusTag(v.status)),
    summaryList([
      ['Type', `${v.type} version`],
      ['Published', formatDate(v.published)],
      ...(v.withdrawn ? [['Withdrawn', formatDate(v.withdrawn)] as [string, string]] : []),
      ['Release', v.release.title],
      ['Notes', v.notes || 'None'],
      ['Rows', plural(v.totalResults, 'row')],
      ['Time periods', `${v.timePeriods.start} to ${v.timePeriods.end}`],
    ]),
    h('h4', { class: 'govuk-heading-s' }, 'Changes from the previous version'),
    changesOf(changes.changes, changes.error, first),
    v.status === 'Published' || v.status === 'Deprecated'
      ? h(
          'p',
          { class: 'govuk-body' },
          h(
            'a',
            {
              class: 'govuk-link',
              href: `/data-sets/${dataSet.id}/query?dataSetVersion=${encodeURIComponent(v.version)}`,
            },
            `Query version ${v.version}`,
          ),
        )
      : null,
  );
}

/** `/data-sets/{id}`: the data set, its versions and each version's changes in words. */
export async function dataSetPage(main: HTMLElement, dataSetId: string): Promise<void> {
  const id = encodeURIComponent(dataSetId);
  const [dataSet, versions] = await Promise.all([apiGet<DataSet>(`/v1/data-sets/${id}`), allVersions(dataSetId)]);
  const changes = await Promise.all(
    versions.map(
      (v): Promise<LoadedChanges> =>
        apiGet<VersionChanges>(`/v1/data-sets/${id}/versions/${encodeURIComponent(v.version)}/changes`).then(
          (c) => ({ changes: c, error: undefined }),
          (e: Error) => ({ changes: undefined, error: e.message }),
        ),
    ),
  );
  // The change log: what a client following /v1/events (or a webhook) was told about this data set.
  const events = await dataSetEvents(apiGet, dataSetId).catch((): DataSetEvent[] | undefined => undefined);
  document.title = `${dataSet.title} – Explore education statistics data`;
  const latest = dataSet.latestVersion;
  replace(
    main,
    h('a', { href: '/', class: 'govuk-back-link' }, 'Find data'),
    h('span', { class: 'govuk-caption-l' }, 'Data set'),
    h('h1', { class: 'govuk-heading-xl' }, dataSet.title),
    h('p', { class: 'govuk-body-l' }, dataSet.summary),
    statusWarning(dataSet),
    latest
      ? latestVersionSummary(dataSet, latest)
      : h('p', { class: 'govuk-body' }, 'This data set has no published version to query yet.'),
    changeLog(dataSet, versions, events),
    h('h2', { class: 'govuk-heading-l' }, `Versions (${versions.length})`),
    versions.map((v, i) => versionSection(dataSet, v, i, changes[i]!, i === versions.length - 1)),
  );
}
