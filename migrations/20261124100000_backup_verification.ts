// Backups that are proven, restores that tell the truth, and interrupted backups run again. A backup is `succeeded` only after its stored object was read back and
// found whole, so its row keeps what pg_dump wrote (uncompressed bytes and sha256: a restore
// checks the script against them before it commits) and the per-table figures found in it (a
// restore drill compares its scratch copy with them). Drills run per environment on a schedule and
// are recorded on the backup they restored; an operation row follows each drill as it follows a
// restore. Rows of backups taken before this migration keep nulls: a restore of them checks only
// the closing line, and a drill of them compares row counts and checksums it cannot find and says so.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('backups', (t) => {
    t.bigInteger('sql_bytes');
    t.text('sql_sha256');
    t.jsonb('table_stats');
    t.timestamp('verified_time', { useTz: true });
    t.jsonb('verification');
    // Times a run of this backup was cut off (its worker killed or stopped); it runs again, up to 3.
    t.integer('interruptions').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('backup_settings', (t) => {
    // null: the mode's default (weekly for test environments, off for live ones).
    t.text('drill_schedule').checkIn(['off', 'daily', 'weekly'], 'backup_settings_drill_schedule_check');
    t.timestamp('last_drill_time', { useTz: true });
  });
  await knex.raw('alter table backup_operations drop constraint backup_operations_kind_check');
  await knex.raw(
    "alter table backup_operations add constraint backup_operations_kind_check check (kind in ('restore', 'drill'))",
  );
  // A restore's transaction id in its target, recorded before COMMIT is let through: what a
  // restore whose worker died is reconciled from (txid_status), rather than guessed.
  await knex.schema.alterTable('backup_operations', (t) => {
    t.text('restore_xid');
  });
  // /readyz counts failed drills on every probe.
  await knex.raw(
    "create index backups_failed_drill on backups (env_id) where state = 'succeeded' and verification->>'result' = 'failed'",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index backups_failed_drill');
  await knex('backup_operations').where({ kind: 'drill' }).delete();
  await knex.schema.alterTable('backup_operations', (t) => {
    t.dropColumn('restore_xid');
  });
  await knex.raw('alter table backup_operations drop constraint backup_operations_kind_check');
  await knex.raw(
    "alter table backup_operations add constraint backup_operations_kind_check check (kind in ('restore'))",
  );
  await knex.schema.alterTable('backup_settings', (t) => {
    t.dropColumn('drill_schedule');
    t.dropColumn('last_drill_time');
  });
  await knex.schema.alterTable('backups', (t) => {
    t.dropColumn('sql_bytes');
    t.dropColumn('sql_sha256');
    t.dropColumn('table_stats');
    t.dropColumn('verified_time');
    t.dropColumn('verification');
    t.dropColumn('interruptions');
  });
}
