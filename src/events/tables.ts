/** Kysely table types of the change-event log (migration 2026-11-25T1000-events). */
import type { ColumnType, Generated } from 'kysely';

export type EventApi = 'statistics' | 'register';

export interface EventLogStateTable {
  singleton: Generated<boolean>;
  last_position: number;
  purged_through: number;
}

export interface EventsTable {
  position: number;
  id: Generated<string>;
  api: EventApi;
  type: string;
  occurred_at: ColumnType<Date, Date | string | undefined, never>;
  provider_id: number | null;
  environment: 'production' | 'sandbox' | null;
  resource_type: string;
  resource_id: string;
  parent_id: string | null;
  payload: ColumnType<Record<string, unknown>, string, never>;
}

export interface EventTables {
  event_log_state: EventLogStateTable;
  events: EventsTable;
}
