// Error tracking's tables, as one migration (the unreleased steps that built them squashed; no
// data to carry, so no data migration and one stored form for everything).
//
// Intake. A capture is one INSERT into `error_event_inbox`, whose row is the event's whole
// acceptance: the inbox is the workers' queue (no pg-boss job per event). Workers claim rows in
// batches under a lease (`lease_until`, SQS's visibility timeout); a worker killed mid-batch leaves
// its rows leased and they are claimed again once the lease runs out, while storing stays
// idempotent on the uid, so an accepted event is stored exactly once. `attempts` counts claims, so
// an event that keeps failing (or keeps killing its worker) ends in `error_event_dead` instead of
// looping. A statement-level trigger NOTIFYs the workers once per INSERT statement (one per
// request, not one per event), so an idle worker wakes at once instead of polling.
//
// Secrets at rest. A captured event is raw and unscrubbed until a worker processes it, so the
// inbox and the dead letters hold it only sealed (`payload_sealed`: the event's JSON, deflated,
// then AES-256-GCM with the service key, bound to its row; src/domain/observability/intake/sealed-payload.ts),
// with `release` in plain beside it (not a secret: stored in plain on the event anyway), which the
// workers' claim needs before opening anything. Dead letters are pruned by age, hence the index on
// `dead_time`.
//
// Stored events. `error_events.body_deflated` is the scrubbed occurrence as read back, its JSON as a
// raw deflate stream (src/domain/observability/pipeline/event-body.ts says why and what it measured).
//
// Sealed and deflated bytes do not compress: their columns' storage is EXTERNAL, so Postgres does
// not spend time trying.
//
// Idempotent capture: within an environment, an `event_id` already accepted answers with the uid it
// got then (`error_event_ids`); the claim and the inbox row are written by one statement. Ids are
// kept 90 days (pruned daily).
//
// Source maps and minified files: one row per (environment, release, file), the file itself in the
// object store under its content hash.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('error_event_inbox', (t) => {
    t.text('uid').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.timestamp('receive_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('attempts').notNullable().defaultTo(0);
    // Null: claimable now. In the future: claimed by a worker (or waiting out a retry delay).
    t.timestamp('lease_until', { useTz: true });
    t.text('last_error');
    t.text('release');
    t.text('payload_sealed').notNullable();
  });
  await knex.schema.createTable('error_event_dead', (t) => {
    t.text('uid').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.timestamp('receive_time', { useTz: true }).notNullable();
    t.timestamp('dead_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('attempts').notNullable();
    t.text('last_error');
    t.text('release');
    t.text('payload_sealed').notNullable();
    t.index(['dead_time'], 'error_event_dead_dead_time_idx');
  });
  for (const table of ['error_event_inbox', 'error_event_dead']) {
    await knex.raw(`alter table ${table} alter column payload_sealed set storage external`);
  }
  await knex.raw(`
    create function error_event_inbox_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('cairn_error_inbox', '');
      return null;
    end $$`);
  await knex.raw(`
    create trigger error_event_inbox_notify after insert on error_event_inbox
    for each statement execute function error_event_inbox_notify()`);

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
  await knex.raw('drop trigger if exists error_event_inbox_notify on error_event_inbox');
  await knex.raw('drop function if exists error_event_inbox_notify()');
  await knex.schema.dropTable('error_event_dead');
  await knex.schema.dropTable('error_event_inbox');
}
