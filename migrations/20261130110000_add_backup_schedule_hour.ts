// The hour (UTC) of an environment's scheduled backups, as Heroku's `pg:backups:schedule --at`
// sets it. docs/api.md "Limits" fixes 03:00 UTC, which stays the default; the cron fires every
// hour and each environment is backed up at its own hour (domain/backups/maintenance.ts).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('backup_settings', (t) => {
    t.smallint('schedule_hour').notNullable().defaultTo(3);
  });
  await knex.raw(
    'alter table backup_settings add constraint backup_settings_schedule_hour_check check (schedule_hour between 0 and 23)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('backup_settings', (t) => {
    t.dropColumn('schedule_hour');
  });
}
