// Backups: one row per backup object, restore operations, per-environment retention,
// and application storage buckets. A backup row outlives its job: it is the user's record of
// what exists in the backup bucket, so pruning deletes the object first and the row after.
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
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('start_time', { useTz: true });
    t.timestamp('finish_time', { useTz: true });
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.unique(['env_id', 'type', 'slot']);
    t.index(['env_id', 'create_time']);
    t.index(['state', 'expire_time']);
  });

  await knex.schema.createTable('backup_operations', (t) => {
    t.text('id').primary();
    t.text('kind').notNullable().checkIn(['restore'], 'backup_operations_kind_check');
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
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finish_time', { useTz: true });
    t.index(['env_id', 'state']);
  });

  // Retention in days per type (SPEC "Limits"); a missing row means the defaults.
  await knex.schema.createTable('backup_settings', (t) => {
    t.text('env_id').primary().references('envs.id').onDelete('CASCADE');
    t.boolean('schedule_enabled').notNullable().defaultTo(true);
    t.integer('daily_days').notNullable().defaultTo(7);
    t.integer('weekly_days').notNullable().defaultTo(30);
    t.integer('monthly_days').notNullable().defaultTo(90);
    t.integer('manual_days').notNullable().defaultTo(90);
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('storage_buckets', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('name').notNullable();
    // Each application bucket is its own S3 bucket (CONTRACT.md), so versioning is S3's own.
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
