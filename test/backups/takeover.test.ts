// A backup or a restore whose worker process is SIGKILLed is settled by another worker within
// seconds, not when pg-boss's 2-minute heartbeat or the 5-minute reaper comes round: the dead
// backup's multipart upload is aborted and the same backup runs again; the dead restore ends with
// the truth about its target and its temporary folder removed (the survivor runs on the same
// machine, with the same temporary directory). The real worker runs as a child process; a survivor
// worker runs in this process. A worker taken for gone while alive (its sessions cut by a database
// restart) cannot commit a restore another worker settled, nor have it settled under its commit.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backupQueries, type OperationRow } from '../../src/domain/backups/queries.ts';
import { reconcileRestore } from '../../src/domain/backups/restore/reconcile.ts';
import { settleBackup } from '../../src/domain/backups/settle.ts';
import { newId } from '../../src/ids.ts';
import { createLogger } from '../../src/log.ts';
import { requestManualBackup } from '../../src/domain/backups/capture/request.ts';
import { requestRestore } from '../../src/domain/backups/restore/request.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { incompleteUploads } from '../../src/storage/s3-listing.ts';
import type { S3ObjectStore } from '../../src/storage/s3.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import {
  createAppDatabase,
  idleJobs,
  query,
  seedSource,
  setEnvDatabase,
  tableChecksums,
  waitFor,
  type AppDatabase,
} from './support.ts';

const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const project = `orgs/takeover-org/projects/p${randomBytes(3).toString('hex')}`;
const temp = mkdtempSync(join(tmpdir(), 'cairn-takeover-'));
const savedTmp = process.env.TMPDIR;
let h: Harness;
let store: ObjectStore;
let boss: PgBoss;
let source: AppDatabase;
let target: AppDatabase;
let prod: CreatedEnv;
let staging: CreatedEnv;
let survivor: WorkerHandle<typeof queues> | undefined;
/** What the restore restores, taken before the tests. */
let backupId: string;

beforeAll(async () => {
  // The survivor shares the killed worker's temporary directory, as two workers on one machine do.
  process.env.TMPDIR = temp;
  h = await createHarness({ CAIRN_BACKUP_BUCKET: bucket });
  store = createObjectStore(h.config);
  // Big enough that psql is still inside the data when the worker is killed.
  [source, target] = await Promise.all([
    createAppDatabase(
      `${seedSource}\ncreate table bulk as select g as id, repeat(md5(g::text), 4) as body from generate_series(1, 300000) g;`,
    ),
    createAppDatabase(
      "create table leftovers (id int primary key, note text); insert into leftovers values (1, 'kept');",
    ),
  ]);
  prod = await createTestEnv(h.db, `${project}/envs/prod`, 'test');
  staging = await createTestEnv(h.db, `${project}/envs/staging`, 'test');
  await setEnvDatabase(h.db, h.config, prod.env.id, source.url);
  await setEnvDatabase(h.db, h.config, staging.env.id, target.url);
  boss = createBoss(h.config, 'web');
  await boss.start();
  backupId = await backupOfProd();
});

afterAll(async () => {
  await survivor?.stop();
  await boss?.stop({ graceful: false, close: true });
  await store?.deleteBucket(bucket).catch(() => undefined);
  await source?.drop();
  await target?.drop();
  await h?.close();
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(temp, { recursive: true, force: true });
});

const deps = () => ({ config: h.config, db: h.db, jobs: new Jobs(boss, queues) });

