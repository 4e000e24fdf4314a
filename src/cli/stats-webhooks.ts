/**
 * `npm run stats-admin -- webhooks <command>`: the operator's statistics webhook subscriptions. The statistics API
 * is public and read-only, with no token that could own a subscription, so the operator adds them for subscribers
 * (docs/architecture.md, "Change events"). Argument parsing and printing only: the rules are the webhook service's
 * (src/events/webhooks.ts), shared with the providers' subscriptions, and the same worker delivers both; that the
 * data set a subscription follows exists is checked here (the webhook service reads no API's tables).
 * A secret (on add and rotate-secret) is printed once, alone on the last line, so scripts can take `tail -n 1`.
 */
import { parseArgs } from 'node:util';
import type { Db } from '../db/database.js';
import { UnprocessableError, ValidationError } from '../errors.js';
import { dataSetExists } from '../statistics/lifecycle/repository.js';
import { STATISTICS_EVENT_TYPES } from '../statistics/events/service.js';
import { isUuid } from '../validators.js';
import {
  changeSubscription,
  createSubscription,
  deleteSubscription,
  listDeliveries,
  listStatisticsSubscriptions,
  redeliverById,
  rotateSecret,
  STATISTICS_OWNER,
  type WebhookSettings,
} from '../events/webhooks.js';

export const WEBHOOKS_USAGE = `Usage: npm run stats-admin -- webhooks <command> [options]

Commands:
  add --url <url> [--types <type,...>] [--data-set <id>]
                                     subscribe a receiver to statistics events (all types and data sets unless
                                     limited); prints the signing secret once, on the last line.
                                     The URL must be https in production; the sandbox also accepts http
  list                               subscriptions: id, enabled or disabled (and why), URL, types, data set
  remove <id>                        delete a subscription and its delivery log; nothing more is sent to it
  rotate-secret <id>                 a new signing secret (printed once); the old one also signs for
                                     WEBHOOK_SECRET_OVERLAP_HOURS
  enable <id>                        re-enable a subscription disabled after sustained failure (its failed
                                     delivery is sent again first)
  deliveries <id> [--limit <1..100>] [--before <delivery id>]
                                     the delivery log, newest first: attempts, status, last error
  redeliver <delivery id>            send a delivery again (same webhook-id)

Event types: ${STATISTICS_EVENT_TYPES.join(', ')}`;

function usage(message: string): never {
  throw new ValidationError([{ path: 'arguments', message: `${message}\n\n${WEBHOOKS_USAGE}` }], 'Invalid arguments.');
}

function parse(args: string[], options: Record<string, { type: 'string' }>) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    return usage((error as Error).message);
  }
}

function one(positionals: string[], what: string): string {
  if (positionals.length !== 1) usage(`${what} required (exactly one).`);
  return positionals[0]!;
}

function types(list: string[]): string {
  return list.length === 0 ? 'all types' : list.join(',');
}

