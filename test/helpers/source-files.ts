import fs from 'node:fs';
import path from 'node:path';

/** The project's root directory. */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

/** The TypeScript files under `dir` (relative to the project root, `.d.ts` left out), as project-relative paths. */
export function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [rel] : [];
  });
}
