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
//
// Outside a transaction, so the index is built CONCURRENTLY: a plain CREATE INDEX would hold off
// every write to end_users (each sign-in stamps last_sign_in_time) for the build, about 70 s for
// 500,000 users on a busy 2-core machine. Each step may therefore run again after an interrupted
// attempt: the column is added if missing, and an invalid index a failed build left is dropped first.
import type { Knex } from 'knex';

export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  // Nullable without a default: only the catalog changes, no rewrite of the table.
  await knex.raw('alter table end_users add column if not exists locked_time timestamptz');
  try {
    await knex.raw('create extension if not exists pg_trgm');
  } catch (err) {
    console.warn(
      `pg_trgm unavailable (${(err as Error).message}): end_users_email_trgm not created; email search scans`,
    );
    return;
  }
  await knex.raw('drop index concurrently if exists end_users_email_trgm');
  await knex.raw(
    'create index concurrently end_users_email_trgm on end_users using gin (email_normalized gin_trgm_ops)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index concurrently if exists end_users_email_trgm');
  await knex.raw('alter table end_users drop column if exists locked_time');
}
