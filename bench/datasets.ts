/** The data sets the query benchmark runs on. */
export const FSM_DATA_SET_ID = 'c5292537-e29a-4dba-a361-8363d2fb08f1';
/** Made by bench/generate-large.ts: spc_pupils_fsm_ethnicity_yrgp repeated over earlier years to 5 million rows. */
export const LARGE_DATA_SET_ID = 'b5000000-0000-4000-8000-000000000005';
