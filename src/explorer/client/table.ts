/**
 * The cross-tab on the page: the table drawn in chunks (the first 10,000 cells at once, the rest in later tasks so
 * the page stays responsive), and the controls that move and reorder its header groups by keyboard (buttons) or
 * pointer (drag and drop), each move said in a live region.
 */
import type { CrossTab } from './crosstab.js';
import { h } from './dom.js';
import { axisOf, canMove, describeLayout, describeMove, moveGroup, type Axis, type GroupId, type LayoutMove, type TableLayout } from './layout.js';

/** Cells drawn in the first task; the goal is these within 200 ms in Chromium. */
export const FIRST_CELLS = 10000;

let drawing = 0;

function th(label: string, scope: string, span: number, spanAttr: 'colspan' | 'rowspan'): HTMLTableCellElement {
  const cell = document.createElement('th');
  cell.className = 'govuk-table__header';
  cell.scope = scope;
  if (span > 1) cell.setAttribute(spanAttr, String(span));
  cell.textContent = label;
  return cell;
}

function bodyRows(table: CrossTab, from: number, to: number): DocumentFragment {
  const fragment = document.createDocumentFragment();
  const innermost = table.layout.rows.length - 1;
  for (let r = from; r < to; r++) {
    const tr = document.createElement('tr');
    tr.className = 'govuk-table__row';
    const headers = table.rowHeaders[r]!;
    for (let level = 0; level < headers.length; level++) {
      const header = headers[level];
      if (header) tr.appendChild(th(header.label, level === innermost ? 'row' : 'rowgroup', header.span, 'rowspan'));
    }
    const columns = table.raw[r]!.length;
    for (let c = 0; c < columns; c++) {
      const td = document.createElement('td');
      td.className = 'govuk-table__cell govuk-table__cell--numeric';
      td.textContent = table.shownCell(r, c);
      tr.appendChild(td);
    }
    fragment.appendChild(tr);
  }
  return fragment;
}

/**
 * Draws the table into `box`: header rows and the first rows up to FIRST_CELLS cells now, the rest in chunks of
 * the same size. Sets `data-first-draw-ms` on the table (from `startedAt`, which the caller takes before pivoting,
 * until the frame after the first chunk; `data-built-ms` the same without layout and paint), and `data-complete` and `data-complete-ms` when every row is in
 * (read by bench/explorer.ts). A newer draw stops an older one.
 */
export function drawCrossTab(box: HTMLElement, table: CrossTab, caption: string, startedAt: number): HTMLTableElement {
  const run = ++drawing;
  const element = h('table', { class: 'govuk-table app-crosstab', 'data-crosstab': '', 'data-rows': table.layout.rows.join(','), 'data-columns': table.layout.columns.join(',') });
  element.appendChild(h('caption', { class: 'govuk-table__caption govuk-table__caption--s', id: 'crosstab-caption', tabindex: '-1' }, caption));
  const head = h('thead', { class: 'govuk-table__head' });
  const rowLevels = table.layout.rows.length;
  table.columnHeaders.forEach((line, level) => {
    const tr = h('tr', { class: 'govuk-table__row' });
    if (level === 0) {
      // The corner above the row headers names the row groups, outermost first.
      const names = table.layout.rows.map((id) => table.groups.find((g) => g.id === id)?.label ?? id).join(' / ');
      const corner = h('td', { class: 'govuk-table__cell app-crosstab__corner', colspan: rowLevels > 1 ? rowLevels : null, rowspan: table.columnHeaders.length > 1 ? table.columnHeaders.length : null }, names);
      tr.appendChild(corner);
    }
    const last = level === table.columnHeaders.length - 1;
    for (const span of line) tr.appendChild(th(span.label, last ? 'col' : 'colgroup', span.span, 'colspan'));
    head.appendChild(tr);
  });
  element.appendChild(head);
  const body = h('tbody', { class: 'govuk-table__body' });
  element.appendChild(body);
  const columns = Math.max(1, table.columnLabels.length);
  const rowsPerChunk = Math.max(1, Math.floor(FIRST_CELLS / columns));
  const total = table.raw.length;
  body.appendChild(bodyRows(table, 0, Math.min(total, rowsPerChunk)));
  box.replaceChildren(element);
  // Pivot and DOM of the first chunk, before the browser lays it out and paints it.
  element.dataset.builtMs = String(Math.round(performance.now() - startedAt));
  element.dataset.cells = String(total * table.columnLabels.length);
  requestAnimationFrame(() =>
    setTimeout(() => {
      element.dataset.firstDrawMs = String(Math.round(performance.now() - startedAt));
    }, 0),
  );
  const more = (from: number) => {
    if (run !== drawing) return;
    if (from >= total) {
      element.dataset.completeMs = String(Math.round(performance.now() - startedAt));
      element.dataset.complete = 'true';
      return;
    }
    const to = Math.min(total, from + rowsPerChunk);
    body.appendChild(bodyRows(table, from, to));
    setTimeout(() => more(to), 0);
  };
  setTimeout(() => more(Math.min(total, rowsPerChunk)), 0);
  return element;
}

