// Error tracking's tables, as one migration (the unreleased steps that built them squashed; no
// data to carry, so no data migration and one stored form for everything).
//
// Intake has no table here: accepted events wait, sealed, in pg-boss's `errors.ingest` jobs
// (src/jobs.ts, docs/queues.md).
//
// Stored events. `error_events.body_deflated` is the scrubbed occurrence as read back, its JSON as a
// raw deflate stream (src/domain/observability/pipeline/event-body.ts says why and what it measured).
//
// Sealed and deflated bytes do not compress: their columns' storage is EXTERNAL, so Postgres does
// not spend time trying.
//
// Idempotent capture: within an environment, an `event_id` already accepted answers with the uid it
// got then (`error_event_ids`); the claim and the event's job are written in one transaction. Ids
// are kept 90 days (pruned daily).
//
// Source maps and minified files: one row per (environment, release, file), the file itself in the
// object store under its content hash.
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

  await knex.schema.createTable('error_groups', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('fingerprint').notNullable();
    t.text('title').notNullable();
    t.text('culprit').notNullable().defaultTo('');
    t.text('service_name').notNullable().defaultTo('');
    t.text('state')
      .notNullable()
      .defaultTo('unresolved')
      .checkIn(['unresolved', 'acknowledged', 'resolved'], 'error_groups_state_check');
    // Changes on every state change (triage, or a reopen by a new occurrence), not on every
    // occurrence: a busy group stays triageable.
    t.text('etag').notNullable();
    t.timestamp('first_seen_time', { useTz: true }).notNullable();
    t.timestamp('last_seen_time', { useTz: true }).notNullable();
    t.bigInteger('occurrence_count').notNullable().defaultTo(0);
    t.text('last_release').notNullable().defaultTo('');
    t.timestamp('resolve_time', { useTz: true });
    // Which frames (or which override) made the fingerprint, shown on the group.
    t.jsonb('grouping').notNullable().defaultTo('{}');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['env_id', 'fingerprint'], { indexName: 'error_groups_env_fingerprint_key' });
    t.index(['env_id', 'last_seen_time', 'id'], 'error_groups_env_last_seen_idx');
  });

  await knex.schema.createTable('error_events', (t) => {
    t.text('uid').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('group_id').notNullable().references('error_groups.id').onDelete('CASCADE');
    t.timestamp('event_time', { useTz: true }).notNullable();
    t.timestamp('receive_time', { useTz: true }).notNullable();
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('release').notNullable().defaultTo('');
    t.text('service_name').notNullable().defaultTo('');
    t.binary('body_deflated').notNullable();
    t.index(['group_id', 'event_time', 'uid'], 'error_events_group_time_idx');
  });
  await knex.raw('alter table error_events alter column body_deflated set storage external');

  for (const table of ['error_source_maps', 'error_minified_sources']) {
    await knex.schema.createTable(table, (t) => {
      t.text('id').primary();
      t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
      t.text('release').notNullable();
      t.text('file').notNullable();
      // `file` without scheme, host, query and fragment: the second way a frame matches (CONTRACT.md).
      t.text('file_path').notNullable();
      t.text('object_key').notNullable();
      t.bigInteger('size_bytes').notNullable();
      t.text('sha256').notNullable();
      t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
      t.unique(['env_id', 'release', 'file'], { indexName: `${table}_env_release_file_key` });
    });
  }

  await knex.schema.createTable('error_scrubbing_policies', (t) => {
    t.text('env_id').primary().references('envs.id').onDelete('CASCADE');
    t.jsonb('policy').notNullable();
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'error_scrubbing_policies',
    'error_minified_sources',
    'error_source_maps',
    'error_events',
    'error_groups',
    'error_event_ids',
  ]) {
    await knex.schema.dropTable(table);
  }
}
