/**
 * The modules' dependency direction (docs/architecture.md, "Module map"), read from the sources with TypeScript's
 * own parser: the event system (src/events) and the app-wide plugins (src/plugins) serve both APIs and import
 * neither; each API imports them and hands them what is its own (renderers, adapters, progress sources).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, sourceFiles } from '../helpers/source-files.js';

/** A directory (relative to the project root) whose files must not import any of `forbidden`. */
interface Boundary {
  from: string;
  forbidden: string[];
}

const BOUNDARIES: Boundary[] = [
  { from: 'src/events', forbidden: ['src/register', 'src/statistics'] },
  { from: 'src/plugins', forbidden: ['src/register', 'src/statistics'] },
];

/** The project paths (relative, without extension) a file's static and dynamic imports and re-exports name. */
function importedPaths(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      specifiers.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((spec) => spec.startsWith('.'))
    .map((spec) =>
      path
        .relative(PROJECT_ROOT, path.resolve(PROJECT_ROOT, path.dirname(file), spec))
        .split(path.sep)
        .join('/')
        .replace(/\.(js|ts)$/, ''),
    );
}

const within = (target: string, dir: string) => target === dir || target.startsWith(`${dir}/`);

function violations(boundary: Boundary, files: Array<{ file: string; text: string }>): string[] {
  return files.flatMap(({ file, text }) =>
    importedPaths(file, text)
      .filter((target) => boundary.forbidden.some((dir) => within(target, dir)))
      .map((target) => `${file} -> ${target}`),
  );
}

describe('module boundaries', () => {
  it.each(BOUNDARIES)('$from imports none of $forbidden', (boundary) => {
    const files = sourceFiles(boundary.from).map((file) => ({
      file,
      text: fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8'),
    }));
    expect(files.length).toBeGreaterThan(0);
    expect(violations(boundary, files)).toEqual([]);
  });

  it('finds every form of import that crosses a boundary', () => {
    const text = [
      "import { a } from '../register/versions/index.js';",
      "import type { B } from '../statistics/paging.js';",
      "export { c } from '../register/tokens.js';",
      "const d = await import('../statistics/import/repository.js');",
      "type E = import('../register/context.js').RegisterContext;",
      "import { f } from './feed.js';",
      "import { g } from '../db/database.js';",
    ].join('\n');
    expect(violations(BOUNDARIES[0]!, [{ file: 'src/events/example.ts', text }])).toEqual([
      'src/events/example.ts -> src/register/versions/index',
      'src/events/example.ts -> src/statistics/paging',
      'src/events/example.ts -> src/register/tokens',
      'src/events/example.ts -> src/statistics/import/repository',
      'src/events/example.ts -> src/register/context',
    ]);
  });
});
