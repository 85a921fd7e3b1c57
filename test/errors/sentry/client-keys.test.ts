// Client keys (DSNs) through the /v1 API: every environment has one from its creation; keys are
// listed with their DSN, created with or without a rate limit, revoked, scoped to their
// environment and to the key's scopes; the public key is not stored in plaintext.
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../../support/harness.ts';
import { envBase } from '../support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let other: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  other = await createTestEnv(h.db);
});

interface Key {
  id: string;
  public_key: string;
  dsn: string;
  create_time: string;
  rate_limit?: { count: number; window_seconds: number };
}
const list = (e: CreatedEnv) =>
  call<{ client_keys: Key[] }>(web.url, 'GET', `${envBase(e)}/client_keys`, { key: e.secretKey });

describe('client keys', () => {
  it('gives every environment a key of its own, with a project number of its own', async () => {
    const [a, b] = [(await list(env)).body.client_keys, (await list(other)).body.client_keys];
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(a[0]!.public_key).toMatch(/^[0-9a-f]{32}$/);
    expect(a[0]!.public_key).toBe(env.clientKey.publicKey);
    const base = new URL(h.config.CAIRN_BASE_URL);
    expect(a[0]!.dsn).toBe(`${base.protocol}//${a[0]!.public_key}@${base.host}/${env.clientKey.projectNumber}`);
    expect(env.clientKey.projectNumber).not.toBe(other.clientKey.projectNumber);
    expect(a[0]!.public_key).not.toBe(b[0]!.public_key);
  });

  it('creates keys with a rate limit, refuses a bad one, and revokes', async () => {
    const made = await call<Key>(web.url, 'POST', `${envBase(env)}/client_keys`, {
      key: env.secretKey,
      body: { rate_limit: { count: 100, window_seconds: 60 } },
    });
    expect(made.status).toBe(201);
    expect(made.body.rate_limit).toEqual({ count: 100, window_seconds: 60 });
    const bad = await call(web.url, 'POST', `${envBase(env)}/client_keys`, {
      key: env.secretKey,
      body: { rate_limit: { count: 0, window_seconds: 60 } },
    });
    expect(bad.status).toBe(400);
    expect((await list(env)).body.client_keys.map((k) => k.id)).toContain(made.body.id);

    const revoked = await call<Key>(web.url, 'DELETE', `${envBase(env)}/client_keys/${made.body.id}`, {
      key: env.secretKey,
    });
    expect(revoked.status).toBe(200);
    expect((await list(env)).body.client_keys.map((k) => k.id)).not.toContain(made.body.id);
    // Another environment's key cannot revoke it, nor see it.
    const theirs = await call(web.url, 'DELETE', `${envBase(other)}/client_keys/${env.clientKey.id}`, {
      key: other.secretKey,
    });
    expect(theirs.status).toBe(404);
    const across = await call(web.url, 'GET', `${envBase(env)}/client_keys`, { key: other.secretKey });
    expect(across.status).toBe(403);
  });

  it('needs observability:write to create, and caps an environment at 50 keys even under parallel creates', async () => {
    const fresh = await createTestEnv(h.db);
    const answers = await Promise.all(
      Array.from({ length: 60 }, () =>
        call(web.url, 'POST', `${envBase(fresh)}/client_keys`, { key: fresh.secretKey, body: {} }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(49);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(11);
    expect((await list(fresh)).body.client_keys).toHaveLength(50);
  });

  it('stores no public key in plaintext', async () => {
    const rows = await h.db('client_keys').select('*');
    const dump = JSON.stringify(rows);
    for (const k of (await list(env)).body.client_keys) expect(dump).not.toContain(k.public_key);
  });
});
