// `cairn admin env set-database` checks the URL before it stores it, as an operator runs it (a real
// child process, a real server): a role, database, password or server that is wrong is said at
// once, with a stable code and the fix, nothing is stored, and the password is never printed. A
// good URL is stored sealed, with a note when its role lacks the CREATEDB that drills need.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keyringFromConfig, open } from '../../src/crypto.ts';
import { testEncryptionKey } from '../support/config.ts';
import { runCairn } from '../support/cli.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { freePort, startOwnPostgres, type OwnPostgres } from '../support/own-postgres.ts';
import { withAdmin } from '../support/pg.ts';
import { createAppDatabase, type AppDatabase } from './support.ts';

let h: Harness;
let app: AppDatabase;
let own: OwnPostgres | undefined;
const role = `cairn_nocreatedb_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  h = await createHarness();
  app = await createAppDatabase('create table notes (id int primary key);');
  await withAdmin((c) => c.query(`create role ${role} login nocreatedb`));
});
afterAll(async () => {
  await app?.drop();
  await withAdmin((c) => c.query(`drop role if exists ${role}`));
  await own?.close();
  await h?.close();
});

const setDatabase = (env: string, url: string, ...more: string[]) =>
  runCairn(['admin', 'env', 'set-database', env, url, ...more], {
    DATABASE_URL: h.config.DATABASE_URL,
    CAIRN_ENCRYPTION_KEY: testEncryptionKey,
  });

const stored = async (envId: string): Promise<string | null> => {
  const row = await h.db('envs').where({ id: envId }).first('database_url_enc');
  return row.database_url_enc
    ? open(keyringFromConfig(h.config), row.database_url_enc, `env-database:${envId}`).toString()
    : null;
};

it('refuses a missing role, a missing database and a closed port, naming each with its code and fix', async () => {
  const env = await createTestEnv(h.db);
  const server = new URL(app.url);
  const on = (user: string, database: string, port = server.port) =>
    `postgres://${user}:not-the-password-${role}@${server.hostname}:${port}/${database}`;
  const cases = [
    [on('me', app.name), 'role_missing', 'the role "me" does not exist on', 'CREATE ROLE "me" LOGIN'],
    [on('postgres', 'shop'), 'database_missing', 'the database "shop" does not exist on', 'createdb -h'],
    [on('postgres', app.name, String(await freePort())), 'connection_refused', 'nothing accepts connections at', ''],
  ] as const;
  for (const [url, code, what, fix] of cases) {
    const res = await setDatabase(env.env.name, url);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(what);
    expect(res.stderr).toContain(fix);
    expect(res.stderr).toContain(`(${code}; nothing was stored`);
    expect(res.stderr + res.stdout).not.toContain(`not-the-password-${role}`);
  }
  expect(await stored(env.env.id)).toBeNull();
});

it('refuses a wrong password on a server that asks for one, without printing it', async () => {
  own = await startOwnPostgres();
  const env = await createTestEnv(h.db);
  const url = own.url('postgres').replace('postgres:postgres@', 'postgres:wrong-secret-42@');
  const res = await setDatabase(env.env.name, url);
  expect(res.code, res.stderr).toBe(1);
  expect(res.stderr).toContain(`127.0.0.1:${own.port} refused the password of role "postgres"`);
  expect(res.stderr).toContain('(password_failed; nothing was stored');
  expect(res.stderr).not.toContain('wrong-secret-42');
  expect(await stored(env.env.id)).toBeNull();
  // The right password passes.
  const good = await setDatabase(env.env.name, own.url('postgres'));
  expect(good.code, good.stderr).toBe(0);
  expect(good.stderr).not.toContain(':postgres@');
  expect(await stored(env.env.id)).toBe(own.url('postgres'));
  // initdb of a server of its own, and CLI runs: most of a minute on a busy machine.
}, 120_000);

it('stores a good URL sealed, notes a role without CREATEDB, and --no-check stores one it cannot reach', async () => {
  const env = await createTestEnv(h.db);
  const server = new URL(app.url);
  const url = `postgres://${role}@${server.host}/${app.name}`;
  const res = await setDatabase(env.env.name, url);
  expect(res.code, res.stderr).toBe(0);
  expect(res.stderr).toContain(`database set for ${env.env.name}: database "${app.name}" as role "${role}"`);
  expect(res.stderr).toContain(`role "${role}" lacks CREATEDB, which restore drills need`);
  expect(res.stderr).toContain('cairn backups settings --drills off');
  expect(await stored(env.env.id)).toBe(url);

  const superuser = await setDatabase(env.env.name, app.url);
  expect(superuser.code, superuser.stderr).toBe(0);
  expect(superuser.stderr).not.toContain('lacks CREATEDB');

  const away = 'postgres://app:s3cret-pw@db.invalid:5432/app';
  const unchecked = await setDatabase(env.env.name, away, '--no-check');
  expect(unchecked.code, unchecked.stderr).toBe(0);
  expect(unchecked.stderr).toContain('(not checked)');
  const row = await h.db('envs').where({ id: env.env.id }).first('database_url_enc');
  expect(row.database_url_enc).not.toContain('s3cret-pw');
  expect(await stored(env.env.id)).toBe(away);
});
