// `cairn backups restore` refuses without --confirm, after printing what would be replaced (the
// target's tables with row estimates, never where its database lives), from the API's preview.
import { Command } from 'commander';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { register } from '../../src/cli/commands/backups/index.ts';
import { createCliContext } from '../../src/cli/admin-context.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { createAppDatabase, query, seedSource, setEnvDatabase, type AppDatabase } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let app: AppDatabase | undefined;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await app?.drop();
});

it('prints the plan and refuses to restore without --confirm', async () => {
  const id = newId('backup');
  await h.db('backups').insert({
    id,
    env_id: env.env.id,
    type: 'manual',
    trigger: 'manual',
    state: 'succeeded',
    bucket: 'b',
    object_key: 'k',
    size_bytes: 3 * 2 ** 20,
    pg_version: '15.20',
    expire_time: new Date(Date.now() + 86_400_000),
  });
  // Without a database the preview gives the restore's own refusal.
  const refused = await call(web.url, 'POST', `/v1/backups/${id}:previewRestore`, {
    key: env.secretKey,
    body: { targetEnv: env.env.name },
  });
  expect(refused.status, JSON.stringify(refused.body)).toBe(409);
  expect(JSON.stringify(refused.body)).toContain('set-database');
  app = await createAppDatabase(seedSource);
  await query(app.url, 'analyze');
  await setEnvDatabase(h.db, h.config, env.env.id, app.url);
  const ctx = createCliContext({ CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey });
  const program = new Command('cairn').exitOverride();
  register(program, ctx);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await expect(
      program.parseAsync(['node', 'cairn', 'backups', 'restore', id, '--env', env.env.name]),
    ).rejects.toThrow('run again with --confirm');
    const printed = stderr.mock.calls.map((c) => String(c[0])).join('');
    expect(printed).toContain(`with backup ${id}`);
    expect(printed).toContain('3.0 MiB');
    expect(printed).toContain('replaces: the whole database (every schema): 3 tables, ~8,500 rows in all');
    expect(printed).toMatch(
      /public\.orders {2}~6,000 rows\n\s+public\.customers {2}~2,000 rows\n\s+billing\.invoices {2}~500 rows/,
    );
    const where = new URL(app.url);
    for (const detail of [where.hostname, `:${where.port}`, app.name, 'postgres://'])
      expect(printed).not.toContain(detail);
    expect(await h.db('backup_operations').count('* as n').first()).toEqual({ n: '0' });
  } finally {
    stderr.mockRestore();
    await ctx.close();
  }
});
