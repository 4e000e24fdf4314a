import type { IndicatorMeta, Meta, ResultRow } from './api.js';
import { h, s } from './dom.js';
import { formatValue, numericValue } from './format.js';
import { periodKey } from './query.js';

/**
 * The chart: a line chart over time or a horizontal bar chart across locations for one period, drawn as SVG.
 * Colours are the Government Analysis Function's categorical palette (tested for contrast and colour blindness);
 * every series also has its own marker shape and line dash, and the legend names them in words.
 */
export const PALETTE = ['#12436D', '#28A197', '#801650', '#F46A25', '#3D3D3D', '#A285D1'];
export const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'cross', 'star'] as const;
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4'];
export const MAX_SERIES = PALETTE.length;

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
  series: ChartSeries[];
  /** Why there is no chart (too many series, nothing to draw), in words. */
  problem?: string;
}

function locationLabel(meta: Meta, row: ResultRow): string {
  const id = row.locations[row.geographicLevel];
  const group = meta.locations.find((g) => g.level.code === row.geographicLevel);
  return group?.options.find((o) => o.id === id)?.label ?? id ?? row.geographicLevel;
}

/**
 * Groups rows into series: one per location, split further by the filters whose option varies between the rows.
 * `period` picks the bar chart's time period (the latest present when absent).
 */
export function buildChartData(rows: ResultRow[], meta: Meta, indicatorId: string, kind: 'line' | 'bar', period?: string): ChartData {
  const order = new Map(meta.timePeriods.map((t, i) => [periodKey(t), i]));
  const labels = new Map(meta.timePeriods.map((t) => [periodKey(t), t.label]));
  const presentPeriods = [...new Set(rows.map((r) => periodKey(r.timePeriod)))].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
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
    const parts = [`${row.geographicLevel}:${row.locations[row.geographicLevel] ?? ''}`, ...varying.map((f) => row.filters[f.id] ?? '')];
    const key = parts.join('/');
    let entry = series.get(key);
    if (!entry) {
      const label = [locationLabel(meta, row), ...varying.map((f) => optionLabel.get(`${f.id}:${row.filters[f.id]}`) ?? '')].filter(Boolean).join(', ');
      entry = { key, label, values: new Map() };
      series.set(key, entry);
    }
    const raw = row.values[indicatorId] ?? '';
    entry.values.set(periodKey(row.timePeriod), { raw, value: numericValue(raw) });
  }
  const list = [...series.values()];
  if (list.length === 0) return { kind, xs, series: [], problem: 'There is nothing to chart: no rows match.' };
  if (list.length > MAX_SERIES) {
    return {
      kind,
      xs,
      series: [],
      problem: `The chart shows at most ${MAX_SERIES} series and these choices make ${list.length} (${varying.length ? `locations × ${varying.map((f) => f.label).join(' × ')}` : 'locations'}). Choose fewer locations or one option of each filter to see a chart; the table shows every row.`,
    };
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
      return s('polygon', { points: `${x},${y - size - 1} ${x + size + 1},${y + size} ${x - size - 1},${y + size}`, ...common });
    case 'diamond':
      return s('polygon', { points: `${x},${y - size - 1} ${x + size + 1},${y} ${x},${y + size + 1} ${x - size - 1},${y}`, ...common });
    case 'cross':
      return s('path', { d: `M${x - size},${y - size}L${x + size},${y + size}M${x + size},${y - size}L${x - size},${y + size}`, stroke: colour, 'stroke-width': 3, fill: 'none' });
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
        s('svg', { width: 28, height: 16, viewBox: '0 0 28 16', 'aria-hidden': 'true', focusable: 'false' },
          s('line', { x1: 0, y1: 8, x2: 28, y2: 8, stroke: PALETTE[i]!, 'stroke-width': 3, 'stroke-dasharray': DASHES[i] || null }),
          marker(MARKERS[i]!, 14, 8, PALETTE[i]!, 5)),
        ` ${item.label} (${MARKERS[i]})`,
      ),
    ),
  );
}

