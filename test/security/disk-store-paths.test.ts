// The local disk store (`npm start` without an object store) keeps each key as a path, so a
// client's key names alone could provoke file-system errors: a key below an object (`c/d` beside
// `c`: ENOTDIR), a key that is another's folder (`a` of `a/b`: EISDIR), the metadata tree's own
// clash (`x` keeps its metadata at `x.json`, so `x.json/y` runs through a file), a segment too long
// for a file name (ENAMETOOLONG), U+0000. Each is the client's key, never a 500: a read finds no
// object (404), a write that cannot be placed is a clash (409 conflict), and a key the disk cannot
// name is refused up front (400 invalid_request), with nothing written. Over HTTP, on a web whose
// store is the disk driver; then random sequences of writes, reads, deletes and version calls over
// colliding keys, none of which answers 5xx.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createHarness, createTestEnv, type Harness } from '../support/harness.ts';

let h: Harness;
let env: CreatedEnv;
let web: WebHandle;
const disk = mkdtempSync(join(tmpdir(), 'cairn-disk-paths-'));

// Not useWeb(): the web's config drops AWS_ENDPOINT_URL_S3 for a local directory store, which createHarness cannot unset.
beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
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
}, 60_000);
afterAll(async () => {
  await web?.stop();
  await h?.close();
  rmSync(disk, { recursive: true, force: true });
});

const base = () => `/v1/${env.env.name}/buckets`;
let buckets = 0;
async function newBucket(versioned = false): Promise<string> {
  const name = `paths-${++buckets}`;
  expect((await call(web.url, 'POST', base(), { key: env.secretKey, body: { name } })).status).toBe(201);
  if (versioned) await enableVersioning(name);
  return name;
}
const enableVersioning = async (bucket: string) =>
  expect((await call(web.url, 'POST', `${base()}/${bucket}:enableVersioning`, { key: env.secretKey })).status).toBe(
    200,
  );
const object = (bucket: string, key: string, suffix = '') =>
  `${base()}/${bucket}/objects/${encodeURIComponent(key)}${suffix}`;
const put = (bucket: string, key: string, text = `body of ${key}`) =>
  call<{ code?: string; versionId?: string }>(web.url, 'PUT', object(bucket, key), {
    key: env.secretKey,
    rawBody: text,
    headers: { 'content-type': 'text/plain' },
  });
const get = (bucket: string, key: string, versionId?: string) =>
  call<string | { code: string }>(
    web.url,
    'GET',
    object(bucket, key, versionId ? `?version_id=${encodeURIComponent(versionId)}` : ''),
    { key: env.secretKey },
  );
const del = (bucket: string, key: string, versionId?: string) =>
  call<{ code?: string }>(
    web.url,
    'DELETE',
    object(bucket, key, versionId ? `?version_id=${encodeURIComponent(versionId)}` : ''),
    { key: env.secretKey },
  );
const versions = (bucket: string, key: string) =>
  call<{ versions?: { versionId: string; isDeleteMarker: boolean }[]; code?: string }>(
    web.url,
    'GET',
    object(bucket, key, ':listVersions'),
    { key: env.secretKey },
  );
const restore = (bucket: string, key: string, versionId: string) =>
  call<{ code?: string }>(web.url, 'POST', object(bucket, key, ':restoreVersion'), {
    key: env.secretKey,
    body: { versionId },
  });
/** Temporary files left in the store (a write that failed half-way). */
const leftovers = () =>
  readdirSync(disk, { recursive: true })
    .map(String)
    .filter((f) => /\.tmp-[0-9a-f]{12}$/.test(f));

