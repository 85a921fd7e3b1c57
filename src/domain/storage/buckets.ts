// Application storage: buckets per environment, each its own S3 bucket named
// `${CAIRN_STORAGE_BUCKET_PREFIX}${ulid}` (docs/api.md), so versioning is S3's native versioning
// and the backup bucket stays separate. Versioning, once enabled, is never suspended by this API.
import type { Knex } from 'knex';
import type { Readable } from 'node:stream';
import type { Config } from '../../config.ts';
import { AppError } from '../../app-error.ts';
import { newUlid } from '../../ids.ts';
import type { ObjectStore, ObjectVersion } from '../../storage/object-store.ts';
import { storageQueries, type BucketRow } from './queries.ts';

export interface StorageDeps {
  config: Config;
  db: Knex;
  store: ObjectStore;
}

/** S3's rules leave room for our prefix: lower-case letters, digits, dashes, 3–40 characters. */
export const bucketNamePattern = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;
/** Object keys: 1–1024 bytes, no empty, "." or ".." segments (portable across both drivers). */
export function checkKey(key: string): void {
  if (
    Buffer.byteLength(key) > 1024 ||
    key.length === 0 ||
    key.startsWith('/') ||
    key.split('/').some((s) => s === '' || s === '.' || s === '..')
  ) {
    throw new AppError('invalid_request', 'object keys are 1-1024 bytes, without empty, "." or ".." path segments');
  }
}

export async function createBucket(deps: StorageDeps, envId: string, name: string): Promise<BucketRow> {
  if (!bucketNamePattern.test(name))
    throw new AppError('invalid_request', 'bucket names are 3-40 lower-case letters, digits and dashes');
  const q = storageQueries(deps.db);
  if (await q.byName(envId, name)) throw new AppError('conflict', `a bucket named ${name} already exists`);
  const id = newUlid();
  const s3Bucket = `${deps.config.CAIRN_STORAGE_BUCKET_PREFIX}${id}`;
  // The store's bucket first: a row never names a bucket that does not exist. If the row then
  // fails (a concurrent create of the same name wins the unique index), the bucket goes too.
  await deps.store.ensureBucket(s3Bucket);
  try {
    return await q.insert({ id: `bkt_${id}`, env_id: envId, name, s3_bucket: s3Bucket });
  } catch (err) {
    await deps.store.deleteBucket(s3Bucket).catch(() => undefined);
    throw err;
  }
}

export async function requireBucket(db: Knex, envId: string, name: string): Promise<BucketRow> {
  const b = await storageQueries(db).byName(envId, name);
  if (!b) throw new AppError('not_found', `no bucket named ${name} in this environment`);
  return b;
}

export async function enableVersioning(deps: StorageDeps, envId: string, name: string): Promise<BucketRow> {
  const b = await requireBucket(deps.db, envId, name);
  await deps.store.enableVersioning(b.s3_bucket);
  await storageQueries(deps.db).setVersioning(b.id, 'enabled');
  return { ...b, versioning: 'enabled' };
}

/** 5 GiB, S3's largest single PUT; larger objects are out of scope for this API. */
export const maxObjectBytes = 5 * 2 ** 30;

/**
 * Counts the bytes as they stream and stops past `limit`, whatever Content-Length said (a chunked
 * body has none): the store then drops the partial upload, so nothing is left behind.
 */
export async function* limited(body: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > limit) throw new AppError('invalid_request', `objects are at most ${limit} bytes`, { status: 413 });
    yield chunk;
  }
}

export async function putObject(
  deps: StorageDeps,
  envId: string,
  name: string,
  key: string,
  body: Readable,
  contentType: string | undefined,
  limit = maxObjectBytes,
) {
  checkKey(key);
  const b = await requireBucket(deps.db, envId, name);
  const out = await deps.store.putStream(b.s3_bucket, key, limited(body, limit), contentType ? { contentType } : {});
  return {
    key,
    size: out.size,
    ...(out.versionId ? { versionId: out.versionId } : {}),
    ...(out.etag ? { etag: out.etag } : {}),
  };
}

export async function getObject(deps: StorageDeps, envId: string, name: string, key: string, versionId?: string) {
  checkKey(key);
  const b = await requireBucket(deps.db, envId, name);
  const got = await deps.store.get(b.s3_bucket, key, versionId ? { versionId } : {});
  if (!got) throw new AppError('not_found', versionId ? `no version ${versionId} of ${key}` : `no object ${key}`);
  return got;
}

export async function deleteObject(deps: StorageDeps, envId: string, name: string, key: string, versionId?: string) {
  checkKey(key);
  const b = await requireBucket(deps.db, envId, name);
  const out = (await deps.store.delete(b.s3_bucket, key, versionId ? { versionId } : {})) ?? {};
  return { key, ...(out.versionId ? { versionId: out.versionId } : {}), deleteMarker: out.deleteMarker === true };
}

export async function listVersions(
  deps: StorageDeps,
  envId: string,
  name: string,
  key: string,
): Promise<ObjectVersion[]> {
  checkKey(key);
  const b = await requireBucket(deps.db, envId, name);
  return deps.store.listVersions(b.s3_bucket, key);
}

export async function restoreVersion(deps: StorageDeps, envId: string, name: string, key: string, versionId: string) {
  checkKey(key);
  const b = await requireBucket(deps.db, envId, name);
  if (b.versioning !== 'enabled')
    throw new AppError('conflict', `versioning is not enabled on ${name}; enable it first`);
  const out = await deps.store.restoreVersion(b.s3_bucket, key, versionId);
  return { key, restoredFrom: versionId, ...(out.versionId ? { versionId: out.versionId } : {}) };
}

export async function listBuckets(db: Knex, envId: string): Promise<BucketRow[]> {
  return storageQueries(db).list(envId);
}
