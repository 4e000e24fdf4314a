/** The query page's chart section: its own rows, its settings (kept in the permalink) and the chart. */
import { apiPost, type IndicatorMeta, type Meta, type QueryResponse, type ResultRow } from '../api.js';
import type { ManyLines } from '../chart.js';
import { h, replace } from '../dom.js';
import { periodKey, postBody, queryPath, type ChartSettings } from '../query.js';
import { errorSummary } from './error.js';
import { chartTotals, TABLE_ROWS, type QueryView } from './query-view.js';

/**
 * The chart section: its rows (every filter left open held at its Total) and its code are fetched once the table is
 * on screen; then the controls and the chart (chartWithControls).
 */
export async function renderChartBox(view: QueryView, box: HTMLElement, indicators: IndicatorMeta[]): Promise<void> {
  const { dataSetId, meta, state } = view;
  const totals = chartTotals(meta, state);
  let rows: ResultRow[];
  let total: number;
  let chart: typeof import('../chart.js');
  try {
    // The chart's code comes with its rows: only a page that shows a chart loads it.
    const [response, chartModule] = await Promise.all([
      apiPost<QueryResponse>(
        queryPath(dataSetId, state),
        postBody(state, { page: 1, pageSize: TABLE_ROWS }, totals.filters),
      ),
      import('../chart.js'),
    ]);
    rows = response.results;
    total = response.paging.totalResults;
    chart = chartModule;
  } catch (error) {
    replace(box, errorSummary(error));
    return;
  }
  chartWithControls(view, box, chart, rows, total, indicators, totals.held);
}

/** A small radio button: `set` gets its value when it is chosen. */
function radioItem<T extends string>(
  name: string,
  value: T,
  label: string,
  checked: boolean,
  set: (v: T) => void,
): HTMLElement {
  return h(
    'div',
    { class: 'govuk-radios__item' },
    h('input', {
      class: 'govuk-radios__input',
      id: `${name}-${value}`,
      name,
      type: 'radio',
      value,
      checked,
      onchange: () => set(value),
    }),
    h('label', { class: 'govuk-label govuk-radios__label', for: `${name}-${value}` }, label),
  );
}

/** A select of the chart's controls: `choose` gets the value chosen. */
function chartSelect(id: string, options: HTMLOptionElement[], choose: (value: string) => void): HTMLSelectElement {
  const select = h('select', { class: 'govuk-select', id, onchange: () => choose(select.value) }, options);
  return select;
}

/** One of the chart's controls: a select (`forId`) under its label. */
function inlineField(forId: string, label: string, control: HTMLElement): HTMLElement {
  return h(
    'div',
    { class: 'govuk-form-group app-inline-group' },
    h('label', { class: 'govuk-label', for: forId }, label),
    control,
  );
}

/** One of the chart's controls: small inline radios in a fieldset under `legend`. */
function inlineRadios(legend: string, radios: HTMLElement[]): HTMLElement {
  return h(
    'div',
    { class: 'govuk-form-group app-inline-group' },
    h(
      'fieldset',
      { class: 'govuk-fieldset' },
      h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, legend),
      h('div', { class: 'govuk-radios govuk-radios--small govuk-radios--inline' }, radios),
    ),
  );
}

/** What the chart leaves out: the filters held at their Total (`held`), and the rows past those it was given. */
function chartNotes(held: string[], rows: number, total: number): Array<HTMLElement | null> {
  return [
    held.length
      ? h(
          'p',
          { class: 'govuk-body-s' },
          `The chart shows the “Total” option of ${held.join(' and ')}, which you did not narrow down.`,
        )
      : null,
    total > rows
      ? h(
          'p',
          { class: 'govuk-body-s' },
          `The chart uses the first ${rows.toLocaleString('en-GB')} of ${total.toLocaleString('en-GB')} rows.`,
        )
      : null,
  ];
}

/** The chart's settings as shown: changed by its controls. */
interface ShownSettings {
  kind: 'line' | 'bar';
  indicatorId: string;
  manyLines: ManyLines;
  highlight?: string;
  barPeriod?: string;
}

/** The chart's settings as it opens: the permalink's (`saved`) where this data has them, else the defaults. */
function openingSettings(
  saved: ChartSettings,
  numeric: IndicatorMeta[],
  periodChoices: Meta['timePeriods'],
  periods: number,
): ShownSettings {
  return {
    kind: saved.type ?? (periods > 1 ? 'line' : 'bar'),
    indicatorId: numeric.find((i) => i.id === saved.indicator)?.id ?? numeric[0]!.id,
    manyLines: saved.lines ?? 'highlight',
    highlight: saved.highlight,
    barPeriod: periodChoices.some((t) => periodKey(t) === saved.period)
      ? saved.period
      : periodChoices[periodChoices.length - 1]
        ? periodKey(periodChoices[periodChoices.length - 1]!)
        : undefined,
  };
}

/** The chart's controls, and those of them that show only for some charts (drawChart shows or hides them). */
interface ChartControls {
  element: HTMLElement;
  barPeriodGroup: HTMLElement;
  manyGroup: HTMLElement;
  highlightGroup: HTMLElement;
  /** Its options are the series of the chart drawn. */
  highlightSelect: HTMLSelectElement;
}

