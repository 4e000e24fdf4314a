/**
 * Validation of the state-changing operations: defer, withdraw and the QTS/EYTS status update
 *, with the real messages. Pure functions: the route handlers load the trainee, call these, and write.
 */
import type { TraineeState } from '../state-machine.js';
import { deferStateError, recommendStateError } from '../state-machine.js';
import { isBlankOrEmptyList, isoDate, scalarText, type Checked } from '../values.js';
import { externalName, type RegisterVersion } from '../versions/index.js';
import {
  WITHDRAWAL_FUTURE_INTEREST,
  WITHDRAWAL_REASONS_BY_TRIGGER,
  WITHDRAWAL_TRIGGERS as SHARED_TRIGGERS,
} from '../reference-data.js';

export type Body = Record<string, unknown>;

// ---- defer ----

export interface DeferInput {
  defer_date: string;
  defer_reason: string | null;
}

/** The free-text reasons of a deferral or withdrawal (`defer_reason`, `another_reason`, `safeguarding_concern_reasons`). */
export const REASON_MAX_LENGTH = 500;

/** `message` when `value` is longer than REASON_MAX_LENGTH. */
function reasonTooLong(field: string, value: string | null): string | undefined {
  return value !== null && value.length > REASON_MAX_LENGTH
    ? `${field} is too long (maximum is ${REASON_MAX_LENGTH} characters)`
    : undefined;
}

export function checkDefer(data: Body, state: TraineeState): Checked<DeferInput> {
  const errors: string[] = [];
  let deferDate: string | undefined;
  if (isBlankOrEmptyList(data.defer_date)) errors.push("defer_date can't be blank");
  else if (!(deferDate = isoDate(data.defer_date))) errors.push('defer_date is invalid');
  const reason = scalarText(data.defer_reason);
  const tooLong = reasonTooLong('defer_reason', reason);
  if (tooLong) errors.push(tooLong);
  const values = { defer_date: deferDate!, defer_reason: reason };
  if (errors.length > 0) return { values, errors };
  // The state is only checked once the body is valid, as the real service does.
  const stateError = deferStateError(state);
  return { values, errors: stateError ? [stateError] : [] };
}

// ---- withdraw ----

// The triggers, future-interest values and reasons per trigger are the reference data's (also served by
// GET /reference-data), so the endpoint and the published list cannot disagree.
export const WITHDRAWAL_TRIGGERS = SHARED_TRIGGERS;
export type WithdrawalTrigger = (typeof WITHDRAWAL_TRIGGERS)[number];
export const FUTURE_INTEREST = WITHDRAWAL_FUTURE_INTEREST;
export const WITHDRAWAL_REASONS = WITHDRAWAL_REASONS_BY_TRIGGER;

export interface WithdrawInput {
  date: string;
  trigger: WithdrawalTrigger;
  future_interest: (typeof FUTURE_INTEREST)[number];
  reasons: string[];
  another_reason: string | null;
  safeguarding_concern_reasons: string | null;
}

const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);

/**
 * `reasons` as Rails' permit list (`reasons: []`) reads it: a scalar or a list of scalars; a hash, or a list holding
 * one, is dropped (no reasons), never turned into text.
 */
function withdrawalReasons(value: unknown): string[] {
  if (Array.isArray(value)) return value.every(isScalar) ? value.map((r) => String(r)) : [];
  return isBlankOrEmptyList(value) || !isScalar(value) ? [] : [String(value)];
}

