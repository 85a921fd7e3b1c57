// Backups end to end: a real worker, pg_dump, radosgw and psql. Backup, then restore into
// another environment: every table's checksum equal. The stored object is unreadable without the
// key. A flipped or truncated byte fails the restore before the target changes.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBackupObject, restoreObject } from '../../src/domain/backups/restore/apply.ts';
import { verifyBackupObject } from '../../src/domain/backups/restore/fetch.ts';
import { backupQueries, type BackupRow } from '../../src/domain/backups/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
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
  query,
  seedSource,
  setEnvDatabase,
  tableChecksums,
  waitFor,
  type AppDatabase,
  idleJobs,
} from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let store: ObjectStore;
let source: AppDatabase;
let target: AppDatabase;
let a: CreatedEnv;
let b: CreatedEnv;
const project = `orgs/bk-org/projects/shop-${randomBytes(3).toString('hex')}`;
const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;

type Json = Record<string, unknown>;

async function waitBackup(id: string, key: string): Promise<Json> {
  return waitFor(`backup ${id}`, async () => {
    const res = await call<Json>(web.url, 'GET', `/v1/backups/${id}`, { key });
    return res.body.state === 'succeeded' || res.body.state === 'failed' ? res.body : undefined;
  });
}

async function waitOperation(name: string, key: string): Promise<Json> {
  return waitFor(
    `operation ${name}`,
    async () => {
      const res = await call<Json>(web.url, 'GET', `/v1/${name}`, { key });
      return res.body.done === true ? res.body : undefined;
    },
    60_000,
  );
}

const deps = () => ({
  config: h.config,
  db: h.db,
  store,
  log: createLogger({ name: 'test', level: 'silent' }),
  jobs: idleJobs(h.config),
});

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
  a = await createTestEnv(h.db, `${project}/envs/prod`);
  b = await createTestEnv(h.db, `${project}/envs/staging`);
  await setEnvDatabase(h.db, h.config, a.env.id, source.url);
  await setEnvDatabase(h.db, h.config, b.env.id, target.url);
});

afterAll(async () => {
  await worker?.stop();
  await store?.deleteBucket(bucket).catch(() => undefined);
  await source?.drop();
  await target?.drop();
});

