// Events stored before the store kept their groups' facets (create_error_group_facets) are added
// to them by the `errors.backfill-facets` job (src/domain/errors/facets/backfill.ts), once:
//
// - `error_events.facets_kept`: whether the store counted the event in its group's tags and users.
//   The store sets it; every event stored before, or by a worker still running the earlier code
//   during a deploy, has the default, false. That, not a time, is the boundary between the two:
//   an event accepted before the release and stored after it (a queue's backlog) has an old
//   receive time and is already counted, and one an old worker stores after the release is not.
//   A column with a constant default is added without rewriting the table (Postgres 11+).
// - `error_facets_backfill`: the job's one row, its cursor: the (env_id, receive_time, uid) of the
//   last event it added (the order of error_events' (env_id, receive_time) index), moved in the transaction that adds the next ones, so a job killed midway
//   resumes after what it committed and counts nothing twice; `done_time` once it found no more.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table error_events add column facets_kept boolean not null default false');
  await knex.schema.createTable('error_facets_backfill', (t) => {
    t.text('id').primary();
    t.text('env_id');
    t.timestamp('receive_time', { useTz: true });
    t.text('uid');
    t.bigInteger('events').notNullable().defaultTo(0);
    t.timestamp('done_time', { useTz: true });
  });
  await knex('error_facets_backfill').insert({ id: 'facets' });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('error_facets_backfill');
  await knex.raw('alter table error_events drop column facets_kept');
}
