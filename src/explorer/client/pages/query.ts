/**
 * The explorer's query view. Over 400 lines because `queryPage` is one view whose regions (steps, live count,
 * cross-tab, chart, code snippets) share one state and update each other; everything pure it uses lives in its own
 * tested module (../query.ts, ../steps.ts, ../layout.ts, ../crosstab.ts, ../chart.ts, ../snippets.ts, ../format.ts).
 */
import { ApiError, apiGet, apiPost, problemMessage, type DataSet, type IndicatorMeta, type Meta, type QueryResponse, type ResultRow, type Warning } from '../api.js';
import type { ManyLines } from '../chart.js';
import { buildCrossTab, crossTabCaption, locationLabels, type CrossTab } from '../crosstab.js';
import { afterNextPaint, h, replace, uid, type Child } from '../dom.js';
import { plural } from '../format.js';
import {
  getUrl, locationKey, parseState, periodKey, postBody, queryPath, stateToSearch, type ChartSettings, type QueryState,
} from '../query.js';
import { compactJson, curlCsv, curlGet, curlPost, pythonSnippet, rSnippet } from '../snippets.js';
import { STEPS, stepSummaries, type StepNumber } from '../steps.js';
import { drawCrossTab, layoutControls } from '../table.js';
import { allVersions } from './dataset.js';
import { checklist } from './checklist.js';
import { errorSummary } from './error.js';

