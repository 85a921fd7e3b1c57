// One interface over object storage. Production and tests use S3 (any S3-compatible store);
// `npm start` with nothing configured uses the local-disk driver behind the same interface.
import type { Readable } from 'node:stream';

export interface PutOptions {
  contentType?: string;
  /** Stored as object metadata (x-amz-meta-*): lower-case keys, ASCII values. */
  metadata?: Record<string, string>;
  contentLength?: number;
}

export interface PutResult {
  etag?: string;
  versionId?: string;
}

export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
  etag?: string;
  versionId?: string;
  metadata: Record<string, string>;
  contentType?: string;
}

export interface GetResult extends ObjectInfo {
  body: Readable;
}

export interface ObjectStore {
  readonly kind: 's3' | 'disk';
  ensureBucket(bucket: string): Promise<void>;
  put(bucket: string, key: string, body: Buffer | string | Readable, options?: PutOptions): Promise<PutResult>;
  /** Undefined when there is no such object (or version). */
  get(bucket: string, key: string, options?: { versionId?: string }): Promise<GetResult | undefined>;
  head(bucket: string, key: string, options?: { versionId?: string }): Promise<ObjectInfo | undefined>;
  delete(bucket: string, key: string, options?: { versionId?: string }): Promise<void>;
  list(bucket: string, prefix: string): Promise<ObjectInfo[]>;
}

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
