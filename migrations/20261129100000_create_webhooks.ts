// Signed webhooks (docs/api.md "Webhooks", the Standard Webhooks specification).
//
// - webhook_endpoints: an environment's receivers. The signing secret is sealed with
//   CAIRN_ENCRYPTION_KEY (it must be recovered to sign), never stored in plaintext; after a
//   rotation the previous secret stays, sealed, until previous_secret_expire_time (24 hours).
//   failing_since marks the first failed attempt since the last success (or since a quiet spell
//   without attempts): an endpoint failing for 5 days is disabled with a reason.
// - webhook_messages: one row per event, written in the transaction of the action that caused it
//   (an outbox). Its body is the exact bytes every attempt sends; seq orders the messages about one
//   subject (the resource), so an endpoint gets them in the order the changes happened.
// - webhook_deliveries: a message for one endpoint. `waiting` while an earlier delivery about the
//   same subject to the same endpoint is unsettled; `pending` while attempts remain; `succeeded` or
//   `failed`. A redelivery is one more attempt (`one_shot`) that does not hold back later messages.
// - webhook_attempts: one row per attempt, kept with its delivery for 30 days.
// error_groups.reopen_xact: the transaction that last reopened the group for a new occurrence, so
// the ingest's one statement can tell which of its groups it reopened (error_group.reopened).
// Full-access secret keys (all eight scopes that existed before) gain the two webhook scopes, as a
// key made today without --scopes would have them.
import type { Knex } from 'knex';

const before = [
  'auth:read',
  'auth:write',
  'observability:read',
  'observability:write',
  'backups:read',
  'backups:write',
  'storage:read',
  'storage:write',
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.specificType('event_types', 'text[]').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('secret_sealed').notNullable();
    t.text('previous_secret_sealed');
    t.timestamp('previous_secret_expire_time', { useTz: true });
    t.text('state')
      .notNullable()
      .defaultTo('enabled')
      .checkIn(['enabled', 'disabled'], 'webhook_endpoints_state_check');
    t.text('disabled_reason');
    t.timestamp('failing_since', { useTz: true });
    t.timestamp('last_failure_time', { useTz: true });
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['env_id', 'id']);
  });
  await knex.schema.createTable('webhook_messages', (t) => {
    t.text('id').primary();
    t.bigIncrements('seq', { primaryKey: false });
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('event_type').notNullable();
    t.text('subject').notNullable();
    t.text('body').notNullable();
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['create_time']);
    // An environment's delete cascades here.
    t.index(['env_id']);
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.text('message_id').notNullable().references('webhook_messages.id').onDelete('CASCADE');
    t.text('env_id').notNullable();
    t.text('subject').notNullable();
    t.bigInteger('seq').notNullable();
    t.text('state')
      .notNullable()
      .checkIn(['waiting', 'pending', 'succeeded', 'failed'], 'webhook_deliveries_state_check');
    t.boolean('one_shot').notNullable().defaultTo(false);
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.timestamp('next_attempt_time', { useTz: true });
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['endpoint_id', 'message_id']);
    // The API's list (newest first) and a lane's unsettled deliveries in order.
    t.index(['endpoint_id', 'seq']);
    t.index(['message_id']);
    t.index(['create_time']);
  });
  await knex.raw(
    `create index webhook_deliveries_lane on webhook_deliveries (endpoint_id, subject, seq) where state in ('waiting', 'pending')`,
  );
  await knex.schema.createTable('webhook_attempts', (t) => {
    t.text('endpoint_id').notNullable();
    t.text('message_id').notNullable();
    t.integer('number').notNullable();
    t.timestamp('time', { useTz: true }).notNullable();
    t.integer('status_code');
    t.integer('duration_ms').notNullable();
    t.text('error');
    t.primary(['endpoint_id', 'message_id', 'number']);
    t.foreign(['endpoint_id', 'message_id'])
      .references(['endpoint_id', 'message_id'])
      .inTable('webhook_deliveries')
      .onDelete('CASCADE');
  });
  // A nullable column without a default changes only the catalog, but it needs the table's
  // ACCESS EXCLUSIVE lock for that moment: waiting behind a long ingest transaction for it would
  // queue every query of the table behind the wait, so the release gives up after 5 s instead
  // (and is run again).
  await knex.raw("set local lock_timeout = '5s'");
  await knex.raw('alter table error_groups add column reopen_xact xid8');
  await knex.raw(
    `update api_keys set scopes = scopes || array['webhooks:read', 'webhooks:write']
     where scopes @> ?::text[] and not scopes @> array['webhooks:read']`,
    [before],
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("update api_keys set scopes = array_remove(array_remove(scopes, 'webhooks:read'), 'webhooks:write')");
  await knex.raw('alter table error_groups drop column reopen_xact');
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_messages');
  await knex.schema.dropTable('webhook_endpoints');
}
