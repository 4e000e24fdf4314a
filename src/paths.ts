/**
 * The project's root folder (where package.json is). Files read at run time — seed/, the explorer's client sources,
 * node_modules assets — are found from it, so the same code finds them whether it runs from src/ (tsx, in
 * development and scripts) or compiled from dist/ (`npm start`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`No package.json above ${start}`);
  }
}

export const PROJECT_ROOT = findProjectRoot(import.meta.dirname);

/** A path inside the project, e.g. `projectPath('seed', 'catalog.json')`. */
export function projectPath(...parts: string[]): string {
  return path.join(PROJECT_ROOT, ...parts);
}