/** Rows the table and the chart ask for: the API's largest page. */
const TABLE_ROWS = 10000;
/** Indicator lists longer than this get a search box. */
const SEARCH_INDICATORS_OVER = 10;

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
  const names = locationLabels(meta);
  const version = state.dataSetVersion ?? dataSet.latestVersion?.version ?? '';
  document.title = `Query: ${dataSet.title} – Explore education statistics data`;

  // -- the builder -------------------------------------------------------------------------------------------
  const countBox = h('div', { class: 'app-count', 'aria-live': 'polite', 'aria-atomic': 'true', id: 'match-count' });
  /** The count (and the API's warnings) of the current choices, from any answer to them. */
  const showCount = (response: QueryResponse) => {
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
  };
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
        showCount(response);
      } catch (error) {
        if (abort.signal.aborted) return;
        replace(countBox, h('p', { class: 'govuk-error-message' }, h('span', { class: 'govuk-visually-hidden' }, 'Error: '), (error as Error).message));
        countBox.dataset.state = 'error';
      }
    }, 200);
  };
  // Every choice goes into the URL at once (replaceState), so a reload or a shared link keeps it.
  const writeUrl = (push = false) => {
    const url = `${location.pathname}?${stateToSearch(state)}`;
    if (push) history.pushState(null, '', url);
    else history.replaceState(null, '', url);
    if (permalinkInput) permalinkInput.value = `${location.origin}${url}`;
  };
  let permalinkInput: HTMLInputElement | undefined;
  let resultsShown = false;
  const changed = () => {
    // Only once there are results can they be out of date.
    if (resultsShown) stale.hidden = false;
    refreshSummaries();
    writeUrl();
    updateCount();
  };
  const stale = h('p', { class: 'govuk-body-s app-stale', hidden: true, 'data-stale': '' }, 'Your choices have changed: show the results again to update the table and chart.');

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
          options: group.options.map((o) => ({ value: locationKey(level.code, o.id), label: names.get(`${level.code}|${o.id}`) ?? o.label, keywords: [o.code, o.oldCode, o.urn, o.laEstab, o.ukprn].filter(Boolean).join(' ') })),
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

  // The four steps: the open one shows its controls, the others what was chosen and a button to go back to them.
  const stepBodies: Child[][] = [
    [
      h('div', { class: 'govuk-form-group' },
        h('fieldset', { class: 'govuk-fieldset' },
          h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'Time periods'),
          h('div', { class: 'govuk-radios govuk-radios--small govuk-radios--inline govuk-!-margin-bottom-3', 'data-module': 'govuk-radios' },
            modeRadio('range', 'A range'), modeRadio('list', 'Choose from a list')),
          rangeBox, listBox)),
    ],
    [
      h('div', { class: 'govuk-form-group' },
        h('fieldset', { class: 'govuk-fieldset' },
          h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'Geographic levels and locations'),
          h('div', { class: 'govuk-hint' }, 'Leave every level unticked for all of them.'),
          h('div', { class: 'govuk-checkboxes govuk-checkboxes--small', 'data-module': 'govuk-checkboxes' }, levelBlocks))),
    ],
    [
      h('p', { class: 'govuk-hint' }, 'Leave a filter empty to include all of its options.'),
      meta.filters.map((f) => checklist({ legend: f.label, hint: f.hint || undefined, options: f.options.map((o) => ({ value: o.id, label: o.label })), selected: filterSets.get(f.id)!, onChange: syncFilters, searchable: f.options.length > 12, name: `filter-${f.id}` })),
    ],
    [
      checklist({ legend: 'Indicators', hint: 'Leave empty for every indicator.', options: meta.indicators.map((i) => ({ value: i.id, label: i.label })), selected: indicatorSet, onChange: syncIndicators, searchable: meta.indicators.length > SEARCH_INDICATORS_OVER, name: 'indicators' }),
    ],
  ];
  const steps = STEPS.map((title, i) => {
    const n = (i + 1) as StepNumber;
    const heading = h('h2', { class: 'govuk-heading-m app-step__heading', id: `step-${n}-heading`, tabindex: '-1' },
      h('span', { class: 'govuk-caption-m' }, `Step ${n} of ${STEPS.length}`), title);
    const summary = h('dl', { class: 'govuk-summary-list govuk-summary-list--no-border app-step__summary', 'data-summary': String(n) });
    const change = h('button', { type: 'button', class: 'govuk-button govuk-button--secondary app-button--small', 'data-change-step': String(n), onclick: () => openStep(n, true) },
      'Change', h('span', { class: 'govuk-visually-hidden' }, ` ${title.toLowerCase()}`));
    const closed = h('div', { class: 'app-step__closed' }, summary, change);
    const next = n < STEPS.length
      ? h('button', { type: 'button', class: 'govuk-button', 'data-next-step': String(n + 1), onclick: () => openStep((n + 1) as StepNumber, true) }, `Continue to ${STEPS[i + 1]!.toLowerCase()}`)
      : null;
    const open = h('div', { class: 'app-step__open' }, stepBodies[i], next);
    const section = h('section', { class: 'app-step', 'data-step': String(n), 'aria-labelledby': `step-${n}-heading` }, heading, closed, open);
    return { n, section, heading, summary, closed, open };
  });
  function refreshSummaries(): void {
    const lines = stepSummaries(meta, state);
    for (const step of steps) {
      replace(step.summary, lines[step.n - 1]!.map((line) => {
        const split = line.indexOf(': ');
        return split > 0
          ? h('div', { class: 'govuk-summary-list__row' }, h('dt', { class: 'govuk-summary-list__key' }, line.slice(0, split)), h('dd', { class: 'govuk-summary-list__value' }, line.slice(split + 2)))
          : h('div', { class: 'govuk-summary-list__row' }, h('dd', { class: 'govuk-summary-list__value' }, line));
      }));
    }
  }
  /** Opens one step (none: every step summarised, as when results are shown). */
  function openStep(n: StepNumber | undefined, focus = false): void {
    state.step = n;
    for (const step of steps) {
      const isOpen = step.n === n;
      step.open.hidden = !isOpen;
      step.closed.hidden = isOpen;
      step.section.classList.toggle('app-step--open', isOpen);
      step.section.classList.toggle('app-step--done', n === undefined || step.n < n);
    }
    writeUrl();
    if (focus && n) steps[n - 1]!.heading.focus();
  }

  const form = h('form', { class: 'app-builder', novalidate: true, onsubmit: (e: Event) => {
    e.preventDefault();
    state.page = 1;
    openStep(undefined);
    writeUrl(true);
    void showResults();
  } },
    h('div', { class: 'govuk-form-group' },
      h('label', { class: 'govuk-label govuk-label--s', for: 'version' }, 'Version'),
      h('div', { class: 'app-version-row' }, versionSelect,
        h('button', { type: 'button', class: 'govuk-button govuk-button--secondary app-button--small', onclick: () => {
          location.assign(`/data-sets/${dataSet.id}/query?dataSetVersion=${encodeURIComponent(versionSelect.value)}`);
        } }, 'Change version'))),
    steps.map((step) => step.section),
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
  refreshSummaries();
  // A link with choices and no open step shows its results; otherwise the builder opens at its step (or the first).
  const hasChoices = [...params.keys()].some((k) => k !== 'dataSetVersion' && k !== 'step');
  openStep(state.step ?? (hasChoices ? undefined : 1));
  // A link that shows its results takes the count from them: one query fewer while the page loads.
  if (state.step !== undefined) updateCount();

  // -- the results -------------------------------------------------------------------------------------------
  let table: CrossTab | undefined;

  async function showResults(focus = true, countFromResults = false): Promise<void> {
    const indicators = shownIndicators(meta, state);
    replace(results, h('p', { class: 'govuk-body' }, 'Loading the results…'));
    let response: QueryResponse;
    try {
      response = await apiPost<QueryResponse>(queryPath(dataSetId, state), postBody(state, { page: 1, pageSize: TABLE_ROWS }));
    } catch (error) {
      replace(results, errorSummary(error));
      if (countFromResults) updateCount();
      return;
    }
    resultsShown = true;
    stale.hidden = true;
    if (countFromResults) showCount(response);
    const total = response.paging.totalResults;
    const heading = h('h2', { class: 'govuk-heading-l', id: 'results-heading', tabindex: '-1' }, 'Results');
    const tableBox = h('div', { class: 'app-table-scroll', tabindex: '0', role: 'region', 'aria-labelledby': 'crosstab-caption' });
    const pager = h('nav', { class: 'app-crosstab-pager', 'aria-label': 'Table pages' });
    const layoutBox = h('div');
    const layoutStatus = h('p', { class: 'govuk-body-s app-layout__status', role: 'status', 'aria-live': 'polite', id: 'layout-status' });
    const chartBox = h('div');
    const drawTable = (focusId?: string) => {
      const startedAt = performance.now();
      table = buildCrossTab(response.results, meta, indicators, state.layout);
      performance.measure('explorer:crosstab-pivot', { start: startedAt });
      drawCrossTab(tableBox, pager, table, crossTabCaption(dataSet.title, table), startedAt);
      replace(layoutBox, layoutControls(table, (layout, nextFocus) => {
        state.layout = layout;
        writeUrl();
        drawTable(nextFocus);
      }, (text) => (layoutStatus.textContent = text)));
      if (focusId) {
        const button = document.getElementById(focusId) as HTMLButtonElement | null;
        const group = focusId.replace(/^move-(.*)-[a-zA-Z]+$/, '$1');
        (button && !button.disabled ? button : layoutBox.querySelector<HTMLElement>(`[data-group="${CSS.escape(group)}"] button:not([disabled])`) ?? button)?.focus();
      }
    };
    replace(results,
      heading,
      h('p', { class: 'govuk-body', 'data-total': String(total) }, `${plural(total, 'row')} match this query.`),
      (response.warnings ?? []).length ? h('div', { class: 'govuk-inset-text' }, (response.warnings ?? []).map(warningText).join(' ')) : null,
      h('h3', { class: 'govuk-heading-m' }, 'Table'),
      total > response.results.length
        ? h('div', { class: 'govuk-inset-text', 'data-table-truncated': '' }, `The table shows the first ${response.results.length.toLocaleString('en-GB')} of ${total.toLocaleString('en-GB')} rows. Narrow your choices to see them all, or download all matching rows.`)
        : null,
      h('details', { class: 'govuk-details app-layout-details' },
        h('summary', { class: 'govuk-details__summary' }, h('span', { class: 'govuk-details__summary-text' }, 'Move and reorder table headers')),
        h('div', { class: 'govuk-details__text' }, layoutBox)),
      layoutStatus,
      tableBox,
      pager,
      h('h3', { class: 'govuk-heading-m' }, 'Chart'),
      chartBox,
      h('h3', { class: 'govuk-heading-m' }, 'Download and share'),
      takeAway(),
      h('h3', { class: 'govuk-heading-m', id: 'code-heading' }, 'Use this query in code'),
      codePanel(),
    );
    drawTable();
    if (focus) heading.focus();
    // The chart's rows are asked for once the table is on screen, so its request, parsing and drawing do not hold
    // up the table's first frame.
    void afterNextPaint().then(() => renderChartBox(chartBox, indicators));
  }

  async function renderChartBox(box: HTMLElement, indicators: IndicatorMeta[]): Promise<void> {
    const totals = chartTotals(meta, state);
    let rows: ResultRow[];
    let total: number;
    let chart: typeof import('../chart.js');
    try {
      // The chart's code comes with its rows: only a page that shows a chart loads it.
      const [response, chartModule] = await Promise.all([
        apiPost<QueryResponse>(queryPath(dataSetId, state), postBody(state, { page: 1, pageSize: TABLE_ROWS }, totals.filters)),
        import('../chart.js'),
      ]);
      rows = response.results;
      total = response.paging.totalResults;
      chart = chartModule;
    } catch (error) {
      replace(box, errorSummary(error));
      return;
    }
    const { axisLabel, buildChartData, PALETTE, renderChart } = chart;
    const numeric = indicators.filter((i) => i.unit !== 'string');
    if (numeric.length === 0) {
      replace(box, h('p', { class: 'govuk-body' }, 'None of the indicators shown is a number, so there is no chart.'));
      return;
    }
    const periods = new Set(rows.map((r) => periodKey(r.timePeriod)));
    const periodChoices = meta.timePeriods.filter((t) => periods.has(periodKey(t)));
    // The permalink's settings where this data has them, else the defaults.
    const saved = state.chart ?? {};
    let kind: 'line' | 'bar' = saved.type ?? (periods.size > 1 ? 'line' : 'bar');
    let indicatorId = numeric.find((i) => i.id === saved.indicator)?.id ?? numeric[0]!.id;
    let manyLines: ManyLines = saved.lines ?? 'highlight';
    let highlight: string | undefined = saved.highlight;
    let barPeriod = periodChoices.some((t) => periodKey(t) === saved.period)
      ? saved.period
      : periodChoices[periodChoices.length - 1] ? periodKey(periodChoices[periodChoices.length - 1]!) : undefined;
    /** A setting the user changed: into the permalink, then the chart is drawn again. */
    const remember = (settings: ChartSettings) => {
      state.chart = { ...state.chart, ...settings };
      writeUrl();
      draw();
    };
    const figure = h('div', { 'data-chart': '' });
    let drawnWidth = 0;
    const highlightSelect = h('select', { class: 'govuk-select', id: 'chart-highlight', onchange: () => { highlight = highlightSelect.value; remember({ highlight }); } });
    const draw = () => {
      drawnWidth = figure.clientWidth;
      const indicator = numeric.find((i) => i.id === indicatorId)!;
      const data = buildChartData(rows, meta, indicatorId, kind, barPeriod);
      const many = kind === 'line' && data.series.length > PALETTE.length;
      figure.dataset.kind = kind;
      figure.dataset.series = String(data.series.length);
      barPeriodGroup.hidden = kind !== 'bar';
      manyGroup.hidden = !many;
      highlightGroup.hidden = !many || manyLines !== 'highlight';
      if (many && highlightSelect.options.length !== data.series.length) {
        replace(highlightSelect, data.series.map((sr) => h('option', { value: sr.key, selected: sr.key === highlight }, sr.label)));
      }
      replace(figure, renderChart(data, indicator, { width: figure.clientWidth || box.clientWidth || 640, manyLines, highlight }));
    };
    const indicatorSelect = h('select', { class: 'govuk-select', id: 'chart-indicator', onchange: () => { indicatorId = indicatorSelect.value; remember({ indicator: indicatorId }); } },
      numeric.map((i) => h('option', { value: i.id, selected: i.id === indicatorId }, axisLabel(i))));
    const periodSelect = h('select', { class: 'govuk-select', id: 'chart-period', onchange: () => { barPeriod = periodSelect.value; remember({ period: barPeriod }); } },
      periodChoices.map((t) => h('option', { value: periodKey(t), selected: periodKey(t) === barPeriod }, t.label)));
    const barPeriodGroup = h('div', { class: 'govuk-form-group app-inline-group' }, h('label', { class: 'govuk-label', for: 'chart-period' }, 'Time period'), periodSelect);
    const radio = <T extends string>(name: string, value: T, label: string, checked: boolean, set: (v: T) => void) =>
      h('div', { class: 'govuk-radios__item' },
        h('input', { class: 'govuk-radios__input', id: `${name}-${value}`, name, type: 'radio', value, checked, onchange: () => set(value) }),
        h('label', { class: 'govuk-label govuk-radios__label', for: `${name}-${value}` }, label));
    const manyGroup = h('div', { class: 'govuk-form-group app-inline-group' },
      h('fieldset', { class: 'govuk-fieldset' }, h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'More than 6 lines'),
        h('div', { class: 'govuk-radios govuk-radios--small govuk-radios--inline' },
          radio<ManyLines>('chart-many', 'highlight', 'Highlight one', manyLines === 'highlight', (v) => remember({ lines: (manyLines = v) })),
          radio<ManyLines>('chart-many', 'multiples', 'Small multiples', manyLines === 'multiples', (v) => remember({ lines: (manyLines = v) })))));
    const highlightGroup = h('div', { class: 'govuk-form-group app-inline-group' }, h('label', { class: 'govuk-label', for: 'chart-highlight' }, 'Highlighted series'), highlightSelect);
    replace(box,
      totals.held.length ? h('p', { class: 'govuk-body-s' }, `The chart shows the “Total” option of ${totals.held.join(' and ')}, which you did not narrow down.`) : null,
      total > rows.length ? h('p', { class: 'govuk-body-s' }, `The chart uses the first ${rows.length.toLocaleString('en-GB')} of ${total.toLocaleString('en-GB')} rows.`) : null,
      h('div', { class: 'app-chart-controls' },
        h('div', { class: 'govuk-form-group app-inline-group' }, h('label', { class: 'govuk-label', for: 'chart-indicator' }, 'Indicator'), indicatorSelect),
        h('div', { class: 'govuk-form-group app-inline-group' },
          h('fieldset', { class: 'govuk-fieldset' }, h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'Chart type'),
            h('div', { class: 'govuk-radios govuk-radios--small govuk-radios--inline' },
              radio('chart-kind', 'line', 'Line over time', kind === 'line', (v) => remember({ type: (kind = v) })),
              radio('chart-kind', 'bar', 'Bars for one period', kind === 'bar', (v) => remember({ type: (kind = v) }))))),
        barPeriodGroup, manyGroup, highlightGroup),
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
    const save = (blob: Blob, suffix: string, extension = 'csv') => {
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: `${dataSet.title.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}-${suffix}.${extension}` });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    };
    // Every matching row, in the format asked for (the API's `Accept`): CSV, Parquet or an Arrow IPC stream.
    const download = (format: { name: string; accept: string; extension: string }) => async () => {
      status.textContent = `Preparing the ${format.name}…`;
      try {
        const { page: _p, pageSize: _s, ...csvBody } = postBody(state);
        const response = await fetch(queryPath(dataSetId, state), { method: 'POST', headers: { accept: format.accept, 'content-type': 'application/json' }, body: JSON.stringify(csvBody) });
        if (!response.ok) throw new ApiError(response.status, problemMessage(response.status, await response.json().catch(() => undefined)), undefined);
        const blob = await response.blob();
        save(blob, 'query', format.extension);
        status.textContent = `Downloaded the ${format.name} (${blob.size.toLocaleString('en-GB')} bytes).`;
      } catch (error) {
        status.textContent = `The download failed: ${(error as Error).message}`;
      }
    };
    const downloadTable = async () => {
      const shown = table;
      if (!shown) return;
      try {
        const { crossTabCsv } = await import('../crosstab-csv.js');
        save(new Blob([crossTabCsv(dataSet.title, shown)], { type: 'text/csv;charset=utf-8' }), 'table');
        status.textContent = 'Downloaded the table as shown (CSV).';
      } catch (error) {
        status.textContent = `The download failed: ${(error as Error).message}`;
      }
    };
    permalinkInput = h('input', { class: 'govuk-input', id: 'permalink', type: 'text', readonly: true, value: permalink, 'aria-describedby': 'permalink-hint' });
    return h('div', null,
      h('div', { class: 'govuk-button-group' },
        h('button', { type: 'button', class: 'govuk-button govuk-button--secondary', id: 'download-table', onclick: downloadTable }, 'Download this table (CSV)'),
        h('button', { type: 'button', class: 'govuk-button govuk-button--secondary', id: 'download-csv', onclick: download({ name: 'CSV', accept: 'text/csv', extension: 'csv' }) }, 'Download all matching rows (CSV)'),
        h('button', { type: 'button', class: 'govuk-button govuk-button--secondary', id: 'download-parquet', onclick: download({ name: 'Parquet file', accept: 'application/vnd.apache.parquet', extension: 'parquet' }) }, 'Download all matching rows (Parquet)'),
        h('button', { type: 'button', class: 'govuk-button govuk-button--secondary', id: 'download-arrow', onclick: download({ name: 'Arrow stream', accept: 'application/vnd.apache.arrow.stream', extension: 'arrows' }) }, 'Download all matching rows (Arrow)')),
      status,
      h('div', { class: 'govuk-form-group' },
        h('label', { class: 'govuk-label', for: 'permalink' }, 'Link to this query'),
        h('div', { class: 'govuk-hint', id: 'permalink-hint' }, 'Opening this link shows the same choices, table layout and results.'),
        permalinkInput));
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

  if (state.step === undefined) await showResults(false, true);

  window.addEventListener('popstate', () => location.reload(), { once: true });
}
