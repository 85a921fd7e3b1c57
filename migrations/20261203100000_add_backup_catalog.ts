// A backup's catalog as pg_dump saw it (catalog.ts: per object, its facets, long ones as md5), for
// a drill to compare with the restored copy's; a table of its own, so that listing backups never
// reads it. And what a restore left out because the target lacks a role or the restoring role
// cannot act as it (role-filter.ts), for its operation's answer.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('backup_catalogs', (t) => {
    t.text('backup_id').primary().references('id').inTable('backups').onDelete('CASCADE');
    t.jsonb('catalog').notNullable();
  });
  await knex.schema.alterTable('backup_operations', (t) => {
    t.jsonb('skipped');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('backup_operations', (t) => {
    t.dropColumn('skipped');
  });
  await knex.schema.dropTable('backup_catalogs');
}