export function checkWithdraw(
  data: Body,
  trainee: { itt_start_date: string | null },
  version: RegisterVersion,
): Checked<WithdrawInput> {
  const errors: string[] = [];
  // The date's request (and message) name differs by version (`withdraw_date` in v2025.0).
  const dateField = externalName(version, 'withdrawal_date');
  const rawDate = data[dateField];
  let date: string | undefined;
  if (isBlankOrEmptyList(rawDate)) errors.push(`${dateField} Choose a withdrawal date`);
  else if (!(date = isoDate(rawDate))) errors.push(`${dateField} Choose a valid withdrawal date`);
  else if (trainee.itt_start_date && date < trainee.itt_start_date)
    errors.push(`${dateField} must be after itt_start_date`);

  const trigger = (WITHDRAWAL_TRIGGERS as readonly unknown[]).includes(data.trigger)
    ? (data.trigger as WithdrawalTrigger)
    : undefined;
  const reasons = withdrawalReasons(data.reasons);
  if (reasons.length === 0) {
    errors.push('reasons Choose one or more reasons why the trainee withdrew from the course');
  } else {
    // Without a valid trigger the trainee list is used, as the real validator does.
    const allowed = WITHDRAWAL_REASONS[trigger ?? 'trainee'];
    if (reasons.some((r) => !allowed.includes(r))) {
      errors.push('reasons entered not valid for selected trigger eg unacceptable_behaviour for a trainee trigger');
    }
  }
  const futureInterest = (FUTURE_INTEREST as readonly unknown[]).includes(data.future_interest)
    ? (data.future_interest as WithdrawInput['future_interest'])
    : undefined;
  if (!futureInterest) errors.push('future_interest is not included in the list');
  if (!trigger) errors.push('trigger is not included in the list');

  const anotherReason = scalarText(data.another_reason);
  if (reasons.some((r) => r.includes('another_reason')) && anotherReason === null)
    errors.push('another_reason Enter another reason');
  const safeguarding = scalarText(data.safeguarding_concern_reasons);
  if (reasons.includes('safeguarding_concerns') && safeguarding === null) {
    errors.push('safeguarding_concern_reasons Enter the concerns');
  }
  // Free text: capped like defer_reason (the real service sets no limit).
  for (const message of [
    reasonTooLong('another_reason', anotherReason),
    reasonTooLong('safeguarding_concern_reasons', safeguarding),
  ]) {
    if (message) errors.push(message);
  }
  return {
    values: {
      date: date!,
      trigger: trigger!,
      future_interest: futureInterest!,
      reasons,
      another_reason: reasons.some((r) => r.includes('another_reason')) ? anotherReason : null,
      safeguarding_concern_reasons: reasons.includes('safeguarding_concerns') ? safeguarding : null,
    },
    errors,
  };
}

// ---- QTS / EYTS status ----

/** Routes that need no degree before QTS/EYTS: the undergraduate ones. */
export const UNDERGRADUATE_ROUTES: readonly string[] = [
  'opt_in_undergrad',
  'provider_led_undergrad',
  'teacher_degree_apprenticeship',
  'early_years_undergrad',
];

/** The fewest placements a route needs before QTS/EYTS: 2 by default, iQTS 1, early years and AO none. */
export function minimumPlacements(route: string): number {
  if (route === 'assessment_only' || route === 'early_years_assessment_only') return 0;
  if (route === 'iqts') return 1;
  if (route.startsWith('early_years_')) return 0;
  return 2;
}

export interface QtsFacts {
  state: TraineeState;
  itt_start_date: string | null;
  /** The internal route name (`provider_led_postgrad`, `iqts`, …). */
  training_route: string;
  degreeCount: number;
  placementCount: number;
}

export function checkQtsStatus(
  data: Body,
  trainee: QtsFacts,
  today: string,
): Checked<{ qts_standards_met_date: string }> {
  const errors: string[] = [];
  let date: string | undefined;
  if (isBlankOrEmptyList(data.qts_standards_met_date)) {
    errors.push("qts_standards_met_date can't be blank. Enter a date the trainee met the QTS or EYTS requirements.");
  } else if (!(date = isoDate(data.qts_standards_met_date))) {
    errors.push('qts_standards_met_date is invalid');
  } else if (date > today) {
    errors.push('qts_standards_met_date must not be in the future');
  } else if (trainee.itt_start_date && date < trainee.itt_start_date) {
    errors.push('qts_standards_met_date must be after itt_start_date');
  }
  if (!UNDERGRADUATE_ROUTES.includes(trainee.training_route) && trainee.degreeCount === 0) {
    errors.push('degree_id must be completed before qts_standards_met_date');
  }
  const minimum = minimumPlacements(trainee.training_route);
  if (trainee.placementCount < minimum) {
    errors.push(`placements must be at least ${minimum} for the ${trainee.training_route} training route`);
  }
  const stateError = recommendStateError(trainee.state);
  if (stateError) errors.push(stateError);
  return { values: { qts_standards_met_date: date! }, errors };
}
