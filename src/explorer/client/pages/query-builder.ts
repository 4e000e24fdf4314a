/** The query page's builder: the live count of matching rows and the four steps (time periods, locations, filters, indicators). */
import { apiPost, type QueryResponse } from '../api.js';
import { h, replace, type Child } from '../dom.js';
import { plural } from '../format.js';
import { locationKey, periodKey, postBody, queryPath, type PeriodKey, type StepNumber } from '../query.js';
import { STEPS, stepSummaries } from '../steps.js';
import { checklist } from './checklist.js';
import { SEARCH_INDICATORS_OVER, warningText, type QueryView } from './query-view.js';

/** The count of rows the current choices match, with the API's warnings and the chosen periods no row has. */
export interface LiveCount {
  box: HTMLElement;
  /** Counts again (shortly: a burst of changes is one count). */
  update(): void;
  show(response: QueryResponse, emptyPeriods?: string[]): void;
}

export function liveCount(view: QueryView): LiveCount {
  const { dataSetId, meta, state } = view;
  const countBox = h('div', { class: 'app-count', 'aria-live': 'polite', 'aria-atomic': 'true', id: 'match-count' });
  /** The count (and the API's warnings) of the current choices, from any answer to them. */
  const showCount = (response: QueryResponse, emptyPeriods: string[] = []) => {
    const warnings = (response.warnings ?? []).map(warningText);
    const local: string[] = [];
    if (emptyPeriods.length && response.paging.totalResults > 0) {
      local.push(
        `No rows for ${emptyPeriods.join(', ')} with these choices: the data set has no data there, so ${emptyPeriods.length === 1 ? 'it adds' : 'they add'} nothing to the table or chart.`,
      );
    }
    if (state.indicators.length === 0) local.push('No indicator chosen: every indicator is shown.');
    if (state.timePeriods.mode === 'list' && state.timePeriods.items.length === 0)
      local.push('No time period chosen: every time period is included.');
    replace(
      countBox,
      h(
        'p',
        { class: 'govuk-heading-m govuk-!-margin-bottom-1', 'data-count': String(response.paging.totalResults) },
        `${plural(response.paging.totalResults, 'row')} match`,
      ),
      warnings.length
        ? h(
            'div',
            { class: 'govuk-warning-text govuk-!-margin-bottom-2' },
            h('span', { class: 'govuk-warning-text__icon', 'aria-hidden': 'true' }, '!'),
            h(
              'strong',
              { class: 'govuk-warning-text__text' },
              h('span', { class: 'govuk-visually-hidden' }, 'Warning '),
              h('span', { 'data-warnings': '' }, warnings.join(' ')),
            ),
          )
        : null,
      local.length ? h('p', { class: 'govuk-body-s govuk-!-margin-bottom-0' }, local.join(' ')) : null,
    );
    countBox.dataset.state = 'ready';
  };
  /** The chosen time periods (a list of at most 12) that no row matches with the other choices: a count each. */
  const periodsWithoutRows = async (signal: AbortSignal): Promise<string[]> => {
    const tp = state.timePeriods;
    if (tp.mode !== 'list' || tp.items.length < 2 || tp.items.length > 12) return [];
    const counts = await Promise.all(
      tp.items.map((item) =>
        apiPost<QueryResponse>(
          queryPath(dataSetId, state),
          postBody({ ...state, timePeriods: { mode: 'list', items: [item] } }, { page: 1, pageSize: 1 }),
          signal,
        ).then(
          (r) => r.paging.totalResults,
          () => 1,
        ),
      ),
    );
    const label = new Map(meta.timePeriods.map((t) => [periodKey(t), t.label]));
    return tp.items.filter((_, i) => counts[i] === 0).map((item) => label.get(item) ?? item);
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
        const [response, empty] = await Promise.all([
          apiPost<QueryResponse>(queryPath(dataSetId, state), postBody(state, { page: 1, pageSize: 1 }), abort.signal),
          periodsWithoutRows(abort.signal),
        ]);
        if (abort.signal.aborted) return;
        showCount(response, empty);
      } catch (error) {
        if (abort.signal.aborted) return;
        replace(
          countBox,
          h(
            'p',
            { class: 'govuk-error-message' },
            h('span', { class: 'govuk-visually-hidden' }, 'Error: '),
            (error as Error).message,
          ),
        );
        countBox.dataset.state = 'error';
      }
    }, 200);
  };
  return { box: countBox, update: updateCount, show: showCount };
}

