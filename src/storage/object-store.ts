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

/** One entry of a key's history (docs/api.md "Resources"); `null` is S3's id for pre-versioning objects. */
export interface ObjectVersion {
  key: string;
  versionId: string;
  lastModified: Date;
  isLatest: boolean;
  isDeleteMarker: boolean;
  size: number;
  etag?: string;
}

export interface DeleteResult {
  /** Set when the delete wrote a delete marker (versioned bucket) or removed one version. */
  versionId?: string;
  deleteMarker?: boolean;
}

export interface StreamPutOptions extends PutOptions {
  /** Bytes per multipart part (S3: at least 5 MiB). Memory is about two parts. */
  partSize?: number;
}

export interface ObjectStore {
  readonly kind: 's3' | 'disk';
  ensureBucket(bucket: string): Promise<void>;
  put(bucket: string, key: string, body: Buffer | string | Readable, options?: PutOptions): Promise<PutResult>;
  /** Undefined when there is no such object (or version). */
  get(bucket: string, key: string, options?: { versionId?: string }): Promise<GetResult | undefined>;
  head(bucket: string, key: string, options?: { versionId?: string }): Promise<ObjectInfo | undefined>;
  delete(bucket: string, key: string, options?: { versionId?: string }): Promise<DeleteResult | void>;
  list(bucket: string, prefix: string): Promise<ObjectInfo[]>;
  /**
   * Streams a body of unknown length into one object: nothing is visible under `key` unless the
   * source ends without error; on error the partial upload is removed before this rejects.
   */
  putStream(
    bucket: string,
    key: string,
    source: AsyncIterable<Buffer>,
    options?: StreamPutOptions,
  ): Promise<PutResult & { size: number }>;
  /** Keys under `prefix` with an unfinished upload (a writer killed mid-stream leaves these). */
  listIncompleteUploads(bucket: string, prefix: string): Promise<string[]>;
  /** Removes every unfinished upload under `prefix`; answers how many. */
  abortIncompleteUploads(bucket: string, prefix: string): Promise<number>;
  enableVersioning(bucket: string): Promise<void>;
  /** Every version and delete marker of exactly `key`, newest first. */
  listVersions(bucket: string, key: string): Promise<ObjectVersion[]>;
  /** Copies `versionId` over the latest as a new version (the old versions stay). */
  restoreVersion(bucket: string, key: string, versionId: string): Promise<PutResult>;
  /** Deletes the bucket with every object, version and unfinished upload in it. */
  deleteBucket(bucket: string): Promise<void>;
}

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
