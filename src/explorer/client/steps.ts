/**
 * The builder's steps and what has been chosen at each, in words (as the publisher's table tool summarises a
 * finished step). Pure functions, unit tested.
 */
import type { Meta } from './api.js';
import { locationLabels } from './locations.js';
import { locationFromKey, periodKey, type QueryState } from './query.js';

export const STEPS = ['Time periods', 'Locations', 'Filters', 'Indicators'] as const;

/** At most this many names in a summary line, then "and N more". */
const SHOWN = 5;

function some(labels: string[]): string {
  if (labels.length <= SHOWN) return labels.join(', ');
  return `${labels.slice(0, SHOWN).join(', ')} and ${labels.length - SHOWN} more`;
}

/** The lines summarising each step's choices, step 1 first. */
export function stepSummaries(meta: Meta, state: QueryState): string[][] {
  const periodLabel = new Map(meta.timePeriods.map((t) => [periodKey(t), t.label]));
  const tp = state.timePeriods;
  let periods: string;
  if (tp.mode === 'range') {
    const from = tp.from ? (periodLabel.get(tp.from) ?? tp.from) : meta.timePeriods[0]?.label;
    const to = tp.to ? (periodLabel.get(tp.to) ?? tp.to) : meta.timePeriods[meta.timePeriods.length - 1]?.label;
    periods = from === to ? `${from ?? ''}` : `${from ?? 'the first'} to ${to ?? 'the last'}`;
  } else {
    periods = tp.items.length
      ? some(tp.items.map((k) => periodLabel.get(k) ?? k))
      : `All ${meta.timePeriods.length} time periods`;
  }

  const names = locationLabels(meta);
  const locations = state.geographicLevels.length
    ? state.geographicLevels.map((code) => {
        const level = meta.geographicLevels.find((l) => l.code === code)?.label ?? code;
        const chosen = state.locations.map(locationFromKey).filter((l) => l.level === code);
        const all = meta.locations.find((g) => g.level.code === code)?.options.length ?? 0;
        return chosen.length
          ? `${level}: ${some(chosen.map((l) => names.get(`${code}|${l.id}`) ?? l.id))}`
          : `${level}: all ${all}`;
      })
    : ['All locations'];

  const filters = meta.filters.map((f) => {
    const chosen = state.filters[f.id] ?? [];
    const labels = f.options.filter((o) => chosen.includes(o.id)).map((o) => o.label);
    return `${f.label}: ${labels.length ? some(labels) : `all ${f.options.length} options`}`;
  });

  const indicators = state.indicators.length
    ? [some(meta.indicators.filter((i) => state.indicators.includes(i.id)).map((i) => i.label))]
    : [`All ${meta.indicators.length} indicators`];

  return [[periods], locations, filters.length ? filters : ['This data set has no filters'], indicators];
}

export { parseStep, type StepNumber } from './query.js';
