// Paged listings of the S3 driver (s3.ts): unfinished multipart uploads, and every version and
// delete marker under a prefix.
import { ListMultipartUploadsCommand, ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ObjectVersion } from './object-store.ts';

export const notFound = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    e?.name === 'NoSuchKey' ||
    e?.name === 'NotFound' ||
    e?.name === 'NoSuchVersion' ||
    e?.$metadata?.httpStatusCode === 404
  );
};

export async function incompleteUploads(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<{ key: string; uploadId: string }[]> {
  const out: { key: string; uploadId: string }[] = [];
  let keyMarker: string | undefined;
  let uploadIdMarker: string | undefined;
  for (;;) {
    const page = await client.send(
      new ListMultipartUploadsCommand({
        Bucket: bucket,
        Prefix: prefix,
        KeyMarker: keyMarker,
        UploadIdMarker: uploadIdMarker,
      }),
    );
    for (const u of page.Uploads ?? []) if (u.Key && u.UploadId) out.push({ key: u.Key, uploadId: u.UploadId });
    if (!page.IsTruncated) return out;
    keyMarker = page.NextKeyMarker;
    uploadIdMarker = page.NextUploadIdMarker;
  }
}

export async function allVersions(client: S3Client, bucket: string, prefix: string): Promise<ObjectVersion[]> {
  const out: ObjectVersion[] = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  for (;;) {
    const page = await client.send(
      new ListObjectVersionsCommand({
        Bucket: bucket,
        Prefix: prefix,
        KeyMarker: keyMarker,
        VersionIdMarker: versionIdMarker,
      }),
    );
    for (const v of page.Versions ?? []) {
      out.push({
        key: v.Key!,
        versionId: v.VersionId ?? 'null',
        lastModified: v.LastModified ?? new Date(0),
        isLatest: v.IsLatest === true,
        isDeleteMarker: false,
        size: v.Size ?? 0,
        etag: v.ETag,
      });
    }
    for (const m of page.DeleteMarkers ?? []) {
      out.push({
        key: m.Key!,
        versionId: m.VersionId ?? 'null',
        lastModified: m.LastModified ?? new Date(0),
        isLatest: m.IsLatest === true,
        isDeleteMarker: true,
        size: 0,
      });
    }
    if (!page.IsTruncated) return out;
    keyMarker = page.NextKeyMarker;
    versionIdMarker = page.NextVersionIdMarker;
  }
}
