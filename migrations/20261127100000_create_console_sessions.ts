// The console's sessions (docs/api.md "Console"): a browser signed in with a secret key holds only a
// random session token in a cookie; the row keeps its SHA-256 (docs/conventions.md "Secrets"), the environment and
// the key it was opened with, whose scopes it has and whose revocation ends it (a deleted key
// takes its sessions along). A session opened without a key (an operator's sign-in link) has every scope.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('console_sessions', (t) => {
    t.text('id').primary();
    t.binary('token_hash').notNullable().unique();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('key_id').references('api_keys.id').onDelete('CASCADE');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.timestamp('end_time', { useTz: true });
    t.index(['env_id']);
    t.index(['key_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('console_sessions');
}