/** The From and To selects of a range of time periods: a choice is written to `range`, then `onChange` is called. */
function periodRangeBox(
  periodOptions: Array<{ value: PeriodKey; label: string }>,
  range: { from?: PeriodKey; to?: PeriodKey },
  onChange: () => void,
): HTMLElement {
  const fromSelect = h(
    'select',
    {
      class: 'govuk-select',
      id: 'period-from',
      onchange: () => {
        range.from = fromSelect.value;
        onChange();
      },
    },
    periodOptions.map((p) => h('option', { value: p.value, selected: p.value === range.from }, p.label)),
  );
  const toSelect = h(
    'select',
    {
      class: 'govuk-select',
      id: 'period-to',
      onchange: () => {
        range.to = toSelect.value;
        onChange();
      },
    },
    periodOptions.map((p) => h('option', { value: p.value, selected: p.value === range.to }, p.label)),
  );
  return h(
    'div',
    { class: 'app-period-range' },
    h(
      'div',
      { class: 'govuk-form-group govuk-!-margin-bottom-2' },
      h('label', { class: 'govuk-label', for: 'period-from' }, 'From'),
      fromSelect,
    ),
    h(
      'div',
      { class: 'govuk-form-group govuk-!-margin-bottom-2' },
      h('label', { class: 'govuk-label', for: 'period-to' }, 'To'),
      toSelect,
    ),
  );
}

/** Step 1: time periods, as a range (from, to) or a list. */
function periodStep(view: QueryView, changed: () => void): Child {
  const { meta, state } = view;
  const periodOptions = meta.timePeriods.map((t) => ({ value: periodKey(t), label: t.label }));
  const periodList = new Set(state.timePeriods.mode === 'list' ? state.timePeriods.items : []);
  const range =
    state.timePeriods.mode === 'range'
      ? state.timePeriods
      : { from: periodOptions[0]?.value, to: periodOptions[periodOptions.length - 1]?.value };
  const rangeBox = periodRangeBox(periodOptions, range, () => syncPeriods());
  const listBox = checklist({
    legend: 'Time periods',
    options: periodOptions,
    selected: periodList,
    onChange: () => syncPeriods(),
    name: 'period',
  });
  let periodMode: 'range' | 'list' = state.timePeriods.mode;
  const syncPeriods = () => {
    rangeBox.hidden = periodMode !== 'range';
    listBox.hidden = periodMode !== 'list';
    state.timePeriods =
      periodMode === 'range'
        ? { mode: 'range', from: range.from, to: range.to }
        : { mode: 'list', items: periodOptions.map((p) => p.value).filter((v) => periodList.has(v)) };
    changed();
  };
  const modeRadio = (mode: 'range' | 'list', label: string) =>
    h(
      'div',
      { class: 'govuk-radios__item' },
      h('input', {
        class: 'govuk-radios__input',
        id: `period-mode-${mode}`,
        name: 'period-mode',
        type: 'radio',
        value: mode,
        checked: periodMode === mode,
        onchange: () => {
          periodMode = mode;
          syncPeriods();
        },
      }),
      h('label', { class: 'govuk-label govuk-radios__label', for: `period-mode-${mode}` }, label),
    );
  rangeBox.hidden = periodMode !== 'range';
  listBox.hidden = periodMode !== 'list';

  return h(
    'div',
    { class: 'govuk-form-group' },
    h(
      'fieldset',
      { class: 'govuk-fieldset' },
      h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'Time periods'),
      h(
        'div',
        {
          class: 'govuk-radios govuk-radios--small govuk-radios--inline govuk-!-margin-bottom-3',
          'data-module': 'govuk-radios',
        },
        modeRadio('range', 'A range'),
        modeRadio('list', 'Choose from a list'),
      ),
      rangeBox,
      listBox,
    ),
  );
}

