/**
 * Every trainee state and every transition between states, in one place.
 *
 * The real service keeps states as an integer enum with events (`submit_for_trn`, `receive_trn`, …); here the
 * canonical state is its name. Route handlers and CLIs never compare states themselves: they ask this module,
 * so "which operation is allowed from where" cannot drift between endpoints.
 */
import { StateTransitionError } from './errors.js';
import { VERSION_ADAPTERS, type RegisterVersion } from './versions/index.js';

export const TRAINEE_STATES = [
  'draft',
  'submitted_for_trn',
  'trn_received',
  'recommended_for_award',
  'withdrawn',
  'deferred',
  'awarded',
] as const;
export type TraineeState = (typeof TRAINEE_STATES)[number];

export type TraineeEvent = 'submit_for_trn' | 'receive_trn' | 'recommend_for_award' | 'withdraw' | 'defer' | 'award';

/** The state machine of the whole system (web UI, TRS integration and API together). */
export const TRANSITIONS: Readonly<Record<TraineeEvent, { from: readonly TraineeState[]; to: TraineeState }>> = {
  submit_for_trn: { from: ['draft', 'deferred'], to: 'submitted_for_trn' },
  receive_trn: { from: ['submitted_for_trn', 'deferred', 'trn_received'], to: 'trn_received' },
  recommend_for_award: { from: ['trn_received'], to: 'recommended_for_award' },
  withdraw: { from: ['submitted_for_trn', 'trn_received', 'deferred'], to: 'withdrawn' },
  defer: { from: ['submitted_for_trn', 'trn_received'], to: 'deferred' },
  award: { from: ['recommended_for_award'], to: 'awarded' },
};

export function isTraineeState(value: unknown): value is TraineeState {
  return typeof value === 'string' && (TRAINEE_STATES as readonly string[]).includes(value);
}

export function canTransition(state: TraineeState, event: TraineeEvent): boolean {
  return TRANSITIONS[event].from.includes(state);
}

/** The state after `event`, or undefined when the event is not allowed from `state`. */
export function nextState(state: TraineeState, event: TraineeEvent): TraineeState | undefined {
  return canTransition(state, event) ? TRANSITIONS[event].to : undefined;
}

/** A trainee in one of the version's locked states cannot be modified through the API (none before v2026.1). */
export function isLocked(state: TraineeState, version: RegisterVersion): boolean {
  return VERSION_ADAPTERS[version].lockedStates.includes(state);
}

/**
 * Throws the 422 StateTransitionError when `version` locks the trainee's state. Called before any body
 * validation by every modifying endpoint: trainee PUT/PATCH, placement and degree POST/PUT/PATCH/DELETE.
 */
export function assertTraineeModifiable(trainee: { state: string }, version: RegisterVersion): void {
  if (isTraineeState(trainee.state) && isLocked(trainee.state, version)) throw new StateTransitionError();
}

/** Why defer is refused in this state (a validation entry, not a StateTransitionError), or undefined. */
export function deferStateError(state: TraineeState): string | undefined {
  if (canTransition(state, 'defer')) return undefined;
  return `state is invalid must be one of [${TRANSITIONS.defer.from.join(', ')}]`;
}

/** Why a QTS/EYTS recommendation is refused in this state, or undefined. */
export function recommendStateError(state: TraineeState): string | undefined {
  if (canTransition(state, 'recommend_for_award')) return undefined;
  return `state must be selected as ${TRANSITIONS.recommend_for_award.from.join(', ')}`;
}

/**
 * Withdraw preconditions: the state allows it and ITT has started (`itt_start_date` not after `today`).
 * Failing either is a StateTransitionError in every version.
 */
export function assertWithdrawable(trainee: { state: string; itt_start_date: string | null }, today: string): void {
  const state = trainee.state;
  if (!isTraineeState(state) || !canTransition(state, 'withdraw')) throw new StateTransitionError();
  if (trainee.itt_start_date && trainee.itt_start_date > today) throw new StateTransitionError();
}

/**
 * The operator's TRN update (`trainee:receive-trn`): a trainee waiting for its TRN moves to `trn_received`; a
 * deferred or withdrawn trainee keeps its state and just gets the TRN (as the TRS integration does); a trainee
 * that already has one gets it replaced. Returns the state to store, or undefined when refused.
 */
export function stateAfterTrnReceived(state: TraineeState): TraineeState | undefined {
  if (state === 'withdrawn' || state === 'deferred') return state;
  return nextState(state, 'receive_trn');
}
