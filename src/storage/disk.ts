// The local-disk driver, for `npm start` with no object store configured. Files live under one
// folder (`.data/objects`); each object's metadata sits beside it in a parallel tree. Writes go to
// a temporary file and are renamed into place, so a reader never sees half an object.
//
// Versioning follows S3's model (the radosgw notes list what the tests rely on): before versioning
// is enabled an object is the `null` version in data/; once enabled, every write and delete marker
// is a file pair under versions/<key>@v/<id>.{json,data}, ids are ULIDs (so newest sorts last), and
// the `null` version stays as the oldest. Versioning cannot be suspended here, as in our API.
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { AppError } from '../app-error.ts';
import { newUlid } from '../ids.ts';
import { diskKeyProblem, isAbsent, keyFault, refuseClash } from './disk-keys.ts';
import {
  isVersioned,
  readVersionMetas,
  removeFile,
  storedKeys,
  tempFiles,
  writeTemp,
  type Meta,
  type VersionMeta,
} from './disk-files.ts';
import { restorable } from './versions.ts';
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

const versionFile = /^([0-9a-z]{26})\.json$/;

export class DiskObjectStore implements ObjectStore {
  readonly kind = 'disk' as const;
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  private paths(bucket: string, key: string): { data: string; meta: string } {
    if (!/^[a-z0-9][a-z0-9.-]{1,62}$/.test(bucket)) throw new AppError('invalid_request', `bad bucket name ${bucket}`);
    const problem = diskKeyProblem(key);
    if (problem) throw new AppError('invalid_request', problem);
    return { data: join(this.root, bucket, 'data', key), meta: join(this.root, bucket, 'meta', `${key}.json`) };
  }

  async ensureBucket(bucket: string): Promise<void> {
    await mkdir(join(this.root, bucket, 'data'), { recursive: true });
    await mkdir(join(this.root, bucket, 'meta'), { recursive: true });
  }

  private versionsDir(bucket: string, key: string): string {
    this.paths(bucket, key);
    return join(this.root, bucket, 'versions', `${key}@v`);
  }

  private async write(
    bucket: string,
    key: string,
    source: Readable,
    options: PutOptions,
  ): Promise<PutResult & { size: number }> {
    const { data, meta } = this.paths(bucket, key);
    if (await isVersioned(this.root, bucket)) {
      const versionId = newUlid();
      const dir = this.versionsDir(bucket, key);
      const out = await writeTemp(join(dir, `${versionId}.data`), source, async (tmp, etag, size) => {
        await rename(tmp, join(dir, `${versionId}.data`));
        const v: VersionMeta = {
          versionId,
          lastModified: new Date().toISOString(),
          isDeleteMarker: false,
          size,
          etag,
          metadata: options.metadata ?? {},
          contentType: options.contentType,
        };
        // The .json is written last: a version exists once its metadata does.
        await writeFile(join(dir, `${versionId}.json`), JSON.stringify(v));
      }).catch((err: unknown) => {
        // A key below another's version file (`a@v/<id>.data/b`) cannot be a folder there.
        throw keyFault(err, key);
      });
      return { ...out, versionId };
    }
    await refuseClash(join(this.root, bucket), key);
    // Data first, into a temporary file renamed into place, then its metadata the same way: a
    // failure at any step leaves the previous object whole, never metadata without data.
    try {
      await mkdir(dirname(meta), { recursive: true });
      return await writeTemp(data, source, async (tmp, etag) => {
        const metaTmp = `${meta}.tmp-${randomBytes(6).toString('hex')}`;
        try {
          await writeFile(
            metaTmp,
            JSON.stringify({ metadata: options.metadata ?? {}, contentType: options.contentType, etag } satisfies Meta),
          );
          await rename(tmp, data);
          await rename(metaTmp, meta);
        } finally {
          await rm(metaTmp, { force: true });
        }
      });
    } catch (err) {
      // A clash the check above could not see (another writer in between).
      throw keyFault(err, key);
    }
  }

  async put(
    bucket: string,
    key: string,
    body: Buffer | string | Readable,
    options: PutOptions = {},
  ): Promise<PutResult> {
    const source = typeof body === 'string' || Buffer.isBuffer(body) ? Readable.from([Buffer.from(body)]) : body;
    const { etag, versionId } = await this.write(bucket, key, source, options);
    return versionId ? { etag, versionId } : { etag };
  }

  async putStream(
    bucket: string,
    key: string,
    source: AsyncIterable<Buffer>,
    options: StreamPutOptions = {},
  ): Promise<PutResult & { size: number }> {
    return this.write(bucket, key, Readable.from(source), options);
  }

  private async info(bucket: string, key: string): Promise<ObjectInfo | undefined> {
    const { data, meta } = this.paths(bucket, key);
    try {
      const [s, m] = await Promise.all([stat(data), readFile(meta, 'utf8')]);
      // A folder is where other keys live (`a` of `a/b`), not an object.
      if (!s.isFile()) return undefined;
      const parsed = JSON.parse(m) as Meta;
      return {
        key,
        size: s.size,
        lastModified: s.mtime,
        etag: parsed.etag,
        metadata: parsed.metadata,
        contentType: parsed.contentType,
      };
    } catch (err) {
      if (isAbsent(err)) return undefined;
      throw err;
    }
  }