function startChildWorker(): ChildProcess {
  return spawn(process.execPath, ['workers/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.database.url,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      CAIRN_BACKUP_BUCKET: bucket,
      LOG_LEVEL: 'warn',
      TMPDIR: temp,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * The ids of the multipart uploads open under `key`, read from the S3 server (the store's own
 * listing answers keys only, and the run taken over opens its upload under the same key).
 */
async function uploadIds(key: string): Promise<string[]> {
  return (await incompleteUploads((store as S3ObjectStore).client, bucket, key)).map((u) => u.uploadId);
}

/** Started once the child holds its job, so that the job is the child's; stopped after the test. */
async function startSurvivor(): Promise<void> {
  survivor = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
}

async function stopSurvivor(): Promise<void> {
  await survivor?.stop();
  survivor = undefined;
}

const killedIn = async (child: ChildProcess, exited: Promise<unknown>): Promise<number> => {
  const at = Date.now();
  child.kill('SIGKILL');
  await exited;
  return at;
};

it("settles a killed worker's backup within seconds, its upload aborted, and runs it again to success", async () => {
  // pg_dump locks every table before it writes a byte; holding one makes it wait right there.
  const blocker = new pg.Client({ connectionString: source.url });
  await blocker.connect();
  await blocker.query('begin; lock table orders in access exclusive mode');
  const child = startChildWorker();
  const exited = once(child, 'exit');
  try {
    const row = await requestManualBackup(deps(), prod.env.id);
    const uploads = await waitFor('the backup to run with its upload open', async () => {
      const b = await backupQueries(h.db).backup(row.id);
      const open = await uploadIds(row.object_key);
      return b?.state === 'running' && open.length > 0 ? open : undefined;
    });
    await startSurvivor();
    const killed = await killedIn(child, exited);
    await waitFor(
      'the backup to be handed back',
      async () => (await backupQueries(h.db).backup(row.id))!.interruptions === 1,
      10_000,
    );
    const settledIn = Date.now() - killed;
    const left = await uploadIds(row.object_key);
    console.log(`takeover: backup handed back ${settledIn} ms after the kill; uploads left ${left.length}`);
    expect(settledIn).toBeLessThan(10_000);
    // The dead run's upload is gone (the run taken over may have opened its own since).
    for (const dead of uploads) expect(left).not.toContain(dead);

    await blocker.query('rollback');
    const done = await waitFor(
      'the same backup to succeed',
      async () => {
        const b = await backupQueries(h.db).backup(row.id);
        return b?.state === 'succeeded' || b?.state === 'failed' ? b : undefined;
      },
      60_000,
    );
    expect(done).toMatchObject({ state: 'succeeded', interruptions: 1, error: null });
    expect(await store.listIncompleteUploads(bucket, row.object_key)).toEqual([]);
    expect(await h.db('backups').where({ env_id: prod.env.id }).count('* as n')).toEqual([{ n: '2' }]);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await blocker.query('rollback').catch(() => undefined);
    await blocker.end().catch(() => undefined);
    await stopSurvivor();
  }
});

/** The worker's psql child, once it is running. */
function psqlOf(worker: ChildProcess): number | undefined {
  let out: string;
  try {
    out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(worker.pid)], { encoding: 'utf8' });
  } catch {
    return undefined; // ps exits 1 when the worker has no children yet
  }
  const line = out.split('\n').find((l) => l.trim().endsWith('psql'));
  return line ? Number(line.trim().split(/\s+/)[0]) : undefined;
}

/** A backup of prod, by an in-process worker. */
async function backupOfProd(): Promise<string> {
  await startSurvivor();
  try {
    const row = await requestManualBackup(deps(), prod.env.id);
    await waitFor('the backup', async () => (await backupQueries(h.db).backup(row.id))?.state === 'succeeded', 60_000);
    return row.id;
  } finally {
    await stopSurvivor();
  }
}

const restoreFolders = () => readdirSync(temp).filter((n) => n.startsWith('cairn-restore-'));

it("settles a killed worker's restore within seconds, truthfully, with its temporary folder gone", async () => {
  const before = await tableChecksums(target.url);
  const child = startChildWorker();
  const exited = once(child, 'exit');
  let psql: number | undefined;
  try {
    const { op } = await requestRestore(deps(), prod.env.id, backupId, staging.env.name);
    psql = await waitFor(
      'psql to be inside the data',
      async () => {
        const pid = psqlOf(child);
        const inside = await query(
          target.url,
          "select 1 from pg_stat_activity where datname = $1 and application_name = 'cairn-restore' and query like 'COPY public.bulk%'",
          [target.name],
        );
        return pid && inside.length > 0 ? pid : undefined;
      },
      60_000,
    );
    expect(restoreFolders()).toHaveLength(1);
    await startSurvivor();
    // Frozen, so that it is still inside the data (its transaction open) when its worker dies.
    process.kill(psql, 'SIGSTOP');
    const killed = await killedIn(child, exited);
    process.kill(psql, 'SIGCONT');
    const settled = await waitFor(
      'the restore to be settled',
      async () => {
        const o = await backupQueries(h.db).operation(op.id);
        return o?.state === 'succeeded' || o?.state === 'failed' ? o : undefined;
      },
      10_000,
    );
    const settledIn = Date.now() - killed;
    const folders = restoreFolders();
    console.log(`takeover: restore settled ${settledIn} ms after the kill; folders left ${folders.length}`);
    expect(settledIn).toBeLessThan(10_000);
    expect(folders).toEqual([]);
    // It never let COMMIT through: failed, and the target is as it was.
    expect(settled.state).toBe('failed');
    expect(settled.error?.message).toMatch(/stopped before it finished.*the target was not changed/);
    await waitFor(
      'the orphaned psql session to end',
      async () => {
        const r = await query(
          target.url,
          "select 1 from pg_stat_activity where datname = $1 and application_name = 'cairn-restore'",
          [target.name],
        );
        return r.length === 0;
      },
      60_000,
    );
    expect(await tableChecksums(target.url)).toEqual(before);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (psql)
      try {
        process.kill(psql, 'SIGCONT');
      } catch {
        /* ended */
      }
    await stopSurvivor();
  }
});

it('a restore settled by another worker never commits under it, and one whose id came meanwhile is read from its target', async () => {
  const reconcileDeps = {
    config: h.config,
    db: h.db,
    store,
    log: createLogger({ name: 'test', level: 'silent' }),
    jobs: idleJobs(h.config),
  };
  const q = backupQueries(h.db);
  const running = async (): Promise<OperationRow> => {
    const op = await q.insertOperation({
      id: newId('op'),
      kind: 'restore',
      requester_env_id: prod.env.id,
      env_id: staging.env.id,
      backup_id: backupId,
    });
    await q.updateOperation(op.id, { state: 'running' });
    return (await q.operation(op.id))!;
  };

  // Settled first: the live worker's word that lets COMMIT through is refused.
  const settledFirst = await running();
  expect(await reconcileRestore(reconcileDeps, settledFirst)).toBe('failed');
  expect(await q.recordRestoreXid(settledFirst.id, '12345')).toBe(false);
  expect(await q.operation(settledFirst.id)).toMatchObject({ state: 'failed', restore_xid: null });

  // The word came between the settling's look and its write: the target is asked instead.
  const session = new pg.Client({ connectionString: target.url });
  await session.connect();
  try {
    const raced = await running();
    await session.query('begin');
    const xid = String((await session.query<{ x: string }>('select txid_current()::text as x')).rows[0]!.x);
    expect(await q.recordRestoreXid(raced.id, xid)).toBe(true);
    expect(await reconcileRestore(reconcileDeps, raced)).toBe('undecided');
    expect(await q.operation(raced.id)).toMatchObject({ state: 'running', restore_xid: xid });
    await session.query('rollback');
    expect(await reconcileRestore(reconcileDeps, raced)).toBe('failed');
    expect((await q.operation(raced.id))?.error?.message).toMatch(/rolled back, the target was not changed/);
  } finally {
    await session.end();
  }
});

it('a backup run whose backup was handed to another run meanwhile settles nothing', async () => {
  const row = (await backupQueries(h.db).latestSucceeded(prod.env.id))!;
  const q = backupQueries(h.db);
  // Taken over while its run was alive: handed back and run again (one interruption more).
  await q.updateBackup(row.id, { state: 'running', interruptions: 1 });
  const late = { config: h.config, db: h.db, jobs: idleJobs(h.config) };
  expect(await settleBackup(late, row.id, { state: 'failed', error: 'pg_dump failed' }, 0)).toBe(false);
  expect(await q.backup(row.id)).toMatchObject({ state: 'running', interruptions: 1, error: null });
  // The run that holds it now settles it.
  expect(await settleBackup(late, row.id, { state: 'failed', error: 'pg_dump failed' }, 1)).toBe(true);
  expect(await q.backup(row.id)).toMatchObject({ state: 'failed', error: 'pg_dump failed' });
});
