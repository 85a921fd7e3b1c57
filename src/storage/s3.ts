// The S3 driver (@aws-sdk/client-s3), for AWS and any S3-compatible store (Ceph, MinIO, R2…).
// Large or streamed bodies go through lib-storage's multipart Upload, which aborts the multipart
// upload on failure so no parts are left behind.
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutBucketVersioningCommand,
  S3Client,
  type HeadObjectCommandOutput,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import type * as Store from './object-store.ts';
import { incompleteUploads, allVersions, notFound } from './s3-listing.ts';
import { multipartPut } from './s3-multipart.ts';
import { restorable } from './versions.ts';

type S3Config = Pick<
  Config,
  'AWS_ENDPOINT_URL_S3' | 'AWS_REGION' | 'AWS_ACCESS_KEY_ID' | 'AWS_SECRET_ACCESS_KEY' | 'CAIRN_S3_FORCE_PATH_STYLE'
>;

export function createS3Client(config: S3Config): S3Client {
  const options: S3ClientConfig = {
    region: config.AWS_REGION,
    forcePathStyle: config.CAIRN_S3_FORCE_PATH_STYLE,
    // Checksums on every request are an AWS feature that several S3-compatible stores reject.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
  if (config.AWS_ENDPOINT_URL_S3) options.endpoint = config.AWS_ENDPOINT_URL_S3;
  if (config.AWS_ACCESS_KEY_ID && config.AWS_SECRET_ACCESS_KEY) {
    options.credentials = { accessKeyId: config.AWS_ACCESS_KEY_ID, secretAccessKey: config.AWS_SECRET_ACCESS_KEY };
  }
  return new S3Client(options);
}

/** An object's description from a GET's or a HEAD's answer. */
function infoOf(key: string, out: HeadObjectCommandOutput): Store.ObjectInfo {
  return {
    key,
    size: out.ContentLength ?? 0,
    lastModified: out.LastModified ?? new Date(0),
    etag: out.ETag,
    versionId: out.VersionId,
    metadata: out.Metadata ?? {},
    contentType: out.ContentType,
  };
}

export class S3ObjectStore implements Store.ObjectStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;

  constructor(client: S3Client) {
    this.client = client;
  }

  async ensureBucket(bucket: string): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch (err) {
      if (!notFound(err)) throw err;
      try {
        await this.client.send(new CreateBucketCommand({ Bucket: bucket }));
      } catch (createErr) {
        const name = (createErr as { name?: string }).name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw createErr;
      }
    }
  }

  async put(
    bucket: string,
    key: string,
    body: Buffer | string | Readable,
    options: Store.PutOptions = {},
  ): Promise<Store.PutResult> {
    const upload = new Upload({
      client: this.client,
      params: { Bucket: bucket, Key: key, Body: body, ContentType: options.contentType, Metadata: options.metadata },
      queueSize: 2,
      partSize: 8 * 1024 * 1024,
      leavePartsOnError: false,
    });
    const out = await upload.done();
    return { etag: out.ETag, versionId: out.VersionId };
  }

  async get(bucket: string, key: string, options: { versionId?: string } = {}): Promise<Store.GetResult | undefined> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }),
      );
      return { ...infoOf(key, out), body: out.Body as Readable };
    } catch (err) {
      if (notFound(err)) return undefined;
      throw err;
    }
  }

  async head(bucket: string, key: string, options: { versionId?: string } = {}): Promise<Store.ObjectInfo | undefined> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }),
      );
      return infoOf(key, out);
    } catch (err) {
      if (notFound(err)) return undefined;
      throw err;
    }
  }

  async delete(bucket: string, key: string, options: { versionId?: string } = {}): Promise<Store.DeleteResult> {
    const out = await this.client.send(
      new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }),
    );
    return { versionId: out.VersionId, deleteMarker: out.DeleteMarker };
  }

  async list(bucket: string, prefix: string): Promise<Store.ObjectInfo[]> {
    const out: Store.ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) {
        out.push({
          key: o.Key!,
          size: o.Size ?? 0,
          lastModified: o.LastModified ?? new Date(0),
          etag: o.ETag,
          metadata: {},
        });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async putStream(
    bucket: string,
    key: string,
    source: AsyncIterable<Buffer>,
    options: Store.StreamPutOptions = {},
  ): Promise<Store.PutResult & { size: number }> {
    return multipartPut(this.client, bucket, key, source, options);
  }

  async listIncompleteUploads(bucket: string, prefix: string): Promise<string[]> {
    try {
      return (await incompleteUploads(this.client, bucket, prefix)).map((u) => u.key);
    } catch (err) {
      if (notFound(err)) return [];
      throw err;
    }
  }

  async abortIncompleteUploads(bucket: string, prefix: string): Promise<number> {
    const uploads = await incompleteUploads(this.client, bucket, prefix).catch((err: unknown) => {
      if (notFound(err)) return [];
      throw err;
    });
    for (const u of uploads) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.key, UploadId: u.uploadId }));
    }
    return uploads.length;
  }

  async enableVersioning(bucket: string): Promise<void> {
    await this.client.send(
      new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
    );
  }

  async listVersions(bucket: string, key: string): Promise<Store.ObjectVersion[]> {
    // The SDK splits versions and delete markers into two lists; S3 orders each newest first, so
    // merging by time (the latest first on a tie) restores the one history.
    const mine = (await allVersions(this.client, bucket, key)).filter((v) => v.key === key);
    return mine.sort(
      (a, b) => b.lastModified.getTime() - a.lastModified.getTime() || Number(b.isLatest) - Number(a.isLatest),
    );
  }

  async restoreVersion(bucket: string, key: string, versionId: string): Promise<Store.PutResult> {
    restorable(await this.listVersions(bucket, key), key, versionId);
    const copySource = `${bucket}/${encodeURIComponent(key)}?versionId=${encodeURIComponent(versionId)}`;
    const out = await this.client.send(
      new CopyObjectCommand({ Bucket: bucket, Key: key, CopySource: copySource, MetadataDirective: 'COPY' }),
    );
    // radosgw answers CopyObject without x-amz-version-id (see docs/notes): read it back.
    const versionIdOut = out.VersionId ?? (await this.head(bucket, key))?.versionId;
    return { etag: out.CopyObjectResult?.ETag, versionId: versionIdOut };
  }

  async deleteBucket(bucket: string): Promise<void> {
    try {
      await this.abortIncompleteUploads(bucket, '');
      const all = await allVersions(this.client, bucket, '');
      for (let i = 0; i < all.length; i += 1000) {
        const batch = all.slice(i, i + 1000).map((v) => ({ Key: v.key, VersionId: v.versionId }));
        await this.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch, Quiet: true } }));
      }
      await this.client.send(new DeleteBucketCommand({ Bucket: bucket }));
    } catch (err) {
      if (!notFound(err)) throw err;
    }
  }
}
