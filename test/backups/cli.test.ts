// `cairn backups restore` refuses without --confirm, after printing what would be replaced (the
// target's tables with their rows, never where its database lives), from the API's preview. Rows
// are counted in small tables; a large one shows the planner's estimate, or unknown where it has
// none: never "~0 rows" for a table that holds rows but was never analyzed, or analyzed empty.
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
    // Each table is under 1 MiB on disk, so each is counted: exact figures, no ~.
    expect(printed).toContain('replaces: the whole database (every schema): 3 tables, 8,500 rows in all');
    expect(printed).toMatch(
      /public\.orders {2}6,000 rows\n\s+public\.customers {2}2,000 rows\n\s+billing\.invoices {2}500 rows/,
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

it('says unknown, not ~0 rows, for a large table never analyzed or analyzed while empty, and counts a small one', async () => {
  const other = await createTestEnv(h.db);
  // Autovacuum off, so its ANALYZE cannot land mid-test and give the planner a figure.
  const fresh = await createAppDatabase(`
    create table big (id int, body text) with (autovacuum_enabled = false);
    insert into big select g, repeat('x', 100) from generate_series(1, 30000) g;
    create table emptied (id int, body text) with (autovacuum_enabled = false);
    create table small (id int) with (autovacuum_enabled = false);
    insert into small select generate_series(1, 12);`);
  try {
    // Analyzed while empty (relpages 0, reltuples 0), then filled: the planner's figure is 0.
    await query(fresh.url, 'vacuum analyze emptied');
    await query(fresh.url, "insert into emptied select g, repeat('y', 100) from generate_series(1, 30000) g");
    const stats = await query<{ relname: string; reltuples: number; relpages: number }>(
      fresh.url,
      "select relname, reltuples::float8 as reltuples, relpages from pg_class where relname in ('big', 'emptied') order by 1",
    );
    expect(stats).toEqual([
      { relname: 'big', reltuples: -1, relpages: 0 },
      { relname: 'emptied', reltuples: 0, relpages: 0 },
    ]);
    await setEnvDatabase(h.db, h.config, other.env.id, fresh.url);
    const id = newId('backup');
    await h.db('backups').insert({
      id,
      env_id: other.env.id,
      type: 'manual',
      trigger: 'manual',
      state: 'succeeded',
      bucket: 'b',
      object_key: 'k',
      size_bytes: 2 ** 20,
      pg_version: '15.20',
      expire_time: new Date(Date.now() + 86_400_000),
    });
    const plan = await call<{ replaces: unknown }>(web.url, 'POST', `/v1/backups/${id}:previewRestore`, {
      key: other.secretKey,
      body: { targetEnv: other.env.name },
    });
    expect(plan.status, JSON.stringify(plan.body)).toBe(200);
    expect(plan.body.replaces).toEqual({
      tables: [
        { name: 'public.big', estimated_rows: null, exact: false },
        { name: 'public.emptied', estimated_rows: null, exact: false },
        { name: 'public.small', estimated_rows: 12, exact: true },
      ],
      table_count: 3,
      estimated_rows: 12,
    });

    const ctx = createCliContext({ CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: other.secretKey });
    const program = new Command('cairn').exitOverride();
    register(program, ctx);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await expect(
        program.parseAsync(['node', 'cairn', 'backups', 'restore', id, '--env', other.env.name]),
      ).rejects.toThrow('run again with --confirm');
      const printed = stderr.mock.calls.map((c) => String(c[0])).join('');
      expect(printed).toContain('3 tables, ~12 rows in all (and 2 tables whose rows are unknown)');
      expect(printed).toContain('public.small  12 rows');
      expect(printed).toContain('public.big  rows unknown (never analyzed)');
      expect(printed).toContain('public.emptied  rows unknown (never analyzed)');
      expect(printed).not.toMatch(/~0 rows/);
    } finally {
      stderr.mockRestore();
      await ctx.close();
    }
  } finally {
    await fresh.drop();
  }
});