describe('backup → restore into another environment', () => {
  let backup: Json;

  it('takes an encrypted streaming backup with its record', async () => {
    const created = await call<Json>(web.url, 'POST', `/v1/${a.env.name}/backups`, {
      key: a.secretKey,
      body: { type: 'manual' },
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^backup_/),
      state: 'pending',
      type: 'manual',
      billable: false,
    });
    backup = await waitBackup(String(created.body.id), a.secretKey);
    expect(backup).toMatchObject({
      state: 'succeeded',
      error: null,
      pg_version: expect.stringMatching(/^\d+\.\d+/),
      encryption: { format: 'cairn-bk1', key_id: 'k1' },
    });
    expect(backup.key).toMatch(
      new RegExp(
        `^backups/db/proj_[0-9a-z]+/${a.env.id}/\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z\\.sql\\.gz$`,
      ),
    );
    expect(Number(backup.duration_ms)).toBeGreaterThanOrEqual(0);

    const object = await store.get(bucket, String(backup.key));
    expect(object?.metadata).toMatchObject({ 'cairn-format': 'cairn-bk1', 'cairn-key-id': 'k1' });
    const bytes = await readAll(object!.body);
    expect(bytes.length).toBe(backup.size_bytes);
    expect((await import('node:crypto')).createHash('sha256').update(bytes).digest('hex')).toBe(backup.sha256);
    // Unreadable without the key: no gzip magic anywhere at the start, no SQL text anywhere.
    expect(bytes.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]))).toBe(false);
    // The whole gzip header zlib writes (magic, deflate, no flags, mtime 0): three bytes alone turn
    // up by chance in a megabyte of ciphertext about once in sixteen runs.
    expect(bytes.includes(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]))).toBe(false);
    for (const text of ['CREATE TABLE', 'COPY public', 'user1@example.com', 'PostgreSQL database dump']) {
      expect(bytes.includes(Buffer.from(text))).toBe(false);
    }
  });

  it('downloads the decrypted .sql.gz', async () => {
    const res = await fetch(`${web.url}/v1/backups/${String(backup.id)}:download`, {
      headers: { authorization: `Bearer ${a.secretKey}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    const sql = gunzipSync(Buffer.from(await res.arrayBuffer())).toString();
    expect(sql).toContain('CREATE TABLE public.customers');
    expect(sql).toContain('user1999@example.com');
    expect(sql).toMatch(/^ALTER TABLE public\.customers OWNER TO \w+;$/m);
  });

  it('restores into another environment with every table equal, after a pre-restore backup', async () => {
    const before = await tableChecksums(target.url);
    expect(Object.keys(before)).toEqual(['public.leftovers']);
    const res = await call<Json>(web.url, 'POST', `/v1/backups/${String(backup.id)}/restore`, {
      key: a.secretKey,
      body: { targetEnv: b.env.name },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ name: expect.stringMatching(/^operations\/op_/), done: false });
    const op = await waitOperation(String(res.body.name), a.secretKey);
    expect(op.error).toBeUndefined();
    expect(op.metadata).toMatchObject({ phase: 'done', bytes_read: backup.size_bytes, bytes_total: backup.size_bytes });

    const [src, dst] = await Promise.all([tableChecksums(source.url), tableChecksums(target.url)]);
    expect(Object.keys(src).sort()).toEqual(['billing.invoices', 'public.customers', 'public.orders']);
    expect(dst).toEqual(src);
    const [seq] = await query<{ last_value: string }>(target.url, 'select last_value from orders_id_seq');
    expect(seq!.last_value).toBe('99999');

    const preId = (op.metadata as Json).pre_restore_backup_id as string;
    const pre = await call<Json>(web.url, 'GET', `/v1/backups/${preId}`, { key: b.secretKey });
    expect(pre.body).toMatchObject({ state: 'succeeded', type: 'manual', trigger: 'pre_restore', billable: false });
    const usage = await call<Json>(web.url, 'GET', `/v1/${b.env.name}/backup_usage`, { key: b.secretKey });
    expect(usage.body).toMatchObject({ manual_today: 0, free_left: 10 });
  });

  async function tamperedCopy(mutate: (bytes: Buffer) => Buffer): Promise<BackupRow> {
    // A new row pointing at a modified copy of the object, its sha256 and size updated to match,
    // so the segment authentication (not the recorded checksum) is what must catch it.
    const row = (await backupQueries(h.db).backup(String(backup.id)))!;
    const got = await store.get(bucket, row.object_key);
    const bytes = mutate(Buffer.from(await readAll(got!.body)));
    const id = `backup_${randomBytes(13).toString('hex').slice(0, 26)}`;
    const key = `${row.object_key}.tampered-${id}`;
    await store.put(bucket, key, bytes, { metadata: { ...got!.metadata } });
    const copy = {
      ...row,
      id,
      object_key: key,
      sha256: (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex'),
      size_bytes: String(bytes.length),
    };
    // The wrapped key is bound to the original id; keep that id for opening, the row is in-memory only.
    return { ...copy, id: row.id };
  }

  const tamperings: [string, (b: Buffer) => Buffer][] = [
    [
      'a flipped byte in the middle',
      (x) => {
        x[Math.floor(x.length / 2)]! ^= 0x01;
        return x;
      },
    ],
    [
      'a flipped byte in the header',
      (x) => {
        x[10]! ^= 0x80;
        return x;
      },
    ],
    ['one byte cut from the end', (x) => x.subarray(0, x.length - 1)],
    // The last whole-segment boundary before the end: every remaining segment authenticates alone.
    [
      'a cut at a segment boundary',
      (x) => x.subarray(0, 20 + Math.floor((x.length - 21) / (256 * 1024 + 16)) * (256 * 1024 + 16)),
    ],
  ];

  for (const [what, mutate] of tamperings) {
    it(`refuses ${what} before the target changes`, async () => {
      await query(target.url, 'insert into customers (email, name) values ($1, $2)', [
        `marker-${randomBytes(4).toString('hex')}@example.com`,
        'added after the restore',
      ]);
      const before = await tableChecksums(target.url);
      const bad = await tamperedCopy(mutate);
      await expect(verifyBackupObject(deps(), bad)).rejects.toThrow(/authentication|truncated|magic|segment/);
      // Even without the verification pass, the replay's transaction never commits a bad stream.
      await expect(applyBackupObject(deps(), bad, target.url)).rejects.toThrow();
      expect(await tableChecksums(target.url)).toEqual(before);
    });
  }

  it('downloads into a private temporary file and removes it, after a success and after a failure', async () => {
    const row = (await backupQueries(h.db).backup(String(backup.id)))!;
    const bad = await tamperedCopy((x) => {
      x[x.length - 30]! ^= 0x01;
      return x;
    });
    const dir = mkdtempSync(join(tmpdir(), 'cairn-test-tmp-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    try {
      await restoreObject(deps(), row, target.url);
      expect(readdirSync(dir)).toEqual([]);
      const before = await tableChecksums(target.url);
      await expect(restoreObject(deps(), bad, target.url)).rejects.toThrow(/authentication/);
      expect(readdirSync(dir)).toEqual([]);
      expect(await tableChecksums(target.url)).toEqual(before);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails a restore operation of a corrupted object and leaves the target as it was', async () => {
    const row = (await backupQueries(h.db).backup(String(backup.id)))!;
    const got = await store.get(bucket, row.object_key);
    const bytes = Buffer.from(await readAll(got!.body));
    bytes[bytes.length - 100]! ^= 0xff;
    await store.put(bucket, row.object_key, bytes, { metadata: { ...got!.metadata } });
    const before = await tableChecksums(target.url);
    const res = await call<Json>(web.url, 'POST', `/v1/backups/${row.id}/restore`, {
      key: a.secretKey,
      body: { targetEnv: b.env.name },
    });
    const op = await waitOperation(String(res.body.name), a.secretKey);
    expect(op.error).toMatchObject({ message: expect.stringMatching(/verification|sha256/) });
    expect(await tableChecksums(target.url)).toEqual(before);
  });
});

describe('limits and refusals', () => {
  it('counts the 11th manual backup of a day as billable, pre-restore copies free', async () => {
    const c = await createTestEnv(h.db, `${project}/envs/billing`);
    await setEnvDatabase(h.db, h.config, c.env.id, source.url);
    const rows = Array.from({ length: 10 }, (_, i) => ({
      id: `backup_${String(i).padStart(2, '0')}${randomBytes(12).toString('hex')}`,
      env_id: c.env.id,
      type: 'manual',
      trigger: 'manual',
      state: 'succeeded',
      bucket,
      object_key: `x/${i}`,
      size_bytes: 2 ** 29,
      expire_time: new Date(Date.now() + 86_400_000),
    }));
    await h.db('backups').insert(rows);
    await h
      .db('backups')
      .insert({ ...rows[0], id: `backup_pr${randomBytes(12).toString('hex')}`, trigger: 'pre_restore' });
    const usage = await call<Json>(web.url, 'GET', `/v1/${c.env.name}/backup_usage`, { key: c.secretKey });
    expect(usage.body).toMatchObject({
      manual_today: 10,
      free_left: 0,
      billable_today: 0,
      stored_gb: 5.5,
      monthly_estimate_usd: 0.1375,
    });

    const eleventh = await call<Json>(web.url, 'POST', `/v1/${c.env.name}/backups`, { key: c.secretKey, body: {} });
    expect(eleventh.status).toBe(202);
    expect(eleventh.body).toMatchObject({ billable: true });
    const done = await waitBackup(String(eleventh.body.id), c.secretKey);
    expect(done).toMatchObject({ state: 'succeeded', billable: true });
    const after = await call<Json>(web.url, 'GET', `/v1/${c.env.name}/backup_usage`, { key: c.secretKey });
    expect(after.body).toMatchObject({ manual_today: 11, free_left: 0, billable_today: 1 });
  });

  it("refuses a second backup while one runs, another environment's backup, and an env without a database", async () => {
    const d = await createTestEnv(h.db, `${project}/envs/nodb`);
    const noDb = await call<Json>(web.url, 'POST', `/v1/${d.env.name}/backups`, { key: d.secretKey, body: {} });
    expect(noDb).toMatchObject({ status: 409, body: { code: 'conflict' } });

    const first = await call<Json>(web.url, 'POST', `/v1/${a.env.name}/backups`, { key: a.secretKey, body: {} });
    const second = await call<Json>(web.url, 'POST', `/v1/${a.env.name}/backups`, { key: a.secretKey, body: {} });
    expect(first.status).toBe(202);
    expect(second).toMatchObject({ status: 409, body: { code: 'conflict', details: { active: first.body.id } } });
    const other = await call<Json>(web.url, 'GET', `/v1/backups/${String(first.body.id)}`, { key: b.secretKey });
    expect(other).toMatchObject({ status: 404, body: { code: 'not_found' } });
    await waitBackup(String(first.body.id), a.secretKey);

    const list = await call<Json>(web.url, 'GET', `/v1/${a.env.name}/backups?page_size=1`, { key: a.secretKey });
    expect((list.body.backups as Json[])[0]!.id).toBe(first.body.id);
    const next = await call<Json>(
      web.url,
      'GET',
      `/v1/${a.env.name}/backups?page_size=1&page_token=${String(list.body.next_page_token)}`,
      { key: a.secretKey },
    );
    expect((next.body.backups as Json[])[0]!.id).not.toBe(first.body.id);
    const tampered = await call<Json>(
      web.url,
      'GET',
      `/v1/${a.env.name}/backups?page_token=${String(list.body.next_page_token)}x`,
      { key: a.secretKey },
    );
    expect(tampered).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });
});
