// Error tracking, third pass (secrets at rest). A captured event is raw and unscrubbed
// until a worker processes it, so the inbox and the dead letters held captured passwords, tokens
// and keys in plaintext jsonb. Both now hold `payload_sealed`: the event's JSON, deflated and
// sealed with the service key, bound to its row (src/domain/observability/sealed-payload.ts), and
// `release` in plain beside it (not a secret: stored in plain on the event anyway), which the
// workers' claim needs before opening anything.
//
// Existing rows are sealed here, not dropped: a 202 promised them storage. Sealing needs
// CAIRN_ENCRYPTION_KEY, which the release phase has (src/migrate.ts runs with the full
// environment); the key is read only when there are rows to seal, so an empty database (a fresh
// deploy, the test template) migrates without it. `down` opens them back into plaintext jsonb,
// the only form the previous schema can hold.
//
// The sealed column's storage is EXTERNAL: ciphertext does not compress, so Postgres should not
// spend time trying (the payload is deflated before sealing instead). Dead letters are pruned by
// age (the errors.prune job), hence the index on dead_time.
import type { Knex } from 'knex';
import { loadConfig } from '../src/config.ts';
import { keyringFromConfig, type Keyring } from '../src/crypto.ts';
import type { ErrorEventInput } from '../src/domain/observability/event-schema.ts';
import { openPayload, sealPayload, UnopenablePayload } from '../src/domain/observability/sealed-payload.ts';

const tables = ['error_event_inbox', 'error_event_dead'] as const;
const batch = 500;

function keyringFromEnvironment(what: string): Keyring {
  try {
    return keyringFromConfig(loadConfig());
  } catch (err) {
    throw new Error(
      `${what} needs the service key: run migrations with CAIRN_ENCRYPTION_KEY (and CAIRN_ENCRYPTION_OLD_KEYS) set\n${(err as Error).message}`,
      { cause: err },
    );
  }
}

async function sealRows(knex: Knex, table: string, keyring: () => Keyring): Promise<void> {
  for (;;) {
    const rows = await knex(table)
      .whereNull('payload_sealed')
      .orderBy('uid')
      .limit(batch)
      .select<{ uid: string; env_id: string; payload_json: string }[]>(
        'uid',
        'env_id',
        knex.raw('payload::text as payload_json'),
      );
    if (rows.length === 0) return;
    const sealed = rows.map((r) =>
      sealPayload(keyring(), r.env_id, r.uid, JSON.parse(r.payload_json) as ErrorEventInput),
    );
    await knex.raw(
      `update ${table} t set payload_sealed = x.payload_sealed, release = x.release
       from jsonb_to_recordset(?::jsonb) as x(uid text, release text, payload_sealed text) where t.uid = x.uid`,
      [JSON.stringify(sealed)],
    );
  }
}

async function openRows(knex: Knex, table: string, keyring: () => Keyring): Promise<void> {
  for (;;) {
    const rows = await knex(table)
      .whereNull('payload')
      .orderBy('uid')
      .limit(batch)
      .select<{ uid: string; env_id: string; release: string | null; payload_sealed: string }[]>(
        'uid',
        'env_id',
        'release',
        'payload_sealed',
      );
    if (rows.length === 0) return;
    const opened: { uid: string; payload: ErrorEventInput }[] = [];
    const foreign: string[] = [];
    for (const r of rows) {
      try {
        opened.push({ uid: r.uid, payload: openPayload(keyring(), r) });
      } catch (err) {
        // A dead letter buried because its sealed value was another row's holds no event of its
        // own to give back; anything else (a key not loaded) must stop the rollback.
        if (!(err instanceof UnopenablePayload && err.permanent)) throw err;
        foreign.push(r.uid);
      }
    }
    if (foreign.length > 0) await knex(table).whereIn('uid', foreign).delete();
    await knex.raw(
      `update ${table} t set payload = x.payload from jsonb_to_recordset(?::jsonb) as x(uid text, payload jsonb) where t.uid = x.uid`,
      [JSON.stringify(opened)],
    );
  }
}

/** The keyring, loaded on first use only. */
function lazyKeyring(what: string): () => Keyring {
  let keyring: Keyring | undefined;
  return () => (keyring ??= keyringFromEnvironment(what));
}

export async function up(knex: Knex): Promise<void> {
  const keyring = lazyKeyring('sealing the error inbox and dead letters');
  for (const table of tables) {
    await knex.schema.alterTable(table, (t) => {
      t.text('release');
      t.text('payload_sealed');
    });
    await sealRows(knex, table, keyring);
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('payload');
      t.dropNullable('payload_sealed');
    });
    await knex.raw(`alter table ${table} alter column payload_sealed set storage external`);
  }
  await knex.schema.alterTable('error_event_dead', (t) => t.index(['dead_time'], 'error_event_dead_dead_time_idx'));
}

export async function down(knex: Knex): Promise<void> {
  const keyring = lazyKeyring('opening the error inbox and dead letters');
  await knex.schema.alterTable('error_event_dead', (t) => t.dropIndex(['dead_time'], 'error_event_dead_dead_time_idx'));
  for (const table of tables) {
    await knex.schema.alterTable(table, (t) => t.jsonb('payload'));
    await openRows(knex, table, keyring);
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('payload_sealed');
      t.dropColumn('release');
      t.dropNullable('payload');
    });
  }
  // As 20261121131000 left it (where the server has lz4).
  await knex.raw(`
    do $$ begin
      alter table error_event_inbox alter column payload set compression lz4;
    exception when feature_not_supported or invalid_parameter_value or syntax_error then null;
    end $$`);
}