/** The chart as SVG with its legend; `indicator` gives the value format. */
export function renderChart(data: ChartData, indicator: IndicatorMeta, availableWidth = 640): HTMLElement {
  if (data.problem) return h('div', { class: 'govuk-inset-text', 'data-chart-problem': '' }, data.problem);
  // Drawn at the width it is shown at, so its text stays readable on a narrow screen.
  const width = Math.round(Math.max(280, Math.min(960, availableWidth)));
  const left = 64;
  const right = 36;
  const top = 16;
  const values = data.series.flatMap((sr) => [...sr.values.values()].map((v) => v.value).filter((v): v is number => v !== undefined));
  const ticks = niceTicks(Math.min(0, ...values), Math.max(0, ...values));
  const lo = ticks[0]!;
  const hi = ticks[ticks.length - 1]!;
  const fmt = (v: number) => formatValue(String(v), { unit: indicator.unit, decimalPlaces: undefined });
  const missing = data.series.flatMap((sr) => [...sr.values.entries()].filter(([, v]) => v.value === undefined && v.raw !== '').map(([x, v]) => `${sr.label} ${x}: ${v.raw}`));
  let svg: SVGElement;
  const titleId = `chart-title-${Math.random().toString(36).slice(2, 8)}`;
  if (data.kind === 'line') {
    const height = 320;
    const bottom = 40;
    const plotW = width - left - right;
    const plotH = height - top - bottom;
    const xAt = (i: number) => left + (data.xs.length === 1 ? plotW / 2 : (plotW * i) / (data.xs.length - 1));
    const yAt = (v: number) => top + plotH - ((v - lo) / (hi - lo)) * plotH;
    svg = s('svg', { viewBox: `0 0 ${width} ${height}`, class: 'app-chart', role: 'img', 'aria-labelledby': titleId },
      s('title', { id: titleId }, `Line chart of ${indicator.label} over ${data.xs.length} time periods for ${data.series.length} series`),
      ticks.map((t) => s('g', null,
        s('line', { x1: left, x2: width - right, y1: yAt(t), y2: yAt(t), stroke: '#b1b4b6', 'stroke-width': 1 }),
        s('text', { x: left - 6, y: yAt(t) + 4, 'text-anchor': 'end', class: 'app-chart__tick' }, fmt(t)))),
      data.xs.map((x, i) => s('text', { x: xAt(i), y: height - bottom + 18, 'text-anchor': 'middle', class: 'app-chart__tick' }, x.label)),
      data.series.map((sr, i) => {
        const points = data.xs.map((x, xi) => ({ xi, v: sr.values.get(x.key) })).filter((p) => p.v?.value !== undefined);
        const d = points.map((p, j) => `${j === 0 ? 'M' : 'L'}${xAt(p.xi).toFixed(1)},${yAt(p.v!.value!).toFixed(1)}`).join('');
        return s('g', { 'data-series': sr.key, 'aria-label': sr.label },
          s('path', { d, fill: 'none', stroke: PALETTE[i]!, 'stroke-width': 3, 'stroke-dasharray': DASHES[i] || null }),
          points.map((p) => {
            const m = marker(MARKERS[i]!, xAt(p.xi), yAt(p.v!.value!), PALETTE[i]!);
            m.appendChild(s('title', null, `${sr.label}, ${data.xs[p.xi]!.label}: ${formatValue(p.v!.raw, indicator)}`));
            return m;
          }));
      }),
    );
  } else {
    // Horizontal bars, one per series, each named above its bar (long location names fit on a narrow screen).
    const barH = 24;
    const rowH = barH + 30;
    const x0 = 12;
    const height = top + data.series.length * rowH + 30;
    const plotW = width - x0 - 100; // room after the longest bar for its marker and value
    const xAt = (v: number) => x0 + ((v - lo) / (hi - lo)) * plotW;
    svg = s('svg', { viewBox: `0 0 ${width} ${height}`, class: 'app-chart', role: 'img', 'aria-labelledby': titleId },
      s('title', { id: titleId }, `Bar chart of ${indicator.label} in ${data.xs[0]?.label ?? ''} for ${data.series.length} series`),
      ticks.map((t) => s('g', null,
        s('line', { x1: xAt(t), x2: xAt(t), y1: top, y2: height - 24, stroke: '#b1b4b6', 'stroke-width': 1 }),
        s('text', { x: xAt(t), y: height - 8, 'text-anchor': 'middle', class: 'app-chart__tick' }, fmt(t)))),
      data.series.map((sr, i) => {
        const v = sr.values.get(data.xs[0]?.key ?? '');
        const y = top + i * rowH;
        const value = v?.value;
        const end = value === undefined ? xAt(0) : Math.max(xAt(0), xAt(value));
        return s('g', { 'data-series': sr.key, 'aria-label': sr.label },
          s('text', { x: x0, y: y + 15, class: 'app-chart__label' }, sr.label),
          value === undefined
            ? s('text', { x: x0, y: y + 22 + barH / 2, class: 'app-chart__tick' }, `no number: ${v?.raw || 'no value'}`)
            : [
                s('rect', { x: Math.min(xAt(0), xAt(value)), y: y + 22, width: Math.max(1, Math.abs(xAt(value) - xAt(0))), height: barH, fill: PALETTE[i]! },
                  s('title', null, `${sr.label}: ${formatValue(v!.raw, indicator)}`)),
                marker(MARKERS[i]!, end + 10, y + 22 + barH / 2, PALETTE[i]!, 5),
                s('text', { x: end + 20, y: y + 27 + barH / 2, class: 'app-chart__value' }, formatValue(v!.raw, indicator)),
              ]);
      }),
    );
  }
  return h('figure', { class: 'app-chart-figure' },
    svg,
    h('figcaption', { class: 'govuk-body-s' }, legend(data.series),
      missing.length ? h('p', { class: 'govuk-body-s' }, `Not drawn (not a number): ${missing.join('; ')}.`) : null),
  );
}
