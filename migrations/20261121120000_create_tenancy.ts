// Tenancy: orgs own projects, projects own environments (test or live), and every API key belongs
// to exactly one environment. Keys are stored only as SHA-256 of the token (docs/conventions.md "Secrets"); the
// plaintext is shown once, at creation.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('orgs', (t) => {
    t.text('id').primary();
    t.text('slug').notNullable().unique();
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('projects', (t) => {
    t.text('id').primary();
    t.text('org_id').notNullable().references('orgs.id').onDelete('CASCADE');
    t.text('slug').notNullable();
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['org_id', 'slug']);
  });
  await knex.schema.createTable('envs', (t) => {
    t.text('id').primary();
    t.text('project_id').notNullable().references('projects.id').onDelete('CASCADE');
    t.text('slug').notNullable();
    t.text('name').notNullable().unique();
    t.text('mode').notNullable().checkIn(['test', 'live'], 'envs_mode_check');
    // The application's own database URL (backups), encrypted with the service key.
    t.text('database_url_enc');
    t.jsonb('settings').notNullable().defaultTo('{}');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['project_id', 'slug']);
  });
  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('kind').notNullable().checkIn(['publishable', 'secret'], 'api_keys_kind_check');
    t.binary('token_hash').notNullable().unique();
    // A recognisable, non-secret hint such as "cairn_sk_test_…x7Qa" for lists.
    t.text('hint').notNullable();
    t.specificType('scopes', 'text[]').notNullable().defaultTo('{}');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoke_time', { useTz: true });
    t.index(['env_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('envs');
  await knex.schema.dropTable('projects');
  await knex.schema.dropTable('orgs');
}
