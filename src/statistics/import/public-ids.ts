import Sqids from 'sqids';
import type { Executor } from '../../db/database.js';
import { nextSequenceValues } from './repository.js';

/** The reference's Sqids configuration. */
const sqids = new Sqids({ alphabet: 'UjIo1rQXDHTmNsy6p4SlAtO0uqhfCiexFMVc5nG3v2Bbz8dKgWJRa79PZYwkEL', minLength: 5 });

export function encodePublicId(n: number): string {
  return sqids.encode([n]);
}

export type PublicIdKind = 'filter' | 'filterOption' | 'indicator' | 'location';

const SEQUENCES: Record<PublicIdKind, string> = {
  filter: 'stats_public_id_seq',
  filterOption: 'stats_filter_option_public_id_seq',
  indicator: 'stats_indicator_public_id_seq',
  location: 'stats_location_public_id_seq',
};

/** `count` fresh public ids of one kind, in sequence order. */
export async function allocatePublicIds(db: Executor, kind: PublicIdKind, count: number): Promise<string[]> {
  if (count === 0) return [];
  return (await nextSequenceValues(db, SEQUENCES[kind], count)).map(encodePublicId);
}
