// What search, sort and the group page read about a group's events without opening them (the
// bodies are deflated: a scan of a million would take seconds), kept by the worker's store in the
// transaction that stores the events (src/domain/errors/intake/queries.ts):
//
// - `error_group_tags`: per group, each tag key and value its events carried, with how many
//   events carried it. The event's own `release` and `level` are tags of those names, as Sentry
//   shows them (a client's tag of the same name gives way to them). Tag filters (`browser:Chrome`)
//   and `release:`/`level:` read it by (env_id, key, value); the group page's facets by group.
// - `error_group_users`: per group, each distinct user of its events, named by the first of id,
//   email, username and IP address the event gave (Sentry's order for the `user` tag). Its rows
//   are the group's `user_count`; `user:` matches its id or email.
// - `error_groups.first_release`: the release of the group's first event, for `first_release:`.
//
// The daily prune deletes tag and user rows not seen within the environment's retention, as it
// deletes the events. Existing events' tags and users are added by a job after release
// (docs/api.md "Search"); `first_release` of existing groups comes from their stored events here.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('error_groups', (t) => {
    t.text('first_release').notNullable().defaultTo('');
    t.integer('user_count').notNullable().defaultTo(0);
    // One per sort order (the last-seen one exists), each ending in id for keyset paging.
    t.index(['env_id', 'first_seen_time', 'id'], 'error_groups_env_first_seen_idx');
    t.index(['env_id', 'occurrence_count', 'id'], 'error_groups_env_events_idx');
    t.index(['env_id', 'user_count', 'id'], 'error_groups_env_users_idx');
  });
  await knex.raw(`
    update error_groups g set first_release = f.release
      from (select distinct on (group_id) group_id, release from error_events
            order by group_id, event_time, uid) f
     where f.group_id = g.id and f.release <> ''`);

  await knex.schema.createTable('error_group_tags', (t) => {
    t.text('group_id').notNullable().references('error_groups.id').onDelete('CASCADE');
    t.text('env_id').notNullable();
    t.text('key').notNullable();
    t.text('value').notNullable();
    t.bigInteger('count').notNullable();
    t.timestamp('last_seen_time', { useTz: true }).notNullable();
    t.primary(['group_id', 'key', 'value']);
    t.index(['env_id', 'key', 'value', 'group_id'], 'error_group_tags_env_key_value_idx');
    t.index(['env_id', 'last_seen_time'], 'error_group_tags_env_last_seen_idx');
  });

  await knex.schema.createTable('error_group_users', (t) => {
    t.text('group_id').notNullable().references('error_groups.id').onDelete('CASCADE');
    t.text('env_id').notNullable();
    // `id:42`, `email:a@b.c`, `username:ada` or `ip:127.0.0.1`: the first the event gave.
    t.text('user_key').notNullable();
    t.text('user_id');
    t.text('email');
    t.text('username');
    t.bigInteger('count').notNullable();
    t.timestamp('first_seen_time', { useTz: true }).notNullable();
    t.timestamp('last_seen_time', { useTz: true }).notNullable();
    t.primary(['group_id', 'user_key']);
    t.index(['env_id', 'last_seen_time'], 'error_group_users_env_last_seen_idx');
  });
  await knex.raw(
    'create index error_group_users_env_user_id_idx on error_group_users (env_id, user_id, group_id) where user_id is not null',
  );
  await knex.raw(
    'create index error_group_users_env_email_idx on error_group_users (env_id, lower(email), group_id) where email is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('error_group_users');
  await knex.schema.dropTable('error_group_tags');
  await knex.schema.alterTable('error_groups', (t) => {
    t.dropIndex([], 'error_groups_env_users_idx');
    t.dropIndex([], 'error_groups_env_events_idx');
    t.dropIndex([], 'error_groups_env_first_seen_idx');
    t.dropColumn('user_count');
    t.dropColumn('first_release');
  });
}
