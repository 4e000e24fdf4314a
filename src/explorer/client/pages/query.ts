/**
 * The explorer's query view. Over 400 lines because `queryPage` is one view whose regions (choices, live count,
 * table, chart, code snippets) share one state and update each other; everything pure it uses lives in its own
 * tested module (../query.ts, ../snippets.ts, ../chart.ts, ../format.ts).
 */
import { ApiError, apiGet, apiPost, problemMessage, type DataSet, type IndicatorMeta, type Meta, type QueryResponse, type ResultRow, type Warning } from '../api.js';
import { buildChartData, renderChart } from '../chart.js';
import { h, replace, uid } from '../dom.js';
import { formatValue, plural } from '../format.js';
import {
  getUrl, locationKey, PAGE_SIZES, parseState, periodKey, postBody, queryPath, stateToSearch, type QueryState,
} from '../query.js';
import { compactJson, curlCsv, curlGet, curlPost, pythonSnippet, rSnippet } from '../snippets.js';
import { allVersions } from './dataset.js';
import { checklist } from './checklist.js';

/** Labels of the ids a result row carries, for one version's metadata. */
export interface Labels {
  period(p: { period: string; code: string }): string;
  level(code: string): string;
  location(level: string, id: string | undefined): string;
  option(filterId: string, optionId: string | undefined): string;
}

export function labelsOf(meta: Meta): Labels {
  const periods = new Map(meta.timePeriods.map((t) => [periodKey(t), t.label]));
  const levels = new Map(meta.geographicLevels.map((l) => [l.code, l.label]));
  const locations = new Map(meta.locations.flatMap((g) => g.options.map((o) => [`${g.level.code}|${o.id}`, o.label] as const)));
  const options = new Map(meta.filters.flatMap((f) => f.options.map((o) => [`${f.id}|${o.id}`, o.label] as const)));
  return {
    period: (p) => periods.get(periodKey(p)) ?? `${p.period} ${p.code}`,
    level: (code) => levels.get(code) ?? code,
    location: (level, id) => (id ? (locations.get(`${level}|${id}`) ?? id) : ''),
    option: (filterId, optionId) => (optionId ? (options.get(`${filterId}|${optionId}`) ?? optionId) : ''),
  };
}

/** The table's cells for a row, in column order: period, level, location, each filter, each indicator. */
export function rowCells(row: ResultRow, meta: Meta, labels: Labels, indicators: IndicatorMeta[]): string[] {
  return [
    labels.period(row.timePeriod),
    labels.level(row.geographicLevel),
    labels.location(row.geographicLevel, row.locations[row.geographicLevel]),
    ...meta.filters.map((f) => labels.option(f.id, row.filters[f.id])),
    ...indicators.map((i) => formatValue(row.values[i.id], i)),
  ];
}

/** The indicators a query shows: the chosen ones, or all when none is chosen (as the API does). */
export function shownIndicators(meta: Meta, state: QueryState): IndicatorMeta[] {
  if (state.indicators.length === 0) return meta.indicators;
  return state.indicators.map((id) => meta.indicators.find((i) => i.id === id)).filter((i): i is IndicatorMeta => i !== undefined);
}

/** Words for the API's warnings. */
export function warningText(w: Warning): string {
  const items = (w.detail?.items ?? []).map((i) => (typeof i === 'string' ? i : JSON.stringify(i)));
  switch (w.code) {
    case 'NoResults':
      return 'Nothing matches these choices. Choose more time periods, locations or filter options.';
    default:
      return items.length ? `${w.message} (${items.join(', ')})` : w.message;
  }
}

/** For the chart: unchosen filters that have a "Total" option are held at it, so a location is one series. */
export function chartTotals(meta: Meta, state: QueryState): { filters: Record<string, string[]>; held: string[] } {
  const filters: Record<string, string[]> = {};
  const held: string[] = [];
  for (const f of meta.filters) {
    if ((state.filters[f.id] ?? []).length > 0) continue;
    const total = f.options.find((o) => o.label.trim().toLowerCase() === 'total');
    if (total) {
      filters[f.id] = [total.id];
      held.push(f.label);
    }
  }
  return { filters, held };
}

