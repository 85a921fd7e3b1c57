// A worker killed or stopped mid-backup: its multipart upload is aborted at once (by the reaper,
// the job's redelivery, or the stopping worker itself) and the same backup runs again and ends
// `succeeded`, up to three interruptions. The real worker runs as a child process and gets SIGKILL
// or SIGTERM while its upload is open: a lock held on a source table keeps pg_dump waiting, so the
// moment is deterministic.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reapOrphans } from '../../src/domain/backups/schedule/reap.ts';
import { backupQueries, type BackupRow } from '../../src/domain/backups/queries.ts';
import { requestManualBackup } from '../../src/domain/backups/capture/request.ts';
import type { PgBoss } from 'pg-boss';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { createLogger } from '../../src/log.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { createAppDatabase, seedSource, setEnvDatabase, waitFor, type AppDatabase, idleJobs } from './support.ts';

let h: Harness;
let store: ObjectStore;
let source: AppDatabase;
const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;

beforeAll(async () => {
  h = await createHarness({ CAIRN_BACKUP_BUCKET: bucket });
  store = createObjectStore(h.config);
  source = await createAppDatabase(seedSource);
});

afterAll(async () => {
  await store?.deleteBucket(bucket).catch(() => undefined);
  await source?.drop();
  await h?.close();
});

/**
 * Starts the real worker as a child process, has it start a backup whose pg_dump waits on a lock
 * (its multipart upload already open), then sends it `signal`. Answers the backup row once the
 * worker has exited; the lock is released by then.
 */
