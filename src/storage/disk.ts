// The local-disk driver, for `npm start` with no object store configured. Files live under one
// folder (`.data/objects`); each object's metadata sits beside it in a parallel tree. Writes go to
// a temporary file and are renamed into place, so a reader never sees half an object.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes, createHash } from 'node:crypto';
import { AppError } from '../errors.ts';
import type { GetResult, ObjectInfo, ObjectStore, PutOptions, PutResult } from './object-store.ts';

interface Meta {
  metadata: Record<string, string>;
  contentType?: string;
  etag: string;
}

export class DiskObjectStore implements ObjectStore {
  readonly kind = 'disk' as const;
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  private paths(bucket: string, key: string): { data: string; meta: string } {
    if (!/^[a-z0-9][a-z0-9.-]{1,62}$/.test(bucket)) throw new AppError('invalid_request', `bad bucket name ${bucket}`);
    if (key.length === 0 || key.length > 1024 || key.startsWith('/') || key.split('/').some((s) => s === '..' || s === '.' || s === '')) {
      throw new AppError('invalid_request', 'object keys must be relative paths without empty, "." or ".." segments');
    }
    return { data: join(this.root, bucket, 'data', key), meta: join(this.root, bucket, 'meta', `${key}.json`) };
  }

  async ensureBucket(bucket: string): Promise<void> {
    await mkdir(join(this.root, bucket, 'data'), { recursive: true });
    await mkdir(join(this.root, bucket, 'meta'), { recursive: true });
  }

  async put(bucket: string, key: string, body: Buffer | string | Readable, options: PutOptions = {}): Promise<PutResult> {
    const { data, meta } = this.paths(bucket, key);
    await mkdir(dirname(data), { recursive: true });
    await mkdir(dirname(meta), { recursive: true });
    const tmp = `${data}.tmp-${randomBytes(6).toString('hex')}`;
    const hash = createHash('md5');
    const source = typeof body === 'string' || Buffer.isBuffer(body) ? Readable.from([Buffer.from(body)]) : body;
    try {
      await pipeline(source, async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      }, createWriteStream(tmp));
      const etag = `"${hash.digest('hex')}"`;
      await writeFile(meta, JSON.stringify({ metadata: options.metadata ?? {}, contentType: options.contentType, etag } satisfies Meta));
      await rename(tmp, data);
      return { etag };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  private async info(bucket: string, key: string): Promise<ObjectInfo | undefined> {
    const { data, meta } = this.paths(bucket, key);
    try {
      const [s, m] = await Promise.all([stat(data), readFile(meta, 'utf8')]);
      const parsed = JSON.parse(m) as Meta;
      return { key, size: s.size, lastModified: s.mtime, etag: parsed.etag, metadata: parsed.metadata, contentType: parsed.contentType };
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async head(bucket: string, key: string, options: { versionId?: string } = {}): Promise<ObjectInfo | undefined> {
    if (options.versionId) return undefined;
    return this.info(bucket, key);
  }

  async get(bucket: string, key: string, options: { versionId?: string } = {}): Promise<GetResult | undefined> {
    const info = await this.head(bucket, key, options);
    if (!info) return undefined;
    return { ...info, body: createReadStream(this.paths(bucket, key).data) };
  }

  async delete(bucket: string, key: string): Promise<void> {
    const { data, meta } = this.paths(bucket, key);
    await rm(data, { force: true });
    await rm(meta, { force: true });
  }

  async list(bucket: string, prefix: string): Promise<ObjectInfo[]> {
    const base = join(this.root, bucket, 'data');
    const out: ObjectInfo[] = [];
    let entries: string[];
    try {
      entries = (await readdir(base, { recursive: true })) as string[];
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') return out;
      throw err;
    }
    for (const entry of entries.sort()) {
      const key = relative(base, join(base, entry)).split(sep).join('/');
      if (!key.startsWith(prefix) || key.includes('.tmp-')) continue;
      const info = await this.info(bucket, key);
      if (info) out.push(info);
    }
    return out;
  }
}