/** Step 2: geographic levels, each with its (searchable) locations. */
function locationStep(view: QueryView, changed: () => void): Child {
  const { meta, state, names } = view;
  const levelSet = new Set(state.geographicLevels);
  const locationSets = new Map(
    meta.locations.map((g) => [g.level.code, new Set(state.locations.filter((l) => l.startsWith(`${g.level.code}|`)))]),
  );
  const syncLocations = () => {
    state.geographicLevels = meta.geographicLevels.map((l) => l.code).filter((c) => levelSet.has(c));
    state.locations = meta.locations.flatMap((g) =>
      levelSet.has(g.level.code)
        ? g.options.map((o) => locationKey(g.level.code, o.id)).filter((k) => locationSets.get(g.level.code)!.has(k))
        : [],
    );
    changed();
  };
  const levelBlocks = meta.geographicLevels.map((level) => {
    const group = meta.locations.find((g) => g.level.code === level.code);
    const inputId = `level-${level.code}`;
    const locations =
      group && group.options.length > 1
        ? checklist({
            legend: `${level.label} locations`,
            hint: `Leave empty for every ${level.label.toLowerCase()} location (${group.options.length}).`,
            options: group.options.map((o) => ({
              value: locationKey(level.code, o.id),
              label: names.get(`${level.code}|${o.id}`) ?? o.label,
              keywords: [o.code, o.oldCode, o.urn, o.laEstab, o.ukprn].filter(Boolean).join(' '),
            })),
            selected: locationSets.get(level.code)!,
            onChange: syncLocations,
            searchable: group.options.length > 12,
            name: `loc-${level.code}`,
          })
        : null;
    const reveal = h(
      'div',
      { class: 'govuk-checkboxes__conditional', id: `${inputId}-reveal`, hidden: !levelSet.has(level.code) },
      locations,
    );
    return h(
      'div',
      null,
      h(
        'div',
        { class: 'govuk-checkboxes__item' },
        h('input', {
          class: 'govuk-checkboxes__input',
          id: inputId,
          type: 'checkbox',
          value: level.code,
          checked: levelSet.has(level.code),
          'aria-controls': locations ? `${inputId}-reveal` : null,
          onchange: (e: Event) => {
            const on = (e.target as HTMLInputElement).checked;
            if (on) levelSet.add(level.code);
            else levelSet.delete(level.code);
            reveal.hidden = !on;
            syncLocations();
          },
        }),
        h(
          'label',
          { class: 'govuk-label govuk-checkboxes__label', for: inputId },
          level.label,
          group ? ` (${plural(group.options.length, 'location')})` : '',
        ),
      ),
      locations ? reveal : null,
    );
  });

  return h(
    'div',
    { class: 'govuk-form-group' },
    h(
      'fieldset',
      { class: 'govuk-fieldset' },
      h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'Geographic levels and locations'),
      h('div', { class: 'govuk-hint' }, 'Leave every level unticked for all of them.'),
      h('div', { class: 'govuk-checkboxes govuk-checkboxes--small', 'data-module': 'govuk-checkboxes' }, levelBlocks),
    ),
  );
}

