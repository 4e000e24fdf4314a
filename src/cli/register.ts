/**
 * `npm run register -- <command> [options]`: the register operator's commands (providers, tokens, schools,
 * training partners). Argument parsing only: the rules and SQL are the register's services (organisations, tokens,
 * transitions). Honours DATABASE_URL / DATA_DIR like the server and works while the server runs.
 * A created token is printed once, alone on the last line of the output, so scripts can take `tail -n 1`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config.js';
import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import {
  createProvider,
  createTrainingPartner,
  discardProvider,
  listProviders,
  saveSchool,
} from '../register/organisations/service.js';
import { createToken, listTokens, revokeToken, tokenSecret } from '../register/tokens.js';
import { openRuntime } from '../runtime.js';
import { traineeCommands } from './register-trainee.js';
import { isUkprn, isUrn } from '../validators.js';
import { runCli } from './run.js';

export type RegisterCommand = (args: string[], db: Db, config: Config) => Promise<void>;

class UsageError extends AppError {
  constructor(message: string) {
    super(400, 'Usage', message);
  }
}

function options(args: string[], spec: Record<string, { type: 'string' | 'boolean' }>) {
  try {
    return parseArgs({ args, options: spec, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${flag} is required`);
  return value.trim();
}

export const coreCommands: Record<string, RegisterCommand> = {
  async 'provider:create'(args, db) {
    const { values } = options(args, {
      ukprn: { type: 'string' },
      name: { type: 'string' },
      unaccredited: { type: 'boolean' },
    });
    const ukprn = required(values.ukprn, '--ukprn');
    const name = required(values.name, '--name');
    if (!isUkprn(ukprn)) throw new UsageError(`--ukprn must be 8 digits (got "${ukprn}")`);
    const row = await createProvider(db, { ukprn, name, accredited: !values.unaccredited });
    console.log(`Created provider ${row.id}: ${row.name} (UKPRN ${row.ukprn})`);
  },

  async 'provider:list'(_args, db) {
    const rows = await listProviders(db);
    if (rows.length === 0) console.log('No providers.');
    for (const p of rows) console.log(`${p.id}\t${p.ukprn}\t${p.name}${p.discarded_at ? '\t(discarded)' : ''}`);
  },

  async 'provider:discard'(args, db) {
    const { values } = options(args, { ukprn: { type: 'string' } });
    const ukprn = required(values.ukprn, '--ukprn');
    await discardProvider(db, ukprn);
    console.log(`Discarded provider ${ukprn}: its tokens no longer authenticate.`);
  },

  async 'token:create'(args, db, config) {
    const { values } = options(args, {
      provider: { type: 'string' },
      expires: { type: 'string' },
      name: { type: 'string' },
    });
    const ukprn = required(values.provider, '--provider');
    const created = await db.transaction().execute((trx) =>
      createToken(trx, {
        providerUkprn: ukprn,
        environment: config.REGISTER_ENVIRONMENT,
        secret: tokenSecret(config),
        expiresAt: typeof values.expires === 'string' ? values.expires : undefined,
        name: typeof values.name === 'string' ? values.name : undefined,
      }),
    );
    console.log(
      `Created ${config.REGISTER_ENVIRONMENT} token ${created.id} "${created.name}" for ${created.provider.name} (UKPRN ${created.provider.ukprn}), valid until ${created.expiresAt} (exclusive).`,
    );
    console.log('It is shown only this once:');
    console.log(created.token);
  },

  async 'token:revoke'(args, db) {
    const { values, positionals } = options(args, { id: { type: 'string' } });
    const id = Number(values.id ?? positionals[0]);
    if (!Number.isInteger(id) || id <= 0)
      throw new UsageError('token:revoke needs a token id (see token:list): token:revoke <id>');
    await revokeToken(db, id);
    console.log(`Revoked token ${id}.`);
  },

  async 'token:list'(args, db) {
    const { values } = options(args, { provider: { type: 'string' } });
    const tokens = await listTokens(db, typeof values.provider === 'string' ? values.provider : undefined);
    if (tokens.length === 0) console.log('No tokens.');
    for (const t of tokens) {
      console.log(
        [
          t.id,
          t.ukprn,
          t.environment,
          t.status,
          `expires ${t.expiresAt}`,
          `last used ${t.lastUsedAt ? t.lastUsedAt.toISOString() : 'never'}`,
          t.name,
        ].join('\t'),
      );
    }
  },

  async 'school:create'(args, db) {
    const { values } = options(args, {
      urn: { type: 'string' },
      name: { type: 'string' },
      postcode: { type: 'string' },
      town: { type: 'string' },
    });
    const urn = required(values.urn, '--urn');
    if (!isUrn(urn)) throw new UsageError(`--urn must be 6 digits (got "${urn}")`);
    const optional = (value: string | boolean | undefined) => (typeof value === 'string' ? value : null);
    await saveSchool(db, {
      urn,
      name: required(values.name, '--name'),
      postcode: optional(values.postcode),
      town: optional(values.town),
    });
    console.log(`School ${urn} saved.`);
  },

  async 'training-partner:create'(args, db) {
    const { values } = options(args, { urn: { type: 'string' }, ukprn: { type: 'string' }, name: { type: 'string' } });
    const urn = typeof values.urn === 'string' ? values.urn : null;
    const ukprn = typeof values.ukprn === 'string' ? values.ukprn : null;
    if (!urn && !ukprn) throw new UsageError('--urn or --ukprn is required');
    if (urn && !isUrn(urn)) throw new UsageError(`--urn must be 6 digits (got "${urn}")`);
    if (ukprn && !isUkprn(ukprn)) throw new UsageError(`--ukprn must be 8 digits (got "${ukprn}")`);
    const row = await createTrainingPartner(db, { urn, ukprn, name: required(values.name, '--name') });
    console.log(`Created training partner ${row.id}.`);
  },
};

const USAGE = `Usage: npm run register -- <command> [options]
  provider:create --ukprn <8 digits> --name <name> [--unaccredited]
  provider:list
  provider:discard --ukprn <ukprn>            (soft delete: its tokens stop working)
  token:create --provider <ukprn> [--expires YYYY-MM-DD] [--name <label>]
                                              (prints the token once, on the last line)
  token:revoke <token id>
  token:list [--provider <ukprn>]
  school:create --urn <6 digits> --name <name> [--postcode <pc>] [--town <town>]
  training-partner:create --name <name> [--urn <6 digits>] [--ukprn <8 digits>]
  trainee:receive-trn <trainee id> <trn>      (TRN allocated: submitted_for_trn → trn_received)
  trainee:award <trainee id> <YYYY-MM-DD>     (QTS/EYTS awarded: recommended_for_award → awarded)`;

/** Every command: providers, tokens, schools and partners here, and the operator's trainee commands (src/cli/register-trainee.ts). */
export async function registerCommands(): Promise<Record<string, RegisterCommand>> {
  return { ...coreCommands, ...traineeCommands };
}

export async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  const commands = await registerCommands();
  if (!name || name === 'help' || name === '--help') {
    console.log(USAGE);
    return;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`Unknown command "${name}".\n${USAGE}`);
  const config = loadConfig();
  const runtime = await openRuntime(config, { applicationName: 'register-cli' });
  try {
    await command(args, runtime.primary.db, config);
  } finally {
    await runtime.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await runCli(() => main(process.argv.slice(2)));
}
