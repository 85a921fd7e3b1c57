// The S3 driver (@aws-sdk/client-s3), for AWS and any S3-compatible store (Ceph, MinIO, R2…).
// Large or streamed bodies go through lib-storage's multipart Upload, which aborts the multipart
// upload on failure so no parts are left behind.
import {
  CreateBucketCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand,
  ListObjectsV2Command, S3Client, type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import type { GetResult, ObjectInfo, ObjectStore, PutOptions, PutResult } from './object-store.ts';

type S3Config = Pick<Config, 'AWS_ENDPOINT_URL_S3' | 'AWS_REGION' | 'AWS_ACCESS_KEY_ID' | 'AWS_SECRET_ACCESS_KEY' | 'CAIRN_S3_FORCE_PATH_STYLE'>;

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
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.name === 'NoSuchVersion' || e?.$metadata?.httpStatusCode === 404;
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

  async put(bucket: string, key: string, body: Buffer | string | Readable, options: PutOptions = {}): Promise<PutResult> {
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
      const out = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }));
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
      const out = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }));
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

  async delete(bucket: string, key: string, options: { versionId?: string } = {}): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: options.versionId }));
  }

  async list(bucket: string, prefix: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        out.push({ key: o.Key!, size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0), etag: o.ETag, metadata: {} });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }
}
