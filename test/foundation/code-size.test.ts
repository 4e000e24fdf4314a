/**
 * The sizes docs/architecture.md (after "The modules, and one query end to end") states for `src/`:
 * how many functions are over 100 lines, and which files are over 500 lines with their reasons. Read from the
 * sources with TypeScript's own parser, so the document cannot drift from the code unnoticed.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sourceFiles } from '../helpers/source-files.js';

const ARCHITECTURE = fs.readFileSync(path.join(PROJECT_ROOT, 'docs/architecture.md'), 'utf8');
const LONG_FUNCTION_LINES = 100;
const LONG_FILE_LINES = 500;

function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** A file's functions, methods, accessors and constructors longer than `limit` lines, as `file:line name (n lines)`. */
function longFunctions(file: string, text: string, limit: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      if (end - start + 1 > limit) found.push(`${file}:${start + 1} ${name} (${end - start + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The rows of the document's table of files over 500 lines: path under src/, stated lines, reason. */
function documentedLongFiles(): Array<{ file: string; lines: number; reason: string }> {
  const table = ARCHITECTURE.slice(ARCHITECTURE.indexOf('| file | lines | why one file |'));
  const rows = table.split('\n').slice(2);
  const documented: Array<{ file: string; lines: number; reason: string }> = [];
  for (const row of rows) {
    const match = /^\| `([^`]+)` \| ([\d,]+) \| (.*) \|$/.exec(row);
    if (!match) break;
    documented.push({ file: `src/${match[1]}`, lines: Number(match[2]!.replace(/,/g, '')), reason: match[3]!.trim() });
  }
  return documented;
}

describe('code sizes in docs/architecture.md', () => {
  const files = sourceFiles('src').map((file) => ({
    file,
    text: fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8'),
  }));

  it('finds a long function where there is one (the counter itself)', () => {
    const body = Array.from({ length: LONG_FUNCTION_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = `export function short() {\n  return 1;\n}\nclass C {\n  long() {\n${body}\n  }\n}\n`;
    expect(longFunctions('x.ts', text, LONG_FUNCTION_LINES)).toEqual([
      `x.ts:5 long (${LONG_FUNCTION_LINES + 2} lines)`,
    ]);
  });

  it('states how many functions in src/ are over 100 lines', () => {
    const stated = /Functions over 100 lines in `src\/`: (\d+)/.exec(ARCHITECTURE);
    expect(stated, 'the sentence "Functions over 100 lines in `src/`: N"').not.toBeNull();
    const long = files.flatMap(({ file, text }) => longFunctions(file, text, LONG_FUNCTION_LINES));
    expect(long.length, long.join('\n')).toBe(Number(stated![1]));
  });

  it('lists every file in src/ over 500 lines, with its size (within a tenth) and a reason, and no other', () => {
    const documented = documentedLongFiles();
    const actual = files.filter(({ text }) => lineCount(text) > LONG_FILE_LINES);
    expect(documented.map((d) => d.file).sort()).toEqual(actual.map((a) => a.file).sort());
    for (const { file, lines, reason } of documented) {
      const real = lineCount(actual.find((a) => a.file === file)!.text);
      expect(Math.abs(lines - real), `${file}: documented ${lines} lines, has ${real}`).toBeLessThanOrEqual(real / 10);
      expect(reason.length, `${file}: a reason`).toBeGreaterThan(10);
    }
  });
});
