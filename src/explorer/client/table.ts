/**
 * The cross-tab on the page: the table drawn a page at a time (at most PAGE_CELLS cells, set as one HTML string, its
 * body in blocks the browser lays out as they come into view), the pager between pages, and the controls that move
 * and reorder its header groups by keyboard (buttons) or pointer (drag and drop), each move said in a live region.
 */
import {
  BLOCK_ROWS,
  crossTabHeadHtml,
  crossTabPage,
  escapeHtml,
  rowsPerPage,
  type CrossTab,
  type CrossTabSort,
} from './crosstab.js';
import { afterNextPaint, h, replace, uid } from './dom.js';
import {
  axisOf,
  canMove,
  describeLayout,
  describeMove,
  moveGroup,
  placeInWords,
  type Axis,
  type GroupId,
  type LayoutMove,
  type TableLayout,
} from './layout.js';

/**
 * Draws one page of the table into `box` (its scroll box) and the pager into `pager`. Sets on the table, read by
 * bench/explorer.ts and the browser tests: `data-built-ms` (from `startedAt`, which the caller takes before
 * pivoting, until the page's DOM is in), `data-first-draw-ms` (until the frame after it, so with style, layout and
 * paint) and then `data-complete` (the page is drawn); `data-cells` (the whole table's) and `data-page-rows`
 * ("1-277 of 1130").
 */
export function drawCrossTab(
  box: HTMLElement,
  pager: HTMLElement,
  table: CrossTab,
  caption: string,
  startedAt: number,
  page = 0,
): HTMLTableElement {
  const perPage = rowsPerPage(table);
  const total = table.raw.length;
  const pages = Math.max(1, Math.ceil(total / perPage));
  const current = Math.min(Math.max(0, page), pages - 1);
  const from = current * perPage;
  const to = Math.min(total, from + perPage);
  const domStart = performance.now();
  const element = document.createElement('table');
  element.className = 'govuk-table app-crosstab';
  const body = crossTabPage(table, from, to, textWidthInTableFont());
  element.style.setProperty('--crosstab-columns', body.columns);
  element.innerHTML =
    `<caption class="govuk-table__caption govuk-table__caption--s" id="crosstab-caption" tabindex="-1">${escapeHtml(caption)}</caption>` +
    `<thead>${crossTabHeadHtml(table)}</thead>${body.bodyHtml}`;
  // The spans as grid placements, through the CSSOM: the page's Content-Security-Policy refuses style attributes.
  for (const cell of element.querySelectorAll<HTMLTableCellElement>('[rowspan], [colspan]')) {
    if (cell.rowSpan > 1) cell.style.gridRow = `span ${cell.rowSpan}`;
    if (cell.colSpan > 1) cell.style.gridColumn = `span ${cell.colSpan}`;
  }
  // The last block's height until it is drawn, when it has fewer rows than the others.
  const lastBlockRows = (to - from) % BLOCK_ROWS;
  if (lastBlockRows > 0)
    element.tBodies[element.tBodies.length - 1]!.style.setProperty('--block-rows', String(lastBlockRows));
  Object.assign(element.dataset, {
    crosstab: '',
    rows: table.layout.rows.join(','),
    columns: table.layout.columns.join(','),
    cells: String(total * table.columnLabels.length),
    pageRows: `${from + 1}-${to} of ${total}`,
  });
  box.replaceChildren(element);
  const domEnd = performance.now();
  element.dataset.builtMs = String(Math.round(domEnd - startedAt));
  // For the browser's performance panel and the benchmark: the page's HTML and DOM, then its style, layout and paint.
  performance.measure('explorer:crosstab-dom', { start: domStart, end: domEnd });
  void afterNextPaint().then(() => {
    performance.measure('explorer:crosstab-paint', { start: domEnd });
    element.dataset.firstDrawMs = String(Math.round(performance.now() - startedAt));
    element.dataset.complete = 'true';
  });

  if (pages === 1) {
    replace(pager);
    return element;
  }
  const go = (target: number) => {
    drawCrossTab(box, pager, table, caption, performance.now(), target);
    box.scrollTop = 0;
    // The pager is drawn anew: focus stays on the button used, or the other one at either end.
    const next = document.getElementById('crosstab-next') as HTMLButtonElement | null;
    const previous = document.getElementById('crosstab-previous') as HTMLButtonElement | null;
    const used = target > current ? next : previous;
    (used && !used.disabled ? used : target > current ? previous : next)?.focus();
  };
  const n = (v: number) => v.toLocaleString('en-GB');
  replace(
    pager,
    h(
      'p',
      { class: 'govuk-body-s govuk-!-margin-bottom-2', role: 'status', id: 'crosstab-page-status' },
      `Showing table rows ${n(from + 1)} to ${n(to)} of ${n(total)} (page ${current + 1} of ${pages}: ${n(perPage * table.columnLabels.length)} cells a page).`,
    ),
    h(
      'div',
      { class: 'govuk-button-group' },
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary app-button--small',
          id: 'crosstab-previous',
          disabled: current === 0,
          onclick: () => go(current - 1),
        },
        'Previous rows',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary app-button--small',
          id: 'crosstab-next',
          disabled: current === pages - 1,
          onclick: () => go(current + 1),
        },
        'Next rows',
      ),
    ),
  );
  return element;
}

