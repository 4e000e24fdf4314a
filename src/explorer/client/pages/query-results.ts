/** The query page's results: the cross-tab, then the chart, the downloads and the code. */
import { apiPost, type IndicatorMeta, type QueryResponse } from '../api.js';
import { buildCrossTab, crossTabCaption, sortCrossTab, type CrossTabSort } from '../crosstab.js';
import { afterNextPaint, h, replace, type Child } from '../dom.js';
import { plural } from '../format.js';
import { postBody, queryPath } from '../query.js';
import { describeSort, drawCrossTab, layoutControls, markSortedColumn, sortControls } from '../table.js';
import { errorSummary } from './error.js';
import { renderChartBox } from './query-chart.js';
import { codePanel, takeAway } from './query-code.js';
import { shownIndicators, TABLE_ROWS, warningText, type QueryView } from './query-view.js';

/** The live count as the results use it. */
export interface ResultsCount {
  update(): void;
  show(response: QueryResponse): void;
  /** Results are on screen (so a later change makes them out of date). */
  resultsShown(): void;
}

/**
 * "Show results": the query's first TABLE_ROWS rows as the cross-tab (with its layout and sort controls), then the
 * chart, the downloads and the code. `count` is the live count, shown from these results when `countFromResults`.
 */
export async function showResults(
  view: QueryView,
  results: HTMLElement,
  count: ResultsCount,
  focus = true,
  countFromResults = false,
): Promise<void> {
  const { dataSetId, meta, state } = view;
  const indicators = shownIndicators(meta, state);
  replace(results, h('p', { class: 'govuk-body' }, 'Loading the results…'));
  let response: QueryResponse;
  try {
    response = await apiPost<QueryResponse>(
      queryPath(dataSetId, state),
      postBody(state, { page: 1, pageSize: TABLE_ROWS }),
    );
  } catch (error) {
    replace(results, errorSummary(error));
    if (countFromResults) count.update();
    return;
  }
  count.resultsShown();
  if (countFromResults) count.show(response);
  const total = response.paging.totalResults;
  const heading = h('h2', { class: 'govuk-heading-l', id: 'results-heading', tabindex: '-1' }, 'Results');
  const chartBox = h('div');
  const { drawTable, parts } = tableSection(view, response, indicators);
  replace(
    results,
    heading,
    h('p', { class: 'govuk-body', 'data-total': String(total) }, `${plural(total, 'row')} match this query.`),
    (response.warnings ?? []).length
      ? h('div', { class: 'govuk-inset-text' }, (response.warnings ?? []).map(warningText).join(' '))
      : null,
    h('h3', { class: 'govuk-heading-m' }, 'Table'),
    total > response.results.length
      ? h(
          'div',
          { class: 'govuk-inset-text', 'data-table-truncated': '' },
          `The table shows the first ${response.results.length.toLocaleString('en-GB')} of ${total.toLocaleString('en-GB')} rows. Narrow your choices to see them all, or download all matching rows.`,
        )
      : null,
    ...parts,
    h('h3', { class: 'govuk-heading-m' }, 'Chart'),
    chartBox,
    h('h3', { class: 'govuk-heading-m' }, 'Download and share'),
    takeAway(view),
    h('h3', { class: 'govuk-heading-m', id: 'code-heading' }, 'Use this query in code'),
    codePanel(view),
  );
  drawTable();
  if (focus) heading.focus();
  // The chart's rows are asked for once the table is on screen, so its request, parsing and drawing do not hold
  // up the table's first frame.
  void afterNextPaint().then(() => renderChartBox(view, chartBox, indicators));
}

/** The cross-tab with its pager, its layout controls ("Move and reorder table headers") and its sort controls. */
function tableSection(
  view: QueryView,
  response: QueryResponse,
  indicators: IndicatorMeta[],
): { drawTable: (focusId?: string) => void; parts: Child[] } {
  const { dataSet, meta, state } = view;
  const tableBox = h('div', {
    class: 'app-table-scroll',
    tabindex: '0',
    role: 'region',
    'aria-labelledby': 'crosstab-caption',
  });
  const pager = h('nav', { class: 'app-crosstab-pager', 'aria-label': 'Table pages' });
  const layoutBox = h('div');
  const layoutStatus = h('p', {
    class: 'govuk-body-s app-layout__status',
    role: 'status',
    'aria-live': 'polite',
    id: 'layout-status',
  });
  const sortBox = h('div');
  let sort: CrossTabSort | undefined;
  const drawTable = (focusId?: string) => {
    const startedAt = performance.now();
    const built = buildCrossTab(response.results, meta, indicators, state.layout);
    // A sort by a column that a new layout no longer has is dropped.
    if (sort?.by === 'column' && sort.column >= built.columnLabels.length) sort = undefined;
    const table = (view.table = sort ? sortCrossTab(built, sort) : built);
    performance.measure('explorer:crosstab-pivot', { start: startedAt });
    markSortedColumn(drawCrossTab(tableBox, pager, table, crossTabCaption(dataSet.title, table), startedAt), sort);
    replace(
      sortBox,
      sortControls(table, sort, (next) => {
        sort = next;
        drawTable();
        layoutStatus.textContent = describeSort(view.table!, next);
        document.getElementById(next.direction === 'ascending' ? 'sort-ascending' : 'sort-descending')?.focus();
      }),
    );
    replace(
      layoutBox,
      layoutControls(
        table,
        (layout, nextFocus) => {
          state.layout = layout;
          view.writeUrl();
          drawTable(nextFocus);
        },
        (text) => (layoutStatus.textContent = text),
      ),
    );
    if (focusId) {
      const button = document.getElementById(focusId) as HTMLButtonElement | null;
      const group = focusId.replace(/^move-(.*)-[a-zA-Z]+$/, '$1');
      (button && !button.disabled
        ? button
        : (layoutBox.querySelector<HTMLElement>(`[data-group="${CSS.escape(group)}"] button:not([disabled])`) ?? button)
      )?.focus();
    }
  };
  const parts: Child[] = [
    h(
      'details',
      { class: 'govuk-details app-layout-details' },
      h(
        'summary',
        { class: 'govuk-details__summary' },
        h('span', { class: 'govuk-details__summary-text' }, 'Move and reorder table headers'),
      ),
      h('div', { class: 'govuk-details__text' }, layoutBox),
    ),
    sortBox,
    layoutStatus,
    tableBox,
    pager,
  ];
  return { drawTable, parts };
}
