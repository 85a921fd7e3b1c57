// A restore whose worker is killed tells the truth (the real worker, a child process, SIGKILLed):
// at the start (its pre-restore backup waiting on a lock), mid-replay (psql inside the data) and after the last
// statement (the transaction id recorded, COMMIT let through or not), the operation ends done and
// its outcome matches the target: `failed … not changed` only when the target is unchanged,
// `succeeded` when the restore committed. No temporary file remains.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reapOrphans } from '../../src/domain/backups/schedule/reap.ts';
import { reconcileRestore } from '../../src/domain/backups/restore/reconcile.ts';
import { newId } from '../../src/ids.ts';
import { backupQueries, type OperationRow } from '../../src/domain/backups/queries.ts';
import { requestRestore } from '../../src/domain/backups/restore/request.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { createLogger } from '../../src/log.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { startWorker } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, type Harness, createTestEnv } from '../support/harness.ts';
import {
  createAppDatabase,
  query,
  seedSource,
  setEnvDatabase,
  tableChecksums,
  waitFor,
  type AppDatabase,
  idleJobs,
} from './support.ts';

const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const project = `orgs/killed-org/projects/p${randomBytes(3).toString('hex')}`;
let h: Harness;
let store: ObjectStore;
let boss: PgBoss;
let source: AppDatabase;
let target: AppDatabase;
let prod: CreatedEnv;
let staging: CreatedEnv;
let backupId: string;
const temp = mkdtempSync(join(tmpdir(), 'cairn-killed-restore-'));

beforeAll(async () => {
  h = await createHarness({ CAIRN_BACKUP_BUCKET: bucket });
  store = createObjectStore(h.config);
  // Big enough that psql is still inside the data when it is frozen.
  [source, target] = await Promise.all([
    createAppDatabase(
      `${seedSource}\ncreate table bulk as select g as id, repeat(md5(g::text), 4) as body from generate_series(1, 300000) g;`,
    ),
    createAppDatabase(
      "create table leftovers (id int primary key, note text); insert into leftovers values (1, 'only in the target');",
    ),
  ]);
  prod = await createTestEnv(h.db, `${project}/envs/prod`, 'test');
  staging = await createTestEnv(h.db, `${project}/envs/staging`, 'test');
  await setEnvDatabase(h.db, h.config, prod.env.id, source.url);
  await setEnvDatabase(h.db, h.config, staging.env.id, target.url);
  boss = createBoss(h.config, 'web');
  await boss.start();
  // One backup of prod, taken by an in-process worker.
  const worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  try {
    const { requestManualBackup } = await import('../../src/domain/backups/capture/request.ts');
    backupId = (await requestManualBackup({ config: h.config, db: h.db, jobs: new Jobs(boss, queues) }, prod.env.id))
      .id;
    await waitFor(
      'the backup',
      async () => (await backupQueries(h.db).backup(backupId))?.state === 'succeeded',
      60_000,
    );
  } finally {
    await worker.stop();
  }
});

afterAll(async () => {
  await boss?.stop({ graceful: false, close: true });
  await store?.deleteBucket(bucket).catch(() => undefined);
  await source?.drop();
  await target?.drop();
  await h?.close();
  rmSync(temp, { recursive: true, force: true });
});

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

const restoreBackend = async (where: string): Promise<boolean> => {
  const r = await query(
    target.url,
    `select 1 from pg_stat_activity where datname = $1 and application_name = 'cairn-restore' and ${where}`,
    [target.name],
  );
  return r.length > 0;
};