  /** The object (or version) and the file holding its bytes; undefined for none or a delete marker. */
  private async locate(
    bucket: string,
    key: string,
    versionId?: string,
  ): Promise<{ info: ObjectInfo; file: string } | undefined> {
    const nullVersion = async () => {
      const info = await this.info(bucket, key);
      return info
        ? {
            info: { ...info, versionId: versionId === 'null' ? 'null' : info.versionId },
            file: this.paths(bucket, key).data,
          }
        : undefined;
    };
    if (versionId === 'null') return nullVersion();
    const versions = await readVersionMetas(this.versionsDir(bucket, key));
    const v = versionId ? versions.find((x) => x.versionId === versionId) : versions[0];
    if (!v) return versionId ? undefined : nullVersion();
    if (v.isDeleteMarker) return undefined;
    const file = join(this.versionsDir(bucket, key), `${v.versionId}.data`);
    return {
      info: {
        key,
        size: v.size,
        lastModified: new Date(v.lastModified),
        etag: v.etag,
        versionId: v.versionId,
        metadata: v.metadata ?? {},
        contentType: v.contentType,
      },
      file,
    };
  }

  async head(bucket: string, key: string, options: { versionId?: string } = {}): Promise<ObjectInfo | undefined> {
    return (await this.locate(bucket, key, options.versionId))?.info;
  }

  async get(bucket: string, key: string, options: { versionId?: string } = {}): Promise<GetResult | undefined> {
    const found = await this.locate(bucket, key, options.versionId);
    if (!found) return undefined;
    return { ...found.info, body: createReadStream(found.file) };
  }

  async delete(bucket: string, key: string, options: { versionId?: string } = {}): Promise<DeleteResult> {
    const { data, meta } = this.paths(bucket, key);
    const dir = this.versionsDir(bucket, key);
    if (options.versionId === 'null' || (!options.versionId && !(await isVersioned(this.root, bucket)))) {
      await removeFile(data);
      await removeFile(meta);
      return options.versionId ? { versionId: 'null' } : {};
    }
    if (options.versionId) {
      if (!versionFile.test(`${options.versionId}.json`)) return {};
      await removeFile(join(dir, `${options.versionId}.json`));
      await removeFile(join(dir, `${options.versionId}.data`));
      return { versionId: options.versionId };
    }
    // A delete on a versioned bucket hides the object behind a delete marker (S3 semantics).
    const versionId = newUlid();
    const marker: VersionMeta = { versionId, lastModified: new Date().toISOString(), isDeleteMarker: true, size: 0 };
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, `${versionId}.json`), JSON.stringify(marker));
    } catch (err) {
      throw keyFault(err, key);
    }
    return { versionId, deleteMarker: true };
  }

  async enableVersioning(bucket: string): Promise<void> {
    await this.ensureBucket(bucket);
    await writeFile(join(this.root, bucket, 'versioning.json'), JSON.stringify({ enabled: true }));
  }

  async listVersions(bucket: string, key: string): Promise<ObjectVersion[]> {
    const out: ObjectVersion[] = (await readVersionMetas(this.versionsDir(bucket, key))).map((v) => ({
      key,
      versionId: v.versionId,
      lastModified: new Date(v.lastModified),
      isLatest: false,
      isDeleteMarker: v.isDeleteMarker,
      size: v.size,
      etag: v.etag,
    }));
    const nullInfo = await this.info(bucket, key);
    if (nullInfo)
      out.push({
        key,
        versionId: 'null',
        lastModified: nullInfo.lastModified,
        isLatest: false,
        isDeleteMarker: false,
        size: nullInfo.size,
        etag: nullInfo.etag,
      });
    if (out[0]) out[0].isLatest = true;
    return out;
  }

  async restoreVersion(bucket: string, key: string, versionId: string): Promise<PutResult> {
    restorable(await this.listVersions(bucket, key), key, versionId);
    const found = (await this.locate(bucket, key, versionId))!;
    return this.put(bucket, key, createReadStream(found.file), {
      metadata: found.info.metadata,
      contentType: found.info.contentType,
    });
  }

  async listIncompleteUploads(bucket: string, prefix: string): Promise<string[]> {
    return (await tempFiles(join(this.root, bucket), prefix)).map((t) => t.key);
  }

  async abortIncompleteUploads(bucket: string, prefix: string): Promise<number> {
    const files = await tempFiles(join(this.root, bucket), prefix);
    for (const t of files) await rm(t.file, { force: true });
    return files.length;
  }

  async deleteBucket(bucket: string): Promise<void> {
    this.paths(bucket, 'x');
    await rm(join(this.root, bucket), { recursive: true, force: true });
  }

  async list(bucket: string, prefix: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    for (const key of await storedKeys(join(this.root, bucket))) {
      if (!key.startsWith(prefix)) continue;
      const info = await this.head(bucket, key).catch(() => undefined);
      if (info) out.push(info);
    }
    return out;
  }
}
