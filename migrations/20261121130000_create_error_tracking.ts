// Error tracking. Captures land in `error_event_inbox` in the request's transaction, next
// to their pg-boss job, so an accepted event survives any crash; the worker moves each one, scrubbed,
// into `error_events` and deletes its inbox row in one transaction, which is what makes a re-run job
// store nothing twice. Raw payloads live only in the inbox (never in job data, which pg-boss keeps
// for days), and only until processed.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('error_event_inbox', (t) => {
    t.text('uid').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.timestamp('receive_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.jsonb('payload').notNullable();
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
    // The scrubbed occurrence as read back (exception, frames, breadcrumbs, tags, scrub counts).
    t.jsonb('body').notNullable();
    t.index(['group_id', 'event_time', 'uid'], 'error_events_group_time_idx');
  });

  await knex.schema.createTable('error_source_maps', (t) => {
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
    t.unique(['env_id', 'release', 'file'], { indexName: 'error_source_maps_env_release_file_key' });
  });

  await knex.schema.createTable('error_scrubbing_policies', (t) => {
    t.text('env_id').primary().references('envs.id').onDelete('CASCADE');
    t.jsonb('policy').notNullable();
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('error_scrubbing_policies');
  await knex.schema.dropTable('error_source_maps');
  await knex.schema.dropTable('error_events');
  await knex.schema.dropTable('error_groups');
  await knex.schema.dropTable('error_event_inbox');
}
