import { loadConfig, type Config } from '../config.js';
import type { Db } from '../db/database.js';
import { ValidationError } from '../errors.js';
import { openRuntime } from '../runtime.js';
import {
  addDataSet,
  addPublication,
  createPreviewToken,
  deleteDraftVersion,
  deprecateVersion,
  listCatalogue,
  publishVersion,
  setDataSetStatus,
  setSupersedingDataSet,
  withdrawVersion,
} from '../statistics/lifecycle/service.js';
import { rebuildStorage } from '../statistics/storage/rebuild.js';
import { backfillParquetCopies } from '../statistics/storage/parquet-backfill.js';
import { parseArguments, requireOptions, runCli } from './run.js';
import { runWebhooksCommand, WEBHOOKS_USAGE } from './stats-webhooks.js';
import { webhookSettings } from '../events/webhooks.js';
import { lowerOwnPriority } from '../process-priority.js';

const USAGE = `Usage: npm run stats-admin -- <command> [options]

Commands:
  list [--data-set <id>]                                  data sets with their versions and statuses
  publish --data-set <id> --version <v>                   Draft version -> Published (data set becomes Published)
  withdraw --data-set <id> --version <v>                  Published/Deprecated version -> Withdrawn
  deprecate --data-set <id> --version <v>                 Published version -> Deprecated
  delete-draft --data-set <id> --version <v>              remove a Draft version and its rows
  deprecate-data-set --data-set <id>                      Published data set -> Deprecated
  withdraw-data-set --data-set <id>                       Published/Deprecated data set -> Withdrawn
  supersede --data-set <id> (--by <id> | --clear)         set or clear the superseding data set
  preview-token --data-set <id> --version <v> [--label <text>] [--expires-in-hours <1..168>]
                                                          token for a Draft version (header preview-token)
  add-publication --title <text> [--summary <text>] [--id <uuid>] [--slug <slug>]
  add-data-set --publication <id> --title <text> [--summary <text>] [--id <uuid>]
  rebuild-storage [--all | --data-set <id> --version <v>]
                                                          rebuild the engine form (the query engine's own storage) from the
                                                          Parquet copy: by default of the versions whose engine form is
                                                          missing, of another format or corrupt; --all: of every version
  backfill-parquet (--all | <versionId>...) [--row-order file|reference-fixture]
                                                          write the Parquet copy of versions without one from their
                                                          kept data file (resumable: versions with one are skipped)
  webhooks <add|list|remove|rotate-secret|enable|deliveries|redeliver> ...
                                                          statistics webhook subscriptions (webhooks --help)`;

function required(values: Record<string, unknown>, ...names: string[]): void {
  requireOptions(values, names, USAGE);
}

