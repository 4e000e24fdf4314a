/**
 * What the parts of the query page share (../pages/query.ts puts them together): the data set, its metadata, the
 * query's state and how it reaches the URL, and the pure helpers the parts use.
 */
import type { DataSet, IndicatorMeta, Meta, Warning } from '../api.js';
import type { CrossTab } from '../crosstab.js';
import type { QueryState } from '../query.js';

export interface QueryView {
  dataSetId: string;
  dataSet: DataSet;
  meta: Meta;
  state: QueryState;
  /** Location labels, with a code where two share a name (locationLabels). */
  names: Map<string, string>;
  /** Writes the state into the page's URL (`push`: a new history entry), and the permalink box with it. */
  writeUrl(push?: boolean): void;
  /** The permalink box of the results, once shown. */
  permalinkInput?: HTMLInputElement;
  /** The table on screen, for "Download this table". */
  table?: CrossTab;
}

/** Rows the table and the chart ask for: the API's largest page. */
export const TABLE_ROWS = 10000;
/** Indicator lists longer than this get a search box. */
export const SEARCH_INDICATORS_OVER = 10;

/** The indicators a query shows: the chosen ones, or all when none is chosen (as the API does). */
export function shownIndicators(meta: Meta, state: QueryState): IndicatorMeta[] {
  if (state.indicators.length === 0) return meta.indicators;
  return state.indicators
    .map((id) => meta.indicators.find((i) => i.id === id))
    .filter((i): i is IndicatorMeta => i !== undefined);
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
