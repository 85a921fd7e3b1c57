// Request and response shapes of storage buckets and object versions (docs/api.md "Storage
// buckets and versioning"; the presenters are domain/storage/present.ts). Version fields keep S3's
// names, as the SDK's method names do.
import { z } from 'zod';
import { envParams } from './tenancy.ts';

export { envParams };

export const bucketParams = envParams.extend({ bucket: z.string().min(1).max(63) });
// The object key is one path segment, URL-encoded ("/" as %2F), as in the GCS JSON API.
export const objectParams = bucketParams.extend({ key: z.string().min(1).max(1024) });
export const versionQuery = z.object({ version_id: z.string().min(1).max(1024).optional() });

export const createBucketBody = z.object({ name: z.string().meta({ example: 'avatars' }) }).strict();
export const restoreVersionBody = z.object({ versionId: z.string().min(1).max(1024) }).strict();

export const bucket = z
  .object({
    name: z.string(),
    bucket: z.string(),
    versioning: z.enum(['disabled', 'enabled']),
    create_time: z.string(),
  })
  .meta({ id: 'StorageBucket' });
export const bucketList = z.object({ buckets: z.array(bucket) });

export const objectVersion = z
  .object({
    versionId: z.string().meta({ description: '"null" for an object written before versioning was enabled' }),
    lastModified: z.string(),
    isLatest: z.boolean(),
    isDeleteMarker: z.boolean(),
    size: z.number(),
    etag: z.string().optional(),
  })
  .meta({ id: 'ObjectVersion' });
export const versionList = z.object({ versions: z.array(objectVersion) }).meta({ id: 'ObjectVersionList' });

export const writeResult = z
  .object({
    key: z.string(),
    size: z.number().optional(),
    versionId: z.string().optional(),
    etag: z.string().optional(),
    deleteMarker: z.boolean().optional(),
    restoredFrom: z.string().optional(),
  })
  .meta({ id: 'ObjectWrite' });

export type Bucket = z.output<typeof bucket>;
export type ObjectVersion = z.output<typeof objectVersion>;
export type ObjectWrite = z.output<typeof writeResult>;
