// Storage buckets and versioning over HTTP, through the SDK the CLI uses, on radosgw.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { CairnApiError, CairnClient } from '../../src/sdk/client.ts';
import { StorageApi } from '../../src/sdk/backups.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let other: CreatedEnv;
let storage: StorageApi;
const prefix = `cst-${randomBytes(3).toString('hex')}-`;

const stack = useWeb({}, { CAIRN_STORAGE_BUCKET_PREFIX: prefix });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  other = await createTestEnv(h.db);
  storage = new StorageApi(new CairnClient({ baseUrl: web.url, secretKey: env.secretKey }), env.env.name);
});

afterAll(async () => {
  const store = createObjectStore(h.config);
  for (const b of await h.db('storage_buckets').select('s3_bucket'))
    await store.deleteBucket(b.s3_bucket).catch(() => undefined);
});

const text = async (res: Response) => res.text();

describe('storage buckets', () => {
  it('creates a bucket as its own S3 bucket named from the prefix', async () => {
    const b = await storage.createBucket('avatars');
    expect(b).toMatchObject({ bucket: 'avatars', versioning: 'disabled', name: `${env.env.name}/buckets/avatars` });
    const row = await h.db('storage_buckets').where({ env_id: env.env.id, name: 'avatars' }).first();
    expect(row.s3_bucket).toMatch(new RegExp(`^${prefix}[0-9a-z]{26}$`));
    await expect(storage.createBucket('avatars')).rejects.toMatchObject({ status: 409, code: 'conflict' });
    await expect(storage.createBucket('Bad_Name')).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    expect((await storage.listBuckets()).buckets.map((x) => x.bucket)).toEqual(['avatars']);
  });

  it('puts, gets and deletes objects whose keys hold slashes and colons', async () => {
    const key = 'users/42/photo:large.png';
    const put = await storage.put('avatars', key, 'png bytes', 'image/png');
    expect(put).toMatchObject({ key, size: 9 });
    const got = await storage.get('avatars', key);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(await text(got)).toBe('png bytes');
    await storage.delete('avatars', key);
    await expect(storage.get('avatars', key)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('keeps every version once enabled: newest first, the null version, delete markers, restore', async () => {
    await storage.createBucket('docs');
    await storage.put('docs', 'a/readme.md', 'v0');
    expect((await storage.enableVersioning('docs')).versioning).toBe('enabled');
    const v1 = await storage.put('docs', 'a/readme.md', 'v1');
    const v2 = await storage.put('docs', 'a/readme.md', 'v2');
    expect(v1.versionId).toBeTruthy();
    expect(v2.versionId).not.toBe(v1.versionId);

    let versions = await storage.listVersions('docs', 'a/readme.md');
    expect(versions.map((v) => v.versionId)).toEqual([v2.versionId, v1.versionId, 'null']);
    expect(versions.map((v) => v.isLatest)).toEqual([true, false, false]);
    expect(versions.every((v) => !Number.isNaN(Date.parse(v.lastModified)))).toBe(true);
    expect(await text(await storage.get('docs', 'a/readme.md', v1.versionId))).toBe('v1');
    expect(await text(await storage.get('docs', 'a/readme.md', 'null'))).toBe('v0');

    const del = await storage.delete('docs', 'a/readme.md');
    expect(del.deleteMarker).toBe(true);
    await expect(storage.get('docs', 'a/readme.md')).rejects.toMatchObject({ status: 404 });
    versions = await storage.listVersions('docs', 'a/readme.md');
    expect(versions[0]).toMatchObject({ isLatest: true, isDeleteMarker: true });
    await expect(storage.restoreVersion('docs', 'a/readme.md', versions[0]!.versionId)).rejects.toMatchObject({
      status: 400,
    });

    const restored = await storage.restoreVersion('docs', 'a/readme.md', 'null');
    expect(restored).toMatchObject({ restoredFrom: 'null', versionId: expect.any(String) });
    expect(await text(await storage.get('docs', 'a/readme.md'))).toBe('v0');
    versions = await storage.listVersions('docs', 'a/readme.md');
    expect(versions).toHaveLength(5);
    expect(versions[0]).toMatchObject({ versionId: restored.versionId, isLatest: true, isDeleteMarker: false });
  });

  it("refuses another environment's key and unknown buckets", async () => {
    const res = await call(web.url, 'GET', `/v1/${env.env.name}/buckets`, { key: other.secretKey });
    expect(res).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    const theirs = new StorageApi(new CairnClient({ baseUrl: web.url, secretKey: other.secretKey }), other.env.name);
    const err = await theirs.listVersions('docs', 'a/readme.md').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CairnApiError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
  });
});
