// Restore drills: the latest backup restored into a scratch database, every table's row count and
// checksum compared with the figures recorded at dump time, the scratch database dropped, and the
// verdict on the backup (API, CLI, /readyz). A real backup passes; a tampered one fails with the
// reason; schedules default by mode and the hourly cron starts only what is due.
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { register } from '../../src/cli/commands/backups/index.ts';
import { createCliContext } from '../../src/cli/admin-context.ts';
import { startDueDrills } from '../../src/domain/backups/drills/request.ts';
import { reapOrphans } from '../../src/domain/backups/schedule/reap.ts';
import { newId } from '../../src/ids.ts';
import { createLogger } from '../../src/log.ts';
import { backupQueries } from '../../src/domain/backups/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { Jobs, createBoss } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { readAll, type ObjectStore } from '../../src/storage/object-store.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { call, type Harness, createTestEnv, useWeb } from '../support/harness.ts';
import { withAdmin } from '../support/pg.ts';
import { createAppDatabase, seedSource, setEnvDatabase, waitFor, type AppDatabase, idleJobs } from './support.ts';

type Json = Record<string, unknown>;
const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const project = `orgs/drill-org/projects/p${randomBytes(3).toString('hex')}`;
let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let store: ObjectStore;
let source: AppDatabase;
let env: CreatedEnv;

async function backupNow(): Promise<Json> {
  const created = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups`, { key: env.secretKey, body: {} });
  return waitFor(
    'the backup',
    async () => {
      const res = await call<Json>(web.url, 'GET', `/v1/backups/${String(created.body.id)}`, { key: env.secretKey });
      return res.body.state === 'succeeded' || res.body.state === 'failed' ? res.body : undefined;
    },
    60_000,
  );
}

async function drill(): Promise<Json> {
  const res = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups:drill`, { key: env.secretKey, body: {} });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body).toMatchObject({ done: false, metadata: { kind: 'drill', target_env: env.env.name } });
  return waitFor(
    'the drill',
    async () => {
      const r = await call<Json>(web.url, 'GET', `/v1/${String(res.body.name)}`, { key: env.secretKey });
      return r.body.done === true ? r.body : undefined;
    },
    60_000,
  );
}

/** Scratch databases of this file's drills still on the server. */
async function scratchDatabases(): Promise<number> {
  const ids = (await h.db('backup_operations').where({ kind: 'drill' }).pluck('id')).map(
    (id: string) => `cairn_drill_${id}`,
  );
  return withAdmin(
    async (c) => (await c.query('select 1 from pg_database where datname = any($1)', [ids])).rows.length,
  );
}

const stack = useWeb({}, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  ({ h, web } = stack);
  store = createObjectStore(h.config);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  source = await createAppDatabase(seedSource);
  env = await createTestEnv(h.db, `${project}/envs/prod`, 'test');
  await setEnvDatabase(h.db, h.config, env.env.id, source.url);
});

afterAll(async () => {
  await worker?.stop();
  await store?.deleteBucket(bucket).catch(() => undefined);
  await source?.drop();
});

