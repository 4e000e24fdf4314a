/**
 * `POST /trainees/batch` (an extension of this service, not of the real register: docs/compatibility.md): up to
 * MAX_BATCH_ROWS creates in one request. Every row is checked on its own as `POST /trainees` checks its `data`, and
 * answered with what that create would answer — 201 with the trainee, 422 with its validation errors, 409 with the
 * trainee it duplicates — together with the row's index. The valid rows are stored in one transaction, in row order
 * (their `trainee.created` events too); a row that duplicates an earlier row of the same batch is a 409 like a
 * duplicate of a stored trainee.
 */
import type { Db } from '../../db/database.js';
import type { RegisterContext } from '../context.js';
import { missingData, RegisterError } from '../errors.js';
import { requestData } from '../http.js';
import { withDuplicateLocks } from './repository.js';
import { createLockKey, prepareCreate, storeCreate, type PreparedCreate } from './create.js';

export const MAX_BATCH_ROWS = 100;

/** One row's answer: its index in `data`, the status its own create would have, and that create's body. */
export type BatchRowResult = { index: number; status: number } & Record<string, unknown>;

export interface BatchResult {
  rows: BatchRowResult[];
  created: number;
}

/** The rows of a batch body: `data` must be a list of 1 to MAX_BATCH_ROWS trainees (400 beyond, before anything else). */
export function batchRows(body: unknown): unknown[] {
  const data =
    body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).data : undefined;
  if (!Array.isArray(data) || data.length === 0) throw missingData();
  if (data.length > MAX_BATCH_ROWS) {
    throw new RegisterError(400, 'Bad Request', {
      errors: [`data holds ${data.length} trainees; a batch holds at most ${MAX_BATCH_ROWS}`],
    });
  }
  return data;
}

function rowAnswer(index: number, error: unknown): BatchRowResult {
  if (!(error instanceof RegisterError)) throw error;
  return { index, status: error.status, ...(error.body as Record<string, unknown>) };
}

export async function createTraineeBatch(
  db: Db,
  context: RegisterContext,
  rows: unknown[],
  enhancedErrors: boolean,
): Promise<BatchResult> {
  const answers = new Array<BatchRowResult>(rows.length);
  const valid: Array<{ index: number; prepared: PreparedCreate }> = [];
  for (const [index, row] of rows.entries()) {
    try {
      valid.push({
        index,
        prepared: await prepareCreate(db, context, { data: () => requestData({ data: row }), enhancedErrors }),
      });
    } catch (error) {
      answers[index] = rowAnswer(index, error);
    }
  }
  let created = 0;
  if (valid.length > 0) {
    const keys = valid.map(({ prepared }) => createLockKey(context.provider.id, prepared));
    await withDuplicateLocks(db, keys, async (trx) => {
      for (const { index, prepared } of valid) {
        try {
          const { body } = await storeCreate(trx, context, prepared);
          answers[index] = { index, status: 201, data: body };
          created += 1;
        } catch (error) {
          // A duplicate is found before anything of the row is written: the transaction goes on with the next row.
          answers[index] = rowAnswer(index, error);
        }
      }
    });
  }
  return { rows: answers, created };
}
