/** The query page's chart section: its own rows, its settings (kept in the permalink) and the chart. */
import { apiPost, type IndicatorMeta, type QueryResponse, type ResultRow } from '../api.js';
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
  // The permalink's settings where this data has them, else the defaults.
  const saved = state.chart ?? {};
  let kind: 'line' | 'bar' = saved.type ?? (periods.size > 1 ? 'line' : 'bar');
  let indicatorId = numeric.find((i) => i.id === saved.indicator)?.id ?? numeric[0]!.id;
  let manyLines: ManyLines = saved.lines ?? 'highlight';
  let highlight: string | undefined = saved.highlight;
  let barPeriod = periodChoices.some((t) => periodKey(t) === saved.period)
    ? saved.period
    : periodChoices[periodChoices.length - 1]
      ? periodKey(periodChoices[periodChoices.length - 1]!)
      : undefined;
  /** A setting the user changed: into the permalink, then the chart is drawn again. */
  const remember = (settings: ChartSettings) => {
    state.chart = { ...state.chart, ...settings };
    view.writeUrl();
    draw();
  };
  const figure = h('div', { 'data-chart': '' });
  let drawnWidth = 0;
  const highlightSelect = h('select', {
    class: 'govuk-select',
    id: 'chart-highlight',
    onchange: () => {
      highlight = highlightSelect.value;
      remember({ highlight });
    },
  });
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
      replace(
        highlightSelect,
        data.series.map((sr) => h('option', { value: sr.key, selected: sr.key === highlight }, sr.label)),
      );
    }
    replace(
      figure,
      renderChart(data, indicator, { width: figure.clientWidth || box.clientWidth || 640, manyLines, highlight }),
    );
  };
  const indicatorSelect = h(
    'select',
    {
      class: 'govuk-select',
      id: 'chart-indicator',
      onchange: () => {
        indicatorId = indicatorSelect.value;
        remember({ indicator: indicatorId });
      },
    },
    numeric.map((i) => h('option', { value: i.id, selected: i.id === indicatorId }, axisLabel(i))),
  );
  const periodSelect = h(
    'select',
    {
      class: 'govuk-select',
      id: 'chart-period',
      onchange: () => {
        barPeriod = periodSelect.value;
        remember({ period: barPeriod });
      },
    },
    periodChoices.map((t) => h('option', { value: periodKey(t), selected: periodKey(t) === barPeriod }, t.label)),
  );
  const barPeriodGroup = h(
    'div',
    { class: 'govuk-form-group app-inline-group' },
    h('label', { class: 'govuk-label', for: 'chart-period' }, 'Time period'),
    periodSelect,
  );
  const radio = <T extends string>(name: string, value: T, label: string, checked: boolean, set: (v: T) => void) =>
    h(
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
  const manyGroup = h(
    'div',
    { class: 'govuk-form-group app-inline-group' },
    h(
      'fieldset',
      { class: 'govuk-fieldset' },
      h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'More than 6 lines'),
      h(
        'div',
        { class: 'govuk-radios govuk-radios--small govuk-radios--inline' },
        radio<ManyLines>('chart-many', 'highlight', 'Highlight one', manyLines === 'highlight', (v) =>
          remember({ lines: (manyLines = v) }),
        ),
        radio<ManyLines>('chart-many', 'multiples', 'Small multiples', manyLines === 'multiples', (v) =>
          remember({ lines: (manyLines = v) }),
        ),
      ),
    ),
  );
  const highlightGroup = h(
    'div',
    { class: 'govuk-form-group app-inline-group' },
    h('label', { class: 'govuk-label', for: 'chart-highlight' }, 'Highlighted series'),
    highlightSelect,
  );
  replace(
    box,
    held.length
      ? h(
          'p',
          { class: 'govuk-body-s' },
          `The chart shows the “Total” option of ${held.join(' and ')}, which you did not narrow down.`,
        )
      : null,
    total > rows.length
      ? h(
          'p',
          { class: 'govuk-body-s' },
          `The chart uses the first ${rows.length.toLocaleString('en-GB')} of ${total.toLocaleString('en-GB')} rows.`,
        )
      : null,
    h(
      'div',
      { class: 'app-chart-controls' },
      h(
        'div',
        { class: 'govuk-form-group app-inline-group' },
        h('label', { class: 'govuk-label', for: 'chart-indicator' }, 'Indicator'),
        indicatorSelect,
      ),
      h(
        'div',
        { class: 'govuk-form-group app-inline-group' },
        h(
          'fieldset',
          { class: 'govuk-fieldset' },
          h('legend', { class: 'govuk-fieldset__legend govuk-fieldset__legend--s' }, 'Chart type'),
          h(
            'div',
            { class: 'govuk-radios govuk-radios--small govuk-radios--inline' },
            radio('chart-kind', 'line', 'Line over time', kind === 'line', (v) => remember({ type: (kind = v) })),
            radio('chart-kind', 'bar', 'Bars for one period', kind === 'bar', (v) => remember({ type: (kind = v) })),
          ),
        ),
      ),
      barPeriodGroup,
      manyGroup,
      highlightGroup,
    ),
    figure,
  );
  draw();
  // Redrawn when its width changes much (a rotated phone, a resized window), so the text keeps its size.
  new ResizeObserver(() => {
    if (Math.abs(figure.clientWidth - drawnWidth) > 40) draw();
  }).observe(figure);
}
