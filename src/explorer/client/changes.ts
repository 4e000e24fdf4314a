import type { Change, ChangeSet, ChangeState } from './api.js';

/** The changes of a version in words, one sentence per change, major and minor apart. Pure, unit tested. */

function name(state: ChangeState | undefined): string {
  if (!state) return '';
  if (state.label) return `“${state.label}”`;
  if (state.period) return `“${state.period}”`;
  if (state.level) return `“${state.level.label}”`;
  return `“${state.id ?? state.code ?? ''}”`;
}

function describe(kind: string, change: Change, where = ''): string {
  const { previousState: before, currentState: after } = change;
  const suffix = where ? ` ${where}` : '';
  if (before && !after) return `Removed ${kind} ${name(before)}${suffix}.`;
  if (!before && after) return `Added ${kind} ${name(after)}${suffix}.`;
  if (before && after) {
    const details: string[] = [];
    if (before.label !== after.label) details.push(`renamed from ${name(before)} to ${name(after)}`);
    if (before.column !== after.column)
      details.push(`column changed from ${before.column ?? '(none)'} to ${after.column ?? '(none)'}`);
    if (before.code !== after.code)
      details.push(`code changed from ${before.code ?? '(none)'} to ${after.code ?? '(none)'}`);
    const b = before as Record<string, string | number | null | undefined>;
    const a = after as Record<string, string | number | null | undefined>;
    for (const key of ['unit', 'decimalPlaces', 'hint', 'oldCode', 'urn', 'laEstab', 'ukprn']) {
      if (b[key] !== a[key])
        details.push(`${key} changed from ${String(b[key] ?? '(none)')} to ${String(a[key] ?? '(none)')}`);
    }
    return `Changed ${kind} ${name(after)}${suffix}${details.length ? `: ${details.join(', ')}` : ''}.`;
  }
  return '';
}

export function describeChangeSet(set: ChangeSet | undefined): string[] {
  if (!set) return [];
  const out: string[] = [];
  for (const c of set.filters ?? []) out.push(describe('filter', c));
  for (const group of set.filterOptions ?? []) {
    for (const c of group.options) out.push(describe('option', c, `of filter “${group.filter.label}”`));
  }
  for (const c of set.geographicLevels ?? []) out.push(describe('geographic level', c));
  for (const c of set.locationGroups ?? []) out.push(describe('geographic level', c));
  for (const group of set.locationOptions ?? []) {
    for (const c of group.options) out.push(describe('location', c, `(${group.level.label})`));
  }
  for (const c of set.indicators ?? []) out.push(describe('indicator', c));
  for (const c of set.timePeriods ?? []) out.push(describe('time period', c));
  return out.filter((s) => s !== '');
}
