// Writes that span Postgres and the object store, or several files, leave nothing half-done:
// - a source map whose row cannot be written leaves no object behind;
// - the local disk store (npm start's default) writes data before metadata, each renamed into
//   place, and refuses a key that is also a prefix of another (`a` beside `a/b`) with 409 before
//   writing anything, where it answered 500 and left metadata without data;
// - the 5 GiB object limit is counted on the bytes as they stream, not only on Content-Length:
//   past it the upload stops with 413 and nothing remains in the bucket.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { sourceMapBucket } from '../../src/domain/errors/source-maps/uploads.ts';
import { putObject } from '../../src/domain/storage/buckets.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Harness } from '../support/harness.ts';

let h: Harness;
let env: CreatedEnv;
const disk = mkdtempSync(join(tmpdir(), 'cairn-disk-store-'));

// Not useWeb(): the tests start webs on different object stores (S3, a local directory) on this database.
beforeAll(async () => {
  h = await createHarness({ CAIRN_STORAGE_BUCKET_PREFIX: `cairn-hw-${randomBytes(3).toString('hex')}-` });
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await createObjectStore(h.config)
    .deleteBucket(sourceMapBucket(h.config))
    .catch(() => undefined);
  await h?.close();
  rmSync(disk, { recursive: true, force: true });
});

describe('a source map whose row cannot be written', () => {
  it('leaves no object in the bucket', async () => {
    const web = await startTestWeb(h);
    try {
      // A real refusal by Postgres, after the object was written: a trigger that fails the insert.
      await h.db.raw(
        "create function refuse_maps() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$",
      );
      await h.db.raw(
        'create trigger refuse_maps before insert or update on error_source_maps for each row execute function refuse_maps()',
      );
      const map = { version: 3, file: 'app.js', sources: ['app.ts'], names: [], mappings: 'AAAA' };
      const res = await call(web.url, 'PUT', `/v1/${env.env.name}/releases/r1/source_maps`, {
        key: env.secretKey,
        body: { file: 'https://shop.example/app.js', source_map: map },
      });
      expect(res.status).toBe(500);
      const store = createObjectStore(h.config);
      expect(await store.list(sourceMapBucket(h.config), `source-maps/${env.env.id}/`)).toEqual([]);
    } finally {
      await h.db.raw('drop trigger if exists refuse_maps on error_source_maps');
      await h.db.raw('drop function if exists refuse_maps()');
      await web.stop();
    }
  });
});

describe('the local disk store', () => {
  let web: WebHandle;
  const base = () => `/v1/${env.env.name}/buckets`;

  beforeAll(async () => {
    const vars: Record<string, string | undefined> = { ...process.env };
    delete vars.AWS_ENDPOINT_URL_S3;
    const config = loadConfig({
      ...vars,
      NODE_ENV: 'test',
      DATABASE_URL: h.database.url,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      LOG_LEVEL: 'silent',
      CAIRN_LOCAL_OBJECT_DIR: disk,
    });
    web = await startWeb(config, { host: '127.0.0.1', port: 0 });
    expect((await call(web.url, 'POST', base(), { key: env.secretKey, body: { name: 'files' } })).status).toBeLessThan(
      300,
    );
  });
  afterAll(async () => {
    await web?.stop();
  });

  const put = (key: string, text: string) =>
    fetch(`${web.url}${base()}/files/objects/${encodeURIComponent(key)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${env.secretKey}` },
      body: text,
    });
  const get = (key: string) =>
    call(web.url, 'GET', `${base()}/files/objects/${encodeURIComponent(key)}`, { key: env.secretKey });
  const leftovers = () =>
    readdirSync(disk, { recursive: true })
      .map(String)
      // Matched on whole path segments: a bucket's random name ending in `c` once made `…c/data` match `c/d`.
      .filter((f) => /\.tmp-|(?:^|\/)a\.json$|(?:^|\/)c\/d(?:\/|$)/.test(f));

  it('refuses a key that is also a prefix of another with 409, and writes nothing', async () => {
    expect((await put('a/b', 'inner')).status).toBe(200);
    const clash = await put('a', 'outer');
    expect(clash.status).toBe(409);
    expect(((await clash.json()) as { code: string }).code).toBe('conflict');
    expect(await get('a/b')).toMatchObject({ status: 200, body: 'inner' });
    expect((await get('a')).status).toBe(404);

    expect((await put('c', 'file')).status).toBe(200);
    expect((await put('c/d', 'below a file')).status).toBe(409);
    expect(await get('c')).toMatchObject({ status: 200, body: 'file' });
    expect(leftovers()).toEqual([]);
  });

  it('replaces an object whole: the new data and its metadata, or the old ones', async () => {
    expect((await put('doc', 'first')).status).toBe(200);
    expect((await put('doc', 'second')).status).toBe(200);
    expect(await get('doc')).toMatchObject({ status: 200, body: 'second' });
    expect(leftovers()).toEqual([]);
  });
});

describe('the object size limit', () => {
  it('counts the streamed bytes: past the limit the upload stops and nothing remains', async () => {
    const store = createObjectStore(h.config);
    const deps = { db: h.db, store, config: h.config };
    const web = await startTestWeb(h);
    const created = await call(web.url, 'POST', `/v1/${env.env.name}/buckets`, {
      key: env.secretKey,
      body: { name: 'limited' },
    });
    await web.stop();
    expect(created.status).toBeLessThan(300);
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < 40; i++) yield Buffer.alloc(64 * 1024, i);
      })(),
    );
    await expect(putObject(deps, env.env.id, 'limited', 'big.bin', body, undefined, 1024 * 1024)).rejects.toMatchObject(
      { code: 'invalid_request', status: 413 },
    );
    const bucket = (await h.db('storage_buckets').where({ env_id: env.env.id, name: 'limited' }).first()) as {
      s3_bucket: string;
    };
    expect(await store.head(bucket.s3_bucket, 'big.bin')).toBeUndefined();
    expect(await store.listIncompleteUploads(bucket.s3_bucket, 'big.bin')).toEqual([]);
    await store.deleteBucket(bucket.s3_bucket);
  });
});
