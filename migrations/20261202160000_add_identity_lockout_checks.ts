// The checks in flight of an identifier become a map of check id → expiry (epoch seconds) instead of
// a bare count. A count could only be dropped as a whole, once the row had been idle for a minute,
// so the reservations of a killed process stayed while traffic kept the row busy and held part of
// the identifier's ten checks for good. Each check now expires on its own, and settles by its id.
// `pending` stays until a later migration: web processes of the release before this one still
// read and write it while a deploy replaces them (expand, then contract), and nothing reads it now.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('identity_lockouts', (t) => {
    t.jsonb('checks').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('identity_lockouts', (t) => {
    t.dropColumn('checks');
  });
}