/** `webhooks add`: subscribes a receiver to statistics events and prints its signing secret once, last. */
async function addSubscription(rest: string[], db: Db, settings: WebhookSettings): Promise<void> {
  const { values, positionals } = parse(rest, {
    url: { type: 'string' },
    types: { type: 'string' },
    'data-set': { type: 'string' },
  });
  if (positionals.length > 0) usage(`Unexpected argument "${positionals[0]}".`);
  if (!values.url) usage('--url required.');
  const eventTypes = (values.types ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const dataSetId = values['data-set'] ?? null;
  if (dataSetId !== null && !(isUuid(dataSetId) && (await dataSetExists(db, dataSetId))))
    throw new UnprocessableError(`data set ${dataSetId}: no data set with this id`);
  const created = await createSubscription(
    db,
    STATISTICS_OWNER,
    { url: values.url, event_types: eventTypes },
    STATISTICS_EVENT_TYPES,
    settings,
    dataSetId,
  );
  console.log(`Added statistics webhook subscription ${created.id}: ${created.url}`);
  console.log(
    `  ${types(created.event_types)}, ${values['data-set'] ? `data set ${values['data-set']}` : 'every data set'}; events from now on.`,
  );
  console.log('Its signing secret is shown only this once:');
  console.log(created.secret);
}

/** `webhooks list`: one line per subscription (and the reason under a disabled one). */
async function printSubscriptions(rest: string[], db: Db): Promise<void> {
  parse(rest, {});
  const rows = await listStatisticsSubscriptions(db);
  if (rows.length === 0) console.log('No statistics webhook subscriptions.');
  for (const row of rows) {
    console.log(
      [
        row.id,
        row.enabled ? 'enabled' : 'disabled',
        row.url,
        types(row.event_types),
        row.data_set_id ?? 'every data set',
      ].join('\t'),
    );
    if (row.disabled_reason) console.log(`\t${row.disabled_reason}`);
  }
}

/** `webhooks deliveries`: a subscription's delivery log, newest first. */
async function printDeliveries(rest: string[], db: Db): Promise<void> {
  const { values, positionals } = parse(rest, { limit: { type: 'string' }, before: { type: 'string' } });
  const id = one(positionals, 'The subscription id');
  const limit = Number(values.limit ?? 50);
  const before = values.before === undefined ? undefined : Number(values.before);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) usage('--limit must be a whole number from 1 to 100.');
  if (before !== undefined && !(Number.isSafeInteger(before) && before > 0)) usage('--before must be a delivery id.');
  const rows = await listDeliveries(db, STATISTICS_OWNER, id, limit, before);
  if (rows.length === 0) console.log('No deliveries.');
  for (const d of rows) {
    console.log(
      [
        d.id,
        d.status,
        d.event_type,
        d.event_id,
        `${d.attempts} attempts`,
        d.last_status ?? '-',
        d.last_error ?? '',
      ].join('\t'),
    );
  }
}

/** Runs one `webhooks` command (`args` after the word `webhooks`). */
export async function runWebhooksCommand(args: string[], db: Db, settings: WebhookSettings): Promise<void> {
  const [command, ...rest] = args;
  switch (command) {
    case 'add':
      return addSubscription(rest, db, settings);
    case 'list':
      return printSubscriptions(rest, db);
    case 'remove': {
      const id = one(parse(rest, {}).positionals, 'The subscription id');
      await deleteSubscription(db, STATISTICS_OWNER, id);
      console.log(`Removed statistics webhook subscription ${id}: nothing more is delivered to it.`);
      return;
    }
    case 'rotate-secret': {
      const id = one(parse(rest, {}).positionals, 'The subscription id');
      const rotated = await rotateSecret(db, STATISTICS_OWNER, id, settings);
      console.log(
        `New signing secret for ${id}; the previous one also signs until ${rotated.previous_secret_expires_at ?? 'now (no overlap)'}.`,
      );
      console.log('It is shown only this once:');
      console.log(rotated.secret);
      return;
    }
    case 'enable': {
      const id = one(parse(rest, {}).positionals, 'The subscription id');
      await changeSubscription(db, STATISTICS_OWNER, id, { enabled: true }, STATISTICS_EVENT_TYPES, settings);
      console.log(`Enabled statistics webhook subscription ${id}.`);
      return;
    }
    case 'deliveries':
      return printDeliveries(rest, db);
    case 'redeliver': {
      const raw = one(parse(rest, {}).positionals, 'The delivery id');
      const deliveryId = Number(raw);
      if (!Number.isSafeInteger(deliveryId) || deliveryId < 1) usage(`"${raw}" is not a delivery id.`);
      const subscriptionId = await redeliverById(db, STATISTICS_OWNER, deliveryId);
      console.log(`Delivery ${deliveryId} of subscription ${subscriptionId} is queued again.`);
      return;
    }
    default:
      usage(command ? `Unknown webhooks command "${command}".` : 'A webhooks command is required.');
  }
}
