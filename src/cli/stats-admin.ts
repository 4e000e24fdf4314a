import { loadConfig } from '../config.js';
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
import { storeMissingRowIndexes } from '../statistics/query/engine/row-index-store.js';
import { backfillParquetCopies } from '../statistics/storage/parquet-backfill.js';
import { parseArguments, requireOptions, runCli } from './run.js';
import { runWebhooksCommand, WEBHOOKS_USAGE } from './stats-webhooks.js';
import { webhookSettings } from '../events/webhooks.js';

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
  build-row-indexes                                       store the query row index of every version that has none
                                                          (imported before the stored form existed)
  backfill-parquet (--all | <versionId>...) [--row-order file|reference-fixture]
                                                          write the Parquet copy of versions without one from their
                                                          kept data file (resumable: versions with one are skipped)
  webhooks <add|list|remove|rotate-secret|enable|deliveries|redeliver> ...
                                                          statistics webhook subscriptions (webhooks --help)`;

function required(values: Record<string, unknown>, ...names: string[]): void {
  requireOptions(values, names, USAGE);
}


/** `npm run stats-admin`: the publisher's lifecycle commands for the statistics catalogue. */
await runCli(async () => {
  if (process.argv[2] === 'webhooks') {
    const args = process.argv.slice(3);
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
    return;
  }
  const { values, positionals } = parseArguments({
    allowPositionals: true,
    strict: true,
    options: {
      'data-set': { type: 'string' },
      version: { type: 'string' },
      by: { type: 'string' },
      clear: { type: 'boolean', default: false },
      label: { type: 'string' },
      'expires-in-hours': { type: 'string' },
      title: { type: 'string' },
      summary: { type: 'string' },
      id: { type: 'string' },
      slug: { type: 'string' },
      publication: { type: 'string' },
      all: { type: 'boolean', default: false },
      'row-order': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  }, USAGE);
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  const commands = ['list', 'publish', 'withdraw', 'deprecate', 'delete-draft', 'deprecate-data-set', 'withdraw-data-set', 'supersede', 'preview-token', 'add-publication', 'add-data-set', 'build-row-indexes', 'backfill-parquet'];
  if (!commands.includes(command)) throw new ValidationError([{ path: 'command', message: `Unknown command "${command}".\n\n${USAGE}` }]);
  if (command === 'preview-token' && values['expires-in-hours'] !== undefined && !/^\d+(\.\d+)?$/.test(values['expires-in-hours'])) {
    throw new ValidationError([{ path: '--expires-in-hours', message: 'must be a number of hours.' }]);
  }
  const config = loadConfig();
  const runtime = await openRuntime(config, { applicationName: 'statistics-admin' });
  const db = runtime.primary.db;
  const dataSet = values['data-set']!;
  const version = values.version!;
  try {
    switch (command) {
      case 'list': {
        for (const d of await listCatalogue(db, values['data-set'])) {
          console.log(`${d.id}  ${d.status.padEnd(10)} ${d.title}${d.supersedingDataSetId ? `  (superseded by ${d.supersedingDataSetId})` : ''}`);
          for (const v of d.versions) {
            console.log(
              `    v${v.version.padEnd(8)} ${v.status.padEnd(10)} ${v.rows.toLocaleString('en-GB').padStart(9)} rows` +
                (v.published ? `  published ${v.published.toISOString()}` : '') +
                (v.withdrawn ? `  withdrawn ${v.withdrawn.toISOString()}` : ''),
            );
          }
        }
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
        console.log(`Preview token ${token.id} for data set ${token.dataSetId} version ${token.version}, expires ${token.expires.toISOString()}.`);
        console.log(`Send it as the request header:  preview-token: ${token.id}`);
        break;
      }
      case 'add-publication': {
        required(values, 'title');
        const id = await addPublication(db, { id: values.id, title: values.title!, summary: values.summary, slug: values.slug });
        console.log(`Publication ${id} created.`);
        break;
      }
      case 'build-row-indexes': {
        const stored = await storeMissingRowIndexes(db, config.QUERY_INDEX_BUILD_TIMEOUT_MS, (v) =>
          console.log(`Version ${v.id} (${v.rowsTable}): row index stored, ${(v.bytes / 1024 / 1024).toFixed(1)} MB in ${v.seconds.toFixed(1)} s.`),
        );
        console.log(stored === 0 ? 'Every version has its row index stored.' : `Stored ${stored} row indexes.`);
        break;
      }
      case 'backfill-parquet': {
        const ids = positionals.slice(1);
        const rowOrder = values['row-order'] ?? 'file';
        if (rowOrder !== 'file' && rowOrder !== 'reference-fixture') throw new ValidationError([{ path: '--row-order', message: 'must be file or reference-fixture.' }]);
        if (values.all === (ids.length > 0) || !ids.every((id) => /^\d+$/.test(id))) {
          throw new ValidationError([{ path: 'versionId', message: `give --all or one or more version ids (numbers).\n\n${USAGE}` }]);
        }
        const results = await backfillParquetCopies(db, values.all ? 'all' : ids.map(Number), {
          rowOrder,
          onVersion: (v) =>
            console.log(
              v.stored
                ? `Version ${v.versionId}: Parquet copy of ${v.rows} rows stored, ${(v.bytes / 1024 / 1024).toFixed(1)} MB in ${v.seconds.toFixed(1)} s.`
                : `Version ${v.versionId}: has its Parquet copy already.`,
            ),
        });
        console.log(results.length === 0 ? 'Every version has its Parquet copy.' : `Done: ${results.filter((r) => r.stored).length} Parquet copies stored.`);
        break;
      }
      case 'add-data-set': {
        required(values, 'publication', 'title');
        const id = await addDataSet(db, { id: values.id, publicationId: values.publication!, title: values.title!, summary: values.summary });
        console.log(`Data set ${id} created (Draft until its first version is published). Import a version with npm run import.`);
        break;
      }
    }
  } finally {
    await runtime.close();
  }
});
