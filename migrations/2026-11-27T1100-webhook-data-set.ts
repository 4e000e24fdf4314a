import { sql, type Kysely } from 'kysely';

/**
 * A statistics webhook subscription may follow one data set (`npm run stats-admin -- webhooks add --data-set <id>`):
 * it then receives the events of that data set and of its versions only. Register subscriptions have none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE webhook_subscriptions
      ADD COLUMN data_set_id uuid REFERENCES data_sets (id),
      ADD CONSTRAINT webhook_subscriptions_data_set_check CHECK (data_set_id IS NULL OR api = 'statistics')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_subscriptions DROP COLUMN data_set_id`.execute(db);
}
