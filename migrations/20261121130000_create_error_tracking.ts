// Error tracking's tables, as one migration (the unreleased steps that built them squashed; no
// data to carry, so no data migration and one stored form for everything).
//
// Intake has no table here: accepted events wait, sealed, in pg-boss's `errors.ingest` jobs
// (src/domain/errors/queues.ts, docs/queues.md).
//
// Stored events. `error_events.body_deflated` is the scrubbed occurrence as read back, its JSON as a
// raw deflate stream (src/domain/errors/pipeline/event-codec.ts says why and what it measured).
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

  // Partitioned by day of receipt, so that retention drops whole days instead of deleting rows
  // (a DELETE of a million rows costs minutes and leaves the table to vacuum; DROP TABLE of a day's
  // partition costs milliseconds whatever it holds). The key therefore includes receive_time; a
  // uid's receive_time follows from the uid (its ULID is the moment the event was accepted), so a
  // read by uid still touches one or two partitions.
  await knex.raw(`
    create table error_events (
      uid text not null,
      env_id text not null references envs(id) on delete cascade,
      group_id text not null references error_groups(id) on delete cascade,
      event_time timestamptz not null,
      receive_time timestamptz not null,
      create_time timestamptz not null default now(),
      release text not null default '',
      service_name text not null default '',
      body_deflated bytea not null,
      primary key (uid, receive_time)
    ) partition by range (receive_time)`);
  await knex.raw('create index error_events_group_time_idx on error_events (group_id, event_time, uid)');
  // An environment's own retention, shorter than another's, deletes its rows by this index.
  await knex.raw('create index error_events_env_receive_idx on error_events (env_id, receive_time)');
  // Day partitions from `first` for `days` days, each named by its day; existing ones are left as
  // they are. Called at release and by the daily prune, a fortnight ahead, so an insert always finds
  // its day. Sealed and deflated bytes do not compress, so each partition's body is EXTERNAL.
  await knex.raw(`
    create function cairn_error_event_partitions(first date, days int) returns void
    language plpgsql as $$
    declare
      d date;
      part text;
    begin
      -- One caller at a time: two releases creating the same day would collide.
      perform pg_advisory_xact_lock(hashtext('cairn_error_event_partitions'));
      for i in 0 .. days - 1 loop
        d := first + i;
        part := 'error_events_' || to_char(d, 'YYYYMMDD');
        if to_regclass(part) is null then
          execute format('create table %I partition of error_events for values from (%L) to (%L)',
            part, d::timestamp at time zone 'UTC', (d + 1)::timestamp at time zone 'UTC');
          execute format('alter table %I alter column body_deflated set storage external', part);
        end if;
      end loop;
    end $$`);
  await knex.raw("select cairn_error_event_partitions((now() at time zone 'UTC')::date - 1, 16)");

  // Per environment: how long events are kept, and how many may wait unprocessed before captures
  // are refused (docs/api.md "Retention", "Backpressure"). No row: the defaults.
  // Events accepted and not yet settled by a worker, per environment: what `max_pending` bounds.
  // Raised in the transaction that queues the events, lowered in the one that settles their jobs.
  await knex.schema.createTable('error_intake_pending', (t) => {
    t.text('env_id').primary().references('envs.id').onDelete('CASCADE');
    t.bigInteger('pending').notNullable().defaultTo(0);
  });

  await knex.schema.createTable('error_settings', (t) => {
    t.text('env_id').primary().references('envs.id').onDelete('CASCADE');
    t.integer('retention_days').notNullable().defaultTo(90);
    t.bigInteger('max_pending').notNullable().defaultTo(100_000);
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  for (const table of ['error_source_maps', 'error_minified_sources']) {
    await knex.schema.createTable(table, (t) => {
      t.text('id').primary();
      t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
      t.text('release').notNullable();
      t.text('file').notNullable();
      // `file` without scheme, host, query and fragment: the second way a frame matches (docs/api.md).
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
  await knex.raw('drop function if exists cairn_error_event_partitions(date, int)');
  for (const table of [
    'error_settings',
    'error_intake_pending',
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
