// Which lane an endpoint's attempts wait in (src/domain/webhooks/outbox/emit.ts): `slow` until an attempt
// answers 2xx within a second, and again after any attempt that fails or takes longer. New and
// existing endpoints start slow and prove themselves with their first quick success.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.boolean('slow').notNullable().defaultTo(true);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('slow');
  });
}