/** Steps 3 and 4: filters and indicators. */
function filterAndIndicatorSteps(view: QueryView, changed: () => void): [Child[], Child[]] {
  const { meta, state } = view;
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

  return [
    [
      h('p', { class: 'govuk-hint' }, 'Leave a filter empty to include all of its options.'),
      meta.filters.map((f) =>
        checklist({
          legend: f.label,
          hint: f.hint || undefined,
          options: f.options.map((o) => ({ value: o.id, label: o.label })),
          selected: filterSets.get(f.id)!,
          onChange: syncFilters,
          searchable: f.options.length > 12,
          name: `filter-${f.id}`,
        }),
      ),
    ],
    [
      checklist({
        legend: 'Indicators',
        hint: 'Leave empty for every indicator.',
        options: meta.indicators.map((i) => ({ value: i.id, label: i.label })),
        selected: indicatorSet,
        onChange: syncIndicators,
        searchable: meta.indicators.length > SEARCH_INDICATORS_OVER,
        name: 'indicators',
      }),
    ],
  ];
}

/** The four steps and what moves between them. */
export interface BuilderSteps {
  sections: HTMLElement[];
  refreshSummaries(): void;
  /** Opens one step (none: every step summarised, as when results are shown). */
  openStep(n: StepNumber | undefined, focus?: boolean): void;
}

/** The four steps: the open one shows its controls, the others what was chosen and a button to go back to them. */
export function builderSteps(view: QueryView, changed: () => void): BuilderSteps {
  const { meta, state } = view;
  const stepBodies: Child[][] = [
    [periodStep(view, changed)],
    [locationStep(view, changed)],
    ...filterAndIndicatorSteps(view, changed),
  ];
  const steps = STEPS.map((title, i) => {
    const n = (i + 1) as StepNumber;
    const heading = h(
      'h2',
      { class: 'govuk-heading-m app-step__heading', id: `step-${n}-heading`, tabindex: '-1' },
      h('span', { class: 'govuk-caption-m' }, `Step ${n} of ${STEPS.length}`),
      title,
    );
    const summary = h('dl', {
      class: 'govuk-summary-list govuk-summary-list--no-border app-step__summary',
      'data-summary': String(n),
    });
    const change = h(
      'button',
      {
        type: 'button',
        class: 'govuk-button govuk-button--secondary app-button--small',
        'data-change-step': String(n),
        onclick: () => openStep(n, true),
      },
      'Change',
      h('span', { class: 'govuk-visually-hidden' }, ` ${title.toLowerCase()}`),
    );
    const closed = h('div', { class: 'app-step__closed' }, summary, change);
    const next =
      n < STEPS.length
        ? h(
            'button',
            {
              type: 'button',
              class: 'govuk-button',
              'data-next-step': String(n + 1),
              onclick: () => openStep((n + 1) as StepNumber, true),
            },
            `Continue to ${STEPS[i + 1]!.toLowerCase()}`,
          )
        : null;
    const open = h('div', { class: 'app-step__open' }, stepBodies[i], next);
    const section = h(
      'section',
      { class: 'app-step', 'data-step': String(n), 'aria-labelledby': `step-${n}-heading` },
      heading,
      closed,
      open,
    );
    return { n, section, heading, summary, closed, open };
  });
  function refreshSummaries(): void {
    const lines = stepSummaries(meta, state);
    for (const step of steps) {
      replace(
        step.summary,
        lines[step.n - 1]!.map((line) => {
          const split = line.indexOf(': ');
          return split > 0
            ? h(
                'div',
                { class: 'govuk-summary-list__row' },
                h('dt', { class: 'govuk-summary-list__key' }, line.slice(0, split)),
                h('dd', { class: 'govuk-summary-list__value' }, line.slice(split + 2)),
              )
            : h('div', { class: 'govuk-summary-list__row' }, h('dd', { class: 'govuk-summary-list__value' }, line));
        }),
      );
    }
  }
  function openStep(n: StepNumber | undefined, focus = false): void {
    state.step = n;
    for (const step of steps) {
      const isOpen = step.n === n;
      step.open.hidden = !isOpen;
      step.closed.hidden = isOpen;
      step.section.classList.toggle('app-step--open', isOpen);
      step.section.classList.toggle('app-step--done', n === undefined || step.n < n);
    }
    view.writeUrl();
    if (focus && n) steps[n - 1]!.heading.focus();
  }

  return { sections: steps.map((step) => step.section), refreshSummaries, openStep };
}
