/** The data sets the query benchmark runs on. */
export const FSM_DATA_SET_ID = 'c5292537-e29a-4dba-a361-8363d2fb08f1';
/** Made by bench/generate-large.ts: spc_pupils_fsm_ethnicity_yrgp repeated over earlier years to 5 million rows. */
export const LARGE_DATA_SET_ID = 'b5000000-0000-4000-8000-000000000005';

/** The same order for the same items every run (a fixed-seed Fisher–Yates), so runs compare. */
export function shuffle<T>(items: T[], seed = 42): T[] {
  const result = [...items];
  let state = seed;
  for (let i = result.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const j = state % (i + 1);
    [result[i], result[j]] = [result[j]!, result[i]!];
  }
  return result;
}