/**
 * The chart's controls (indicator, type, period, many lines, highlighted series), showing `settings`: a change is
 * written into them, then given to `remember`.
 */
function chartControls(
  settings: ShownSettings,
  numeric: IndicatorMeta[],
  periodChoices: Meta['timePeriods'],
  axisLabel: (indicator: IndicatorMeta) => string,
  remember: (changed: ChartSettings) => void,
): ChartControls {
  const highlightSelect = chartSelect('chart-highlight', [], (value) => {
    settings.highlight = value;
    remember({ highlight: value });
  });
  const indicatorSelect = chartSelect(
    'chart-indicator',
    numeric.map((i) => h('option', { value: i.id, selected: i.id === settings.indicatorId }, axisLabel(i))),
    (value) => {
      settings.indicatorId = value;
      remember({ indicator: value });
    },
  );
  const periodSelect = chartSelect(
    'chart-period',
    periodChoices.map((t) =>
      h('option', { value: periodKey(t), selected: periodKey(t) === settings.barPeriod }, t.label),
    ),
    (value) => {
      settings.barPeriod = value;
      remember({ period: value });
    },
  );
  const manyLines = (v: ManyLines) => remember({ lines: (settings.manyLines = v) });
  const kind = (v: 'line' | 'bar') => remember({ type: (settings.kind = v) });
  const barPeriodGroup = inlineField('chart-period', 'Time period', periodSelect);
  const manyGroup = inlineRadios('More than 6 lines', [
    radioItem<ManyLines>('chart-many', 'highlight', 'Highlight one', settings.manyLines === 'highlight', manyLines),
    radioItem<ManyLines>('chart-many', 'multiples', 'Small multiples', settings.manyLines === 'multiples', manyLines),
  ]);
  const highlightGroup = inlineField('chart-highlight', 'Highlighted series', highlightSelect);
  const element = h(
    'div',
    { class: 'app-chart-controls' },
    inlineField('chart-indicator', 'Indicator', indicatorSelect),
    inlineRadios('Chart type', [
      radioItem('chart-kind', 'line', 'Line over time', settings.kind === 'line', kind),
      radioItem('chart-kind', 'bar', 'Bars for one period', settings.kind === 'bar', kind),
    ]),
    barPeriodGroup,
    manyGroup,
    highlightGroup,
  );
  return { element, barPeriodGroup, manyGroup, highlightGroup, highlightSelect };
}

/** The chart's settings (indicator, type, period, many lines) and the chart, drawn again when one changes. */
function chartWithControls(
  view: QueryView,
  box: HTMLElement,
  chart: typeof import('../chart.js'),
  rows: ResultRow[],
  total: number,
  indicators: IndicatorMeta[],
  held: string[],
): void {
  const { meta, state } = view;
  const { axisLabel, buildChartData, PALETTE, renderChart } = chart;
  const numeric = indicators.filter((i) => i.unit !== 'string');
  if (numeric.length === 0) {
    replace(box, h('p', { class: 'govuk-body' }, 'None of the indicators shown is a number, so there is no chart.'));
    return;
  }
  const periods = new Set(rows.map((r) => periodKey(r.timePeriod)));
  const periodChoices = meta.timePeriods.filter((t) => periods.has(periodKey(t)));
  const settings = openingSettings(state.chart ?? {}, numeric, periodChoices, periods.size);
  /** A setting the user changed: into the permalink, then the chart is drawn again. */
  const remember = (changed: ChartSettings) => {
    state.chart = { ...state.chart, ...changed };
    view.writeUrl();
    draw();
  };
  const figure = h('div', { 'data-chart': '' });
  let drawnWidth = 0;
  const controls = chartControls(settings, numeric, periodChoices, axisLabel, remember);
  const draw = () => {
    const { kind, indicatorId, manyLines, highlight, barPeriod } = settings;
    drawnWidth = figure.clientWidth;
    const indicator = numeric.find((i) => i.id === indicatorId)!;
    const data = buildChartData(rows, meta, indicatorId, kind, barPeriod);
    const many = kind === 'line' && data.series.length > PALETTE.length;
    figure.dataset.kind = kind;
    figure.dataset.series = String(data.series.length);
    controls.barPeriodGroup.hidden = kind !== 'bar';
    controls.manyGroup.hidden = !many;
    controls.highlightGroup.hidden = !many || manyLines !== 'highlight';
    if (many && controls.highlightSelect.options.length !== data.series.length) {
      replace(
        controls.highlightSelect,
        data.series.map((sr) => h('option', { value: sr.key, selected: sr.key === highlight }, sr.label)),
      );
    }
    replace(
      figure,
      renderChart(data, indicator, { width: figure.clientWidth || box.clientWidth || 640, manyLines, highlight }),
    );
  };
  replace(box, chartNotes(held, rows.length, total), controls.element, figure);
  draw();
  // Redrawn when its width changes much (a rotated phone, a resized window), so the text keeps its size.
  new ResizeObserver(() => {
    if (Math.abs(figure.clientWidth - drawnWidth) > 40) draw();
  }).observe(figure);
}
