import path from 'node:path';
import { loadConfig } from '../config.js';
import { lowerOwnPriority } from '../process-priority.js';
import { ValidationError } from '../errors.js';
import { openRuntime } from '../runtime.js';
import { importDataSetVersion } from '../statistics/import/import.js';
import { progressBar } from '../statistics/import/progress.js';
import { parseArguments, requireOptions, runCli } from './run.js';

const USAGE = `Usage: npm run import -- --data-set <id> --version <x.y[.z]> --data <data.csv|data.csv.gz> --meta <meta.csv>
                      [--draft] [--notes <text>] [--release-title <text>] [--release-slug <slug>] [--published-at <ISO time>]
                      [--row-order file|reference-fixture]   (row ids: file order, the default, or the reference's AbsenceSchool ids)`;

/** `npm run import`: imports one data set version from a data CSV and a meta CSV (atomically). */
await runCli(async () => {
  const { values } = parseArguments(
    {
      options: {
        'data-set': { type: 'string' },
        version: { type: 'string' },
        data: { type: 'string' },
        meta: { type: 'string' },
        draft: { type: 'boolean', default: false },
        notes: { type: 'string' },
        'release-title': { type: 'string' },
        'release-slug': { type: 'string' },
        'published-at': { type: 'string' },
        'row-order': { type: 'string', default: 'file' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return;
  }
  requireOptions(values, ['data-set', 'version', 'data', 'meta'], USAGE);
  if (values['published-at'] && Number.isNaN(Date.parse(values['published-at']))) {
    throw new ValidationError([{ path: '--published-at', message: 'is not an ISO 8601 time.' }]);
  }
  const rowOrder = values['row-order'];
  if (rowOrder !== 'file' && rowOrder !== 'reference-fixture') {
    throw new ValidationError([{ path: '--row-order', message: 'must be file or reference-fixture.' }]);
  }
  const config = loadConfig();
  lowerOwnPriority(config.BATCH_NICE);
  const runtime = await openRuntime(config, { applicationName: 'statistics-import' });
  try {
    const result = await importDataSetVersion(runtime.primary, {
      dataSetId: values['data-set']!,
      version: values.version!,
      dataPath: path.resolve(values.data!),
      metaPath: path.resolve(values.meta!),
      draft: values.draft,
      notes: values.notes,
      releaseTitle: values['release-title'],
      releaseSlug: values['release-slug'],
      publishedAt: values['published-at'],
      rowOrder,
      onProgress: progressBar(`Importing ${path.basename(values.data!)}`),
    });
    console.log(
      `Imported data set ${result.dataSetId} version ${result.version} (${result.status}): ${result.rows.toLocaleString('en-GB')} rows in ` +
        `${result.seconds.toFixed(1)} s (${Math.round(result.rows / result.seconds).toLocaleString('en-GB')} rows/s); ` +
        `changes: ${result.majorChanges} major, ${result.minorChanges} minor.`,
    );
    const phases = Object.entries(result.timings).map(([phase, seconds]) => `${phase} ${seconds.toFixed(1)} s`);
    console.log(`Phases: ${phases.join(', ')}.`);
  } finally {
    await runtime.close();
  }
});
