// A restore drill on a database whose role lacks CREATEDB fails saying exactly that and how to fix
// it, and `cairn backups settings --drills off|daily|weekly` turns drills off (or on) over the real
// API, so the hourly cron no longer starts them. Real worker, real Postgres, the CLI as a child.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { drillQueries } from '../../src/domain/backups/drills/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { queues } from '../../src/queues.ts';
import { handlers } from '../../workers/handlers.ts';
import { runCairn } from '../support/cli.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';
import { databaseUrl, withAdmin } from '../support/pg.ts';
import { query, setEnvDatabase } from './support.ts';

const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const role = `cairn_nocreatedb_${randomBytes(4).toString('hex')}`;
const database = `cairn_app_${randomBytes(5).toString('hex')}`;
let worker: WorkerHandle<typeof queues>;
let env: CreatedEnv;
let vars: Record<string, string>;

const stack = useWeb({}, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  worker = await startWorker(stack.h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  // The database and its tables are the role's own, as an application's are; it may not create databases.
  await withAdmin(async (c) => {
    await c.query(`create role ${role} login nocreatedb`);
    await c.query(`create database ${database} owner ${role}`);
  });
  const url = new URL(databaseUrl(database));
  url.username = role;
  url.password = '';
  await query(
    url.toString(),
    'create table notes (id int primary key, body text); insert into notes values (1, $$a$$);',
  );
  env = await createTestEnv(stack.h.db);
  await setEnvDatabase(stack.h.db, stack.h.config, env.env.id, url.toString());
  vars = { CAIRN_API_URL: stack.web.url, CAIRN_SECRET_KEY: env.secretKey, CAIRN_ENV: env.env.name };
});
afterAll(async () => {
  await worker?.stop();
  await createObjectStore(stack.h.config)
    .deleteBucket(bucket)
    .catch(() => undefined);
  await withAdmin(async (c) => {
    await c.query(`drop database if exists ${database} with (force)`);
    await c.query(`drop role if exists ${role}`);
  });
});

it('fails a drill for lack of CREATEDB saying so and how to fix it', async () => {
  const backup = await runCairn(['backups', 'create'], vars);
  expect(backup.code, backup.stderr).toBe(0);
  const drill = await runCairn(['backups', 'drill'], vars);
  expect(drill.code).toBe(1);
  expect(drill.stderr).toContain("the role in the environment's database URL lacks CREATEDB");
  expect(drill.stderr).toContain('ALTER ROLE <that role> CREATEDB');
  expect(drill.stderr).toContain('cairn backups settings --drills off');
  // It could not make its scratch database, and it leaves none behind.
  const ops = await stack.h.db('backup_operations').where({ env_id: env.env.id, kind: 'drill' }).pluck('id');
  expect(ops).toHaveLength(1);
  const scratch = await withAdmin((c) =>
    c.query('select 1 from pg_database where datname = any($1)', [ops.map((id: string) => `cairn_drill_${id}`)]),
  );
  expect(scratch.rows).toEqual([]);
  const listed = await runCairn(['backups', 'list'], vars);
  expect(listed.stdout).toMatch(
    /drill failed[^\n]*\n\s+drill: the role in the environment's database URL lacks CREATEDB/,
  );
  // A backup, a drill and a list through the CLI, each a child process waiting on the worker.
}, 120_000);

it('turns drills off and on with `cairn backups settings --drills`, and the cron follows', async () => {
  const inEightDays = new Date(Date.now() + 8 * 86_400_000);
  const due = async () => (await drillQueries(stack.h.db).dueDrillEnvs(inEightDays, 500)).map((e) => e.id);
  const shown = await runCairn(['backups', 'settings'], vars);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toContain('restore drills weekly');
  expect(await due()).toContain(env.env.id);

  const off = await runCairn(['backups', 'settings', '--drills', 'off'], vars);
  expect(off.code, off.stderr).toBe(0);
  expect(off.stdout).toContain('restore drills off');
  const settings = await call<Record<string, unknown>>(stack.web.url, 'GET', `/v1/${env.env.name}/backup_settings`, {
    key: env.secretKey,
  });
  // Only the drills changed: the schedule and its hour are as they were.
  expect(settings.body).toMatchObject({ drill_schedule: 'off', schedule_enabled: true, schedule_hour_utc: 3 });
  expect(await due()).not.toContain(env.env.id);

  const daily = await runCairn(['backups', 'settings', '--drills', 'daily', '--json'], vars);
  expect(JSON.parse(daily.stdout)).toMatchObject({ drill_schedule: 'daily' });
  expect(await due()).toContain(env.env.id);

  const bad = await runCairn(['backups', 'settings', '--drills', 'hourly'], vars);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('--drills is off, daily or weekly');
}, 120_000);
