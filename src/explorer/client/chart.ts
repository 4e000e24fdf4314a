import type { IndicatorMeta, Meta, ResultRow } from './api.js';
import { h, s } from './dom.js';
import { compareNames, formatValue, numericValue } from './format.js';
import { periodKey } from './query.js';
import { locationLabels } from './locations.js';

/**
 * The chart: a line chart over time or a horizontal bar chart across locations for one period, drawn as SVG.
 * Colours are the Government Analysis Function's categorical palette (tested for contrast and colour blindness);
 * every series also has its own marker shape and line dash, and the legend names them in words.
 */
export const PALETTE = ['#12436D', '#28A197', '#801650', '#F46A25', '#3D3D3D', '#A285D1'];
export const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'cross', 'star'] as const;
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4'];

export interface ChartSeries {
  key: string;
  label: string;
  /** x key → the raw cell and its number (undefined when suppressed). */
  values: Map<string, { raw: string; value?: number }>;
}

export interface ChartData {
  kind: 'line' | 'bar';
  /** x positions: time periods (line) in chronological order. For a bar chart, the one period shown. */
  xs: Array<{ key: string; label: string }>;
  /** Lines in the order of the locations' names; bars sorted by value, largest first (no number last). */
  series: ChartSeries[];
  /** Why there is no chart (nothing to draw), in words. */
  problem?: string;
}

/**
 * Groups rows into series: one per location, split further by the filters whose option varies between the rows.
 * `period` picks the bar chart's time period (the latest present when absent). Any number of series: bars are
 * sorted by value, and more than 6 lines are drawn highlighted-and-muted or as small multiples.
 */
export function buildChartData(
  rows: ResultRow[],
  meta: Meta,
  indicatorId: string,
  kind: 'line' | 'bar',
  period?: string,
): ChartData {
  const order = new Map(meta.timePeriods.map((t, i) => [periodKey(t), i]));
  const labels = new Map(meta.timePeriods.map((t) => [periodKey(t), t.label]));
  const places = locationLabels(meta);
  const presentPeriods = [...new Set(rows.map((r) => periodKey(r.timePeriod)))].sort(
    (a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0),
  );
  const varying = meta.filters.filter((f) => new Set(rows.map((r) => r.filters[f.id])).size > 1);
  const optionLabel = new Map(meta.filters.flatMap((f) => f.options.map((o) => [`${f.id}:${o.id}`, o.label] as const)));
  let xs = presentPeriods.map((key) => ({ key, label: labels.get(key) ?? key }));
  if (kind === 'bar') {
    const chosen = period && presentPeriods.includes(period) ? period : presentPeriods[presentPeriods.length - 1];
    xs = xs.filter((x) => x.key === chosen);
    rows = rows.filter((r) => periodKey(r.timePeriod) === chosen);
  }
  const series = new Map<string, ChartSeries>();
  for (const row of rows) {
    const place = `${row.geographicLevel}|${row.locations[row.geographicLevel] ?? ''}`;
    const key = [place, ...varying.map((f) => row.filters[f.id] ?? '')].join('/');
    let entry = series.get(key);
    if (!entry) {
      const label = [
        places.get(place) ?? row.geographicLevel,
        ...varying.map((f) => optionLabel.get(`${f.id}:${row.filters[f.id]}`) ?? ''),
      ]
        .filter(Boolean)
        .join(', ');
      entry = { key, label, values: new Map() };
      series.set(key, entry);
    }
    const raw = row.values[indicatorId] ?? '';
    entry.values.set(periodKey(row.timePeriod), { raw, value: numericValue(raw) });
  }
  let list = [...series.values()].sort((a, b) => compareNames(a.label, b.label));
  if (list.length === 0) return { kind, xs, series: [], problem: 'There is nothing to chart: no rows match.' };
  if (kind === 'bar') {
    const at = (sr: ChartSeries) => sr.values.get(xs[0]?.key ?? '')?.value;
    list = list.sort((a, b) => (at(b) ?? -Infinity) - (at(a) ?? -Infinity));
  }
  return { kind, xs, series: list };
}

