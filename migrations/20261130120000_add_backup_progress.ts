// A running backup's bytes stored so far, refreshed about once a second by its worker, so
// `cairn backups create` can show a progress bar with the rate (restores already report theirs in
// their operation).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('backups', (t) => {
    t.bigInteger('progress_bytes');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('backups', (t) => {
    t.dropColumn('progress_bytes');
  });
}
