// Idempotent capture: a client may name its event (`event_id`, Sentry's 32 hex), and within an
// environment an id already accepted answers with the uid it got then and stores nothing new, so a
// client that retries after a dropped connection (the web process died after committing) never
// stores an event twice. The claim on the id and the inbox row are written by one statement, so
// neither exists without the other. Ids are kept 90 days (pruned daily).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('error_event_ids', (t) => {
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('event_id').notNullable();
    t.text('uid').notNullable();
    t.timestamp('accept_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['env_id', 'event_id']);
    t.index(['accept_time']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('error_event_ids');
}
