import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Meta, ResultRow } from '../../../src/explorer/client/api.js';
import {
  type CrossTab,
  BLOCK_ROWS,
  keyOrder,
  buildCrossTab,
  CELL_EDGES,
  crossTabCaption,
  crossTabHeadHtml,
  crossTabPage,
  headerGroups,
  pageRowHeaders,
  sortCrossTab,
  PAGE_CELLS,
  rowsPerPage,
  shownCells,
} from '../../../src/explorer/client/crosstab.js';
import { crossTabCsv } from '../../../src/explorer/client/crosstab-csv.js';
import { locationLabels } from '../../../src/explorer/client/locations.js';
import { describeSort } from '../../../src/explorer/client/table.js';
import {
  canMove,
  defaultLayout,
  describeMove,
  layoutParams,
  moveGroup,
  parseLayout,
  settle,
  type HeaderGroup,
} from '../../../src/explorer/client/layout.js';

const meta: Meta = {
  filters: [
    {
      id: 'F1',
      column: 'ethnicity',
      label: 'Ethnicity',
      hint: '',
      options: [
        { id: 'o1', label: 'White - Irish' },
        { id: 'o2', label: 'Total' },
      ],
    },
    {
      id: 'F2',
      column: 'school',
      label: 'School type',
      hint: '',
      options: [
        { id: 's1', label: 'Primary' },
        { id: 's2', label: 'Secondary' },
      ],
    },
  ],
  indicators: [
    { id: 'I1', column: 'headcount', label: 'Headcount', unit: '', decimalPlaces: 0 },
    { id: 'I2', column: 'percent', label: 'Percent', unit: '%', decimalPlaces: 1 },
  ],
  geographicLevels: [
    { code: 'REG', label: 'Region' },
    { code: 'LA', label: 'Local authority' },
  ],
  locations: [
    { level: { code: 'REG', label: 'Region' }, options: [{ id: 'R1', label: 'South West', code: 'E12000009' }] },
    {
      level: { code: 'LA', label: 'Local authority' },
      options: [
        { id: 'L2', label: 'Barnsley', code: 'E08000016' },
        { id: 'L1', label: 'Barnet', code: 'E09000003' },
        { id: 'D1', label: 'Dorset', code: 'E06000059' },
        { id: 'D2', label: 'Dorset', code: 'E10000009' },
      ],
    },
  ],
  timePeriods: [
    { code: 'AY', period: '2020/2021', label: '2020/21' },
    { code: 'AY', period: '2021/2022', label: '2021/22' },
  ],
};

const row = (period: string, la: string, school: string, headcount: string, percent = '1.25'): ResultRow => ({
  timePeriod: { period, code: 'AY' },
  geographicLevel: 'LA',
  locations: { LA: la },
  filters: { F1: 'o2', F2: school },
  values: { I1: headcount, I2: percent },
});

const group = (id: string, n: number, label = 'x'): HeaderGroup => ({
  id,
  label: id,
  options: Array.from({ length: n }, (_, i) => ({ key: `${i}`, label: `${label}${i}` })),
});

