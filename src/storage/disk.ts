// The local-disk driver, for `npm start` with no object store configured. Files live under one
// folder (`.data/objects`); each object's metadata sits beside it in a parallel tree. Writes go to
// a temporary file and are renamed into place, so a reader never sees half an object.
//
// Versioning follows S3's model (the radosgw notes list what the tests rely on): before versioning
// is enabled an object is the `null` version in data/; once enabled, every write and delete marker
// is a file pair under versions/<key>@v/<id>.{json,data}, ids are ULIDs (so newest sorts last), and
// the `null` version stays as the oldest. Versioning cannot be suspended here, as in our API.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes, createHash } from 'node:crypto';
import { AppError } from '../app-error.ts';
import { newUlid } from '../ids.ts';
import { diskKeyProblem, isAbsent, keyFault, refuseClash, tempSuffix } from './disk-keys.ts';
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

interface Meta {
  metadata: Record<string, string>;
  contentType?: string;
  etag: string;
}

interface VersionMeta extends Partial<Meta> {
  versionId: string;
  lastModified: string;
  isDeleteMarker: boolean;
  size: number;
}

const versionFile = /^([0-9a-z]{26})\.json$/;
const isMissing = (err: unknown): boolean => (err as { code?: string }).code === 'ENOENT';

/** Removes a file if one is there; a folder (other keys below this one) or a path through a file is no object of this key. */
async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true }).catch((err: unknown) => {
    const code = (err as { code?: string }).code;
    if (!isAbsent(err) && code !== 'ERR_FS_EISDIR') throw err;
  });
}

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

  private async isVersioned(bucket: string): Promise<boolean> {
    try {
      return (
        (JSON.parse(await readFile(join(this.root, bucket, 'versioning.json'), 'utf8')) as { enabled?: boolean })
          .enabled === true
      );
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  /** Streams into `<target>.tmp-…`, then calls `commit(tmp, etag, size)`; removes the temp file on any failure. */
  private async writeTemp(
    target: string,
    source: Readable,
    commit: (tmp: string, etag: string, size: number) => Promise<void>,
  ): Promise<{ etag: string; size: number }> {
    await mkdir(dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
    const hash = createHash('md5');
    let size = 0;
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk);
            size += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(tmp),
      );
      const etag = `"${hash.digest('hex')}"`;
      await commit(tmp, etag, size);
      return { etag, size };
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  private async write(
    bucket: string,
    key: string,
    source: Readable,
    options: PutOptions,
  ): Promise<PutResult & { size: number }> {
    const { data, meta } = this.paths(bucket, key);
    if (await this.isVersioned(bucket)) {
      const versionId = newUlid();
      const dir = this.versionsDir(bucket, key);
      const out = await this.writeTemp(join(dir, `${versionId}.data`), source, async (tmp, etag, size) => {
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
      return await this.writeTemp(data, source, async (tmp, etag) => {
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

  private async readVersions(bucket: string, key: string): Promise<VersionMeta[]> {
    const dir = this.versionsDir(bucket, key);
    let names: string[];
    try {
      // Files only: a folder here named like a version is a path of another key (`a@v/<id>.json/b`).
      names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
    } catch (err) {
      if (isAbsent(err)) return [];
      throw err;
    }
    const ids = names
      .map((n) => versionFile.exec(n)?.[1])
      .filter((id): id is string => id !== undefined)
      .sort()
      .reverse();
    return Promise.all(
      ids.map(async (id) => JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as VersionMeta),
    );
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
    const versions = await this.readVersions(bucket, key);
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
    if (options.versionId === 'null' || (!options.versionId && !(await this.isVersioned(bucket)))) {
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
    const out: ObjectVersion[] = (await this.readVersions(bucket, key)).map((v) => ({
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
    const versions = await this.listVersions(bucket, key);
    const version = versions.find((v) => v.versionId === versionId);
    if (!version) throw new AppError('not_found', `no version ${versionId} of ${key}`);
    if (version.isDeleteMarker)
      throw new AppError(
        'invalid_request',
        `version ${versionId} of ${key} is a delete marker; choose a version with content`,
      );
    const found = (await this.locate(bucket, key, versionId))!;
    return this.put(bucket, key, createReadStream(found.file), {
      metadata: found.info.metadata,
      contentType: found.info.contentType,
    });
  }

  private async tempFiles(bucket: string, prefix: string): Promise<{ key: string; file: string }[]> {
    const out: { key: string; file: string }[] = [];
    for (const tree of ['data', 'versions']) {
      const base = join(this.root, bucket, tree);
      let entries: string[];
      try {
        entries = (await readdir(base, { recursive: true })) as string[];
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      for (const entry of entries) {
        const rel = relative(base, join(base, entry)).split(sep).join('/');
        const m = /^(.*?)(?:@v\/[0-9a-z]{26}\.data)?\.tmp-[0-9a-f]{12}$/.exec(rel);
        if (m && m[1]!.startsWith(prefix)) out.push({ key: m[1]!, file: join(base, entry) });
      }
    }
    return out;
  }

  async listIncompleteUploads(bucket: string, prefix: string): Promise<string[]> {
    return (await this.tempFiles(bucket, prefix)).map((t) => t.key);
  }

  async abortIncompleteUploads(bucket: string, prefix: string): Promise<number> {
    const files = await this.tempFiles(bucket, prefix);
    for (const t of files) await rm(t.file, { force: true });
    return files.length;
  }

  async deleteBucket(bucket: string): Promise<void> {
    this.paths(bucket, 'x');
    await rm(join(this.root, bucket), { recursive: true, force: true });
  }

  async list(bucket: string, prefix: string): Promise<ObjectInfo[]> {
    const keys = new Set<string>();
    for (const tree of ['data', 'versions']) {
      const base = join(this.root, bucket, tree);
      let entries: string[];
      try {
        entries = (await readdir(base, { recursive: true })) as string[];
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      for (const entry of entries) {
        const rel = relative(base, join(base, entry)).split(sep).join('/');
        if (tempSuffix.test(rel)) continue;
        if (tree === 'data') keys.add(rel);
        else if (rel.endsWith('@v')) keys.add(rel.slice(0, -2));
      }
    }
    const out: ObjectInfo[] = [];
    for (const key of [...keys].sort()) {
      if (!key.startsWith(prefix)) continue;
      const info = await this.head(bucket, key).catch(() => undefined);
      if (info) out.push(info);
    }
    return out;
  }
}
