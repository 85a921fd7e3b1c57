// Each outbox mail names the environment it was sent for, so `cairn admin outbox list --env` can
// show a test environment's mails (a newcomer's verification link) and never a live one's. Rows
// written before stay without one (pruned within 7 days).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.text('env_id').references('envs.id').onDelete('CASCADE');
    t.index(['env_id', 'create_time']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.dropIndex(['env_id', 'create_time']);
    t.dropColumn('env_id');
  });
}
