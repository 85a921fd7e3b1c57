// The very first backup of a freshly started worker is whole: taken by the real worker process,
// with its object store a few hundred milliseconds away as a real one is, then downloaded and
// restored. It came out empty (yet `succeeded`) when a small dump finished before the worker's
// first S3 request returned: Node drops an exited child's unread output (pipes.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { startSlowProxy, type SlowProxy } from '../support/slow-proxy.ts';
import { createAppDatabase, query, setEnvDatabase, tableChecksums, waitFor, type AppDatabase } from './support.ts';

type Json = Record<string, unknown>;
const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const project = `orgs/first-org/projects/p${randomBytes(3).toString('hex')}`;
let h: Harness;
let web: WebHandle;
let proxy: SlowProxy;
let worker: ChildProcess | undefined;
let source: AppDatabase;
let target: AppDatabase;
let prod: CreatedEnv;
let staging: CreatedEnv;

const stack = useWeb({}, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  ({ h, web } = stack);
  proxy = await startSlowProxy(new URL(h.config.AWS_ENDPOINT_URL_S3!), 400);
  // A small application database, as a new user's is: it dumps in well under a second.
  [source, target] = await Promise.all([
    createAppDatabase(
      "create table notes (id int primary key, body text); insert into notes select g, 'note ' || g from generate_series(1, 50) g;",
    ),
    createAppDatabase('create table leftovers (id int); insert into leftovers values (1);'),
  ]);
  prod = await createTestEnv(h.db, `${project}/envs/prod`);
  staging = await createTestEnv(h.db, `${project}/envs/staging`);
  await setEnvDatabase(h.db, h.config, prod.env.id, source.url);
  await setEnvDatabase(h.db, h.config, staging.env.id, target.url);
});

afterAll(async () => {
  worker?.kill('SIGKILL');
  await proxy?.close();
  await createObjectStore(h.config)
    .deleteBucket(bucket)
    .catch(() => undefined);
  await source?.drop();
  await target?.drop();
});

it('takes the first backup of a fresh worker whole: downloaded, it holds the data; restored, the target equals the source', async () => {
  worker = spawn(process.execPath, ['--max-semi-space-size=8', '--max-old-space-size=128', 'workers/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.database.url,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      CAIRN_BACKUP_BUCKET: bucket,
      AWS_ENDPOINT_URL_S3: proxy.url,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor('the worker to listen for jobs', async () => {
    const rows = await h.db.raw<{ rows: unknown[] }>(
      "select 1 from pg_stat_activity where datname = ? and application_name = 'cairn-worker-boss'",
      [h.database.name],
    );
    return rows.rows.length > 0;
  });

  const created = await call<Json>(web.url, 'POST', `/v1/${prod.env.name}/backups`, {
    key: prod.secretKey,
    body: { type: 'manual' },
  });
  expect(created.status).toBe(202);
  const backup = await waitFor(
    'the backup',
    async () => {
      const res = await call<Json>(web.url, 'GET', `/v1/backups/${String(created.body.id)}`, { key: prod.secretKey });
      return res.body.state === 'succeeded' || res.body.state === 'failed' ? res.body : undefined;
    },
    60_000,
  );
  expect(backup).toMatchObject({ state: 'succeeded', error: null });

  const res = await fetch(`${web.url}/v1/backups/${String(backup.id)}:download`, {
    headers: { authorization: `Bearer ${prod.secretKey}` },
  });
  expect(res.status).toBe(200);
  const sql = gunzipSync(Buffer.from(await res.arrayBuffer())).toString();
  expect(sql).toContain('CREATE TABLE public.notes');
  expect(sql).toContain('50\tnote 50');
  expect(sql).toContain('-- PostgreSQL database dump complete');

  const restore = await call<Json>(web.url, 'POST', `/v1/backups/${String(backup.id)}/restore`, {
    key: prod.secretKey,
    body: { targetEnv: staging.env.name },
  });
  expect(restore.status).toBe(202);
  const op = await waitFor(
    'the restore',
    async () => {
      const r = await call<Json>(web.url, 'GET', `/v1/${String(restore.body.name)}`, { key: prod.secretKey });
      return r.body.done === true ? r.body : undefined;
    },
    60_000,
  );
  expect(op.error).toBeUndefined();
  expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
  expect(await query(target.url, 'select count(*)::int as n from notes')).toEqual([{ n: 50 }]);
});
