// What an operator needs to see of a console session to decide whether to end it (`cairn admin
// console-sessions list|revoke`): how it was opened (`link`: a one-use sign-in link; `key`: a
// secret key typed into the sign-in page) and when it was last used. Existing sessions opened
// without a key came from an operator's link; the others are taken as key sign-ins, since links
// made with a key (`cairn console`) left no mark on them before this column. Last use starts at
// creation.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('console_sessions', (t) => {
    t.text('opened_by').notNullable().defaultTo('key');
    t.timestamp('last_use_time', { useTz: true });
  });
  await knex('console_sessions').whereNull('key_id').update({ opened_by: 'link' });
  await knex('console_sessions').update({ last_use_time: knex.ref('create_time') });
  await knex.raw(`alter table console_sessions alter column opened_by drop default`);
  await knex.raw(`alter table console_sessions alter column last_use_time set not null`);
  await knex.raw(`alter table console_sessions alter column last_use_time set default now()`);
  await knex.raw(
    `alter table console_sessions add constraint console_sessions_opened_by_check check (opened_by in ('link', 'key'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('console_sessions', (t) => {
    t.dropColumn('opened_by');
    t.dropColumn('last_use_time');
  });
}
