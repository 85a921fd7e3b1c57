// `cairn backups restore` refuses without --confirm, after printing what would be replaced (the
// target database's host, port and name, never its user or password), from the API's preview.
import { Command } from 'commander';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { register } from '../../src/cli/commands/backups.ts';
import { createCliContext } from '../../src/cli/context.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { databaseSummary } from '../../src/domain/backups/service.ts';
import { newId } from '../../src/ids.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Harness } from '../support/harness.ts';
import { setEnvDatabase } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

beforeAll(async () => {
  h = await createHarness();
  web = await startTestWeb(h);
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await web?.stop();
  await h?.close();
});

it('prints the plan and refuses to restore without --confirm', async () => {
  const id = newId('backup');
  await h.db('backups').insert({
    id, env_id: env.env.id, type: 'manual', trigger: 'manual', state: 'succeeded', bucket: 'b', object_key: 'k',
    size_bytes: 3 * 2 ** 20, pg_version: '15.20', expire_time: new Date(Date.now() + 86_400_000),
  });
  // Without a database the preview gives the restore's own refusal.
  const refused = await call(web.url, 'POST', `/v1/backups/${id}:previewRestore`, { key: env.secretKey, body: { targetEnv: env.env.name } });
  expect(refused.status, JSON.stringify(refused.body)).toBe(409);
  expect(JSON.stringify(refused.body)).toContain('set-database');
  await setEnvDatabase(h.db, h.config, env.env.id, 'postgres://app_user:s3cret-pw@db.internal.example:6432/shop_production?sslmode=require');
  const ctx = createCliContext({ CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey });
  const program = new Command('cairn').exitOverride();
  register(program, ctx);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await expect(program.parseAsync(['node', 'cairn', 'backups', 'restore', id, '--env', env.env.name])).rejects.toThrow('run again with --confirm');
    const printed = stderr.mock.calls.map((c) => String(c[0])).join('');
    expect(printed).toContain(`with backup ${id}`);
    expect(printed).toContain('3.0 MiB');
    expect(printed).toContain(`target: ${env.env.name}, database shop_production on db.internal.example:6432`);
    expect(printed).not.toContain('s3cret-pw');
    expect(printed).not.toContain('app_user');
    expect(await h.db('backup_operations').count('* as n').first()).toEqual({ n: '0' });
  } finally {
    stderr.mockRestore();
    await ctx.close();
  }
});

it('summarises a database URL as host, port and name, never the user or password', () => {
  expect(databaseSummary('postgres://app_user:s3cret@db.example:6432/shop?sslmode=require')).toEqual({ host: 'db.example', port: 6432, name: 'shop' });
  expect(databaseSummary('postgresql://u:p@[::1]/shop')).toEqual({ host: '[::1]', port: 5432, name: 'shop' });
  // A Unix socket folder, as libpq takes it: in the query, or percent-encoded as the host.
  expect(databaseSummary('postgresql:///shop?host=/var/run/postgresql&user=app&password=pw')).toEqual({ host: '/var/run/postgresql', port: 5432, name: 'shop' });
  expect(databaseSummary('postgresql://%2Fvar%2Frun%2Fpostgresql/shop')).toEqual({ host: '/var/run/postgresql', port: 5432, name: 'shop' });
  expect(databaseSummary('postgres://db.example?dbname=shop%20two')).toEqual({ host: 'db.example', port: 5432, name: 'shop two' });
  expect(databaseSummary('postgres://app:pw@db.example')).toEqual({ host: 'db.example', port: 5432, name: null });
});
