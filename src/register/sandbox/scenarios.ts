/**
 * The sandbox's test scenarios: in the sandbox a trainee gets its TRN, and once recommended its award, by itself
 * after a delay (src/register/sandbox/simulator.ts), as the teacher record service would give them. A vendor asks for
 * the unhappy paths with the trainee's `provider_trainee_id`, as other government sandboxes take test scenarios:
 *
 * | `provider_trainee_id` starts with | TRN                             | award                          |
 * |-----------------------------------|---------------------------------|--------------------------------|
 * | `test-no-trn`                     | never comes                     | (cannot be recommended)        |
 * | `test-late-trn`                   | after the late delay            | as usual                       |
 * | `test-no-award`                   | as usual                        | never comes                    |
 * | `test-late-award`                 | as usual                        | after the late delay           |
 *
 * (case-insensitive; anything else: both as usual). docs/guides.md documents the same table.
 */
import type { Config } from '../../config.js';

export type SandboxStep = 'trn' | 'award';

export const SANDBOX_SCENARIOS = ['test-no-trn', 'test-late-trn', 'test-no-award', 'test-late-award'] as const;
export type SandboxScenario = (typeof SANDBOX_SCENARIOS)[number];

/** The delays of the simulated steps, from the configuration (REGISTER_SANDBOX_*). */
export interface SandboxSchedule {
  trnDelayMs: number;
  awardDelayMs: number;
  lateDelayMs: number;
}

/** The sandbox schedule of an instance, or undefined on a live one. */
export function sandboxSchedule(config: Config): SandboxSchedule | undefined {
  if (config.REGISTER_ENVIRONMENT !== 'sandbox') return undefined;
  return {
    trnDelayMs: config.REGISTER_SANDBOX_TRN_DELAY_MS,
    awardDelayMs: config.REGISTER_SANDBOX_AWARD_DELAY_MS,
    lateDelayMs: config.REGISTER_SANDBOX_LATE_DELAY_MS,
  };
}

/** The test scenario a trainee's `provider_trainee_id` asks for, if any. */
export function scenarioOf(providerTraineeId: string | null | undefined): SandboxScenario | undefined {
  if (typeof providerTraineeId !== 'string') return undefined;
  const id = providerTraineeId.trim().toLowerCase();
  return SANDBOX_SCENARIOS.find((scenario) => id.startsWith(scenario));
}

/** Whether the step never comes for this trainee. */
export function stepWithheld(step: SandboxStep, providerTraineeId: string | null | undefined): boolean {
  return scenarioOf(providerTraineeId) === `test-no-${step}`;
}

/**
 * When `step` falls due for a trainee written now (its create, its recommendation): null on a live instance and for a
 * step its scenario withholds, else now plus the step's delay (the late delay when its scenario asks for it).
 */
export function sandboxDueAt(
  schedule: SandboxSchedule | undefined,
  step: SandboxStep,
  providerTraineeId: string | null | undefined,
  now = Date.now(),
): Date | null {
  if (!schedule || stepWithheld(step, providerTraineeId)) return null;
  const late = scenarioOf(providerTraineeId) === `test-late-${step}`;
  return new Date(now + (late ? schedule.lateDelayMs : step === 'trn' ? schedule.trnDelayMs : schedule.awardDelayMs));
}
