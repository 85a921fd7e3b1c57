// End users: an operator's lock, and a trigram index for finding users by part of their email.
//
// - end_users.locked_time: set while the operator has locked the user (docs/api.md "Identity",
//   "Locking"). A locked user cannot sign in by any method, and locking ended every session; null
//   is not locked. Unlike the sign-in lockout (failed passwords, 15 minutes), it lasts until unlocked.
// - end_users_email_trgm: a GIN trigram index (pg_trgm) on email_normalized, so `email_contains`
//   (a case-insensitive substring, LIKE '%…%') reads the index instead of every user of the
//   environment. pg_trgm is a trusted extension since PostgreSQL 13: a role with CREATE on the
//   database may create it without superuser, and Heroku Postgres allows it. Where it cannot be
//   created (not installed, or no CREATE privilege), the migration still succeeds without the index
//   and the search scans the environment's users: correct, only slower.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('end_users', (t) => {
    t.timestamp('locked_time', { useTz: true });
  });
  // A savepoint, so a refused CREATE EXTENSION leaves the migration's transaction usable.
  await knex.raw('savepoint trgm');
  try {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.raw('create index end_users_email_trgm on end_users using gin (email_normalized gin_trgm_ops)');
    await knex.raw('release savepoint trgm');
  } catch (err) {
    await knex.raw('rollback to savepoint trgm');
    console.warn(
      `end_users_email_trgm not created (pg_trgm unavailable: ${(err as Error).message}); email search scans`,
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists end_users_email_trgm');
  await knex.schema.alterTable('end_users', (t) => {
    t.dropColumn('locked_time');
  });
}
