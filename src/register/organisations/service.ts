/**
 * The operator's organisation rules (`npm run register -- provider:…|school:…|training-partner:…`): one provider
 * per UKPRN, a discarded provider's tokens stop authenticating, a school saved again is replaced.
 */
import type { Executor } from '../../db/database.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import {
  discardProviderRow,
  findProviderByUkprn,
  insertProvider,
  insertTrainingPartner,
  listProviderRows,
  upsertSchool,
  type ProviderRow,
} from './repository.js';

export async function createProvider(db: Executor, provider: { ukprn: string; name: string; accredited: boolean }) {
  if (await findProviderByUkprn(db, provider.ukprn))
    throw new ConflictError(`A provider with UKPRN ${provider.ukprn} already exists`);
  return insertProvider(db, provider);
}

export async function listProviders(db: Executor): Promise<ProviderRow[]> {
  return listProviderRows(db);
}

export async function discardProvider(db: Executor, ukprn: string): Promise<void> {
  if (!(await discardProviderRow(db, ukprn))) throw new NotFoundError(`No active provider with UKPRN ${ukprn}`);
}

export async function saveSchool(
  db: Executor,
  school: { urn: string; name: string; postcode: string | null; town: string | null },
): Promise<void> {
  await upsertSchool(db, school);
}

export async function createTrainingPartner(
  db: Executor,
  partner: { urn: string | null; ukprn: string | null; name: string },
): Promise<{ id: number }> {
  return insertTrainingPartner(db, partner);
}
