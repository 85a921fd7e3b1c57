// Backup and restore events from the real backup worker (pg_dump into the S3 server): each reaches
// its environment's receiver, verified with `standardwebhooks`, carrying the backup or the
// operation exactly as the API shows it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { createAppDatabase, seedSource, setEnvDatabase, type AppDatabase } from '../backups/support.ts';
import { databaseUrl } from '../support/pg.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { apiFor, startReceiver, typeOf, verified, type Api, type Receiver } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let source: AppDatabase;
let target: AppDatabase;
const bucket = `cairn-wh-${randomBytes(5).toString('hex')}`;
const project = `orgs/wh-org/projects/shop-${randomBytes(3).toString('hex')}`;

interface Side {
  env: CreatedEnv;
  api: Api;
  receiver: Receiver;
  secret: string;
}

const sides: Side[] = [];

async function side(name: string, databaseUrlOf: string): Promise<Side> {
  const env = await createTestEnv(h.db, `${project}/envs/${name}`);
  await setEnvDatabase(h.db, h.config, env.env.id, databaseUrlOf);
  const api = apiFor(web, env.secretKey, env.env.name);
  const receiver = await startReceiver();
  const res = await api<{ secret: string }>('POST', '/webhook_endpoints', {
    url: receiver.url,
    event_types: ['backup.succeeded', 'backup.failed', 'restore.succeeded', 'restore.failed'],
  });
  expect(res.status).toBe(201);
  const s = { env, api, receiver, secret: res.body.secret };
  sides.push(s);
  return s;
}

const stack = useWeb({}, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  [source, target] = await Promise.all([
    createAppDatabase(seedSource),
    createAppDatabase('create table leftovers (id int primary key);'),
  ]);
});

afterAll(async () => {
  await worker?.stop();
  for (const s of sides) await s.receiver.close();
  await createObjectStore(h.config)
    .deleteBucket(bucket)
    .catch(() => undefined);
  await source?.drop();
  await target?.drop();
});

it('backup.succeeded, restore.succeeded to the requester, and the pre-restore copy to the target', async () => {
  const prod = await side('prod', source.url);
  const staging = await side('staging', target.url);
  const created = await prod.api<{ id: string }>('POST', '/backups', { type: 'manual' });
  expect(created.status).toBe(202);
  const [succeeded] = await prod.receiver.waitFor(1, 'backup.succeeded', 90_000);
  const shown = await prod.api('GET', `/v1/backups/${created.body.id}`);
  expect(verified(prod.secret, succeeded!)).toMatchObject({ type: 'backup.succeeded', data: shown.body });

  const restore = await prod.api<{ name: string }>('POST', `/v1/backups/${created.body.id}/restore`, {
    targetEnv: staging.env.env.name,
  });
  expect(restore.status).toBe(202);
  const [restored] = await prod.receiver.waitFor(1, 'restore.succeeded', 90_000);
  const operation = await prod.api('GET', `/v1/${restore.body.name}`);
  expect(verified(prod.secret, restored!)).toMatchObject({ type: 'restore.succeeded', data: operation.body });
  expect(operation.body).toMatchObject({ done: true, metadata: { target_env: staging.env.env.name } });

  const [copy] = await staging.receiver.waitFor(1, 'backup.succeeded', 30_000);
  expect(verified(staging.secret, copy!).data).toMatchObject({ trigger: 'pre_restore', state: 'succeeded' });
  // The target is told of its own backup only; the restore is the requester's.
  expect(staging.receiver.received.map(typeOf)).toEqual(['backup.succeeded']);
});

it('backup.failed and restore.failed when the database cannot be reached', async () => {
  const prod = await side('prod2', source.url);
  const gone = await side('gone', databaseUrl(`cairn_no_such_db_${randomBytes(4).toString('hex')}`));
  const failing = await gone.api<{ id: string }>('POST', '/backups', { type: 'manual' });
  expect(failing.status).toBe(202);
  const [failed] = await gone.receiver.waitFor(1, 'backup.failed', 90_000);
  const data = verified(gone.secret, failed!).data;
  expect(data).toMatchObject({ id: failing.body.id, state: 'failed', error: expect.any(String) });
  expect(JSON.stringify(data)).not.toContain('postgres://');

  const good = await prod.api<{ id: string }>('POST', '/backups', { type: 'manual' });
  await prod.receiver.waitFor(1, 'backup.succeeded', 90_000);
  const restore = await prod.api<{ name: string }>('POST', `/v1/backups/${good.body.id}/restore`, {
    targetEnv: gone.env.env.name,
  });
  expect(restore.status).toBe(202);
  const [restoreFailed] = await prod.receiver.waitFor(1, 'restore.failed', 90_000);
  const operation = await prod.api('GET', `/v1/${restore.body.name}`);
  expect(verified(prod.secret, restoreFailed!)).toMatchObject({ type: 'restore.failed', data: operation.body });
  expect(operation.body).toMatchObject({ done: true, error: expect.anything() });
});
