import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvSyntaxError, readCsvBatches } from '../../../src/statistics/import/csv-reader.js';
import { progressBar } from '../../../src/statistics/import/progress.js';
import { cutAt } from '../../helpers/cut.js';

async function parse(chunks: string[]) {
  const records: string[][] = [];
  const lines: number[] = [];
  for await (const batch of readCsvBatches(
    (async function* () {
      yield* chunks;
    })(),
  )) {
    records.push(...batch.records);
    lines.push(...batch.lines);
  }
  return { records, lines };
}

function toCsv(records: string[][], eol: string): string {
  const cell = (v: string) => (/[",\r\n]/.test(v) || v.startsWith('"') ? `"${v.replace(/"/g, '""')}"` : v);
  return records.map((r) => r.map(cell).join(',')).join(eol) + eol;
}

describe('CSV reader', () => {
  it('reads quoted fields, escaped quotes, CRLF and a BOM, with the line each record starts on', async () => {
    const text = '\uFEFFa,b,c\r\n1,"Bristol, City of","say ""hi"""\r\n2,"two\nlines",x\r\n\r\n3,,\r\n';
    const { records, lines } = await parse([text]);
    expect(records).toEqual([
      ['a', 'b', 'c'],
      ['1', 'Bristol, City of', 'say "hi"'],
      ['2', 'two\nlines', 'x'],
      ['3', '', ''],
    ]);
    expect(lines).toEqual([1, 2, 3, 6]);
  });

  it('gives the same records however the text is cut into chunks (property)', async () => {
    const value = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', '"', '\n', '\r\n', 'é', '£'), maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 4 })
          .chain((width) =>
            fc.array(fc.array(value, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 6 }),
          ),
        fc.constantFrom('\n', '\r\n'),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (rows, eol, cuts) => {
          // A record of one empty cell is an empty line, which the reader skips by design.
          const records = rows.filter((r) => !(r.length === 1 && r[0] === ''));
          const text = toCsv(records, eol);
          expect((await parse(cutAt(text, cuts))).records).toEqual(records);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reports an unclosed quote and text after a closing quote with their line', async () => {
    await expect(parse(['a,b\n1,"open\n'])).rejects.toMatchObject({
      line: 2,
      message: expect.stringMatching(/not closed/),
    });
    const error = await parse(['a,b\n1,2\n"x"y,3\n']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CsvSyntaxError);
    expect(error).toMatchObject({ line: 3 });
  });
});

describe('progress bar', () => {
  it('draws on a terminal and stays silent otherwise', () => {
    const written: string[] = [];
    const tty = { isTTY: true, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const bar = progressBar('Importing data.csv', tty);
    bar({ rows: 50000, seconds: 2, fraction: 0.5, done: false });
    bar({ rows: 100000, seconds: 4, fraction: 1, done: true });
    expect(written[0]).toBe(
      `\rImporting data.csv [${'#'.repeat(15)}${'.'.repeat(15)}]  50%  50,000 rows  25,000 rows/s`,
    );
    expect(written[1]).toContain(`[${'#'.repeat(30)}] 100%  100,000 rows  25,000 rows/s`);
    expect(written[2]).toBe('\n');
    const piped: string[] = [];
    progressBar('x', { isTTY: false, write: (s: string) => piped.push(s) } as unknown as NodeJS.WriteStream)({
      rows: 1,
      seconds: 1,
      fraction: 1,
      done: true,
    });
    expect(piped).toEqual([]);
  });
});
