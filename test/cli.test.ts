// The `cairn` command as an operator runs it: a real child process against the real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, keyringFromConfig } from '../src/crypto.ts';
import { testEncryptionKey } from './support/config.ts';
import { call, createHarness, startTestWeb, type Harness } from './support/harness.ts';
import { runCairn } from './support/cli.ts';

let h: Harness;

// A database only, not useWeb(): the one web is started inside the test that reads what the CLI created.
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const cairn = (args: string[], env: Record<string, string> = {}) =>
  runCairn(args, { DATABASE_URL: h.config.DATABASE_URL, ...env });

describe('cairn admin', () => {
  const name = 'orgs/acme/projects/shop/envs/prod';

  it('creates an environment and prints its name and keys as JSON', async () => {
    // The encryption key seals the environment's Sentry client key.
    const sealing = { CAIRN_ENCRYPTION_KEY: testEncryptionKey };
    expect((await cairn(['admin', 'env', 'create', name, '--json'])).stderr).toMatch(/set CAIRN_ENCRYPTION_KEY/);
    const res = await cairn(['admin', 'env', 'create', name, '--json'], sealing);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as Record<string, string>;
    expect(out).toMatchObject({ name, mode: 'test' });
    expect(out.publishable_key).toMatch(/^cairn_pk_test_[0-9A-Za-z]{32}$/);
    expect(out.secret_key).toMatch(/^cairn_sk_test_[0-9A-Za-z]{32}$/);
    // The Sentry DSN: the base URL's scheme and host, a 32-hex public key, a numeric project id.
    const base = new URL(h.config.CAIRN_BASE_URL);
    expect(out.dsn).toMatch(
      new RegExp(`^${base.protocol}//[0-9a-f]{32}@${base.host.replaceAll('.', '\\.')}/[1-9][0-9]*$`),
    );

    const web = await startTestWeb(h);
    try {
      const got = await call(web.url, 'GET', `/v1/${name}`, { key: out.secret_key });
      expect(got).toMatchObject({ status: 200, body: { name } });
      // The DSN printed is the environment's client key; running create again keeps it.
      const keys = await call<{ client_keys: { dsn: string }[] }>(web.url, 'GET', `/v1/${name}/client_keys`, {
        key: out.secret_key,
      });
      expect(keys.body.client_keys.map((k) => k.dsn)).toEqual([out.dsn]);
      const again = JSON.parse((await cairn(['admin', 'env', 'create', name, '--json'], sealing)).stdout) as Record<
        string,
        string
      >;
      expect(again.dsn).toBe(out.dsn);
    } finally {
      await web.stop();
    }
  });

  it('creates a scoped key, lists keys by hint only, and revokes', async () => {
    const created = await cairn([
      'admin',
      'keys',
      'create',
      '--env',
      name,
      '--scopes',
      'observability:read,auth:read',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as { id: string; secret_key: string; scopes: string[] };
    expect(key.scopes).toEqual(['observability:read', 'auth:read']);

    const listed = await cairn(['admin', 'keys', 'list', '--env', name, '--json']);
    expect(listed.stdout).not.toContain(key.secret_key);
    const keys = (JSON.parse(listed.stdout) as { keys: { id: string; hint: string; revoke_time: string | null }[] })
      .keys;
    expect(keys.find((k) => k.id === key.id)).toMatchObject({
      hint: `cairn_sk_test_…${key.secret_key.slice(-4)}`,
      revoke_time: null,
    });

    expect((await cairn(['admin', 'keys', 'revoke', key.id])).code).toBe(0);
    const after = JSON.parse((await cairn(['admin', 'keys', 'list', '--env', name, '--json'])).stdout) as {
      keys: { id: string; revoke_time: string | null }[];
    };
    expect(after.keys.find((k) => k.id === key.id)?.revoke_time).toBeTruthy();
  });

  it('refuses unknown scopes and bad names with a clear message', async () => {
    const scopes = await cairn(['admin', 'keys', 'create', '--env', name, '--scopes', 'root']);
    expect(scopes.code).toBe(1);
    expect(scopes.stderr).toMatch(/unknown scope root; choose from auth:read/);
    const bad = await cairn(['admin', 'env', 'create', 'acme/shop']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not an environment name/);
  });

  it('stores the application database URL encrypted', async () => {
    // Not reachable from here, so unchecked (test/backups/set-database.test.ts checks URLs).
    const url = 'postgres://app:s3cret-pw@db.example.com:5432/app';
    const res = await cairn(['admin', 'env', 'set-database', name, url, '--no-check'], {
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
    });
    expect(res.code).toBe(0);
    const row = await h.db('envs').where({ name }).first('id', 'database_url_enc');
    expect(row.database_url_enc).not.toContain('s3cret-pw');
    expect(open(keyringFromConfig(h.config), row.database_url_enc, `env-database:${row.id}`).toString()).toBe(url);
  });

  it('has --help on every command', async () => {
    for (const args of [
      [],
      ['admin'],
      ['admin', 'env'],
      ['admin', 'env', 'create'],
      ['admin', 'keys', 'create'],
      ['admin', 'keys', 'list'],
      ['admin', 'keys', 'revoke'],
    ]) {
      const res = await cairn([...args, '--help']);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toMatch(/Usage: cairn/);
    }
  });
});
