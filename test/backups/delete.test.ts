// `DELETE /v1/backups/{id}` and `cairn backups delete|info`: a backup that has ended goes with its
// stored object (the real S3 server); one that is running or being read by a restore stays; another
// environment's key cannot reach it; the CLI asks for --confirm first.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { runCairn } from '../support/cli.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let store: ObjectStore;
const bucket = `cairn-del-${randomBytes(5).toString('hex')}`;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  store = createObjectStore(h.config);
  await store.ensureBucket(bucket);
});
afterAll(async () => {
  await store?.deleteBucket(bucket).catch(() => undefined);
});

async function storedBackup(state: string, envId = env.env.id): Promise<{ id: string; key: string }> {
  const id = newId('backup');
  const key = `backups/db/test/${id}.sql.gz`;
  await store.put(bucket, key, Buffer.from('sealed backup bytes'));
  await h.db('backups').insert({
    id,
    env_id: envId,
    type: 'manual',
    trigger: 'manual',
    state,
    bucket,
    object_key: key,
    size_bytes: 19,
    pg_version: '15.20',
    duration_ms: 1200,
    expire_time: new Date(Date.now() + 86_400_000),
  });
  return { id, key };
}

const del = (id: string, key = env.secretKey) => call(web.url, 'DELETE', `/v1/backups/${id}`, { key });

it('deletes an ended backup with its stored object; a second delete is 404', async () => {
  const b = await storedBackup('succeeded');
  expect((await del(b.id)).status).toBe(204);
  expect(await h.db('backups').where({ id: b.id })).toEqual([]);
  expect(await store.head(bucket, b.key)).toBeUndefined();
  expect((await del(b.id)).status).toBe(404);
});

it("still counts a deleted manual backup among the day's, so deleting makes no new free ones", async () => {
  const own = await createTestEnv(h.db);
  const usage = async () =>
    (await call<{ manual_today: number }>(web.url, 'GET', `/v1/${own.env.name}/backup_usage`, { key: own.secretKey }))
      .body.manual_today;
  const b = await storedBackup('succeeded', own.env.id);
  expect(await usage()).toBe(1);
  expect((await del(b.id, own.secretKey)).status).toBe(204);
  expect(await usage()).toBe(1);
  expect(await h.db('deleted_backups').where({ id: b.id })).toEqual([
    expect.objectContaining({ env_id: own.env.id, trigger: 'manual', billable: false }),
  ]);
});

it('keeps a running backup, one a restore is reading, and one of another environment', async () => {
  const running = await storedBackup('running');
  const res = await del(running.id);
  expect(res.status).toBe(409);
  expect(res.body).toMatchObject({ code: 'INVALID_STATE', details: { state: 'running' } });

  const read = await storedBackup('succeeded');
  const op = newId('op');
  await h.db('backup_operations').insert({
    id: op,
    kind: 'restore',
    requester_env_id: env.env.id,
    env_id: env.env.id,
    backup_id: read.id,
    state: 'running',
  });
  expect((await del(read.id)).body).toMatchObject({
    code: 'INVALID_STATE',
    details: { operation: `operations/${op}` },
  });

  const other = await createTestEnv(h.db);
  expect((await del(read.id, other.secretKey)).status).toBe(404);
  for (const b of [running, read]) {
    expect(await h.db('backups').where({ id: b.id })).toHaveLength(1);
    expect(await store.head(bucket, b.key)).toBeDefined();
  }
});

it('cairn backups info shows the backup; delete asks for --confirm, then deletes', async () => {
  const b = await storedBackup('succeeded');
  const vars = { CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey };
  const info = await runCairn(['backups', 'info', b.id], vars);
  expect(info.code, info.stderr).toBe(0);
  expect(info.stdout).toMatch(new RegExp(`^Backup: +${b.id}$`, 'm'));
  expect(info.stdout).toMatch(/^State: +succeeded$/m);
  expect(info.stdout).toMatch(/^Duration: +1\.2 s$/m);

  const refused = await runCairn(['backups', 'delete', b.id], vars);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('--confirm');
  expect(await h.db('backups').where({ id: b.id })).toHaveLength(1);

  const done = await runCairn(['backups', 'delete', b.id, '--confirm'], vars);
  expect(done.code, done.stderr).toBe(0);
  expect(await h.db('backups').where({ id: b.id })).toEqual([]);
});
