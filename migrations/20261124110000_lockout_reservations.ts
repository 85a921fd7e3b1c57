// Lockout reservations: a sign-in reserves its password check before hashing (`pending`), so
// concurrent guesses across web processes cannot all pass the lockout before any failure is
// counted. `failures` keeps counting completed failed checks; at most `threshold` checks, failed
// and pending together, run per identifier until a success or the lock's end.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('identity_lockouts', (t) => {
    t.integer('pending').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('identity_lockouts', (t) => {
    t.dropColumn('pending');
  });
}
