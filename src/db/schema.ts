import type { EventTables } from '../events/tables.js';
import type { RegisterTables } from '../register/tables.js';
import type { StatisticsTables } from '../statistics/tables.js';

/** The whole database as Kysely sees it: each API contributes its own tables. */
export interface Database extends StatisticsTables, RegisterTables, EventTables {}