const MOVE_WORDS: Record<Exclude<LayoutMove, 'swap'>, (label: string, axis: Axis) => string> = {
  outward: (label, axis) => `Move ${label} ${axis === 'rows' ? 'left' : 'up'}`,
  inward: (label, axis) => `Move ${label} ${axis === 'rows' ? 'right' : 'down'}`,
  toRows: (label) => `Move ${label} to rows`,
  toColumns: (label) => `Move ${label} to columns`,
};
const MOVE_SIGNS: Record<Exclude<LayoutMove, 'swap'>, (axis: Axis) => string> = {
  outward: (axis) => (axis === 'rows' ? '←' : '↑'),
  inward: (axis) => (axis === 'rows' ? '→' : '↓'),
  toRows: () => 'To rows',
  toColumns: () => 'To columns',
};

/**
 * "Move and reorder table headers": the row groups and the column groups as two lists, outermost first. Each group
 * has buttons (keyboard) and can be dragged onto another group or list (pointer). `onLayout` gets the new layout;
 * `announce` the sentence for the live region. Focus stays on the moved group.
 */
export function layoutControls(table: CrossTab, onLayout: (layout: TableLayout, focusId: string) => void, announce: (text: string) => void): HTMLElement {
  const label = (id: GroupId) => table.groups.find((g) => g.id === id)?.label ?? id;
  const apply = (id: GroupId, move: LayoutMove, focus: string) => {
    const after = moveGroup(table.layout, id, move);
    announce(describeMove(table.layout, after, id, move, table.groups));
    if (after !== table.layout) onLayout(after, focus);
  };
  let dragged: GroupId | undefined;
  /** Dropped on a group: take its place (crossing axes when it is on the other one). */
  const dropOn = (target: GroupId | undefined, axis: Axis) => {
    const id = dragged;
    dragged = undefined;
    if (!id || id === target) return;
    const from = axisOf(table.layout, id)!;
    if (from !== axis && table.layout[from].length === 1) {
      announce(`${label(id)} cannot move: the ${from} need at least one group.`);
      return;
    }
    const rows = table.layout.rows.filter((g) => g !== id);
    const columns = table.layout.columns.filter((g) => g !== id);
    const list = axis === 'rows' ? rows : columns;
    const at = target ? list.indexOf(target) : list.length;
    list.splice(at < 0 ? list.length : at, 0, id);
    const after = { rows, columns };
    announce(`${label(id)} moved to position ${list.indexOf(id) + 1} of ${list.length} in the ${axis}. ${describeLayout(after, table.groups)}`);
    onLayout(after, `move-${id}-${axis === 'rows' ? 'toColumns' : 'toRows'}`);
  };
  const list = (axis: Axis) =>
    h('div', { class: 'app-layout__axis', 'data-axis': axis },
      h('h3', { class: 'govuk-heading-s govuk-!-margin-bottom-2', id: `layout-${axis}` }, axis === 'rows' ? 'Row groups (outermost first)' : 'Column groups (outermost first)'),
      h('ol', { class: 'app-layout__list', 'aria-labelledby': `layout-${axis}`,
        ondragover: (e: Event) => e.preventDefault(),
        ondrop: (e: Event) => { e.preventDefault(); dropOn(undefined, axis); } },
        table.layout[axis].map((id) =>
          h('li', { class: 'app-layout__group', draggable: 'true', 'data-group': id,
            ondragstart: (e: Event) => { dragged = id; (e as DragEvent).dataTransfer?.setData('text/plain', id); },
            ondragover: (e: Event) => e.preventDefault(),
            ondrop: (e: Event) => { e.preventDefault(); e.stopPropagation(); dropOn(id, axis); } },
            h('span', { class: 'app-layout__name' }, label(id), h('span', { class: 'govuk-hint govuk-!-font-size-16 govuk-!-margin-0' }, ` (${table.groups.find((g) => g.id === id)?.options.length ?? 0})`)),
            h('span', { class: 'app-layout__buttons' },
              (['outward', 'inward', axis === 'rows' ? 'toColumns' : 'toRows'] as const).map((move) =>
                h('button', { type: 'button', class: 'govuk-button govuk-button--secondary app-button--small', id: `move-${id}-${move}`,
                  disabled: !canMove(table.layout, id, move), 'aria-label': MOVE_WORDS[move](label(id), axis),
                  onclick: () => apply(id, move, `move-${id}-${move === 'toRows' ? 'toColumns' : move === 'toColumns' ? 'toRows' : move}`) },
                  MOVE_SIGNS[move](axis))))))));
  return h('div', { class: 'app-layout' },
    h('p', { class: 'govuk-body-s' }, 'Use the buttons, or drag a group onto another group or list. The table changes at once; the link to this query keeps the layout.'),
    h('div', { class: 'app-layout__axes' }, list('rows'), list('columns')),
    h('button', { type: 'button', class: 'govuk-button govuk-button--secondary govuk-!-margin-bottom-0', id: 'layout-swap',
      onclick: () => apply(table.layout.rows[0]!, 'swap', 'layout-swap') }, 'Swap rows and columns'));
}