/** Round tick values from 0 (or the minimum when negative) to the maximum. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  const lo = Math.min(0, min);
  const hi = max <= lo ? lo + 1 : max;
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((st) => st >= raw) ?? raw;
  const ticks: number[] = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step * 0.999; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function marker(shape: (typeof MARKERS)[number], x: number, y: number, colour: string, size = 5): SVGElement {
  const common = { fill: colour, stroke: '#ffffff', 'stroke-width': 1 };
  switch (shape) {
    case 'circle':
      return s('circle', { cx: x, cy: y, r: size, ...common });
    case 'square':
      return s('rect', { x: x - size, y: y - size, width: size * 2, height: size * 2, ...common });
    case 'triangle':
      return s('polygon', {
        points: `${x},${y - size - 1} ${x + size + 1},${y + size} ${x - size - 1},${y + size}`,
        ...common,
      });
    case 'diamond':
      return s('polygon', {
        points: `${x},${y - size - 1} ${x + size + 1},${y} ${x},${y + size + 1} ${x - size - 1},${y}`,
        ...common,
      });
    case 'cross':
      return s('path', {
        d: `M${x - size},${y - size}L${x + size},${y + size}M${x + size},${y - size}L${x - size},${y + size}`,
        stroke: colour,
        'stroke-width': 3,
        fill: 'none',
      });
    default: {
      const pts: string[] = [];
      for (let i = 0; i < 10; i++) {
        const r = i % 2 === 0 ? size + 1.5 : size / 2;
        const a = (Math.PI / 5) * i - Math.PI / 2;
        pts.push(`${(x + r * Math.cos(a)).toFixed(1)},${(y + r * Math.sin(a)).toFixed(1)}`);
      }
      return s('polygon', { points: pts.join(' '), ...common });
    }
  }
}

function legend(series: ChartSeries[]): HTMLElement {
  return h(
    'ul',
    { class: 'app-chart-legend', 'aria-label': 'Legend' },
    series.map((item, i) =>
      h(
        'li',
        { class: 'app-chart-legend__item', 'data-legend': item.key },
        s(
          'svg',
          { width: 28, height: 16, viewBox: '0 0 28 16', 'aria-hidden': 'true', focusable: 'false' },
          s('line', {
            x1: 0,
            y1: 8,
            x2: 28,
            y2: 8,
            stroke: PALETTE[i]!,
            'stroke-width': 3,
            'stroke-dasharray': DASHES[i] || null,
          }),
          marker(MARKERS[i]!, 14, 8, PALETTE[i]!, 5),
        ),
        ` ${item.label} (${MARKERS[i]})`,
      ),
    ),
  );
}

/** How more lines than the palette has colours are drawn: one highlighted over the rest muted, or one small chart each. */
export type ManyLines = 'highlight' | 'multiples';

export interface ChartOptions {
  /** The width it is shown at, so its text stays readable on a narrow screen. */
  width?: number;
  manyLines?: ManyLines;
  /** The key of the series drawn in colour over the muted rest (the first when absent). */
  highlight?: string;
}

/** The muted lines: grey, thin, behind; the highlighted line keeps colour, weight and markers. */
const MUTED = '#8a9094';
const LEFT = 64;
const RIGHT = 36;
const TOP = 16;

/** The axis label: the indicator and its unit from the metadata. */
export function axisLabel(indicator: IndicatorMeta): string {
  return indicator.unit && indicator.unit !== 'string' ? `${indicator.label} (${indicator.unit})` : indicator.label;
}

interface LineStyle {
  colour: string;
  width: number;
  dash: string | null;
  shape?: (typeof MARKERS)[number];
}

/** The widest a character of the axis text is (14 px Arial: digits and capitals), so labels are measured unrendered. */
const TICK_CHAR_WIDTH = 8.2;
/** The least space between two x labels. */
const LABEL_GAP = 12;

/**
 * Which x labels a line chart shows, and where: every `step`-th so that neighbours never overlap at this width, the
 * first and the last always, each kept inside the chart (a label at an edge is moved in, not clipped); the label
 * before the last is dropped when the last would touch it.
 */
export function xLabels(labels: string[], centres: number[], width: number): Array<{ index: number; x: number }> {
  if (labels.length === 0) return [];
  const widest = Math.max(...labels.map((l) => l.length)) * TICK_CHAR_WIDTH;
  const inside = (x: number) => Math.min(Math.max(x, widest / 2 + 1), width - widest / 2 - 1);
  const spacing = labels.length > 1 ? Math.abs(centres[1]! - centres[0]!) : Infinity;
  const step = Math.max(1, Math.ceil((widest + LABEL_GAP) / spacing));
  const shown: Array<{ index: number; x: number }> = [];
  for (let i = 0; i < labels.length; i += step) shown.push({ index: i, x: inside(centres[i]!) });
  const last = labels.length - 1;
  if (shown[shown.length - 1]!.index !== last) {
    const end = { index: last, x: inside(centres[last]!) };
    while (shown.length > 1 && end.x - shown[shown.length - 1]!.x < widest + LABEL_GAP) shown.pop();
    if (shown.length === 1 && end.x - shown[0]!.x < widest + LABEL_GAP) shown.pop();
    shown.push(end);
  }
  return shown;
}