const OPTIONS = {
  'data-set': { type: 'string' },
  version: { type: 'string' },
  by: { type: 'string' },
  clear: { type: 'boolean', default: false },
  all: { type: 'boolean', default: false },
  'row-order': { type: 'string' },
  label: { type: 'string' },
  'expires-in-hours': { type: 'string' },
  title: { type: 'string' },
  summary: { type: 'string' },
  id: { type: 'string' },
  slug: { type: 'string' },
  publication: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

const COMMANDS = [
  'list',
  'publish',
  'withdraw',
  'deprecate',
  'delete-draft',
  'deprecate-data-set',
  'withdraw-data-set',
  'supersede',
  'preview-token',
  'add-publication',
  'add-data-set',
  'rebuild-storage',
  'backfill-parquet',
];

type Options = ReturnType<
  typeof parseArguments<{ allowPositionals: true; strict: true; options: typeof OPTIONS }>
>['values'];

/** `webhooks …`: the operator's statistics webhook subscriptions (src/cli/stats-webhooks.ts). */
async function runWebhooks(args: string[]): Promise<void> {
  if (args.length === 0 || args.includes('--help')) {
    console.log(WEBHOOKS_USAGE);
    return;
  }
  const config = loadConfig();
  const runtime = await openRuntime(config, { applicationName: 'statistics-admin' });
  try {
    await runWebhooksCommand(args, runtime.primary.db, webhookSettings(config));
  } finally {
    await runtime.close();
  }
}

function printCatalogue(catalogue: Awaited<ReturnType<typeof listCatalogue>>): void {
  for (const d of catalogue) {
    console.log(
      `${d.id}  ${d.status.padEnd(10)} ${d.title}${d.supersedingDataSetId ? `  (superseded by ${d.supersedingDataSetId})` : ''}`,
    );
    for (const v of d.versions) {
      console.log(
        `    v${v.version.padEnd(8)} ${v.status.padEnd(10)} ${v.rows.toLocaleString('en-GB').padStart(9)} rows` +
          (v.published ? `  published ${v.published.toISOString()}` : '') +
          (v.withdrawn ? `  withdrawn ${v.withdrawn.toISOString()}` : ''),
      );
    }
  }
}

/** `backfill-parquet`: writes the Parquet copy of the versions named (or of all) that have none. */
async function runBackfillParquet(db: Db, values: Options, operands: string[]): Promise<void> {
  const rowOrder = values['row-order'] ?? 'file';
  if (rowOrder !== 'file' && rowOrder !== 'reference-fixture')
    throw new ValidationError([{ path: '--row-order', message: 'must be file or reference-fixture.' }]);
  if (values.all === operands.length > 0 || !operands.every((id) => /^\d+$/.test(id))) {
    throw new ValidationError([
      { path: 'versionId', message: `give --all or one or more version ids (numbers).\n\n${USAGE}` },
    ]);
  }
  const results = await backfillParquetCopies(db, values.all ? 'all' : operands.map(Number), {
    rowOrder,
    onVersion: (v) =>
      console.log(
        v.stored
          ? `Version ${v.versionId}: Parquet copy of ${v.rows} rows stored, ${(v.bytes / 1024 / 1024).toFixed(1)} MB in ${v.seconds.toFixed(1)} s.`
          : `Version ${v.versionId}: has its Parquet copy already.`,
      ),
  });
  console.log(
    results.length === 0
      ? 'Every version has its Parquet copy.'
      : `Done: ${results.filter((r) => r.stored).length} Parquet copies stored.`,
  );
}

/** `rebuild-storage`: rebuilds the engine form of one version, the ones needing it, or all. */
async function runRebuildStorage(db: Db, values: Options, config: Config): Promise<void> {
  if (values['data-set']) required(values, 'version');
  const rebuilt = await rebuildStorage(
    db,
    { all: values.all, dataSetId: values['data-set'], version: values.version },
    config.QUERY_INDEX_BUILD_TIMEOUT_MS,
    (v) =>
      console.log(
        `Version ${v.id}: engine form rebuilt from its ${v.from === 'parquet' ? 'Parquet copy' : 'row table'}, ${v.rows} rows in ${v.seconds.toFixed(1)} s.`,
      ),
  );
  console.log(
    rebuilt === 0 ? "Every version's engine form is current." : `Rebuilt the engine form of ${rebuilt} version(s).`,
  );
}

/** Runs one lifecycle command (its name checked) against the primary database. */
async function runCommand(command: string, values: Options, db: Db, config: Config, operands: string[]): Promise<void> {
  const dataSet = values['data-set']!;
  const version = values.version!;
  switch (command) {
    case 'list': {
      printCatalogue(await listCatalogue(db, values['data-set']));
      break;
    }
    case 'publish':
    case 'withdraw':
    case 'deprecate': {
      required(values, 'data-set', 'version');
      const action = { publish: publishVersion, withdraw: withdrawVersion, deprecate: deprecateVersion }[command];
      const result = await action(db, dataSet, version);
      console.log(`Data set ${result.dataSetId} version ${result.version} is now ${result.status}.`);
      break;
    }
    case 'delete-draft':
      required(values, 'data-set', 'version');
      await deleteDraftVersion(db, dataSet, version);
      console.log(`Deleted draft version ${version} of data set ${dataSet}.`);
      break;
    case 'deprecate-data-set':
    case 'withdraw-data-set': {
      required(values, 'data-set');
      const result = await setDataSetStatus(db, dataSet, command === 'deprecate-data-set' ? 'Deprecated' : 'Withdrawn');
      console.log(`Data set ${result.dataSetId} is now ${result.status}.`);
      break;
    }
    case 'supersede': {
      required(values, 'data-set');
      if (!values.clear) required(values, 'by');
      const result = await setSupersedingDataSet(db, dataSet, values.clear ? null : values.by!);
      console.log(
        result.supersedingDataSetId
          ? `Data set ${result.dataSetId} is superseded by ${result.supersedingDataSetId}.`
          : `Data set ${result.dataSetId} has no superseding data set.`,
      );
      break;
    }
    case 'preview-token': {
      required(values, 'data-set', 'version');
      const token = await createPreviewToken(db, dataSet, version, {
        label: values.label,
        expiresInHours: values['expires-in-hours'] === undefined ? undefined : Number(values['expires-in-hours']),
      });
      console.log(
        `Preview token ${token.id} for data set ${token.dataSetId} version ${token.version}, expires ${token.expires.toISOString()}.`,
      );
      console.log(`Send it as the request header:  preview-token: ${token.id}`);
      break;
    }
    case 'add-publication': {
      required(values, 'title');
      const id = await addPublication(db, {
        id: values.id,
        title: values.title!,
        summary: values.summary,
        slug: values.slug,
      });
      console.log(`Publication ${id} created.`);
      break;
    }
    case 'backfill-parquet':
      await runBackfillParquet(db, values, operands);
      break;
    case 'rebuild-storage':
      await runRebuildStorage(db, values, config);
      break;
    case 'add-data-set': {
      required(values, 'publication', 'title');
      const id = await addDataSet(db, {
        id: values.id,
        publicationId: values.publication!,
        title: values.title!,
        summary: values.summary,
      });
      console.log(
        `Data set ${id} created (Draft until its first version is published). Import a version with npm run import.`,
      );
      break;
    }
  }
}

/** `npm run stats-admin`: the publisher's lifecycle commands for the statistics catalogue. */
await runCli(async () => {
  if (process.argv[2] === 'webhooks') return runWebhooks(process.argv.slice(3));
  const { values, positionals } = parseArguments({ allowPositionals: true, strict: true, options: OPTIONS }, USAGE);
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  if (!COMMANDS.includes(command))
    throw new ValidationError([{ path: 'command', message: `Unknown command "${command}".\n\n${USAGE}` }]);
  if (
    command === 'preview-token' &&
    values['expires-in-hours'] !== undefined &&
    !/^\d+(\.\d+)?$/.test(values['expires-in-hours'])
  ) {
    throw new ValidationError([{ path: '--expires-in-hours', message: 'must be a number of hours.' }]);
  }
  const config = loadConfig();
  const runtime = await openRuntime(config, { applicationName: 'statistics-admin' });
  try {
    if (command === 'rebuild-storage' || command === 'backfill-parquet') lowerOwnPriority(config.BATCH_NICE);
    await runCommand(command, values, runtime.primary.db, config, positionals.slice(1));
  } finally {
    await runtime.close();
  }
});
