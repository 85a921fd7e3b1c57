// The S3 driver (@aws-sdk/client-s3), for AWS and any S3-compatible store (Ceph, MinIO, R2…).
// Large or streamed bodies go through lib-storage's multipart Upload, which aborts the multipart
// upload on failure so no parts are left behind.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  S3Client,
  UploadPartCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import { AppError } from '../app-error.ts';
import type {
  DeleteResult,
  GetResult,
  ObjectInfo,
  ObjectStore,
  ObjectVersion,
  PutOptions,
  PutResult,
  StreamPutOptions,
} from './object-store.ts';
import { collectParts } from './parts.ts';

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

const notFound = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return (
    e?.name === 'NoSuchKey' ||
    e?.name === 'NotFound' ||
    e?.name === 'NoSuchVersion' ||
    e?.$metadata?.httpStatusCode === 404
  );
};

export class S3ObjectStore implements ObjectStore {
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
    options: PutOptions = {},
  ): Promise<PutResult> {
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

  async get(bucket: string, key: string, options: { versionId?: string } = {}): Promise<GetResult | undefined> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }),
      );
      return {
        key,
        body: out.Body as Readable,
        size: out.ContentLength ?? 0,
        lastModified: out.LastModified ?? new Date(0),
        etag: out.ETag,
        versionId: out.VersionId,
        metadata: out.Metadata ?? {},
        contentType: out.ContentType,
      };
    } catch (err) {
      if (notFound(err)) return undefined;
      throw err;
    }
  }

  async head(bucket: string, key: string, options: { versionId?: string } = {}): Promise<ObjectInfo | undefined> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }),
      );
      return {
        key,
        size: out.ContentLength ?? 0,
        lastModified: out.LastModified ?? new Date(0),
        etag: out.ETag,
        versionId: out.VersionId,
        metadata: out.Metadata ?? {},
        contentType: out.ContentType,
      };
    } catch (err) {
      if (notFound(err)) return undefined;
      throw err;
    }
  }

  async delete(bucket: string, key: string, options: { versionId?: string } = {}): Promise<DeleteResult> {
    const out = await this.client.send(
      new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }),
    );
    return { versionId: out.VersionId, deleteMarker: out.DeleteMarker };
  }

  async list(bucket: string, prefix: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
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
    options: StreamPutOptions = {},
  ): Promise<PutResult & { size: number }> {
    // Our own multipart loop rather than lib-storage: the upload exists from the first byte (so a
    // killed writer's upload is findable by prefix and aborted), at most `queueSize` parts are in
    // flight, and their buffers are reused, so memory is (queueSize + 1) parts whatever the length.
    const partSize = Math.max(options.partSize ?? 8 * 1024 * 1024, 5 * 1024 * 1024);
    const queueSize = 2;
    const created = await this.client.send(
      new CreateMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        ContentType: options.contentType,
        Metadata: options.metadata,
      }),
    );
    const uploadId = created.UploadId!;
    const parts: { PartNumber: number; ETag: string }[] = [];
    const inFlight = new Set<Promise<void>>();
    const free: Buffer[] = [];
    // A part that fails while we read the source is remembered here, never left unhandled.
    const failures: unknown[] = [];
    let size = 0;
    try {
      let number = 0;
      for await (const body of collectParts(source, partSize, () => free.pop() ?? Buffer.allocUnsafeSlow(partSize))) {
        if (failures.length > 0) throw failures[0];
        size += body.length;
        const partNumber = ++number;
        const md5 = createHash('md5').update(body).digest('base64');
        const p: Promise<void> = this.client
          .send(
            new UploadPartCommand({
              Bucket: bucket,
              Key: key,
              UploadId: uploadId,
              PartNumber: partNumber,
              Body: body,
              ContentMD5: md5,
            }),
          )
          .then(
            (out) => {
              parts.push({ PartNumber: partNumber, ETag: out.ETag! });
              if (body.length === partSize) free.push(body);
            },
            (err: unknown) => {
              failures.push(err);
            },
          )
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        while (inFlight.size >= queueSize) await Promise.race(inFlight);
        if (failures.length > 0) throw failures[0];
      }
      await Promise.all(inFlight);
      if (failures.length > 0) throw failures[0];
      parts.sort((a, b) => a.PartNumber - b.PartNumber);
      const done = await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
      return { etag: done.ETag || undefined, versionId: done.VersionId, size };
    } catch (err) {
      await Promise.allSettled(inFlight);
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
        .catch(() => undefined);
      throw err;
    }
  }

  private async incompleteUploads(bucket: string, prefix: string): Promise<{ key: string; uploadId: string }[]> {
    const out: { key: string; uploadId: string }[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(
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

  async listIncompleteUploads(bucket: string, prefix: string): Promise<string[]> {
    try {
      return (await this.incompleteUploads(bucket, prefix)).map((u) => u.key);
    } catch (err) {
      if (notFound(err)) return [];
      throw err;
    }
  }

  async abortIncompleteUploads(bucket: string, prefix: string): Promise<number> {
    const uploads = await this.incompleteUploads(bucket, prefix).catch((err: unknown) => {
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

  private async allVersions(bucket: string, prefix: string): Promise<ObjectVersion[]> {
    const out: ObjectVersion[] = [];
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    for (;;) {
      const page = await this.client.send(
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

  async listVersions(bucket: string, key: string): Promise<ObjectVersion[]> {
    // The SDK splits versions and delete markers into two lists; S3 orders each newest first, so
    // merging by time (the latest first on a tie) restores the one history.
    const mine = (await this.allVersions(bucket, key)).filter((v) => v.key === key);
    return mine.sort(
      (a, b) => b.lastModified.getTime() - a.lastModified.getTime() || Number(b.isLatest) - Number(a.isLatest),
    );
  }

  async restoreVersion(bucket: string, key: string, versionId: string): Promise<PutResult> {
    const version = (await this.listVersions(bucket, key)).find((v) => v.versionId === versionId);
    if (!version) throw new AppError('not_found', `no version ${versionId} of ${key}`);
    if (version.isDeleteMarker)
      throw new AppError(
        'invalid_request',
        `version ${versionId} of ${key} is a delete marker; choose a version with content`,
      );
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
      const all = await this.allVersions(bucket, '');
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
