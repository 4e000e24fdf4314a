/**
 * `npm start`'s prestart: runs `npm run build` only when the build inputs changed since the last build (see
 * build-stamp.ts), so a restart of unchanged code does not compile again. The stamp is taken before the build, so
 * an edit made while it runs is seen by the next start.
 */
import { spawnSync } from 'node:child_process';
import { buildNeeded, sourceStamp, writeStamp } from './build-stamp.js';
import { runCli } from './run.js';
import { PROJECT_ROOT } from '../paths.js';

await runCli(async () => {
  const stamp = await sourceStamp(PROJECT_ROOT);
  const reason = await buildNeeded(PROJECT_ROOT, stamp);
  if (!reason) {
    console.log('Build skipped: the sources are unchanged since the last build (`npm run build` forces one).');
    return;
  }
  console.log(`Building: ${reason}.`);
  const build = spawnSync('npm', ['run', 'build'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build failed (exit ${build.status ?? build.signal})`);
  await writeStamp(PROJECT_ROOT, stamp);
});