/** The cross-tab's typeface, as styles.css sets it on `.app-crosstab`. */
const CROSSTAB_FONT_FAMILY = 'arial, sans-serif';

/**
 * Measures texts in the cross-tab's font (a canvas's, which draws text as the page does), in em: the columns' widths
 * are set from it before the table is in the page. It reads no style from the page (reading the new section's would
 * make the browser work out that section's style twice).
 */
function textWidthInTableFont(): (text: string, bold: boolean) => number {
  // Measured at 100 px: the widths in em are the same at any size.
  const fonts = { regular: `100px ${CROSSTAB_FONT_FAMILY}`, bold: `bold 100px ${CROSSTAB_FONT_FAMILY}` };
  const context = document.createElement('canvas').getContext('2d');
  // Without a canvas, as wide as the widest characters of Arial bold (0.9 em) may make them.
  if (!context) return (text) => text.length * 0.9;
  let current = '';
  return (text, bold) => {
    // Setting the font parses it: only when it changes.
    const font = bold ? fonts.bold : fonts.regular;
    if (font !== current) context.font = current = font;
    return context.measureText(text).width / 100;
  };
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

/** Why some of a side's move buttons are greyed out, in words (shown above its groups, and read with each such button). */
export function whyDisabled(table: CrossTab, axis: Axis): string {
  const list = table.layout[axis];
  const side = axis === 'rows' ? 'rows' : 'columns';
  const other = axis === 'rows' ? 'columns' : 'rows';
  if (list.length === 1) {
    const name = table.groups.find((g) => g.id === list[0])?.label ?? list[0]!;
    return `${name} is the only group here, so it cannot move out or in, and the ${side} need at least one group, so it cannot move to the ${other}: move a group from the ${other} here first, drag one, or swap rows and columns.`;
  }
  return `The outermost group cannot move further out, nor the innermost further in.`;
}

/** What the header group controls do: a button's move, and a drag's start and drop (see layoutControls). */
interface GroupActions {
  label(id: GroupId): string;
  /** Moves a group by a button; `focus`: the id of the button to focus in the redrawn controls. */
  move(id: GroupId, move: LayoutMove, focus: string): void;
  dragStart(id: GroupId): void;
  /** Dropped on a group (undefined: on the list, after its last group). */
  dropOn(target: GroupId | undefined, axis: Axis): void;
}

/** One header group in its side's list: its name and number of options, its move buttons, and a drop target. */
function groupItem(table: CrossTab, id: GroupId, axis: Axis, actions: GroupActions): HTMLElement {
  return h(
    'li',
    {
      class: 'app-layout__group',
      draggable: 'true',
      'data-group': id,
      ondragstart: (e: Event) => {
        actions.dragStart(id);
        (e as DragEvent).dataTransfer?.setData('text/plain', id);
      },
      ondragover: (e: Event) => e.preventDefault(),
      ondrop: (e: Event) => {
        e.preventDefault();
        e.stopPropagation();
        actions.dropOn(id, axis);
      },
    },
    h(
      'span',
      { class: 'app-layout__name' },
      actions.label(id),
      h(
        'span',
        { class: 'govuk-hint govuk-!-font-size-16 govuk-!-margin-0' },
        ` (${table.groups.find((g) => g.id === id)?.options.length ?? 0})`,
      ),
    ),
    h(
      'span',
      { class: 'app-layout__buttons' },
      (['outward', 'inward', axis === 'rows' ? 'toColumns' : 'toRows'] as const).map((move) =>
        h(
          'button',
          {
            type: 'button',
            class: 'govuk-button govuk-button--secondary app-button--small',
            id: `move-${id}-${move}`,
            disabled: !canMove(table.layout, id, move),
            'aria-label': MOVE_WORDS[move](actions.label(id), axis),
            'aria-describedby': canMove(table.layout, id, move) ? null : `layout-${axis}-why`,
            onclick: () =>
              actions.move(
                id,
                move,
                `move-${id}-${move === 'toRows' ? 'toColumns' : move === 'toColumns' ? 'toRows' : move}`,
              ),
          },
          MOVE_SIGNS[move](axis),
        ),
      ),
    ),
  );
}

/** One side's header groups (rows or columns), outermost first, under why some buttons are greyed out. */
function axisList(table: CrossTab, axis: Axis, actions: GroupActions): HTMLElement {
  return h(
    'div',
    { class: 'app-layout__axis', 'data-axis': axis },
    h(
      'h3',
      { class: 'govuk-heading-s govuk-!-margin-bottom-2', id: `layout-${axis}` },
      axis === 'rows' ? 'Row groups (outermost first)' : 'Column groups (outermost first)',
    ),
    h(
      'p',
      { class: 'govuk-hint govuk-!-font-size-16', id: `layout-${axis}-why`, 'data-why-disabled': '' },
      whyDisabled(table, axis),
    ),
    h(
      'ol',
      {
        class: 'app-layout__list',
        'aria-labelledby': `layout-${axis}`,
        ondragover: (e: Event) => e.preventDefault(),
        ondrop: (e: Event) => {
          e.preventDefault();
          actions.dropOn(undefined, axis);
        },
      },
      table.layout[axis].map((id) => groupItem(table, id, axis, actions)),
    ),
  );
}

/**
 * "Move and reorder table headers": the row groups and the column groups as two lists, outermost first. Each group
 * has buttons (keyboard) and can be dragged onto another group or list (pointer). `onLayout` gets the new layout;
 * `announce` the sentence for the live region. Focus stays on the moved group.
 */
export function layoutControls(
  table: CrossTab,
  onLayout: (layout: TableLayout, focusId: string) => void,
  announce: (text: string) => void,
): HTMLElement {
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
    announce(`${label(id)} moved to the ${axis}, ${placeInWords(after, id)}. ${describeLayout(after, table.groups)}`);
    onLayout(after, `move-${id}-${axis === 'rows' ? 'toColumns' : 'toRows'}`);
  };
  const actions: GroupActions = {
    label,
    move: apply,
    dragStart: (id) => {
      dragged = id;
    },
    dropOn,
  };
  return h(
    'div',
    { class: 'app-layout' },
    h(
      'p',
      { class: 'govuk-body-s' },
      'Use the buttons, or drag a group onto another group or list. The table changes at once; the link to this query keeps the layout.',
    ),
    h('div', { class: 'app-layout__axes' }, axisList(table, 'rows', actions), axisList(table, 'columns', actions)),
    h(
      'button',
      {
        type: 'button',
        class: 'govuk-button govuk-button--secondary govuk-!-margin-bottom-0',
        id: 'layout-swap',
        onclick: () => apply(table.layout.rows[0]!, 'swap', 'layout-swap'),
      },
      'Swap rows and columns',
    ),
  );
}