describe('cross-tab layout', () => {
  it('puts fewer than 8 time periods in the columns and indicators in the rows, the rest split by size, single options nowhere', () => {
    const groups = [
      group('timePeriod', 3),
      group('location', 9),
      group('filter:a', 2),
      group('filter:b', 1),
      group('filter:c', 20),
      group('indicator', 2),
    ];
    // Sorted by size: a(2), location(9), c(20): the smaller half (a) in the columns, location and c in the rows.
    expect(defaultLayout(groups)).toEqual({
      columns: ['filter:a', 'timePeriod'],
      rows: ['location', 'filter:c', 'indicator'],
    });
  });

  it('from 8 time periods on, splits every group by size and keeps something in the columns', () => {
    const groups = [group('timePeriod', 10), group('location', 3), group('indicator', 2)];
    expect(defaultLayout(groups)).toEqual({ columns: ['indicator'], rows: ['location', 'timePeriod'] });
    // Wordier groups of the same size go to the rows.
    const wordy = [group('timePeriod', 8, 'a'), group('location', 8, 'a much longer name '), group('indicator', 1)];
    expect(defaultLayout(wordy)).toEqual({ columns: ['timePeriod'], rows: ['location'] });
  });

  it('keeps a one-option indicator or period on an axis only when the axis would otherwise be empty', () => {
    expect(defaultLayout([group('timePeriod', 1), group('location', 4), group('indicator', 1)])).toEqual({
      rows: ['location'],
      columns: ['timePeriod'],
    });
    expect(defaultLayout([group('timePeriod', 1), group('indicator', 1)])).toEqual({
      rows: ['indicator'],
      columns: ['timePeriod'],
    });
  });

  it('settles a permalink layout: unknown and single-option groups dropped, missing ones added, no empty axis', () => {
    const groups = [group('timePeriod', 3), group('location', 9), group('filter:b', 1), group('indicator', 2)];
    expect(settle({ rows: ['nonsense', 'filter:b', 'location'], columns: [] }, groups)).toEqual({
      rows: ['location', 'timePeriod'],
      columns: ['indicator'],
    });
    expect(settle({ rows: ['location', 'location'], columns: ['timePeriod', 'indicator'] }, groups)).toEqual({
      rows: ['location'],
      columns: ['timePeriod', 'indicator'],
    });
  });

  it('moves groups within and across axes, never emptying one, and says what happened', () => {
    const groups = [group('timePeriod', 3), group('location', 9), group('indicator', 2)];
    const layout = { rows: ['location', 'indicator'], columns: ['timePeriod'] };
    expect(moveGroup(layout, 'indicator', 'outward')).toEqual({
      rows: ['indicator', 'location'],
      columns: ['timePeriod'],
    });
    expect(moveGroup(layout, 'location', 'toColumns')).toEqual({
      rows: ['indicator'],
      columns: ['timePeriod', 'location'],
    });
    expect(canMove(layout, 'timePeriod', 'toRows')).toBe(false);
    expect(moveGroup(layout, 'timePeriod', 'toRows')).toBe(layout);
    expect(moveGroup(layout, 'timePeriod', 'swap')).toEqual({
      rows: ['timePeriod'],
      columns: ['location', 'indicator'],
    });
    const after = moveGroup(layout, 'location', 'toColumns');
    expect(describeMove(layout, after, 'location', 'toColumns', groups)).toBe(
      'location moved to the columns. Rows: indicator. Columns: timePeriod, then location.',
    );
    expect(describeMove(layout, moveGroup(layout, 'location', 'inward'), 'location', 'inward', groups)).toBe(
      'location moved one place inward, now second of 2 row groups (the innermost). Rows: indicator, then location. Columns: timePeriod.',
    );
    expect(describeMove(layout, layout, 'timePeriod', 'toRows', groups)).toBe('timePeriod cannot move that way.');
  });

  it('round-trips the layout through the permalink', () => {
    const layout = { rows: ['timePeriod', 'filter:F1'], columns: ['location', 'indicator'] };
    expect(parseLayout(new URLSearchParams(layoutParams(layout)))).toEqual(layout);
    expect(parseLayout(new URLSearchParams('a=1'))).toBeUndefined();
  });
});

/** A page's body HTML (its column widths measured as nothing). */
const bodyHtml = (table: CrossTab, from: number, to: number) => crossTabPage(table, from, to, () => 0).bodyHtml;