/** Runs the reaper (with the worker's temporary folder as its own) until the operation is done. */
async function settle(opId: string): Promise<OperationRow> {
  const deps = {
    config: h.config,
    db: h.db,
    store,
    log: createLogger({ name: 'test', level: 'silent' }),
    jobs: idleJobs(h.config),
  };
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = temp;
  try {
    return await waitFor(
      'the operation to be settled',
      async () => {
        await reapOrphans(deps);
        const op = await backupQueries(h.db).operation(opId);
        return op && (op.state === 'succeeded' || op.state === 'failed') ? op : undefined;
      },
      60_000,
    );
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

async function expectTruth(op: OperationRow, before: Record<string, string>): Promise<void> {
  // The orphaned psql, if any, has ended: nothing of this restore is still open in the target.
  await waitFor('the restore session to end', async () => !(await restoreBackend('true')), 60_000);
  const after = await tableChecksums(target.url);
  if (op.state === 'succeeded') expect(after).toEqual(await tableChecksums(source.url));
  else {
    expect(op.error).toMatchObject({
      message: expect.stringMatching(/stopped before it finished.*the target was not changed/),
    });
    expect(after).toEqual(before);
  }
  expect(readdirSync(temp).filter((n) => n.startsWith('cairn-restore-'))).toEqual([]);
}

async function restore(): Promise<string> {
  const { op } = await requestRestore(
    { config: h.config, db: h.db, jobs: new Jobs(boss, queues) },
    prod.env.id,
    backupId,
    staging.env.name,
  );
  return op.id;
}

it('killed at the start, its pre-restore backup waiting on a lock: failed, and the target is unchanged', async () => {
  const before = await tableChecksums(target.url);
  const blocker = new pg.Client({ connectionString: target.url });
  await blocker.connect();
  await blocker.query('begin; lock table leftovers in access exclusive mode');
  const worker = startChildWorker();
  const exited = once(worker, 'exit');
  try {
    const id = await restore();
    await waitFor(
      'the pre-restore backup to wait on the lock',
      async () => {
        const r = await query(
          target.url,
          "select 1 from pg_stat_activity where datname = $1 and application_name = 'cairn-backup' and wait_event_type = 'Lock'",
          [target.name],
        );
        return r.length > 0;
      },
      60_000,
    );
    worker.kill('SIGKILL');
    await exited;
    await blocker.query('rollback');
    const op = await settle(id);
    expect(op.state).toBe('failed');
    await expectTruth(op, before);
    // Its pre-restore copy has no job of its own: it ends failed, its upload aborted.
    const pre = (await backupQueries(h.db).backup(op.pre_backup_id!))!;
    expect(pre).toMatchObject({ state: 'failed', trigger: 'pre_restore' });
    expect(await store.listIncompleteUploads(bucket, pre.object_key)).toEqual([]);
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    await blocker.end().catch(() => undefined);
  }
});

it('killed mid-replay, psql inside the data: failed, and the target is unchanged', async () => {
  const before = await tableChecksums(target.url);
  const worker = startChildWorker();
  const exited = once(worker, 'exit');
  let psql: number | undefined;
  try {
    const id = await restore();
    psql = await waitFor(
      'psql to be inside the data',
      async () => {
        const pid = psqlOf(worker);
        return pid && (await restoreBackend("query like 'COPY public.bulk%'")) ? pid : undefined;
      },
      60_000,
    );
    process.kill(psql, 'SIGSTOP');
    worker.kill('SIGKILL');
    await exited;
    process.kill(psql, 'SIGCONT');
    const op = await settle(id);
    expect(op.state).toBe('failed');
    await expectTruth(op, before);
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    if (psql)
      try {
        process.kill(psql, 'SIGCONT');
      } catch {
        /* ended */
      }
  }
});

it('killed after the last statement, the transaction id recorded: the outcome is what the target holds', async () => {
  const before = await tableChecksums(target.url);
  const worker = startChildWorker();
  const exited = once(worker, 'exit');
  try {
    const id = await restore();
    await waitFor(
      'the transaction id to be recorded',
      async () => Boolean((await backupQueries(h.db).operation(id))?.restore_xid),
      60_000,
    );
    worker.kill('SIGSTOP');
    worker.kill('SIGKILL');
    await exited;
    const op = await settle(id);
    // Settled from the transaction's own status in the target, whichever way it went.
    if (op.state === 'failed') expect(op.error?.message).toMatch(/its transaction rolled back/);
    await expectTruth(op, before);
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  }
});

it("settles a dead worker's restore from its transaction in the target: open, rolled back, committed", async () => {
  const deps = {
    config: h.config,
    db: h.db,
    store,
    log: createLogger({ name: 'test', level: 'silent' }),
    jobs: idleJobs(h.config),
  };
  const session = new pg.Client({ connectionString: target.url });
  await session.connect();
  try {
    const row = async (xid: string) =>
      backupQueries(h.db)
        .insertOperation({
          id: newId('op'),
          kind: 'restore',
          requester_env_id: prod.env.id,
          env_id: staging.env.id,
          backup_id: backupId,
        })
        .then(async (op) => {
          await backupQueries(h.db).updateOperation(op.id, { state: 'running', restore_xid: xid });
          return (await backupQueries(h.db).operation(op.id))!;
        });
    const open = async () => {
      await session.query('begin');
      return String((await session.query<{ x: string }>('select txid_current()::text as x')).rows[0]!.x);
    };

    const rolledBack = await row(await open());
    expect(await reconcileRestore(deps, rolledBack)).toBe('undecided');
    expect(await backupQueries(h.db).operation(rolledBack.id)).toMatchObject({ state: 'running' });
    await session.query('rollback');
    expect(await reconcileRestore(deps, rolledBack)).toBe('failed');
    expect(await backupQueries(h.db).operation(rolledBack.id)).toMatchObject({
      state: 'failed',
      error: { message: expect.stringMatching(/rolled back, the target was not changed/) },
    });

    const committed = await row(await open());
    await session.query('commit');
    expect(await reconcileRestore(deps, committed)).toBe('succeeded');
    expect(await backupQueries(h.db).operation(committed.id)).toMatchObject({ state: 'succeeded', phase: 'done' });
  } finally {
    await session.end();
  }
});
