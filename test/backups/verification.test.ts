// What "succeeded" guarantees, and what a restore refuses. A backup is succeeded only once its
// stored object read back whole; a backup whose pg_dump dies, or whose object does not read back
// as written, ends failed with a reason and leaves nothing in the bucket; an object emptied or
// cut in the store after upload, or an authentic backup that holds less than the whole dump (as
// the empty first backups did), is refused before the target's transaction commits.
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCapture } from '../../src/domain/backups/capture/capture.ts';
import { keyringFromConfig, open } from '../../src/crypto.ts';
import { encryptStream } from '../../src/domain/backups/format/format.ts';
import { backupQueries, type BackupRow } from '../../src/domain/backups/queries.ts';
import { requestManualBackup } from '../../src/domain/backups/capture/request.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { Jobs, createBoss } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { createLogger } from '../../src/log.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { readAll, type ObjectStore } from '../../src/storage/object-store.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
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

type Json = Record<string, unknown>;
const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const project = `orgs/verify-org/projects/p${randomBytes(3).toString('hex')}`;
let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let store: ObjectStore;
let source: AppDatabase;
let target: AppDatabase;
let prod: CreatedEnv;
let staging: CreatedEnv;

const deps = (s: ObjectStore = store) => ({
  config: h.config,
  db: h.db,
  store: s,
  jobs: idleJobs(h.config),
  log: createLogger({ name: 'test', level: 'silent' }),
});