describe('cross-tab', () => {
  const rows = [
    row('2021/2022', 'L2', 's1', '30'),
    row('2020/2021', 'L1', 's1', '10'),
    row('2021/2022', 'L1', 's1', '12000'),
    row('2020/2021', 'L2', 's1', '20'),
    row('2021/2022', 'L1', 's2', 'c'),
  ];

  it('names the two Dorsets by their codes, and other places by name only', () => {
    const labels = locationLabels(meta);
    expect(labels.get('LA|D1')).toBe('Dorset (E06000059)');
    expect(labels.get('LA|D2')).toBe('Dorset (E10000009)');
    expect(labels.get('LA|L1')).toBe('Barnet');
  });

  it('orders header options: periods as the metadata, locations by name, filters as the metadata; one-option filters included', () => {
    const groups = headerGroups(rows, meta, meta.indicators);
    expect(groups.map((g) => [g.id, g.options.map((o) => o.label)])).toEqual([
      ['timePeriod', ['2020/21', '2021/22']],
      ['location', ['Barnet', 'Barnsley']],
      ['filter:F1', ['Total']],
      ['filter:F2', ['Primary', 'Secondary']],
      ['indicator', ['Headcount', 'Percent']],
    ]);
  });

  it('pivots with the default layout: one-option filter in the caption, values formatted, missing combinations left out', () => {
    const table = buildCrossTab(rows, meta, meta.indicators);
    expect(table.layout).toEqual({ columns: ['location', 'timePeriod'], rows: ['filter:F2', 'indicator'] });
    expect(table.captionParts).toEqual(['Ethnicity: Total']);
    expect(crossTabCaption('Pupils', table)).toBe('Pupils: Ethnicity: Total');
    expect(table.columnHeaders).toEqual([
      [
        { label: 'Barnet', span: 2 },
        { label: 'Barnsley', span: 2 },
      ],
      [
        { label: '2020/21', span: 1 },
        { label: '2021/22', span: 1 },
        { label: '2020/21', span: 1 },
        { label: '2021/22', span: 1 },
      ],
    ]);
    expect(table.rowLabels).toEqual([
      ['Primary', 'Headcount'],
      ['Primary', 'Percent'],
      ['Secondary', 'Headcount'],
      ['Secondary', 'Percent'],
    ]);
    // Per row group: the headers, each where its span starts.
    expect(table.rowHeaders.map((level) => level.map((h) => h && `${h.label}×${h.span}`))).toEqual([
      ['Primary×2', null, 'Secondary×2', null],
      ['Headcount×1', 'Percent×1', 'Headcount×1', 'Percent×1'],
    ]);
    expect(shownCells(table)).toEqual([
      ['10', '12,000', '20', '30'],
      ['1.3%', '1.3%', '1.3%', '1.3%'],
      ['', 'c', '', ''],
      ['', '1.3%', '', ''],
    ]);
  });

  it('pivots to the layout asked for: locations in the columns, time periods in the rows', () => {
    const primary = rows.filter((r) => r.filters.F2 === 's1');
    const table = buildCrossTab(primary, meta, [meta.indicators[0]!], { rows: ['timePeriod'], columns: ['location'] });
    expect(table.captionParts).toEqual(['Headcount', 'Ethnicity: Total', 'School type: Primary']);
    expect(table.columnLabels).toEqual([['Barnet'], ['Barnsley']]);
    expect(table.rowLabels).toEqual([['2020/21'], ['2021/22']]);
    expect(table.raw).toEqual([
      ['10', '20'],
      ['12000', '30'],
    ]);
  });

  it('writes the table as shown as CSV, headers repeated, raw values', () => {
    const table = buildCrossTab(rows, meta, meta.indicators, {
      rows: ['location', 'timePeriod'],
      columns: ['filter:F2', 'indicator'],
    });
    const csv: string[][] = parse(crossTabCsv('Pupils, by "school"', table), { relax_column_count: true });
    expect(csv).toEqual([
      ['Pupils, by "school": Ethnicity: Total'],
      ['', '', 'Primary', 'Primary', 'Secondary', 'Secondary'],
      ['Location', 'Time period', 'Headcount', 'Percent', 'Headcount', 'Percent'],
      ['Barnet', '2020/21', '10', '1.25', '', ''],
      ['Barnet', '2021/22', '12000', '1.25', 'c', '1.25'],
      ['Barnsley', '2020/21', '20', '1.25', '', ''],
      ['Barnsley', '2021/22', '30', '1.25', '', ''],
    ]);
  });

  it("neutralises spreadsheet formulas in every cell of the CSV (the query CSV's rule), numbers kept as numbers", () => {
    const hostile: Meta = {
      ...meta,
      filters: [
        meta.filters[0]!,
        {
          ...meta.filters[1]!,
          options: [
            { id: 's1', label: '=1+1' },
            { id: 's2', label: "+cmd|' /C calc'!A0" },
          ],
        },
      ],
      indicators: [{ ...meta.indicators[0]!, label: '=HYPERLINK("http://evil.example","x")' }, meta.indicators[1]!],
    };
    const table = buildCrossTab(rows, hostile, hostile.indicators, {
      rows: ['location', 'timePeriod'],
      columns: ['filter:F2', 'indicator'],
    });
    const csv: string[][] = parse(crossTabCsv('@SUM(1)', table), { relax_column_count: true });
    expect(csv[0]![0]).toMatch(/^'@SUM\(1\)/);
    expect(csv[1]).toEqual(['', '', "'=1+1", "'=1+1", "'+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"]);
    expect(csv[2]![2]).toBe('\'=HYPERLINK("http://evil.example","x")');
    for (const line of csv) for (const cell of line) expect(cell).not.toMatch(/^[=+@]/);
    expect(csv[3]!.slice(2, 4)).toEqual(['10', '1.25']);
  });

  it('cuts the rows into pages of at most PAGE_CELLS cells, each page repeating the row headers whose span it continues', () => {
    const table = buildCrossTab(rows, meta, meta.indicators, {
      rows: ['location', 'timePeriod', 'indicator'],
      columns: ['filter:F2'],
    });
    expect(rowsPerPage(table)).toBe(PAGE_CELLS / 2);
    const spans = (from: number, to: number) =>
      pageRowHeaders(table, from, to).map((r) => r.map((h) => h && `${h.label}×${h.span}`));
    expect(spans(0, 8)).toEqual([
      ['Barnet×4', '2020/21×2', 'Headcount×1'],
      [null, null, 'Percent×1'],
      [null, '2021/22×2', 'Headcount×1'],
      [null, null, 'Percent×1'],
      ['Barnsley×4', '2020/21×2', 'Headcount×1'],
      [null, null, 'Percent×1'],
      [null, '2021/22×2', 'Headcount×1'],
      [null, null, 'Percent×1'],
    ]);
    // A page starting inside spans names them again, and no span reaches past the page's end.
    expect(spans(3, 6)).toEqual([
      ['Barnet×1', '2021/22×1', 'Percent×1'],
      ['Barnsley×2', '2020/21×2', 'Headcount×1'],
      [null, null, 'Percent×1'],
    ]);
  });

  it('writes a page as HTML: headers with their scope and span, the cells as shown, labels escaped', () => {
    const odd: Meta = {
      ...meta,
      filters: [
        meta.filters[0]!,
        { ...meta.filters[1]!, options: [{ id: 's1', label: 'Primary <& "special">' }, meta.filters[1]!.options[1]!] },
      ],
    };
    const table = buildCrossTab(rows, odd, meta.indicators, {
      rows: ['location', 'timePeriod'],
      columns: ['filter:F2', 'indicator'],
    });
    expect(crossTabHeadHtml(table)).toBe(
      '<tr><td class="app-crosstab__corner" colspan="2" rowspan="2">Location / Time period</td>' +
        '<th scope="colgroup" colspan="2">Primary &lt;&amp; &quot;special&quot;&gt;</th><th scope="colgroup" colspan="2">Secondary</th></tr>' +
        '<tr><th scope="col">Headcount</th><th scope="col">Percent</th><th scope="col">Headcount</th><th scope="col">Percent</th></tr>',
    );
    expect(bodyHtml(table, 1, 3)).toBe(
      '<tbody>' +
        '<tr><th scope="rowgroup">Barnet</th><th scope="row">2021/22</th><td>12,000</td><td>1.3%</td><td>c</td><td>1.3%</td></tr>' +
        // Barnsley's span of two is cut at the page's end: no rowspan.
        '<tr><th scope="rowgroup">Barnsley</th><th scope="row">2020/21</th><td>20</td><td>1.3%</td><td></td><td></td></tr>' +
        '</tbody>',
    );
  });

  it('orders the keys present the same way over a small key space (typed array) and a large one (set)', () => {
    const keys = Float64Array.from([42, 7, 42, 1000, 7, 0, 65535]);
    const small = keyOrder(keys, 1 << 16);
    const large = keyOrder(keys, 1 << 30);
    expect(small.keys).toEqual([0, 7, 42, 1000, 65535]);
    expect(large.keys).toEqual(small.keys);
    for (const key of small.keys)
      expect([small.positionOf(key), large.positionOf(key)]).toEqual([
        small.keys.indexOf(key),
        small.keys.indexOf(key),
      ]);
  });

  it('pivots on an axis with room for more combinations than 32 bits hold', () => {
    // Eight filters in the rows, 15 options of each present: 15^8 (2.6e9) combinations.
    const filters = Array.from({ length: 8 }, (_, f) => ({
      id: `G${f}`,
      column: `g${f}`,
      label: `Group ${f}`,
      hint: '',
      options: Array.from({ length: 20 }, (_, o) => ({
        id: `g${f}o${o}`,
        label: `G${f} option ${String(o).padStart(2, '0')}`,
      })),
    }));
    const many: Meta = { ...meta, filters };
    // Row i has option i in every group; given in reverse.
    const manyRows: ResultRow[] = Array.from({ length: 15 }, (_, i) => 14 - i).map((i) => ({
      timePeriod: { period: '2021/2022', code: 'AY' },
      geographicLevel: 'LA',
      locations: { LA: 'L1' },
      filters: Object.fromEntries(filters.map((f, k) => [f.id, `g${k}o${i}`])),
      values: { I1: String(i), I2: `${i}.5` },
    }));
    const table = buildCrossTab(manyRows, many, meta.indicators, {
      rows: filters.map((f) => `filter:${f.id}` as const),
      columns: ['indicator'],
    });
    expect(table.layout.rows).toHaveLength(8);
    // In the options' order, outermost group first.
    expect(table.raw).toEqual(Array.from({ length: 15 }, (_, i) => [String(i), `${i}.5`]));
    expect(table.rowLabels[14]).toEqual(filters.map((_, k) => `G${k} option 14`));
  });

  it('cuts a page’s body into row groups of BLOCK_ROWS rows, each naming again the row headers whose span it continues', () => {
    const schools = Array.from({ length: 60 }, (_, i) => ({ id: `s${i}`, label: `School ${i}` }));
    const wide: Meta = { ...meta, filters: [meta.filters[0]!, { ...meta.filters[1]!, options: schools }] };
    const many = ['L1', 'L2'].flatMap((la) =>
      ['2020/2021', '2021/2022'].flatMap((period) => schools.map((s, i) => row(period, la, s.id, String(i)))),
    );
    // Rows: Barnet's 60 schools × 2 indicators, then Barnsley's: 240 rows.
    const table = buildCrossTab(many, wide, wide.indicators, {
      rows: ['location', 'filter:F2', 'indicator'],
      columns: ['timePeriod'],
    });
    expect(table.raw.length).toBe(240);
    const blocks = bodyHtml(table, 3, 3 + BLOCK_ROWS + 2)
      .split('</tbody>')
      .filter(Boolean);
    expect(blocks.map((b) => (b.match(/<tr>/g) ?? []).length)).toEqual([BLOCK_ROWS, 2]);
    // Each block starts with every row header, no span reaching past its end.
    expect(blocks.map((b) => b.match(/^<tbody><tr>((?:<th [^>]*>[^<]*<\/th>)+)<td>/)![1])).toEqual([
      `<th scope="rowgroup" rowspan="${BLOCK_ROWS}">Barnet</th><th scope="rowgroup">School 1</th><th scope="row">Percent</th>`,
      '<th scope="rowgroup" rowspan="2">Barnet</th><th scope="rowgroup">School 21</th><th scope="row">Percent</th>',
    ]);
  });

  it('sizes the columns from the widest text each holds on the page: row labels in bold, values by their characters', () => {
    const table = buildCrossTab(rows, meta, meta.indicators, {
      rows: ['location', 'timePeriod'],
      columns: ['filter:F2', 'indicator'],
    });
    // Every character 1.5 em wide in regular type (values), 0.625 em in bold (headers).
    const measured: string[] = [];
    const width = (text: string, bold: boolean) => {
      measured.push(text);
      return text.length * (bold ? 0.625 : 1.5);
    };
    // Row headers: "Barnsley" and "2020/21". Values: Primary's "12,000" and "1.3%"; Secondary's Headcount holds only
    // "c", so its header's "Headcount" is the widest there. Texts in em, padding and borders in px.
    const rowHeader = (em: number) => `calc(${em}em + ${CELL_EDGES.rowHeader}px)`;
    const value = (em: number) => `minmax(calc(${em}em + ${CELL_EDGES.value}px), 1fr)`;
    expect(crossTabPage(table, 0, table.raw.length, width).columns).toBe(
      [
        rowHeader(8 * 0.625),
        rowHeader(7 * 0.625),
        value(6 * 1.5),
        value(4 * 1.5),
        value(9 * 0.625),
        value(4 * 1.5),
      ].join(' '),
    );
    // Values are measured a character at a time, each character once.
    expect(measured.filter((t) => t.length === 1).length).toBe(new Set(measured.filter((t) => t.length === 1)).size);
    // A page of Barnet's rows alone: narrower row headers.
    expect(crossTabPage(table, 0, 2, width).columns).toMatch(
      new RegExp(`^calc\\(${6 * 0.625}em \\+ ${CELL_EDGES.rowHeader}px\\) `),
    );
  });
});

describe('sorting the cross-tab', () => {
  const rows = [
    row('2020/2021', 'L1', 's1', '30'),
    row('2020/2021', 'L2', 's1', 'x'),
    row('2020/2021', 'D1', 's1', '5'),
    row('2021/2022', 'L1', 's1', '10'),
    row('2021/2022', 'L2', 's1', '40'),
    row('2021/2022', 'D1', 's1', '20'),
  ];
  const table = buildCrossTab(rows, meta, [meta.indicators[0]!], { rows: ['location'], columns: ['timePeriod'] });

  it('sorts rows by a column’s numbers either way, rows without a number last, cells and headers moving with their rows', () => {
    const column = table.columnLabels.findIndex((labels) => labels.includes('2020/21'));
    const up = sortCrossTab(table, { by: 'column', column, direction: 'ascending' });
    expect(up.rowLabels.map((l) => l[0])).toEqual(['Dorset (E06000059)', 'Barnet', 'Barnsley']);
    expect(up.raw.map((r) => r[column])).toEqual(['5', '30', 'x']);
    expect(up.rowHeaders[0]!.map((hd) => hd?.label)).toEqual(['Dorset (E06000059)', 'Barnet', 'Barnsley']);
    expect(up.shownCell(0, column)).toBe('5');
    const down = sortCrossTab(table, { by: 'column', column, direction: 'descending' });
    expect(down.raw.map((r) => r[column])).toEqual(['30', '5', 'x']);
    expect(describeSort(table, { by: 'column', column, direction: 'descending' })).toBe(
      'Table rows sorted by 2020/21, largest first (rows without a number last).',
    );
  });

  it('sorts rows by their labels, and keeps spans over rows that stay together', () => {
    const two = buildCrossTab([...rows, row('2020/2021', 'L1', 's2', '7')], meta, [meta.indicators[0]!], {
      rows: ['location', 'filter:F2'],
      columns: ['timePeriod'],
    });
    const down = sortCrossTab(two, { by: 'label', direction: 'descending' });
    expect(down.rowLabels.map((l) => l.join(' / '))).toEqual([
      'Dorset (E06000059) / Primary',
      'Barnsley / Primary',
      'Barnet / Secondary',
      'Barnet / Primary',
    ]);
    expect(down.rowHeaders[0]!.map((hd) => hd && `${hd.label}×${hd.span}`)).toEqual([
      'Dorset (E06000059)×1',
      'Barnsley×1',
      'Barnet×2',
      null,
    ]);
    expect(describeSort(two, { by: 'label', direction: 'ascending' })).toBe(
      'Table rows sorted by their labels, A to Z.',
    );
  });
});

describe('the CSV of every matching row', () => {
  it('loses the location columns no row fills (a region-only query’s "Local authority"), and keeps every other column', async () => {
    const { withoutEmptyLocationColumns } = await import('../../../src/explorer/client/crosstab-csv.js');
    const csv =
      'time_period,geographic_level,Regional,Local authority,Ethnicity,Headcount\n2021/22,Regional,North East,,Total,5\n2021/22,Regional,"London, Inner",,,7\n';
    expect(withoutEmptyLocationColumns(csv, ['National', 'Regional', 'Local authority'])).toBe(
      'time_period,geographic_level,Regional,Ethnicity,Headcount\n2021/22,Regional,North East,Total,5\n2021/22,Regional,"London, Inner",,7\n',
    );
    const filled = 'geographic_level,Regional,Local authority\nLocal authority,North East,Newcastle\n';
    expect(withoutEmptyLocationColumns(filled, ['Regional', 'Local authority'])).toBe(filled);
  });
});
