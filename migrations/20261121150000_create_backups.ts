// Backups: one row per backup object, restore and drill operations, per-environment retention,
// and application storage buckets. A backup row outlives its job: it is the user's record of
// what exists in the backup bucket, so pruning deletes the object first and the row after.
// A backup is `succeeded` only after its stored object was read back and found whole, so its row
// keeps what pg_dump wrote (uncompressed bytes and sha256: a restore checks the script against
// them before it commits) and the per-table figures found in it (a restore drill compares its
// scratch copy with them).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('backups', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('type').notNullable().checkIn(['daily', 'weekly', 'monthly', 'manual'], 'backups_type_check');
    // Why it ran: a cron slot, a user's request, or the safety copy a restore takes first.
    t.text('trigger').notNullable().checkIn(['schedule', 'manual', 'pre_restore'], 'backups_trigger_check');
    // The cron slot (UTC date) of a scheduled backup: one backup per env, type and slot.
    t.text('slot');
    t.text('state')
      .notNullable()
      .defaultTo('pending')
      .checkIn(['pending', 'running', 'succeeded', 'failed'], 'backups_state_check');
    t.text('bucket').notNullable();
    t.text('object_key').notNullable();
    t.bigInteger('size_bytes');
    t.bigInteger('gzip_bytes');
    t.text('sha256');
    t.integer('duration_ms');
    t.text('pg_version');
    t.text('pg_dump_version');
    t.text('key_id');
    t.text('wrapped_key');
    t.boolean('billable').notNullable().defaultTo(false);
    t.text('error');
    t.bigInteger('sql_bytes');
    t.text('sql_sha256');
    t.jsonb('table_stats');
    // The latest restore drill of this backup: when, and its verdict.
    t.timestamp('verified_time', { useTz: true });
    t.jsonb('verification');
    // Times a run of this backup was cut off (its worker killed or stopped); it runs again, up to 3.
    t.integer('interruptions').notNullable().defaultTo(0);
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('start_time', { useTz: true });
    t.timestamp('finish_time', { useTz: true });
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.unique(['env_id', 'type', 'slot']);
    t.index(['env_id', 'create_time']);
    t.index(['state', 'expire_time']);
  });
  // /readyz counts failed drills on every probe.
  await knex.raw(
    "create index backups_failed_drill on backups (env_id) where state = 'succeeded' and verification->>'result' = 'failed'",
  );

  await knex.schema.createTable('backup_operations', (t) => {
    t.text('id').primary();
    t.text('kind').notNullable().checkIn(['restore', 'drill'], 'backup_operations_kind_check');
    // The environment whose key asked for it (the source backup's) and the one it changes.
    t.text('requester_env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('backup_id').references('backups.id').onDelete('SET NULL');
    t.text('pre_backup_id').references('backups.id').onDelete('SET NULL');
    t.text('state')
      .notNullable()
      .defaultTo('pending')
      .checkIn(['pending', 'running', 'succeeded', 'failed'], 'backup_operations_state_check');
    t.text('phase');
    t.bigInteger('bytes_read').notNullable().defaultTo(0);
    t.bigInteger('bytes_total').notNullable().defaultTo(0);
    t.jsonb('error');
    // A restore's transaction id in its target, recorded before COMMIT is let through: what a
    // restore whose worker died is reconciled from (txid_status), rather than guessed.
    t.text('restore_xid');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finish_time', { useTz: true });
    t.index(['env_id', 'state']);
  });

  // Retention in days per type (docs/api.md "Limits"); a missing row means the defaults.
  await knex.schema.createTable('backup_settings', (t) => {
    t.text('env_id').primary().references('envs.id').onDelete('CASCADE');
    t.boolean('schedule_enabled').notNullable().defaultTo(true);
    t.integer('daily_days').notNullable().defaultTo(7);
    t.integer('weekly_days').notNullable().defaultTo(30);
    t.integer('monthly_days').notNullable().defaultTo(90);
    t.integer('manual_days').notNullable().defaultTo(90);
    // Restore drills of the latest backup; null: the mode's default (weekly for test
    // environments, off for live ones).
    t.text('drill_schedule').checkIn(['off', 'daily', 'weekly'], 'backup_settings_drill_schedule_check');
    t.timestamp('last_drill_time', { useTz: true });
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('storage_buckets', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('name').notNullable();
    // Each application bucket is its own S3 bucket (docs/api.md), so versioning is S3's own.
    t.text('s3_bucket').notNullable().unique();
    t.text('versioning')
      .notNullable()
      .defaultTo('disabled')
      .checkIn(['disabled', 'enabled'], 'storage_buckets_versioning_check');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['env_id', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('storage_buckets');
  await knex.schema.dropTable('backup_settings');
  await knex.schema.dropTable('backup_operations');
  await knex.schema.dropTable('backups');
}
