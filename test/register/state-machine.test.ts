import { describe, expect, it } from 'vitest';
import {
  assertTraineeModifiable,
  assertWithdrawable,
  deferStateError,
  isLocked,
  nextState,
  recommendStateError,
  stateAfterTrnReceived,
  TRAINEE_STATES,
  type TraineeEvent,
  type TraineeState,
} from '../../src/register/state-machine.js';
import { StateTransitionError } from '../../src/register/errors.js';

// The full transition table: every (state, event) pair not listed here must be refused.
const allowed: Array<[TraineeState, TraineeEvent, TraineeState]> = [
  ['draft', 'submit_for_trn', 'submitted_for_trn'],
  ['deferred', 'submit_for_trn', 'submitted_for_trn'],
  ['submitted_for_trn', 'receive_trn', 'trn_received'],
  ['deferred', 'receive_trn', 'trn_received'],
  ['trn_received', 'receive_trn', 'trn_received'],
  ['trn_received', 'recommend_for_award', 'recommended_for_award'],
  ['submitted_for_trn', 'withdraw', 'withdrawn'],
  ['trn_received', 'withdraw', 'withdrawn'],
  ['deferred', 'withdraw', 'withdrawn'],
  ['submitted_for_trn', 'defer', 'deferred'],
  ['trn_received', 'defer', 'deferred'],
  ['recommended_for_award', 'award', 'awarded'],
];
const events: TraineeEvent[] = ['submit_for_trn', 'receive_trn', 'recommend_for_award', 'withdraw', 'defer', 'award'];

describe('trainee state machine', () => {
  it('allows exactly the transitions of the real service', () => {
    for (const state of TRAINEE_STATES) {
      for (const event of events) {
        const expected = allowed.find(([from, e]) => from === state && e === event)?.[2];
        expect(nextState(state, event), `${state} --${event}-->`).toBe(expected);
      }
    }
  });

  it('makes every state reachable from draft', () => {
    const reached = new Set<TraineeState>(['draft']);
    let grew = true;
    while (grew) {
      grew = false;
      for (const state of [...reached]) {
        for (const event of events) {
          const to = nextState(state, event);
          if (to && !reached.has(to)) {
            reached.add(to);
            grew = true;
          }
        }
      }
    }
    expect([...reached].sort()).toEqual([...TRAINEE_STATES].sort());
  });

  it('locks recommended_for_award, withdrawn and awarded only from v2026.1', () => {
    for (const state of TRAINEE_STATES) {
      const locked = ['recommended_for_award', 'withdrawn', 'awarded'].includes(state);
      expect(isLocked(state, 'v2026.1')).toBe(locked);
      expect(isLocked(state, 'v2026.0')).toBe(false);
      expect(isLocked(state, 'v2025.0')).toBe(false);
      if (locked) {
        expect(() => assertTraineeModifiable({ state }, 'v2026.1')).toThrow(StateTransitionError);
      } else {
        expect(() => assertTraineeModifiable({ state }, 'v2026.1')).not.toThrow();
      }
      expect(() => assertTraineeModifiable({ state }, 'v2025.0')).not.toThrow();
    }
  });

  it('gives the real 422 StateTransitionError entry', () => {
    const error = new StateTransitionError();
    expect(error.status).toBe(422);
    expect(error.body).toEqual({
      errors: [
        {
          error: 'StateTransitionError',
          message: 'It\u2019s not possible to perform this action while the trainee is in its current state',
        },
      ],
    });
  });

  it('explains refused defer and recommendation with the real messages', () => {
    expect(deferStateError('trn_received')).toBeUndefined();
    expect(deferStateError('deferred')).toBe('state is invalid must be one of [submitted_for_trn, trn_received]');
    expect(recommendStateError('trn_received')).toBeUndefined();
    expect(recommendStateError('submitted_for_trn')).toBe('state must be selected as trn_received');
  });

  it('refuses withdrawal before ITT starts or from a closed state', () => {
    expect(() =>
      assertWithdrawable({ state: 'trn_received', itt_start_date: '2026-09-01' }, '2026-11-23'),
    ).not.toThrow();
    expect(() => assertWithdrawable({ state: 'deferred', itt_start_date: '2026-11-23' }, '2026-11-23')).not.toThrow();
    expect(() => assertWithdrawable({ state: 'trn_received', itt_start_date: '2026-11-24' }, '2026-11-23')).toThrow(
      StateTransitionError,
    );
    for (const state of ['draft', 'recommended_for_award', 'withdrawn', 'awarded']) {
      expect(() => assertWithdrawable({ state, itt_start_date: '2025-09-01' }, '2026-11-23')).toThrow(
        StateTransitionError,
      );
    }
  });

  it('gives a TRN without changing the state of deferred or withdrawn trainees', () => {
    expect(stateAfterTrnReceived('submitted_for_trn')).toBe('trn_received');
    expect(stateAfterTrnReceived('trn_received')).toBe('trn_received');
    expect(stateAfterTrnReceived('deferred')).toBe('deferred');
    expect(stateAfterTrnReceived('withdrawn')).toBe('withdrawn');
    expect(stateAfterTrnReceived('draft')).toBeUndefined();
    expect(stateAfterTrnReceived('awarded')).toBeUndefined();
  });
});
