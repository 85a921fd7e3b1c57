// A record of each backup deleted by request (DELETE /v1/backups/{id}): what it was, whether it was
// billable, when it was made and deleted. The day's count of manual backups (10 free, docs/api.md
// "Limits") includes them, so deleting backups does not make new free ones, and a billable backup
// stays on record after its object is gone.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('deleted_backups', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('type').notNullable();
    t.text('trigger').notNullable();
    t.boolean('billable').notNullable();
    t.bigInteger('size_bytes');
    t.timestamp('create_time', { useTz: true }).notNullable();
    t.timestamp('delete_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['env_id', 'create_time']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('deleted_backups');
}
