// Occurrences per group per hour of receipt, kept by the worker's store in the statement that
// stores the events (intake/queries.ts `store`), so the console's charts read at most 24 rows per
// group and day and never scan events (docs/api.md "Console"). Hours of receipt, not of the
// events' own times: a client's clock cannot scatter a group's chart or create rows in far hours.
// The daily prune deletes hours older than the environment's retention; a deleted group takes its
// hours along. Existing events are counted here once.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('error_group_hours', (t) => {
    t.text('group_id').notNullable().references('error_groups.id').onDelete('CASCADE');
    t.text('env_id').notNullable();
    t.timestamp('hour', { useTz: true }).notNullable();
    t.integer('count').notNullable();
    t.primary(['group_id', 'hour']);
    t.index(['env_id', 'hour']);
  });
  await knex.raw(
    `insert into error_group_hours (group_id, env_id, hour, count)
     select group_id, env_id, date_trunc('hour', receive_time, 'UTC'), count(*) from error_events group by 1, 2, 3`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('error_group_hours');
}
