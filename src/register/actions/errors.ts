/**
 * The error bodies of the action, placement and degree endpoints, as thrown errors. Every one carries
 * its exact wire entries in `extensions.errors` (and `extensions.data` for 409), which the register's error
 * formatter renders as `{"errors":[…]}` / `{"errors":[…],"data":[…]}`.
 */
import { AppError } from '../../errors.js';
import type { RegisterErrorEntry } from '../state-machine.js';

export class RegisterEntriesError extends AppError {
  constructor(status: number, title: string, readonly entries: RegisterErrorEntry[] | string[], data?: unknown) {
    super(status, title, entries.map((e) => (typeof e === 'string' ? e : e.message)).join('; '), {
      errors: entries,
      ...(data === undefined ? {} : { data }),
    });
  }
}

/** 422 `{"errors":[{"error":"UnprocessableEntity","message":…}, …]}`: one entry per message. */
export function unprocessable(messages: string[]): RegisterEntriesError {
  return new RegisterEntriesError(
    422,
    'Unprocessable Entity',
    messages.map((message) => ({ error: 'UnprocessableEntity', message })),
  );
}

function notFound(message: string): RegisterEntriesError {
  return new RegisterEntriesError(404, 'Not Found', [{ error: 'NotFound', message }]);
}

export const traineeNotFound = () => notFound('Trainee(s) not found');
export const placementNotFound = () => notFound('Placement(s) not found');
export const degreeNotFound = () => notFound('Degree(s) not found');

/** 409 with the existing degree(s) the new one duplicates in `data`. */
export function duplicateDegree(existing: unknown[]): RegisterEntriesError {
  return new RegisterEntriesError(409, 'Conflict', [{ error: 'Conflict', message: 'This is a duplicate degree' }], existing);
}

/** 422 `{"errors":["Param is missing or the value is empty or invalid: data"]}` (plain strings, as Rails renders it). */
export function missingData(): RegisterEntriesError {
  return new RegisterEntriesError(422, 'Unprocessable Entity', ['Param is missing or the value is empty or invalid: data']);
}
