/**
 * The register operator's trainee commands, dispatched by `npm run register -- <command>` (src/cli/register.ts):
 *
 *   trainee:receive-trn <trainee id> <trn>   the TRN the teacher record service allocated (7 digits)
 *   trainee:award <trainee id> <YYYY-MM-DD>  QTS/EYTS awarded on that date
 *
 * In the real system both come from the TRS integration; here the operator records them, so that every trainee
 * state is reachable. Both are the transitions service's (src/register/transitions/service.ts): the state machine,
 * one transaction, audited without a token.
 */
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { UnprocessableError } from '../errors.js';
import type { RegisterEnvironment } from '../register/tokens.js';
import { awardTrainee, receiveTrn } from '../register/transitions/service.js';
import { todayUtc } from '../register/values.js';

/** The environment whose feed the commands' events go to: the configured one (REGISTER_ENVIRONMENT's default without it). */
const environmentOf = (config?: Config): RegisterEnvironment => config?.REGISTER_ENVIRONMENT ?? 'sandbox';

function positionals<const Names extends readonly string[]>(
  args: string[],
  names: Names,
  usage: string,
): { [K in keyof Names]: string } {
  const values = args.filter((a) => !a.startsWith('--'));
  if (values.length !== names.length || args.length !== names.length) throw new UnprocessableError(`Usage: ${usage}`);
  return values as { [K in keyof Names]: string };
}

export const traineeCommands: Record<string, (args: string[], db: Db, config?: Config) => Promise<void>> = {
  async 'trainee:receive-trn'(args, db, config) {
    const [traineeId, trn] = positionals(args, ['id', 'trn'], 'trainee:receive-trn <trainee id> <trn>');
    const row = await receiveTrn(db, traineeId, trn, environmentOf(config));
    console.log(`Trainee ${row.id}: TRN ${row.trn} recorded, state ${row.state}.`);
  },
  async 'trainee:award'(args, db, config) {
    const [traineeId, date] = positionals(args, ['id', 'date'], 'trainee:award <trainee id> <YYYY-MM-DD>');
    const row = await awardTrainee(db, traineeId, date, todayUtc(), environmentOf(config));
    console.log(`Trainee ${row.id}: awarded on ${date}, state ${row.state}.`);
  },
};
