// Buckets and object versions as the API shows them (contract/storage.ts).
import type { Bucket, ObjectVersion } from '../../contract/storage.ts';
import type { ObjectVersion as StoredVersion } from '../../storage/object-store.ts';
import type { BucketRow } from './queries.ts';

export function bucketResource(b: BucketRow, envName: string): Bucket {
  return {
    name: `${envName}/buckets/${b.name}`,
    bucket: b.name,
    versioning: b.versioning,
    create_time: b.create_time.toISOString(),
  };
}

export function versionResource(v: StoredVersion): ObjectVersion {
  return {
    versionId: v.versionId,
    lastModified: v.lastModified.toISOString(),
    isLatest: v.isLatest,
    isDeleteMarker: v.isDeleteMarker,
    size: v.size,
    ...(v.etag ? { etag: v.etag } : {}),
  };
}