/** One line chart (the whole chart, or one of the small multiples) with a shared value scale. */
function lineSvg(
  xs: ChartData['xs'],
  series: Array<{ sr: ChartSeries; style: LineStyle }>,
  indicator: IndicatorMeta,
  scale: number[],
  width: number,
  height: number,
  title: string,
): SVGElement {
  const bottom = 40;
  const plotW = width - LEFT - RIGHT;
  const plotH = height - TOP - bottom;
  const lo = scale[0]!;
  const hi = scale[scale.length - 1]!;
  const xAt = (i: number) => LEFT + (xs.length === 1 ? plotW / 2 : (plotW * i) / (xs.length - 1));
  const yAt = (v: number) => TOP + plotH - ((v - lo) / (hi - lo)) * plotH;
  const fmt = (v: number) => formatValue(String(v), { unit: indicator.unit, decimalPlaces: undefined });
  const labels = xLabels(
    xs.map((x) => x.label),
    xs.map((_x, i) => xAt(i)),
    width,
  );
  const titleId = `chart-title-${Math.random().toString(36).slice(2, 8)}`;
  return s(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, class: 'app-chart', role: 'img', 'aria-labelledby': titleId },
    s('title', { id: titleId }, title),
    scale.map((t) =>
      s(
        'g',
        null,
        s('line', { x1: LEFT, x2: width - RIGHT, y1: yAt(t), y2: yAt(t), stroke: '#b1b4b6', 'stroke-width': 1 }),
        s('text', { x: LEFT - 6, y: yAt(t) + 4, 'text-anchor': 'end', class: 'app-chart__tick' }, fmt(t)),
      ),
    ),
    labels.map(({ index, x }) =>
      s(
        'text',
        { x, y: height - bottom + 18, 'text-anchor': 'middle', class: 'app-chart__tick', 'data-x-label': '' },
        xs[index]!.label,
      ),
    ),
    series.map(({ sr, style }) => {
      const points = xs.map((x, xi) => ({ xi, v: sr.values.get(x.key) })).filter((p) => p.v?.value !== undefined);
      const d = points
        .map((p, j) => `${j === 0 ? 'M' : 'L'}${xAt(p.xi).toFixed(1)},${yAt(p.v!.value!).toFixed(1)}`)
        .join('');
      return s(
        'g',
        { 'data-series': sr.key, 'aria-label': sr.label, 'data-muted': style.colour === MUTED ? '' : null },
        s(
          'path',
          { d, fill: 'none', stroke: style.colour, 'stroke-width': style.width, 'stroke-dasharray': style.dash },
          s('title', null, sr.label),
        ),
        style.shape
          ? points.map((p) => {
              const m = marker(style.shape!, xAt(p.xi), yAt(p.v!.value!), style.colour);
              m.appendChild(s('title', null, `${sr.label}, ${xs[p.xi]!.label}: ${formatValue(p.v!.raw, indicator)}`));
              return m;
            })
          : null,
      );
    }),
  );
}