function codeBlock(title: string, text: string, testId: string): HTMLElement {
  const id = uid('code');
  const button = h('button', { type: 'button', class: 'govuk-button govuk-button--secondary app-button--small', 'aria-describedby': `${id}-h`,
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = 'Copied';
      } catch {
        const range = document.createRange();
        range.selectNodeContents(pre);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
        button.textContent = 'Selected: press Ctrl+C to copy';
      }
      setTimeout(() => (button.textContent = 'Copy'), 3000);
    } }, 'Copy');
  const pre = h('pre', { class: 'app-code', tabindex: '0', 'aria-labelledby': `${id}-h` }, h('code', { 'data-code': testId }, text));
  return h('div', { class: 'app-code-block' }, h('h3', { class: 'govuk-heading-s', id: `${id}-h` }, title), button, pre);
}

/** `/data-sets/{id}/query?…`: the query builder, the live count, and the results (table, chart, download, code). */
export async function queryPage(main: HTMLElement, dataSetId: string, params: URLSearchParams): Promise<void> {
  const state = parseState(params);
  const id = encodeURIComponent(dataSetId);
  const versionParam = state.dataSetVersion ? `?dataSetVersion=${encodeURIComponent(state.dataSetVersion)}` : '';
  const [dataSet, meta, versions] = await Promise.all([
    apiGet<DataSet>(`/v1/data-sets/${id}`),
    apiGet<Meta>(`/v1/data-sets/${id}/meta${versionParam}`),
    allVersions(dataSetId),
  ]);
  const labels = labelsOf(meta);
  const version = state.dataSetVersion ?? dataSet.latestVersion?.version ?? '';
  document.title = `Query: ${dataSet.title} – Explore education statistics data`;

  // -- the builder -------------------------------------------------------------------------------------------
  const countBox = h('div', { class: 'app-count', 'aria-live': 'polite', 'aria-atomic': 'true', id: 'match-count' });
  let countTimer: ReturnType<typeof setTimeout> | undefined;
  let countAbort: AbortController | undefined;
  const updateCount = () => {
    clearTimeout(countTimer);
    countTimer = setTimeout(async () => {
      countAbort?.abort();
      const abort = (countAbort = new AbortController());
      countBox.dataset.state = 'loading';
      try {
        const response = await apiPost<QueryResponse>(queryPath(dataSetId, state), postBody(state, { page: 1, pageSize: 1 }), abort.signal);
        if (abort.signal.aborted) return;
        const warnings = (response.warnings ?? []).map(warningText);
        const local: string[] = [];
        if (state.indicators.length === 0) local.push('No indicator chosen: every indicator is shown.');
        if (state.timePeriods.mode === 'list' && state.timePeriods.items.length === 0) local.push('No time period chosen: every time period is included.');
        replace(countBox,
          h('p', { class: 'govuk-heading-m govuk-!-margin-bottom-1', 'data-count': String(response.paging.totalResults) }, `${plural(response.paging.totalResults, 'row')} match`),
          warnings.length ? h('div', { class: 'govuk-warning-text govuk-!-margin-bottom-2' }, h('span', { class: 'govuk-warning-text__icon', 'aria-hidden': 'true' }, '!'),
            h('strong', { class: 'govuk-warning-text__text' }, h('span', { class: 'govuk-visually-hidden' }, 'Warning '), h('span', { 'data-warnings': '' }, warnings.join(' ')))) : null,
          local.length ? h('p', { class: 'govuk-body-s govuk-!-margin-bottom-0' }, local.join(' ')) : null);
        countBox.dataset.state = 'ready';
      } catch (error) {
        if (abort.signal.aborted) return;
        replace(countBox, h('p', { class: 'govuk-error-message' }, h('span', { class: 'govuk-visually-hidden' }, 'Error: '), (error as Error).message));
        countBox.dataset.state = 'error';
      }
    }, 200);
  };
  const changed = () => {
    stale.hidden = false;
    updateCount();
  };
  const stale = h('p', { class: 'govuk-body-s app-stale', hidden: true }, 'Your choices have changed: show the results again to update the table and chart.');

  // Time periods: a range (from, to) or a list.
  const periodOptions = meta.timePeriods.map((t) => ({ value: periodKey(t), label: t.label }));
  const periodList = new Set(state.timePeriods.mode === 'list' ? state.timePeriods.items : []);
  const range = state.timePeriods.mode === 'range' ? state.timePeriods : { from: periodOptions[0]?.value, to: periodOptions[periodOptions.length - 1]?.value };
  const fromSelect = h('select', { class: 'govuk-select', id: 'period-from', onchange: () => { range.from = fromSelect.value; syncPeriods(); } },
    periodOptions.map((p) => h('option', { value: p.value, selected: p.value === range.from }, p.label)));
  const toSelect = h('select', { class: 'govuk-select', id: 'period-to', onchange: () => { range.to = toSelect.value; syncPeriods(); } },
    periodOptions.map((p) => h('option', { value: p.value, selected: p.value === range.to }, p.label)));
  const rangeBox = h('div', { class: 'app-period-range' },
    h('div', { class: 'govuk-form-group govuk-!-margin-bottom-2' }, h('label', { class: 'govuk-label', for: 'period-from' }, 'From'), fromSelect),
    h('div', { class: 'govuk-form-group govuk-!-margin-bottom-2' }, h('label', { class: 'govuk-label', for: 'period-to' }, 'To'), toSelect));
  const listBox = checklist({ legend: 'Time periods', options: periodOptions, selected: periodList, onChange: () => syncPeriods(), name: 'period' });
  let periodMode: 'range' | 'list' = state.timePeriods.mode;
  const syncPeriods = () => {
    rangeBox.hidden = periodMode !== 'range';
    listBox.hidden = periodMode !== 'list';
    state.timePeriods = periodMode === 'range' ? { mode: 'range', from: range.from, to: range.to } : { mode: 'list', items: periodOptions.map((p) => p.value).filter((v) => periodList.has(v)) };
    changed();
  };
  const modeRadio = (mode: 'range' | 'list', label: string) =>
    h('div', { class: 'govuk-radios__item' },
      h('input', { class: 'govuk-radios__input', id: `period-mode-${mode}`, name: 'period-mode', type: 'radio', value: mode, checked: periodMode === mode,
        onchange: () => { periodMode = mode; syncPeriods(); } }),
      h('label', { class: 'govuk-label govuk-radios__label', for: `period-mode-${mode}` }, label));
  rangeBox.hidden = periodMode !== 'range';
  listBox.hidden = periodMode !== 'list';

  // Geographic levels, each with its (searchable) locations.
  const levelSet = new Set(state.geographicLevels);
  const locationSets = new Map(meta.locations.map((g) => [g.level.code, new Set(state.locations.filter((l) => l.startsWith(`${g.level.code}|`)))]));
  const syncLocations = () => {
    state.geographicLevels = meta.geographicLevels.map((l) => l.code).filter((c) => levelSet.has(c));
    state.locations = meta.locations.flatMap((g) => (levelSet.has(g.level.code) ? g.options.map((o) => locationKey(g.level.code, o.id)).filter((k) => locationSets.get(g.level.code)!.has(k)) : []));
    changed();
  };
  const levelBlocks = meta.geographicLevels.map((level) => {
    const group = meta.locations.find((g) => g.level.code === level.code);
    const inputId = `level-${level.code}`;
    const locations = group && group.options.length > 1
      ? checklist({
          legend: `${level.label} locations`,
          hint: `Leave empty for every ${level.label.toLowerCase()} location (${group.options.length}).`,
          options: group.options.map((o) => ({ value: locationKey(level.code, o.id), label: o.label, keywords: [o.code, o.oldCode, o.urn, o.laEstab, o.ukprn].filter(Boolean).join(' ') })),
          selected: locationSets.get(level.code)!,
          onChange: syncLocations,
          searchable: group.options.length > 12,
          name: `loc-${level.code}`,
        })
      : null;
    const reveal = h('div', { class: 'govuk-checkboxes__conditional', id: `${inputId}-reveal`, hidden: !levelSet.has(level.code) }, locations);
    return h('div', null,
      h('div', { class: 'govuk-checkboxes__item' },
        h('input', { class: 'govuk-checkboxes__input', id: inputId, type: 'checkbox', value: level.code, checked: levelSet.has(level.code), 'aria-controls': locations ? `${inputId}-reveal` : null,
          onchange: (e: Event) => {
            const on = (e.target as HTMLInputElement).checked;
            if (on) levelSet.add(level.code);
            else levelSet.delete(level.code);
            reveal.hidden = !on;
            syncLocations();
          } }),
        h('label', { class: 'govuk-label govuk-checkboxes__label', for: inputId }, level.label, group ? ` (${plural(group.options.length, 'location')})` : '')),
      locations ? reveal : null);
  });

  // Filters and indicators.
  const filterSets = new Map(meta.filters.map((f) => [f.id, new Set(state.filters[f.id] ?? [])]));
  const syncFilters = () => {
    state.filters = {};
    for (const f of meta.filters) {
      const chosen = f.options.map((o) => o.id).filter((o) => filterSets.get(f.id)!.has(o));
      if (chosen.length > 0) state.filters[f.id] = chosen;
    }
    changed();
  };
  const indicatorSet = new Set(state.indicators);
  const syncIndicators = () => {
    state.indicators = meta.indicators.map((i) => i.id).filter((i) => indicatorSet.has(i));
    changed();
  };

  const versionSelect = h('select', { class: 'govuk-select', id: 'version', name: 'dataSetVersion' },
    versions.filter((v) => v.status === 'Published' || v.status === 'Deprecated').map((v) =>
      h('option', { value: v.version, selected: v.version === version }, `${v.version}${v.version === dataSet.latestVersion?.version ? ' (latest)' : ''} – ${v.status}`)));

  const results = h('div', { id: 'results' });
  const form = h('form', { class: 'app-builder', novalidate: true, onsubmit: (e: Event) => {
    e.preventDefault();
    state.page = 1;
    history.pushState(null, '', `${location.pathname}?${stateToSearch(state)}`);
    stale.hidden = true;
    void showResults();
  } },
    h('div', { class: 'govuk-form-group' },
      h('label', { class: 'govuk-label govuk-label--s', for: 'version' }, 'Version'),
      h('div', { class: 'app-search__row' }, versionSelect,
        h('button', { type: 'button', class: 'govuk-button govuk-button--secondary app-button--small govuk-!-margin-left-2', onclick: () => {
          location.assign(`/data-sets/${dataSet.id}/query?dataSetVersion=${encodeURIComponent(versionSelect.value)}`);
        } }, 'Change version'))),
    h('div', { class: 'govuk-form-group' },
      h('fieldset', { class: 'govuk-fieldset' },
        h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--m' }, h('h2', { class: 'govuk-fieldset__heading' }, '1. Time periods')),
        h('div', { class: 'govuk-radios govuk-radios--small govuk-radios--inline govuk-!-margin-bottom-3', 'data-module': 'govuk-radios' },
          modeRadio('range', 'A range'), modeRadio('list', 'Choose from a list')),
        rangeBox, listBox)),
    h('div', { class: 'govuk-form-group' },
      h('fieldset', { class: 'govuk-fieldset' },
        h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--m' }, h('h2', { class: 'govuk-fieldset__heading' }, '2. Geographic levels and locations')),
        h('div', { class: 'govuk-hint' }, 'Leave every level unticked for all of them.'),
        h('div', { class: 'govuk-checkboxes govuk-checkboxes--small', 'data-module': 'govuk-checkboxes' }, levelBlocks))),
    h('h2', { class: 'govuk-heading-m' }, '3. Filters'),
    h('p', { class: 'govuk-hint' }, 'Leave a filter empty to include all of its options.'),
    meta.filters.map((f) => checklist({ legend: f.label, hint: f.hint || undefined, options: f.options.map((o) => ({ value: o.id, label: o.label })), selected: filterSets.get(f.id)!, onChange: syncFilters, searchable: f.options.length > 12, name: `filter-${f.id}` })),
    h('h2', { class: 'govuk-heading-m' }, '4. Indicators'),
    checklist({ legend: 'Indicators', hint: 'Leave empty for every indicator.', options: meta.indicators.map((i) => ({ value: i.id, label: i.label })), selected: indicatorSet, onChange: syncIndicators, name: 'indicators' }),
    h('div', { class: 'app-sticky-count' }, countBox, stale,
      h('button', { type: 'submit', class: 'govuk-button govuk-!-margin-bottom-0', 'data-module': 'govuk-button' }, 'Show results')),
  );

  replace(main,
    h('a', { href: `/data-sets/${dataSet.id}`, class: 'govuk-back-link' }, 'Back to the data set'),
    h('span', { class: 'govuk-caption-l' }, `${dataSet.title}, version ${version}`),
    h('h1', { class: 'govuk-heading-xl' }, 'Build a query'),
    form,
    results,
  );
  updateCount();

  // -- the results -------------------------------------------------------------------------------------------
  async function showResults(focus = true): Promise<void> {
    const indicators = shownIndicators(meta, state);
    const body = postBody(state);
    replace(results, h('p', { class: 'govuk-body' }, 'Loading the results…'));
    let response: QueryResponse;
    try {
      response = await apiPost<QueryResponse>(queryPath(dataSetId, state), body);
    } catch (error) {
      replace(results, errorSummary(error));
      return;
    }
    const heading = h('h2', { class: 'govuk-heading-l', id: 'results-heading', tabindex: '-1' }, 'Results');
    const tableBox = h('div');
    const chartBox = h('div');
    replace(results,
      heading,
      h('p', { class: 'govuk-body', 'data-total': String(response.paging.totalResults) }, `${plural(response.paging.totalResults, 'row')} match this query.`),
      (response.warnings ?? []).length ? h('div', { class: 'govuk-inset-text' }, (response.warnings ?? []).map(warningText).join(' ')) : null,
      h('h3', { class: 'govuk-heading-m' }, 'Table'),
      tableBox,
      h('h3', { class: 'govuk-heading-m' }, 'Chart'),
      chartBox,
      h('h3', { class: 'govuk-heading-m' }, 'Download and share'),
      takeAway(),
      h('h3', { class: 'govuk-heading-m', id: 'code-heading' }, 'Use this query in code'),
      codePanel(),
    );
    renderTable(tableBox, response, indicators);
    void renderChartBox(chartBox, indicators);
    if (focus) heading.focus();
  }

  function sortHeader(label: string, field: string | undefined): HTMLElement {
    if (!field) return h('th', { scope: 'col', class: 'govuk-table__header' }, label);
    const [current, direction] = state.sort ? [state.sort.slice(0, state.sort.lastIndexOf('|')), state.sort.slice(state.sort.lastIndexOf('|') + 1)] : [undefined, undefined];
    const active = current === field || (!state.sort && field === 'timePeriod');
    const dir = active ? (state.sort ? direction : 'Desc') : undefined;
    return h('th', { scope: 'col', class: 'govuk-table__header', 'aria-sort': dir === 'Asc' ? 'ascending' : dir === 'Desc' ? 'descending' : 'none' },
      h('button', { type: 'button', class: 'app-sort-button', 'data-sort': field, onclick: () => {
        state.sort = `${field}|${active && dir === 'Asc' ? 'Desc' : 'Asc'}`;
        state.page = 1;
        history.replaceState(null, '', `${location.pathname}?${stateToSearch(state)}`);
        void showResults(false).then(() => (document.querySelector(`[data-sort="${CSS.escape(field)}"]`) as HTMLElement | null)?.focus());
      } }, label, h('span', { class: 'govuk-visually-hidden' }, dir ? ` (sorted ${dir === 'Asc' ? 'ascending' : 'descending'}; select to reverse)` : ' (select to sort)')));
  }

  function renderTable(box: HTMLElement, response: QueryResponse, indicators: IndicatorMeta[]): void {
    const locationLevel = state.geographicLevels[0] ?? meta.geographicLevels[0]?.code;
    const { page, totalPages, totalResults } = response.paging;
    const first = totalResults === 0 ? 0 : (page - 1) * state.pageSize + 1;
    const last = Math.min(totalResults, page * state.pageSize);
    const goTo = (p: number) => {
      state.page = p;
      history.replaceState(null, '', `${location.pathname}?${stateToSearch(state)}`);
      void showResults(false).then(() => document.getElementById('table-caption')?.focus());
    };
    const pageSizeSelect = h('select', { class: 'govuk-select', id: 'page-size', onchange: () => {
      state.pageSize = Number(pageSizeSelect.value);
      goTo(1);
    } }, PAGE_SIZES.map((n) => h('option', { value: String(n), selected: n === state.pageSize }, String(n))));
    replace(box,
      h('div', { class: 'app-table-scroll', tabindex: '0', role: 'region', 'aria-labelledby': 'table-caption' },
        h('table', { class: 'govuk-table app-results-table', 'data-results': '' },
          h('caption', { class: 'govuk-table__caption govuk-table__caption--s', id: 'table-caption', tabindex: '-1' },
            totalResults ? `Rows ${first} to ${last} of ${totalResults.toLocaleString('en-GB')}` : 'No rows'),
          h('thead', { class: 'govuk-table__head' }, h('tr', { class: 'govuk-table__row' },
            sortHeader('Time period', 'timePeriod'),
            sortHeader('Geographic level', 'geographicLevel'),
            sortHeader('Location', locationLevel ? `location|${locationLevel}` : undefined),
            meta.filters.map((f) => sortHeader(f.label, `filter|${f.id}`)),
            indicators.map((i) => sortHeader(i.label, `indicator|${i.id}`)))),
          h('tbody', { class: 'govuk-table__body' }, response.results.map((row) => {
            const cells = rowCells(row, meta, labels, indicators);
            const numericFrom = 3 + meta.filters.length;
            return h('tr', { class: 'govuk-table__row' }, cells.map((c, i) => h('td', { class: `govuk-table__cell${i >= numericFrom ? ' govuk-table__cell--numeric' : ''}` }, c)));
          })))),
      h('div', { class: 'app-table-paging' },
        h('nav', { class: 'govuk-pagination govuk-!-margin-bottom-2', 'aria-label': 'Table pages' },
          page > 1 ? h('div', { class: 'govuk-pagination__prev' }, h('button', { type: 'button', class: 'govuk-link app-link-button govuk-pagination__link', onclick: () => goTo(page - 1) }, 'Previous', h('span', { class: 'govuk-visually-hidden' }, ' page'))) : null,
          h('p', { class: 'govuk-body govuk-!-margin-bottom-0 app-page-of' }, `Page ${page} of ${totalPages}`),
          page < totalPages ? h('div', { class: 'govuk-pagination__next' }, h('button', { type: 'button', class: 'govuk-link app-link-button govuk-pagination__link', onclick: () => goTo(page + 1) }, 'Next', h('span', { class: 'govuk-visually-hidden' }, ' page'))) : null),
        h('div', { class: 'govuk-form-group govuk-!-margin-bottom-2' }, h('label', { class: 'govuk-label', for: 'page-size' }, 'Rows per page'), pageSizeSelect)),
    );
  }

  async function renderChartBox(box: HTMLElement, indicators: IndicatorMeta[]): Promise<void> {
    const totals = chartTotals(meta, state);
    let rows: ResultRow[];
    let total: number;
    try {
      const response = await apiPost<QueryResponse>(queryPath(dataSetId, state), postBody(state, { page: 1, pageSize: 10000 }, totals.filters));
      rows = response.results;
      total = response.paging.totalResults;
    } catch (error) {
      replace(box, errorSummary(error));
      return;
    }
    const numeric = indicators.filter((i) => i.unit !== 'string');
    if (numeric.length === 0) {
      replace(box, h('p', { class: 'govuk-body' }, 'None of the indicators shown is a number, so there is no chart.'));
      return;
    }
    const periods = new Set(rows.map((r) => periodKey(r.timePeriod)));
    let kind: 'line' | 'bar' = periods.size > 1 ? 'line' : 'bar';
    let indicatorId = numeric[0]!.id;
    const periodChoices = meta.timePeriods.filter((t) => periods.has(periodKey(t)));
    let barPeriod = periodChoices[periodChoices.length - 1] ? periodKey(periodChoices[periodChoices.length - 1]!) : undefined;
    const figure = h('div', { 'data-chart': '' });
    let drawnWidth = 0;
    const draw = () => {
      drawnWidth = figure.clientWidth;
      const indicator = numeric.find((i) => i.id === indicatorId)!;
      figure.dataset.kind = kind;
      barPeriodGroup.hidden = kind !== 'bar';
      replace(figure, renderChart(buildChartData(rows, meta, indicatorId, kind, barPeriod), indicator, figure.clientWidth || box.clientWidth || 640));
    };
    const indicatorSelect = h('select', { class: 'govuk-select', id: 'chart-indicator', onchange: () => { indicatorId = indicatorSelect.value; draw(); } },
      numeric.map((i) => h('option', { value: i.id }, i.label)));
    const periodSelect = h('select', { class: 'govuk-select', id: 'chart-period', onchange: () => { barPeriod = periodSelect.value; draw(); } },
      periodChoices.map((t) => h('option', { value: periodKey(t), selected: periodKey(t) === barPeriod }, t.label)));
    const barPeriodGroup = h('div', { class: 'govuk-form-group app-inline-group' }, h('label', { class: 'govuk-label', for: 'chart-period' }, 'Time period'), periodSelect);
    const kindRadio = (k: 'line' | 'bar', label: string) =>
      h('div', { class: 'govuk-radios__item' },
        h('input', { class: 'govuk-radios__input', id: `chart-kind-${k}`, name: 'chart-kind', type: 'radio', value: k, checked: kind === k, onchange: () => { kind = k; draw(); } }),
        h('label', { class: 'govuk-label govuk-radios__label', for: `chart-kind-${k}` }, label));
    replace(box,
      totals.held.length ? h('p', { class: 'govuk-body-s' }, `The chart shows the “Total” option of ${totals.held.join(' and ')}, which you did not narrow down.`) : null,
      total > rows.length ? h('p', { class: 'govuk-body-s' }, `The chart uses the first ${rows.length.toLocaleString('en-GB')} of ${total.toLocaleString('en-GB')} rows.`) : null,
      h('div', { class: 'app-chart-controls' },
        h('div', { class: 'govuk-form-group app-inline-group' }, h('label', { class: 'govuk-label', for: 'chart-indicator' }, 'Indicator'), indicatorSelect),
        h('div', { class: 'govuk-form-group app-inline-group' },
          h('fieldset', { class: 'govuk-fieldset' }, h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'Chart type'),
            h('div', { class: 'govuk-radios govuk-radios--small govuk-radios--inline' }, kindRadio('line', 'Line over time'), kindRadio('bar', 'Bars for one period')))),
        barPeriodGroup),
      figure);
    draw();
    // Redrawn when its width changes much (a rotated phone, a resized window), so the text keeps its size.
    new ResizeObserver(() => {
      if (Math.abs(figure.clientWidth - drawnWidth) > 40) draw();
    }).observe(figure);
  }

  function takeAway(): HTMLElement {
    const permalink = `${location.origin}${location.pathname}?${stateToSearch(state)}`;
    const status = h('p', { class: 'govuk-body-s', 'aria-live': 'polite' });
    const download = async () => {
      status.textContent = 'Preparing the CSV…';
      try {
        const { page: _p, pageSize: _s, ...csvBody } = postBody(state);
        const response = await fetch(queryPath(dataSetId, state), { method: 'POST', headers: { accept: 'text/csv', 'content-type': 'application/json' }, body: JSON.stringify(csvBody) });
        if (!response.ok) throw new ApiError(response.status, problemMessage(response.status, await response.json().catch(() => undefined)), undefined);
        const blob = await response.blob();
        const url = URL.createObjectURL(blob);
        const a = h('a', { href: url, download: `${dataSet.title.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}-query.csv` });
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 10000);
        status.textContent = `Downloaded the CSV (${blob.size.toLocaleString('en-GB')} bytes).`;
      } catch (error) {
        status.textContent = `The download failed: ${(error as Error).message}`;
      }
    };
    return h('div', null,
      h('button', { type: 'button', class: 'govuk-button govuk-button--secondary', id: 'download-csv', onclick: download }, 'Download all matching rows (CSV)'),
      status,
      h('div', { class: 'govuk-form-group' },
        h('label', { class: 'govuk-label', for: 'permalink' }, 'Link to this query'),
        h('div', { class: 'govuk-hint', id: 'permalink-hint' }, 'Opening this link shows the same choices and results.'),
        h('input', { class: 'govuk-input', id: 'permalink', type: 'text', readonly: true, value: permalink, 'aria-describedby': 'permalink-hint' })));
  }

  function codePanel(): HTMLElement {
    const { page: _p, pageSize: _s, ...base } = postBody(state);
    const body = { ...base, page: 1, pageSize: 1000 };
    const postUrl = `${location.origin}${queryPath(dataSetId, state)}`;
    const get = getUrl(location.origin, dataSetId, state);
    const input = { origin: location.origin, dataSetId, postUrl, body, dataSetVersion: state.dataSetVersion };
    return h('div', { class: 'app-code-panel' },
      h('p', { class: 'govuk-body' }, 'Each returns the first 1,000 matching rows; ask for ', h('code', null, 'page'), ' 2, 3… for more, or send ', h('code', null, 'Accept: text/csv'), ' for every row.'),
      get.url
        ? [codeBlock('GET URL', get.url, 'get-url'), codeBlock('curl (GET)', curlGet(get.url), 'curl-get')]
        : h('div', { class: 'govuk-inset-text' }, `There is no GET URL for this query: ${get.reason}`),
      codeBlock(`POST body (to ${postUrl})`, compactJson(body), 'post-body'),
      codeBlock('curl (POST)', curlPost(input), 'curl-post'),
      codeBlock('curl (every row as CSV)', curlCsv(input), 'curl-csv'),
      codeBlock('R (eesyapi)', rSnippet(input), 'r'),
      codeBlock('Python (requests)', pythonSnippet(input), 'python'));
  }

  if ([...params.keys()].some((k) => k !== 'dataSetVersion')) await showResults(false);

  window.addEventListener('popstate', () => location.reload(), { once: true });
}

export function errorSummary(error: unknown): HTMLElement {
  const message = error instanceof Error ? error.message : String(error);
  return h('div', { class: 'govuk-error-summary', role: 'alert', tabindex: '-1' },
    h('h2', { class: 'govuk-error-summary__title' }, 'There is a problem'),
    h('div', { class: 'govuk-error-summary__body' }, h('p', { class: 'govuk-body' }, message)));
}
