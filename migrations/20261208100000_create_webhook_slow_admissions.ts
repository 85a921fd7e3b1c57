// webhook_slow_admissions: the slow lane's attempts admitted to send (domain/webhooks/deliveries/
// batch.ts), one row per pg-boss job id, with its environment. An environment may have 2 admitted
// attempts whose job is still active; a check that finds its 2 places taken waits its turn. pg-boss
// checks the job group's limit per fetch only, so fetches at the same moment each took the last
// place (three workers held 5-7 attempts of one environment at once). A row whose job is no longer
// active holds no place; the environment's next check and the daily prune delete it.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_slow_admissions', (t) => {
    t.uuid('job_id').primary();
    t.text('env_id').notNullable();
    t.timestamp('admit_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['env_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_slow_admissions');
}