describe('settings', () => {
  it('defaults to weekly drills in a test environment and none in a live one, and keeps a chosen schedule', async () => {
    const live = await createTestEnv(h.db, `${project}/envs/live`, 'live');
    const ofTest = await call<Json>(web.url, 'GET', `/v1/${env.env.name}/backup_settings`, { key: env.secretKey });
    const ofLive = await call<Json>(web.url, 'GET', `/v1/${live.env.name}/backup_settings`, { key: live.secretKey });
    expect(ofTest.body).toMatchObject({ drill_schedule: 'weekly' });
    expect(ofLive.body).toMatchObject({ drill_schedule: 'off' });
    const put = await call<Json>(web.url, 'PUT', `/v1/${live.env.name}/backup_settings`, {
      key: live.secretKey,
      body: { ...ofLive.body, drill_schedule: 'daily' },
    });
    expect(put).toMatchObject({ status: 200, body: { drill_schedule: 'daily' } });
    const { drill_schedule: _d, ...withoutDrill } = put.body;
    const kept = await call<Json>(web.url, 'PUT', `/v1/${live.env.name}/backup_settings`, {
      key: live.secretKey,
      body: withoutDrill,
    });
    expect(kept.body).toMatchObject({ drill_schedule: 'daily' });
    const bad = await call<Json>(web.url, 'PUT', `/v1/${live.env.name}/backup_settings`, {
      key: live.secretKey,
      body: { ...withoutDrill, drill_schedule: 'hourly' },
    });
    expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });

  it('refuses a drill before there is a succeeded backup, saying how to take one', async () => {
    const res = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups:drill`, {
      key: env.secretKey,
      body: {},
    });
    expect(res).toMatchObject({
      status: 409,
      body: { code: 'conflict', message: expect.stringContaining('cairn backups create') },
    });
  });
});

describe('a drill', () => {
  let backup: Json;

  it('passes on a real backup, records the verdict on it and drops its scratch database', async () => {
    backup = await backupNow();
    expect(backup).toMatchObject({ state: 'succeeded', verification: null });
    const op = await drill();
    expect(op).toMatchObject({
      metadata: { kind: 'drill', backup_id: backup.id, phase: 'done' },
      response: { backup_id: backup.id, verification: { result: 'passed' } },
    });
    const after = await call<Json>(web.url, 'GET', `/v1/backups/${String(backup.id)}`, { key: env.secretKey });
    expect(after.body).toMatchObject({ verification: { result: 'passed' }, verified_time: expect.any(String) });
    expect(await scratchDatabases()).toBe(0);
    expect((await call<Json>(web.url, 'GET', '/readyz')).body).toMatchObject({
      status: 'ready',
      backup_drills: { failed: 0 },
    });
  });

  it('fails on a backup whose rows differ from what was recorded at dump time, naming the table', async () => {
    const row = (await backupQueries(h.db).backup(String(backup.id)))!;
    const stats = { ...row.table_stats!, 'public.orders': { ...row.table_stats!['public.orders']!, rows: 5999 } };
    await backupQueries(h.db).updateBackup(row.id, { table_stats: stats });
    try {
      const op = await drill();
      expect(op.response).toMatchObject({
        verification: {
          result: 'failed',
          reason: 'public.orders had 5999 rows at dump time and 6000 after the restore',
        },
      });
    } finally {
      await backupQueries(h.db).updateBackup(row.id, { table_stats: row.table_stats });
    }
  });

  it('fails on a backup tampered with in the store, and /readyz and the CLI show it', async () => {
    const row = (await backupQueries(h.db).backup(String(backup.id)))!;
    const got = await store.get(bucket, row.object_key);
    const bytes = Buffer.from(await readAll(got!.body));
    const original = Buffer.from(bytes);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    await store.put(bucket, row.object_key, bytes, { metadata: { ...got!.metadata } });
    try {
      const op = await drill();
      expect(op.response).toMatchObject({
        verification: { result: 'failed', reason: expect.stringMatching(/sha256|authentication/) },
      });
      expect(await scratchDatabases()).toBe(0);
      expect((await call<Json>(web.url, 'GET', '/readyz')).body).toMatchObject({
        status: 'ready',
        backup_drills: { failed: 1 },
      });

      const ctx = createCliContext({ CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey });
      const program = new Command('cairn').exitOverride();
      register(program, ctx);
      const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      try {
        await program.parseAsync(['node', 'cairn', 'backups', 'list', '--env', env.env.name]);
        expect(stdout.mock.calls.map((c) => String(c[0])).join('')).toMatch(
          new RegExp(`${String(backup.id)}.*drill failed[^\\n]*\\n\\s+drill: .*(sha256|authentication)`),
        );
      } finally {
        stdout.mockRestore();
      }
    } finally {
      await store.put(bucket, row.object_key, original, { metadata: { ...got!.metadata } });
    }
    // The object put back, a new drill passes and /readyz counts nothing again.
    expect((await drill()).response).toMatchObject({ verification: { result: 'passed' } });
    expect((await call<Json>(web.url, 'GET', '/readyz')).body).toMatchObject({ backup_drills: { failed: 0 } });
  });
});

describe('recovery', () => {
  it('is not reaped as an orphan while it runs: drills hold no environment lock', async () => {
    const id = newId('op');
    await h.db('backup_operations').insert({
      id,
      kind: 'drill',
      requester_env_id: env.env.id,
      env_id: env.env.id,
      backup_id: String((await backupQueries(h.db).latestSucceeded(env.env.id))!.id),
      state: 'running',
    });
    try {
      const reaped = await reapOrphans({
        config: h.config,
        db: h.db,
        store,
        log: createLogger({ name: 'test', level: 'silent' }),
        jobs: idleJobs(h.config),
      });
      expect(reaped.operations).not.toContain(id);
      expect(await h.db('backup_operations').where({ id }).first()).toMatchObject({ state: 'running' });
    } finally {
      await h.db('backup_operations').where({ id }).delete();
    }
  });
});

describe('the hourly cron', () => {
  it('starts a drill only where one is due', async () => {
    const boss = createBoss(h.config, 'web');
    await boss.start();
    try {
      const jobs = new Jobs(boss, queues);
      // prod was drilled just now: a weekly schedule is not due for a week.
      expect(await startDueDrills({ db: h.db, jobs })).toBe(0);
      const inEightDays = new Date(Date.now() + 8 * 86_400_000);
      const started = await startDueDrills({ db: h.db, jobs }, inEightDays);
      expect(started).toBe(1);
      const op = await h
        .db('backup_operations')
        .where({ env_id: env.env.id, kind: 'drill' })
        .whereIn('state', ['pending', 'running'])
        .first();
      expect(op).toBeDefined();
      // While it is queued, nothing more starts for prod; turned off, prod is never due.
      expect(await startDueDrills({ db: h.db, jobs }, inEightDays)).toBe(0);
      await waitFor(
        'the scheduled drill',
        async () => (await h.db('backup_operations').where({ id: op.id }).first())?.state === 'succeeded',
      );
      await call(web.url, 'PUT', `/v1/${env.env.name}/backup_settings`, {
        key: env.secretKey,
        body: {
          schedule_enabled: true,
          retention_days: { daily: 7, weekly: 30, monthly: 90, manual: 90 },
          drill_schedule: 'off',
        },
      });
      expect(await startDueDrills({ db: h.db, jobs }, new Date(Date.now() + 30 * 86_400_000))).toBe(0);
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
  });
});