async function backupNow(env: CreatedEnv): Promise<Json> {
  const created = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups`, {
    key: env.secretKey,
    body: { type: 'manual' },
  });
  expect(created.status).toBe(202);
  return waitFor(
    'the backup',
    async () => {
      const res = await call<Json>(web.url, 'GET', `/v1/backups/${String(created.body.id)}`, { key: env.secretKey });
      return res.body.state === 'succeeded' || res.body.state === 'failed' ? res.body : undefined;
    },
    60_000,
  );
}

async function restoreInto(backupId: string): Promise<Json> {
  const res = await call<Json>(web.url, 'POST', `/v1/backups/${backupId}/restore`, {
    key: prod.secretKey,
    body: { targetEnv: staging.env.name },
  });
  expect(res.status).toBe(202);
  return waitFor(
    'the restore',
    async () => {
      const r = await call<Json>(web.url, 'GET', `/v1/${String(res.body.name)}`, { key: prod.secretKey });
      return r.body.done === true ? r.body : undefined;
    },
    60_000,
  );
}

async function nothingInBucket(row: BackupRow): Promise<void> {
  expect(await store.head(bucket, row.object_key)).toBeUndefined();
  expect(await store.listIncompleteUploads(bucket, row.object_key)).toEqual([]);
}

const stack = useWeb({}, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  ({ h, web } = stack);
  store = createObjectStore(h.config);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  [source, target] = await Promise.all([
    createAppDatabase(seedSource),
    createAppDatabase(
      "create table leftovers (id int primary key, note text); insert into leftovers values (1, 'only in the target');",
    ),
  ]);
  prod = await createTestEnv(h.db, `${project}/envs/prod`);
  staging = await createTestEnv(h.db, `${project}/envs/staging`);
  await setEnvDatabase(h.db, h.config, prod.env.id, source.url);
  await setEnvDatabase(h.db, h.config, staging.env.id, target.url);
});

afterAll(async () => {
  await worker?.stop();
  await store?.deleteBucket(bucket).catch(() => undefined);
  await source?.drop();
  await target?.drop();
});

describe('a succeeded backup', () => {
  it('records what pg_dump wrote and the per-table figures read back from the stored object', async () => {
    const b = await backupNow(prod);
    expect(b).toMatchObject({ state: 'succeeded', error: null, verification: null, verified_time: null });
    const row = (await backupQueries(h.db).backup(String(b.id)))!;
    expect(Number(row.sql_bytes)).toBeGreaterThan(Number(row.gzip_bytes));
    expect(row.sql_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.fromEntries(Object.entries(row.table_stats!).map(([t, f]) => [t, f.rows]))).toEqual({
      'billing.invoices': 500,
      'public.customers': 2000,
      'public.orders': 6000,
    });
  });
});

describe('a restore refuses an incomplete backup before the target changes', () => {
  let good: BackupRow;

  beforeAll(async () => {
    good = (await backupQueries(h.db).backup(String((await backupNow(prod)).id)))!;
  });

  /** A backup row of prod whose object is `bytes`, its record made to match them (as the store would see it). */
  async function backupWithObject(bytes: Buffer, patch: Partial<BackupRow> = {}): Promise<string> {
    const id = `backup_${randomBytes(13).toString('hex').slice(0, 26)}`;
    const object_key = `${good.object_key}.copy-${id}`;
    const got = await store.get(bucket, good.object_key);
    await readAll(got!.body);
    await store.put(bucket, object_key, bytes, { metadata: { ...got!.metadata } });
    await h.db('backups').insert({
      ...good,
      table_stats: JSON.stringify(good.table_stats),
      verification: null,
      id,
      object_key,
      size_bytes: String(bytes.length),
      sha256: createHash('sha256').update(bytes).digest('hex'),
      ...patch,
    });
    return id;
  }

  /** `plain` sealed with good's data key, as a worker would have stored it. */
  async function sealed(plain: AsyncIterable<Buffer>): Promise<Buffer> {
    const key = open(keyringFromConfig(h.config), good.wrapped_key!, `backup-data-key:${good.id}`);
    const out: Buffer[] = [];
    for await (const chunk of encryptStream(plain, key)) out.push(chunk);
    return Buffer.concat(out);
  }

  // The wrapped data key is bound to the backup id it was made for: the copies keep good's id in
  // the key's associated data by reusing good's wrapped key and metadata, which only opens for
  // good.id. So each copy is restored through a row with good's id swapped in, as the tampered
  // copies of backup-restore.test.ts are.
  async function restoreCopy(id: string): Promise<Json> {
    const copy = (await backupQueries(h.db).backup(id))!;
    await h.db('backups').where({ id: good.id }).update({
      object_key: copy.object_key,
      size_bytes: copy.size_bytes,
      sha256: copy.sha256,
      sql_bytes: copy.sql_bytes,
      sql_sha256: copy.sql_sha256,
    });
    try {
      return await restoreInto(good.id);
    } finally {
      await h.db('backups').where({ id: good.id }).update({
        object_key: good.object_key,
        size_bytes: good.size_bytes,
        sha256: good.sha256,
        sql_bytes: good.sql_bytes,
        sql_sha256: good.sql_sha256,
      });
    }
  }

  const cases: [string, () => Promise<Buffer>, RegExp, Partial<BackupRow>?][] = [
    ['an object emptied in the store', async () => Buffer.alloc(0), /shorter than its header|truncated/],
    [
      'an object cut in the store',
      async () => {
        const bytes = await readAll((await store.get(bucket, good.object_key))!.body);
        return bytes.subarray(0, bytes.length - 1000);
      },
      /truncated|authentication/,
    ],
    // What the first backup of a fresh worker used to store: an authentic envelope around nothing,
    // its record made from it and no figures of what pg_dump wrote (the record predates them).
    [
      'an authentic backup holding no SQL at all',
      async () => await sealed((async function* () {})()),
      /does not decompress \(unexpected end of file\)/,
      { sql_bytes: null, sql_sha256: null },
    ],
    [
      'an authentic backup holding a dump cut at a line',
      async () => {
        const sql = (await import('node:zlib'))
          .gunzipSync(
            await readAll(
              (
                await fetch(`${web.url}/v1/backups/${good.id}:download`, {
                  headers: { authorization: `Bearer ${prod.secretKey}` },
                })
              ).body as never,
            ),
          )
          .toString();
        const cut = Buffer.from(sql.slice(0, sql.indexOf('ALTER TABLE ONLY')));
        return sealed(
          (async function* () {
            yield gzipSync(cut);
          })(),
        );
      },
      /holds [\d,]+ bytes of SQL where pg_dump wrote/,
    ],
  ];

  for (const [what, bytes, reason, patch] of cases) {
    it(`refuses ${what}`, async () => {
      await query(target.url, 'insert into leftovers values ($1, $2)', [
        Math.floor(Math.random() * 1e9),
        'written after the last restore',
      ]);
      const before = await tableChecksums(target.url);
      const id = await backupWithObject(await bytes(), patch);
      const op = await restoreCopy(id);
      expect(op.error).toMatchObject({ message: expect.stringMatching(reason) });
      expect((op.error as Json).message).toMatch(/the target was not changed/);
      expect(await tableChecksums(target.url)).toEqual(before);
    });
  }
});

describe('a backup that cannot be proven ends failed and leaves nothing', () => {
  it('when pg_dump dies mid-way', async () => {
    // A table big enough that its COPY is still streaming when the backend is terminated.
    await query(
      source.url,
      'create table bulk as select g as id, repeat(md5(g::text), 8) as body from generate_series(1, 400000) g',
    );
    const boss = createBoss(h.config, 'web');
    await boss.start();
    try {
      const row = await requestManualBackup({ config: h.config, db: h.db, jobs: new Jobs(boss, queues) }, prod.env.id);
      const admin = new pg.Client({ connectionString: source.url });
      await admin.connect();
      try {
        await waitFor(
          'pg_dump to stream the big table',
          async () => {
            const r = await admin.query(
              "select pg_terminate_backend(pid) as killed from pg_stat_activity where datname = $1 and application_name = 'cairn-backup' and query like 'COPY public.bulk%'",
              [source.name],
            );
            return r.rows.some((x: { killed: boolean }) => x.killed);
          },
          60_000,
        );
      } finally {
        await admin.end();
      }
      const done = await waitFor(
        'the backup to end',
        async () => {
          const b = await backupQueries(h.db).backup(row.id);
          return b?.state === 'failed' || b?.state === 'succeeded' ? b : undefined;
        },
        60_000,
      );
      expect(done).toMatchObject({
        state: 'failed',
        error: expect.stringMatching(/^pg_dump failed \(exit 1\): .*(terminat|connection)/s),
      });
      await nothingInBucket(done);
    } finally {
      await boss.stop({ graceful: false, close: true });
      await query(source.url, 'drop table bulk');
    }
  });

  it('when the object read back is not the one written (a store that loses the tail of what it returns)', async () => {
    const lossy: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
      async get(b: string, k: string) {
        const got = await store.get(b, k);
        if (!got) return got;
        const bytes = await readAll(got.body);
        return { ...got, body: Readable.from([bytes.subarray(0, bytes.length - 10)]) };
      },
    });
    const row = (await backupQueries(h.db).insertBackup({
      id: `backup_${randomBytes(13).toString('hex').slice(0, 26)}`,
      env_id: prod.env.id,
      type: 'manual',
      trigger: 'manual',
      slot: null,
      bucket,
      object_key: `backups/db/verify/${randomBytes(4).toString('hex')}.sql.gz`,
      billable: false,
      expire_time: new Date(Date.now() + 86_400_000),
    }))!;
    const done = await runCapture(deps(lossy), row);
    expect(done).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^verification failed: .*(truncated|authentication)/),
    });
    expect(await backupQueries(h.db).backup(row.id)).toMatchObject({ state: 'failed', error: done.error });
    await nothingInBucket(row);
  });
});
