// How many attempts in a row a slow-lane endpoint has answered 2xx within a second
// (src/domain/webhooks/deliveries/lanes.ts): it moves back to the fast lane, its queued attempts with it, at
// the third, and any failed or slow attempt sets the count back to 0.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.smallint('quick_successes').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('quick_successes');
  });
}
