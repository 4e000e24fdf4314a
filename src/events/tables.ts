/** Kysely table types of the change-event log (migrations 2026-11-25T1000-events, 2026-11-27T1900-event-inbox). */
import type { ColumnType, Generated } from 'kysely';

export type EventApi = 'statistics' | 'register';

export interface EventLogStateTable {
  singleton: Generated<boolean>;
  last_position: number;
  purged_through: number;
}

/** The columns an event has from its append on (in the inbox, then in the log). */
interface EventColumns {
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

export interface EventsTable extends EventColumns {
  position: number;
}

/** Appended events not yet given a position (the sequencer moves them into `events`, in `seq` order). */
export interface EventInboxTable extends EventColumns {
  seq: Generated<number>;
}

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface WebhookSubscriptionsTable {
  id: Generated<string>;
  api: EventApi;
  provider_id: number | null;
  environment: 'production' | 'sandbox' | null;
  /** Register subscriptions: the API version whose field names deliveries use. */
  api_version: string | null;
  url: string;
  /** Empty: every type. */
  event_types: string[];
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: NullableTimestamp;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  cursor: number;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  created_at: Generated<Date>;
  /** Statistics subscriptions: only this data set's events (null: every data set). */
  data_set_id: string | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  subscription_id: string;
  event_position: number;
  event_id: string;
  event_type: string;
  body: string;
  status: Generated<'pending' | 'succeeded' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  last_attempt_at: NullableTimestamp;
  last_status: number | null;
  last_error: string | null;
  created_at: Generated<Date>;
}

export interface EventTables {
  event_log_state: EventLogStateTable;
  events: EventsTable;
  event_inbox: EventInboxTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