async function interruptWorkerMidBackup(
  boss: PgBoss,
  envId: string,
  signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL',
): Promise<BackupRow> {
  // pg_dump locks every table before it writes a byte; holding one makes it wait right there.
  const blocker = new pg.Client({ connectionString: source.url });
  await blocker.connect();
  await blocker.query('begin; lock table orders in access exclusive mode');
  const child = spawn(process.execPath, ['workers/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.database.url,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      CAIRN_BACKUP_BUCKET: bucket,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    const row = await requestManualBackup({ config: h.config, db: h.db, jobs: new Jobs(boss, queues) }, envId);
    await waitFor('the backup to run with its upload open and pg_dump waiting', async () => {
      const b = await backupQueries(h.db).backup(row.id);
      if (b?.state !== 'running') return false;
      const uploads = await store.listIncompleteUploads(bucket, row.object_key);
      const waiting = await h.db.raw<{ rows: unknown[] }>(
        "select 1 from pg_stat_activity where datname = ? and application_name = 'cairn-backup' and wait_event_type = 'Lock'",
        [source.name],
      );
      return uploads.length > 0 && waiting.rows.length > 0;
    });
    child.kill(signal);
    const [code] = (await exited) as [number | null];
    if (signal === 'SIGTERM') expect(code).toBe(0);
    return row;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await blocker.query('rollback').catch(() => undefined);
    await blocker.end().catch(() => undefined);
  }
}

/** Handed back: pending again, one interruption counted, nothing left in the bucket. */
async function expectHandedBack(row: BackupRow): Promise<void> {
  expect(await backupQueries(h.db).backup(row.id)).toMatchObject({ state: 'pending', interruptions: 1, error: null });
  expect(await store.head(bucket, row.object_key)).toBeUndefined();
  expect(await store.listIncompleteUploads(bucket, row.object_key)).toEqual([]);
}

/** The same backup, run again to the end. */
async function expectSucceededAgain(row: BackupRow): Promise<void> {
  const done = await waitFor(
    'the backup to run again and succeed',
    async () => {
      const b = await backupQueries(h.db).backup(row.id);
      return b?.state === 'succeeded' || b?.state === 'failed' ? b : undefined;
    },
    60_000,
  );
  expect(done).toMatchObject({ state: 'succeeded', interruptions: 1, error: null });
  expect(await store.head(bucket, row.object_key)).toBeDefined();
  expect(await store.listIncompleteUploads(bucket, row.object_key)).toEqual([]);
}

it("the reaper aborts a killed worker's upload at once and hands the backup back", async () => {
  const env = await createTestEnv(h.db);
  await setEnvDatabase(h.db, h.config, env.env.id, source.url);
  const boss = createBoss(h.config, 'web');
  await boss.start();
  try {
    const row = await interruptWorkerMidBackup(boss, env.env.id);
    const deps = {
      config: h.config,
      db: h.db,
      store,
      log: createLogger({ name: 'test', level: 'silent' }),
      jobs: idleJobs(h.config),
    };
    // The killed worker's lock session ends when Postgres sees its socket close.
    const reaped = await waitFor('the orphan to be reaped', async () => {
      const out = await reapOrphans(deps);
      return out.backups.includes(row.id) ? out : undefined;
    });
    expect(reaped.backups).toEqual([row.id]);
    await expectHandedBack(row);
    // A second reap finds nothing: the row is no longer running.
    expect(await reapOrphans(deps)).toEqual({ backups: [], operations: [] });
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
});

it("runs the same backup again to success when pg-boss redelivers a killed worker's job", async () => {
  const env = await createTestEnv(h.db);
  await setEnvDatabase(h.db, h.config, env.env.id, source.url);
  // Its supervise() passes may run every second (the workers' own run every minute).
  const boss = createBoss(h.config, 'web', { monitorIntervalSeconds: 1 });
  await boss.start();
  let worker: WorkerHandle<typeof queues> | undefined;
  try {
    // The registry's heartbeat is 120 s; pg-boss's shortest is 10 s, copied onto jobs sent after this.
    await boss.updateQueue('backups.capture', { heartbeatSeconds: 10, retryDelay: 1 });
    const row = await interruptWorkerMidBackup(boss, env.env.id);
    const [job] = await boss.findJobs<{ backup_id: string }>('backups.capture', { data: { backup_id: row.id } });
    expect(job).toMatchObject({ state: 'active', heartbeatSeconds: 10 });

    // Another worker picks the job up once a supervisor pass has failed it for its stale heartbeat.
    worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
    await waitFor(
      'the redelivered job to run the backup',
      async () => {
        await boss.supervise('backups.capture');
        return (await backupQueries(h.db).backup(row.id))?.interruptions === 1;
      },
      60_000,
    );
    await expectSucceededAgain(row);
  } finally {
    await worker?.stop();
    await boss.stop({ graceful: false, close: true });
  }
});

it('a worker stopped with SIGTERM hands its backup back at once, and the same backup succeeds on the next worker', async () => {
  const env = await createTestEnv(h.db);
  await setEnvDatabase(h.db, h.config, env.env.id, source.url);
  const boss = createBoss(h.config, 'web');
  await boss.start();
  let worker: WorkerHandle<typeof queues> | undefined;
  try {
    await boss.updateQueue('backups.capture', { retryDelay: 1 });
    const row = await interruptWorkerMidBackup(boss, env.env.id, 'SIGTERM');
    await expectHandedBack(row);
    worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
    await expectSucceededAgain(row);
  } finally {
    await worker?.stop();
    await boss.stop({ graceful: false, close: true });
  }
});

it('gives up after three interruptions, with nothing left in the bucket', async () => {
  const env = await createTestEnv(h.db);
  await setEnvDatabase(h.db, h.config, env.env.id, source.url);
  const boss = createBoss(h.config, 'web');
  await boss.start();
  try {
    const row = await requestManualBackup({ config: h.config, db: h.db, jobs: new Jobs(boss, queues) }, env.env.id);
    await backupQueries(h.db).updateBackup(row.id, { state: 'running', interruptions: 3 });
    const deps = {
      config: h.config,
      db: h.db,
      store,
      log: createLogger({ name: 'test', level: 'silent' }),
      jobs: idleJobs(h.config),
    };
    await reapOrphans(deps);
    expect(await backupQueries(h.db).backup(row.id)).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('stopped before it finished, 4 times; not tried again'),
    });
    expect(await store.listIncompleteUploads(bucket, row.object_key)).toEqual([]);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
});