describe('keys that run through an object or name a folder', () => {
  it('answers 404 for c/d when c is an object, and 409 for writing it, whatever the call', async () => {
    const b = await newBucket();
    expect((await put(b, 'c', 'file')).status).toBe(200);
    expect(await get(b, 'c/d')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await get(b, 'c/d/e')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await versions(b, 'c/d')).toMatchObject({ status: 200, body: { versions: [] } });
    expect((await del(b, 'c/d')).status).toBe(200);
    expect(await put(b, 'c/d')).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await get(b, 'c')).toMatchObject({ status: 200, body: 'file' });
    expect(leftovers()).toEqual([]);
  });

  it('answers 404 for a, and deletes nothing, when a is the folder of a/b', async () => {
    const b = await newBucket();
    expect((await put(b, 'a/b', 'inner')).status).toBe(200);
    expect(await get(b, 'a')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect((await del(b, 'a')).status).toBe(200);
    expect(await versions(b, 'a')).toMatchObject({ status: 200, body: { versions: [] } });
    expect(await put(b, 'a')).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await get(b, 'a/b')).toMatchObject({ status: 200, body: 'inner' });
  });

  it('refuses x.json/y beside x (where x keeps its metadata), and x beside x.json/y, with 409', async () => {
    const b = await newBucket();
    expect((await put(b, 'x', 'x')).status).toBe(200);
    expect(await put(b, 'x.json/y')).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await get(b, 'x.json/y')).toMatchObject({ status: 404 });
    expect((await put(b, 'p.json/q', 'q')).status).toBe(200);
    expect(await put(b, 'p')).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await get(b, 'p')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await get(b, 'p.json/q')).toMatchObject({ status: 200, body: 'q' });
    expect(await get(b, 'x')).toMatchObject({ status: 200, body: 'x' });
    expect(leftovers()).toEqual([]);
  });

  it('in a versioned bucket, lists and reads c/d kept beside the older object c', async () => {
    const b = await newBucket();
    expect((await put(b, 'c', 'before versioning')).status).toBe(200);
    await enableVersioning(b);
    const written = await put(b, 'c/d', 'versioned');
    expect(written.status).toBe(200);
    expect(await versions(b, 'c/d')).toMatchObject({
      status: 200,
      body: { versions: [{ versionId: written.body.versionId, isDeleteMarker: false }] },
    });
    expect(await get(b, 'c/d')).toMatchObject({ status: 200, body: 'versioned' });
    expect(await get(b, 'c/d', 'null')).toMatchObject({ status: 404 });
    expect(await get(b, 'c')).toMatchObject({ status: 200, body: 'before versioning' });
  });

  it("answers 409 for a key below another key's version file, and its versions stay readable", async () => {
    const b = await newBucket(true);
    const first = await put(b, 'a', 'one');
    const id = first.body.versionId!;
    expect(id).toMatch(/^[0-9a-z]{26}$/);
    expect(await put(b, `a@v/${id}.data/x`)).toMatchObject({ status: 409, body: { code: 'conflict' } });
    expect(await del(b, `a@v/${id}.json/x`)).toMatchObject({ status: 409, body: { code: 'conflict' } });
    // A folder named like a version of `a` (another key's path) is not taken for one.
    expect((await put(b, `a@v/${'0'.repeat(26)}.json/x`, 'other')).status).toBe(200);
    expect(await versions(b, 'a')).toMatchObject({ status: 200, body: { versions: [{ versionId: id }] } });
    expect(await get(b, 'a')).toMatchObject({ status: 200, body: 'one' });
    expect((await restore(b, 'a', id)).status).toBe(200);
    expect(leftovers()).toEqual([]);
  });
});

describe('keys the disk cannot name', () => {
  it('refuses a segment too long for a file name, U+0000 and a temporary-file name with 400', async () => {
    const b = await newBucket();
    for (const key of [
      'l'.repeat(240),
      `dir/${'é'.repeat(120)}`,
      'a\u0000b',
      'z.tmp-0123456789ab',
      'q/r.tmp-00ff00ff00ff/s',
    ]) {
      for (const answer of [await put(b, key), await get(b, key), await del(b, key), await versions(b, key)])
        expect(answer, key).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    }
    expect(leftovers()).toEqual([]);
    // The longest segment the disk takes is stored.
    expect((await put(b, 'l'.repeat(233), 'long')).status).toBe(200);
    expect(await get(b, 'l'.repeat(233))).toMatchObject({ status: 200, body: 'long' });
  });
});

describe('any sequence of calls over colliding keys', () => {
  // Segments chosen to collide on disk: a name and its `.json` (the metadata tree), `@v` and version
  // file names (the versions tree), a temporary-file suffix, and names near and past NAME_MAX.
  const segment = fc.constantFrom(
    'a',
    'b',
    'a.json',
    'a@v',
    `${'0'.repeat(26)}.json`,
    `${'0'.repeat(26)}.data`,
    'n.tmp-0123456789ab',
    'm'.repeat(233),
    'm'.repeat(234),
    'm'.repeat(256),
    'u\u0000',
  );
  const key = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));
  const op = fc.oneof(
    fc.record({ kind: fc.constant('put' as const), key }),
    fc.record({ kind: fc.constant('get' as const), key, version: fc.boolean() }),
    fc.record({ kind: fc.constant('delete' as const), key, version: fc.boolean() }),
    fc.record({ kind: fc.constant('versions' as const), key }),
    fc.record({ kind: fc.constant('restore' as const), key }),
    fc.record({ kind: fc.constant('version' as const) }),
  );

  it('never answers 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const b = await newBucket();
        const ids: string[] = ['null'];
        const pick = () => ids[ids.length - 1]!;
        for (const o of ops) {
          let status: number;
          if (o.kind === 'put') {
            const r = await put(b, o.key);
            if (r.body.versionId) ids.push(r.body.versionId);
            status = r.status;
          } else if (o.kind === 'get') status = (await get(b, o.key, o.version ? pick() : undefined)).status;
          else if (o.kind === 'delete') status = (await del(b, o.key, o.version ? pick() : undefined)).status;
          else if (o.kind === 'versions') status = (await versions(b, o.key)).status;
          else if (o.kind === 'restore') status = (await restore(b, o.key, pick())).status;
          else {
            await enableVersioning(b);
            status = 200;
          }
          expect(status, `${o.kind} ${'key' in o ? JSON.stringify(o.key) : ''}`).toBeLessThan(500);
        }
      }),
      { numRuns: 40 },
    );
    expect(leftovers()).toEqual([]);
  }, 240_000);
});