/** A column's name in words: its column groups' labels, outermost first. */
function columnName(table: CrossTab, column: number): string {
  return table.columnLabels[column]!.join(', ');
}

/** The sentence said when the table is sorted. */
export function describeSort(table: CrossTab, sort: CrossTabSort): string {
  if (sort.by === 'label')
    return `Table rows sorted by their labels, ${sort.direction === 'ascending' ? 'A to Z' : 'Z to A'}.`;
  return `Table rows sorted by ${columnName(table, sort.column)}, ${sort.direction === 'ascending' ? 'smallest first' : 'largest first'} (rows without a number last).`;
}

/**
 * "Sort the rows": by the row labels or by one column's values, either way; buttons and a select, so keyboard and
 * pointer alike. `onSort` redraws the table; the caller says the sentence in its live region. The sorted column's
 * header gets `aria-sort` (markSortedColumn), which screen readers read with it.
 */
export function sortControls(
  table: CrossTab,
  current: CrossTabSort | undefined,
  onSort: (sort: CrossTabSort) => void,
): HTMLElement {
  const id = uid('sort');
  const select = h(
    'select',
    { class: 'govuk-select', id, 'data-sort-by': '' },
    h('option', { value: 'label', selected: current?.by === 'label' }, 'Row labels'),
    table.columnLabels.map((_, column) =>
      h(
        'option',
        { value: String(column), selected: current?.by === 'column' && current.column === column },
        columnName(table, column),
      ),
    ),
  );
  const sortOf = (direction: CrossTabSort['direction']): CrossTabSort =>
    select.value === 'label' ? { by: 'label', direction } : { by: 'column', column: Number(select.value), direction };
  return h(
    'div',
    { class: 'app-sort' },
    h(
      'div',
      { class: 'govuk-form-group govuk-!-margin-bottom-2' },
      h('label', { class: 'govuk-label govuk-label--s', for: id }, 'Sort the rows by'),
      select,
    ),
    h(
      'div',
      { class: 'govuk-button-group govuk-!-margin-bottom-2' },
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary app-button--small',
          id: 'sort-ascending',
          onclick: () => onSort(sortOf('ascending')),
        },
        'Sort ascending',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'govuk-button govuk-button--secondary app-button--small',
          id: 'sort-descending',
          onclick: () => onSort(sortOf('descending')),
        },
        'Sort descending',
      ),
    ),
  );
}

/** Marks the sorted column's innermost header (`aria-sort`), as a screen reader expects of a sorted table. */
export function markSortedColumn(element: HTMLTableElement, sort: CrossTabSort | undefined): void {
  if (sort?.by !== 'column') return;
  const headers = element.tHead?.rows[element.tHead.rows.length - 1]?.querySelectorAll('th');
  headers?.[sort.column]?.setAttribute('aria-sort', sort.direction);
}