/** Horizontal bars, one per series, largest first, each named above its bar with its value at its end. */
function barSvg(data: ChartData, indicator: IndicatorMeta, scale: number[], width: number): SVGElement {
  const lo = scale[0]!;
  const hi = scale[scale.length - 1]!;
  const barH = 20;
  const rowH = barH + 24;
  const x0 = 12;
  const height = TOP + data.series.length * rowH + 30;
  const plotW = width - x0 - 90; // room after the longest bar for its value
  const xAt = (v: number) => x0 + ((v - lo) / (hi - lo)) * plotW;
  const fmt = (v: number) => formatValue(String(v), { unit: indicator.unit, decimalPlaces: undefined });
  const titleId = `chart-title-${Math.random().toString(36).slice(2, 8)}`;
  return s(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      class: 'app-chart app-chart--bars',
      role: 'img',
      'aria-labelledby': titleId,
    },
    s(
      'title',
      { id: titleId },
      `Bar chart of ${axisLabel(indicator)} in ${data.xs[0]?.label ?? ''} for ${data.series.length} ${data.series.length === 1 ? 'bar' : 'bars'}, largest first`,
    ),
    scale.map((t) =>
      s(
        'g',
        null,
        s('line', { x1: xAt(t), x2: xAt(t), y1: TOP, y2: height - 24, stroke: '#b1b4b6', 'stroke-width': 1 }),
        s('text', { x: xAt(t), y: height - 8, 'text-anchor': 'middle', class: 'app-chart__tick' }, fmt(t)),
      ),
    ),
    data.series.map((sr, i) => {
      const v = sr.values.get(data.xs[0]?.key ?? '');
      const y = TOP + i * rowH;
      const value = v?.value;
      const end = value === undefined ? xAt(0) : Math.max(xAt(0), xAt(value));
      const shown = formatValue(v?.raw, indicator);
      return s(
        'g',
        { 'data-series': sr.key, 'aria-label': `${sr.label}: ${shown || 'no value'}` },
        s('text', { x: x0, y: y + 13, class: 'app-chart__label' }, sr.label),
        value === undefined
          ? s('text', { x: x0, y: y + 18 + barH / 2, class: 'app-chart__tick' }, `no number: ${v?.raw || 'no value'}`)
          : [
              s(
                'rect',
                {
                  x: Math.min(xAt(0), xAt(value)),
                  y: y + 17,
                  width: Math.max(1, Math.abs(xAt(value) - xAt(0))),
                  height: barH,
                  fill: PALETTE[0]!,
                },
                s('title', null, `${sr.label}: ${shown}`),
              ),
              s('text', { x: end + 6, y: y + 22 + barH / 2, class: 'app-chart__value', 'data-value': '' }, shown),
            ],
      );
    }),
  );
}

/** What every kind of chart figure shows: the data on a scale, at a width, under its axis label and above what is not drawn. */
interface ChartFigure {
  data: ChartData;
  indicator: IndicatorMeta;
  scale: number[];
  width: number;
  /** The axis label, above the chart. */
  axis: HTMLElement;
  /** The values not drawn (not numbers), in the caption; null when there are none. */
  notDrawn: HTMLElement | null;
}

/** Bars for one period: in a scroll box (it may be long), largest first. */
function barFigure({ data, indicator, scale, width, axis, notDrawn }: ChartFigure): HTMLElement {
  return h(
    'figure',
    { class: 'app-chart-figure' },
    axis,
    h(
      'div',
      {
        class: 'app-chart-scroll',
        tabindex: '0',
        role: 'region',
        'aria-label': `Bar chart, ${data.series.length} bars`,
      },
      barSvg(data, indicator, scale, width),
    ),
    h(
      'figcaption',
      { class: 'govuk-body-s' },
      `${axisLabel(indicator)}, ${data.xs[0]?.label ?? ''}: ${data.series.length} ${data.series.length === 1 ? 'bar' : 'bars'}, largest first.`,
      notDrawn,
    ),
  );
}

/** More series than the palette has colours, as small multiples: one small chart per series on the same scale. */
function smallMultiplesFigure({ data, indicator, scale, width, axis, notDrawn }: ChartFigure): HTMLElement {
  const each = width < 560 ? width : Math.floor(width / 2) - 10;
  return h(
    'figure',
    { class: 'app-chart-figure' },
    axis,
    h(
      'ul',
      { class: 'app-small-multiples', 'data-multiples': String(data.series.length) },
      data.series.map((sr) =>
        h(
          'li',
          { class: 'app-small-multiples__item' },
          h('h4', { class: 'govuk-heading-s govuk-!-margin-bottom-1' }, sr.label),
          lineSvg(
            data.xs,
            [{ sr, style: { colour: PALETTE[0]!, width: 2.5, dash: null, shape: 'circle' } }],
            indicator,
            scale,
            each,
            200,
            `${sr.label}: ${axisLabel(indicator)} over ${data.xs.length} time periods`,
          ),
        ),
      ),
    ),
    h(
      'figcaption',
      { class: 'govuk-body-s' },
      `One small chart per series (${data.series.length}), all on the same scale.`,
      notDrawn,
    ),
  );
}

