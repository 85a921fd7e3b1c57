// Minified files per release (CONTRACT.md "Minified files"): the text of a bundle as served, so that
// a frame in a function the source map names nothing for gets the enclosing function's name from
// the minified code, mapped through the map (Sentry's scope-based naming). Kept like source maps: the
// text in the object store under its content hash, the metadata here.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('error_minified_sources', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('release').notNullable();
    t.text('file').notNullable();
    t.text('file_path').notNullable();
    t.text('object_key').notNullable();
    t.bigInteger('size_bytes').notNullable();
    t.text('sha256').notNullable();
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['env_id', 'release', 'file'], { indexName: 'error_minified_sources_env_release_file_key' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('error_minified_sources');
}
