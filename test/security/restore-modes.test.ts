// Restores across modes, from outside over HTTP: a test environment's key must never replace a
// live environment's database (test → live is 403 and nothing is queued), while live → test,
// test → test and live → live are allowed; a restore preview names the target environment and
// what it would replace, never where the database lives (host, port, name, user, password).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, type Harness, createTestEnv, useWeb } from '../support/harness.ts';
import { createAppDatabase, query, setEnvDatabase, type AppDatabase } from '../backups/support.ts';

type Json = Record<string, unknown>;
const project = `orgs/modes-org/projects/p${randomBytes(3).toString('hex')}`;
let h: Harness;
let web: WebHandle;
let app: AppDatabase;
const envs: Record<string, CreatedEnv> = {};
const backups: Record<string, string> = {};

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  app = await createAppDatabase(
    "create table accounts (id int primary key, email text); insert into accounts select g, 'u' || g || '@example.com' from generate_series(1, 300) g; analyze;",
  );
  for (const [name, mode] of [
    ['staging', 'test'],
    ['dev', 'test'],
    ['prod', 'live'],
    ['prod-eu', 'live'],
  ] as const) {
    envs[name] = await createTestEnv(h.db, `${project}/envs/${name}`, mode);
    await setEnvDatabase(h.db, h.config, envs[name].env.id, app.url);
    backups[name] = newId('backup');
    await h.db('backups').insert({
      id: backups[name],
      env_id: envs[name].env.id,
      type: 'manual',
      trigger: 'manual',
      state: 'succeeded',
      bucket: 'b',
      object_key: `k/${name}`,
      size_bytes: 1024,
      pg_version: '15.20',
      expire_time: new Date(Date.now() + 86_400_000),
    });
  }
});

afterAll(async () => {
  await app?.drop();
});

describe('restore across modes', () => {
  it('refuses a test key restoring into a live environment, preview and restore alike, and queues nothing', async () => {
    for (const path of [`/v1/backups/${backups.staging}/restore`, `/v1/backups/${backups.staging}:previewRestore`]) {
      const res = await call<Json>(web.url, 'POST', path, {
        key: envs.staging!.secretKey,
        body: { targetEnv: envs.prod!.env.name },
      });
      expect(res, path).toMatchObject({
        status: 403,
        body: { code: 'forbidden', message: expect.stringContaining('needs a secret key of a live environment') },
      });
    }
    expect(await h.db('backup_operations').count('* as n').first()).toEqual({ n: '0' });
  });

  it('allows live → test, test → test and live → live', async () => {
    for (const [from, to] of [
      ['prod', 'staging'],
      ['staging', 'dev'],
      ['prod', 'prod-eu'],
    ] as const) {
      const res = await call<Json>(web.url, 'POST', `/v1/backups/${backups[from]}:previewRestore`, {
        key: envs[from]!.secretKey,
        body: { targetEnv: envs[to]!.env.name },
      });
      expect(res.status, `${from} → ${to}: ${JSON.stringify(res.body)}`).toBe(200);
    }
    const real = await call<Json>(web.url, 'POST', `/v1/backups/${backups.prod}/restore`, {
      key: envs.prod!.secretKey,
      body: { targetEnv: envs['prod-eu']!.env.name },
    });
    expect(real.status).toBe(202);
  });
});

describe('a restore preview', () => {
  it('names the target environment and the tables it would replace, never where the database lives', async () => {
    const res = await call<Json>(web.url, 'POST', `/v1/backups/${backups.staging}:previewRestore`, {
      key: envs.staging!.secretKey,
      body: { targetEnv: envs.dev!.env.name },
    });
    expect(res.body).toMatchObject({
      target_env: envs.dev!.env.name,
      target_mode: 'test',
      replaces: { table_count: 1, estimated_rows: 300, tables: [{ name: 'public.accounts', estimated_rows: 300 }] },
    });
    const text = JSON.stringify(res.body);
    const where = new URL(app.url);
    for (const detail of ['host', 'port', where.hostname, app.name, 'postgres']) expect(text).not.toContain(detail);
    expect(await query(app.url, 'select count(*)::int as n from accounts')).toEqual([{ n: 300 }]);
  });
});
