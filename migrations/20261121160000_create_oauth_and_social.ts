// OAuth clients registered by the operator and the device authorization grant
// (RFC 8628), social sign-in provider settings per environment, the server-side transactions of
// social sign-ins (keyed by a hash of `state`, bound to one provider: RFC 9700 §4.4 mix-up
// defence), and the provider identities linked to end users. Device codes and states are stored
// only as SHA-256; provider client secrets and PKCE verifiers are sealed with the service key.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_clients', (t) => {
    t.text('id').primary(); // the public client_id
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.specificType('grant_types', 'text[]').notNullable();
    t.specificType('scopes', 'text[]').notNullable().defaultTo('{}');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoke_time', { useTz: true });
    t.index(['env_id']);
  });

  await knex.schema.createTable('device_authorizations', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('client_id').notNullable().references('oauth_clients.id').onDelete('CASCADE');
    t.binary('device_code_hash').notNullable().unique();
    // Normalised, without the dash: BCDFGHJK. Short-lived and useless without the user's approval.
    t.text('user_code').notNullable();
    t.specificType('scopes', 'text[]').notNullable().defaultTo('{}');
    t.text('state')
      .notNullable()
      .defaultTo('pending')
      .checkIn(['pending', 'approved', 'denied', 'redeemed'], 'device_authorizations_state_check');
    t.text('end_user_id').references('end_users.id').onDelete('CASCADE');
    t.integer('interval_seconds').notNullable();
    t.timestamp('last_poll_time', { useTz: true });
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.timestamp('decide_time', { useTz: true });
    t.timestamp('redeem_time', { useTz: true });
    t.index(['expire_time']);
  });
  // A user code names one pending request across the service: the /device page has no other key.
  await knex.raw(
    `create unique index device_authorizations_pending_user_code on device_authorizations (user_code) where state = 'pending'`,
  );

  await knex.schema.createTable('social_providers', (t) => {
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('provider').notNullable().checkIn(['google', 'github', 'apple'], 'social_providers_provider_check');
    t.boolean('enabled').notNullable().defaultTo(true);
    // Null client_id: Google on the service's shared client (CAIRN_GOOGLE_CLIENT_ID).
    t.text('client_id');
    t.text('client_secret_sealed');
    t.text('apple_team_id');
    t.text('apple_key_id');
    t.text('apple_private_key_sealed');
    // Overrides of the provider's well-known addresses (tests, GitHub Enterprise).
    t.text('issuer');
    t.text('authorization_endpoint');
    t.text('token_endpoint');
    t.text('api_base_url');
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['env_id', 'provider']);
  });

  await knex.schema.createTable('social_transactions', (t) => {
    t.binary('state_hash').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('nonce').notNullable();
    t.text('code_verifier_sealed').notNullable();
    t.text('redirect_url').notNullable();
    t.text('session_mode').notNullable();
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.index(['expire_time']);
  });

  await knex.schema.createTable('end_user_identities', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    // Set null when the user is deleted: the row stays as a tombstone, so that provider account
    // cannot sign in again and come back as a new user.
    t.text('end_user_id').references('end_users.id').onDelete('SET NULL');
    t.text('provider').notNullable();
    t.text('subject').notNullable();
    t.text('email');
    t.boolean('email_verified').notNullable().defaultTo(false);
    t.text('display_name');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_sign_in_time', { useTz: true });
    t.unique(['env_id', 'provider', 'subject'], { indexName: 'end_user_identities_subject_unique' });
    t.index(['end_user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'end_user_identities',
    'social_transactions',
    'social_providers',
    'device_authorizations',
    'oauth_clients',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