/** The legend of a highlighted line: the chosen series in dark blue, the `others` in grey. */
function highlightLegend(chosen: ChartSeries, others: number): HTMLElement {
  return h(
    'ul',
    { class: 'app-chart-legend', 'aria-label': 'Legend' },
    h(
      'li',
      { class: 'app-chart-legend__item', 'data-legend': chosen.key },
      s(
        'svg',
        { width: 28, height: 16, viewBox: '0 0 28 16', 'aria-hidden': 'true', focusable: 'false' },
        s('line', { x1: 0, y1: 8, x2: 28, y2: 8, stroke: PALETTE[0]!, 'stroke-width': 4 }),
        marker('circle', 14, 8, PALETTE[0]!, 5),
      ),
      ` ${chosen.label} (highlighted, dark blue)`,
    ),
    h(
      'li',
      { class: 'app-chart-legend__item' },
      s(
        'svg',
        { width: 28, height: 16, viewBox: '0 0 28 16', 'aria-hidden': 'true', focusable: 'false' },
        s('line', { x1: 0, y1: 8, x2: 28, y2: 8, stroke: MUTED, 'stroke-width': 1.5 }),
      ),
      ` the other ${others} series (grey)`,
    ),
  );
}

/** More series than the palette has colours, as one highlighted line over the muted rest. */
function highlightedLinesFigure(figure: ChartFigure, title: string, highlight: string | undefined): HTMLElement {
  const { data, indicator, scale, width, axis, notDrawn } = figure;
  const chosen = data.series.find((sr) => sr.key === highlight) ?? data.series[0]!;
  const styled = [
    ...data.series
      .filter((sr) => sr !== chosen)
      .map((sr) => ({ sr, style: { colour: MUTED, width: 1.5, dash: null } })),
    { sr: chosen, style: { colour: PALETTE[0]!, width: 4, dash: null, shape: MARKERS[0] } },
  ];
  return h(
    'figure',
    { class: 'app-chart-figure' },
    axis,
    lineSvg(data.xs, styled, indicator, scale, width, 320, `${title}, ${chosen.label} highlighted`),
    h('figcaption', { class: 'govuk-body-s' }, highlightLegend(chosen, data.series.length - 1), notDrawn),
  );
}

/**
 * The chart with its legend. Bars: one colour (each bar is named), any number, in a scroll box when long. Lines: up
 * to 6 in the palette with a marker shape and dash each; more are one highlighted over the muted rest, or small
 * multiples (one small chart per series on the same scale).
 */
export function renderChart(data: ChartData, indicator: IndicatorMeta, options: ChartOptions = {}): HTMLElement {
  if (data.problem) return h('div', { class: 'govuk-inset-text', 'data-chart-problem': '' }, data.problem);
  const width = Math.round(Math.max(280, Math.min(960, options.width ?? 640)));
  const values = data.series.flatMap((sr) =>
    [...sr.values.values()].map((v) => v.value).filter((v): v is number => v !== undefined),
  );
  const scale = niceTicks(Math.min(0, ...values), Math.max(0, ...values));
  const missing = data.series.flatMap((sr) =>
    [...sr.values.entries()]
      .filter(([, v]) => v.value === undefined && v.raw !== '')
      .map(([x, v]) => `${sr.label} ${x}: ${v.raw}`),
  );
  const notDrawn = missing.length
    ? h('p', { class: 'govuk-body-s' }, `Not drawn (not a number): ${missing.join('; ')}.`)
    : null;
  const axis = h('p', { class: 'govuk-body-s govuk-!-margin-bottom-1 app-chart__axis' }, axisLabel(indicator));
  const figure: ChartFigure = { data, indicator, scale, width, axis, notDrawn };
  if (data.kind === 'bar') return barFigure(figure);
  const title = `Line chart of ${axisLabel(indicator)} over ${data.xs.length} time periods for ${data.series.length} series`;
  if (data.series.length <= PALETTE.length) {
    const styled = data.series.map((sr, i) => ({
      sr,
      style: { colour: PALETTE[i]!, width: 3, dash: DASHES[i] || null, shape: MARKERS[i] },
    }));
    return h(
      'figure',
      { class: 'app-chart-figure' },
      axis,
      lineSvg(data.xs, styled, indicator, scale, width, 320, title),
      h('figcaption', { class: 'govuk-body-s' }, legend(data.series), notDrawn),
    );
  }
  if (options.manyLines === 'multiples') return smallMultiplesFigure(figure);
  return highlightedLinesFigure(figure, title, options.highlight);
}
