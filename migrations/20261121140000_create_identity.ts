// End-user identity: users per environment, sessions and one-use tickets stored only as
// SHA-256 of the token (docs/conventions.md "Secrets"), emailed links, TOTP factors with the last accepted step
// (RFC 6238 §5.2), hashed recovery codes, sign-in history, lockout counters and per-IP limits.
// Passwords only ever reach a table as argon2id PHC strings; sign-ups waiting for the worker keep
// the password sealed with the service key in `identity_pending_signups`, deleted when the job ends.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('end_users', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('email').notNullable();
    // Lower-cased and trimmed: one account per address whatever its case (RFC 5321 §2.4 lets the
    // local part be case-sensitive, but no real provider is, and users expect it).
    t.text('email_normalized').notNullable();
    t.text('password_hash');
    t.timestamp('email_verified_time', { useTz: true });
    t.timestamp('last_sign_in_time', { useTz: true });
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['env_id', 'email_normalized'], { indexName: 'end_users_env_email_unique' });
  });

  await knex.schema.createTable('identity_pending_signups', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('email').notNullable();
    // Null once the worker has hashed it: the sealed password lives no longer than the job.
    t.text('password_sealed');
    t.text('redirect_url');
    // What the worker decided ('created', 'exists', 'breached'), so a retried job mails the same.
    t.text('outcome');
    t.text('end_user_id');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('end_user_sessions', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('end_user_id').notNullable().references('end_users.id').onDelete('CASCADE');
    t.binary('token_hash').notNullable().unique();
    t.text('method').notNullable();
    t.text('ip');
    t.text('user_agent');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_active_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('idle_seconds').notNullable();
    t.timestamp('idle_expire_time', { useTz: true }).notNullable();
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.timestamp('revoke_time', { useTz: true });
    t.index(['end_user_id', 'create_time']);
    t.index(['expire_time']);
  });

  await knex.schema.createTable('end_user_tickets', (t) => {
    t.binary('token_hash').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('end_user_id').notNullable().references('end_users.id').onDelete('CASCADE');
    t.text('method').notNullable();
    t.text('ip');
    t.text('user_agent');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.timestamp('redeem_time', { useTz: true });
    t.index(['expire_time']);
  });

  await knex.schema.createTable('end_user_email_tokens', (t) => {
    t.binary('token_hash').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('end_user_id').notNullable().references('end_users.id').onDelete('CASCADE');
    t.text('purpose').notNullable().checkIn(['verify_email', 'reset_password'], 'end_user_email_tokens_purpose_check');
    t.text('redirect_url');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expire_time', { useTz: true }).notNullable();
    t.timestamp('use_time', { useTz: true });
    t.index(['expire_time']);
  });

  await knex.schema.createTable('end_user_totp_factors', (t) => {
    t.text('id').primary();
    t.text('end_user_id').notNullable().unique().references('end_users.id').onDelete('CASCADE');
    // The shared secret, sealed with the service key (src/crypto.ts), bound to this factor id.
    t.text('secret_sealed').notNullable();
    t.timestamp('activate_time', { useTz: true });
    // RFC 6238 §5.2: the verifier must not accept the second attempt of the same OTP.
    t.bigInteger('last_step');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('end_user_recovery_codes', (t) => {
    t.text('end_user_id').notNullable().references('end_users.id').onDelete('CASCADE');
    t.binary('code_hash').notNullable();
    t.timestamp('use_time', { useTz: true });
    t.primary(['end_user_id', 'code_hash']);
  });

  await knex.schema.createTable('end_user_sign_ins', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('end_user_id').notNullable().references('end_users.id').onDelete('CASCADE');
    t.timestamp('time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('method').notNullable();
    t.text('outcome').notNullable();
    t.text('ip');
    t.text('user_agent');
    t.index(['end_user_id', 'time']);
    t.index(['time']);
  });

  // Consecutive failures per identifier (10 → locked for 15 minutes). Keyed by a hash of
  // the identifier so unknown identifiers are counted the same way without storing them.
  await knex.schema.createTable('identity_lockouts', (t) => {
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.binary('identifier_hash').notNullable();
    t.integer('failures').notNullable().defaultTo(0);
    // Checks reserved and not yet finished: a sign-in reserves its password check before hashing,
    // so concurrent guesses across web processes cannot all pass the lockout before any failure
    // is counted. At most `threshold` checks, failed and pending together, run per identifier.
    t.integer('pending').notNullable().defaultTo(0);
    t.timestamp('locked_until', { useTz: true });
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['env_id', 'identifier_hash']);
  });

  // rate-limiter-flexible's RateLimiterPostgres layout, created here so the web never runs DDL.
  await knex.raw(`create table identity_rate_limits (
    key varchar(255) primary key,
    points integer not null default 0,
    expire bigint
  )`);

  // Mail without SMTP_URL lands here (and in the log), so development needs no mail server.
  // Mail without SMTP_URL lands here. Its body holds one-use links, so it is sealed: AES-256-GCM
  // with the service key, bound to the row's id (src/mail/outbox.ts); rows go after 7 days.
  await knex.schema.createTable('mail_outbox', (t) => {
    t.text('id').primary();
    t.text('to').notNullable();
    t.text('subject').notNullable();
    t.text('body_sealed').notNullable();
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['create_time']);
  });

  // Local breached-password store: one row per 5-hex-digit SHA-1 prefix (HIBP range layout), the
  // remaining 35 hex digits packed into 18-byte entries, sorted, so a lookup is one primary-key read
  // and a binary search.
  await knex.schema.createTable('breached_ranges', (t) => {
    t.integer('prefix').primary();
    t.binary('suffixes').notNullable();
  });
  await knex.schema.createTable('breached_imports', (t) => {
    t.text('id').primary();
    t.text('state')
      .notNullable()
      .checkIn(['pending', 'running', 'succeeded', 'failed'], 'breached_imports_state_check');
    t.text('format');
    t.bigInteger('entries').notNullable().defaultTo(0);
    t.text('error');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finish_time', { useTz: true });
  });
  // The file as the CLI streamed it, in chunks, until the worker has merged it.
  await knex.schema.createTable('breached_import_chunks', (t) => {
    t.text('import_id').notNullable().references('breached_imports.id').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.binary('data').notNullable();
    t.primary(['import_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'breached_import_chunks',
    'breached_imports',
    'breached_ranges',
    'mail_outbox',
    'identity_rate_limits',
    'identity_lockouts',
    'end_user_sign_ins',
    'end_user_recovery_codes',
    'end_user_totp_factors',
    'end_user_email_tokens',
    'end_user_tickets',
    'end_user_sessions',
    'identity_pending_signups',
    'end_users',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
