// One-use console sign-in links (docs/api.md "Console"): `cairn console` (a secret key, whose scopes
// the session gets) and `cairn admin console-link` / `npm start` (the operator: every scope) make
// one, valid 5 minutes. The row keeps the token's SHA-256 (docs/conventions.md "Secrets"), never the token; using it
// stamps use_time in the statement that checks it, so it opens one session at most.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('console_links', (t) => {
    t.text('id').primary();
    t.binary('token_hash').notNullable().unique();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('key_id').references('api_keys.id').onDelete('CASCADE');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.timestamp('use_time', { useTz: true });
    t.index(['env_id']);
    t.index(['key_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('console_links');
}
