// The disk driver's file work (disk.ts): writes through a temporary file, the versioning flag,
// version records, and the stored and unfinished keys of a bucket's trees.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes, createHash } from 'node:crypto';
import { isAbsent, tempSuffix } from './disk-keys.ts';

export interface Meta {
  metadata: Record<string, string>;
  contentType?: string;
  etag: string;
}

export interface VersionMeta extends Partial<Meta> {
  versionId: string;
  lastModified: string;
  isDeleteMarker: boolean;
  size: number;
}

const versionFile = /^([0-9a-z]{26})\.json$/;
const isMissing = (err: unknown): boolean => (err as { code?: string }).code === 'ENOENT';

/** Removes a file if one is there; a folder (other keys below this one) or a path through a file is no object of this key. */
export async function removeFile(path: string): Promise<void> {
  await rm(path, { force: true }).catch((err: unknown) => {
    const code = (err as { code?: string }).code;
    if (!isAbsent(err) && code !== 'ERR_FS_EISDIR') throw err;
  });
}

export async function isVersioned(root: string, bucket: string): Promise<boolean> {
  try {
    return (
      (JSON.parse(await readFile(join(root, bucket, 'versioning.json'), 'utf8')) as { enabled?: boolean }).enabled ===
      true
    );
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

/** Streams into `<target>.tmp-…`, then calls `commit(tmp, etag, size)`; removes the temp file on any failure. */
export async function writeTemp(
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

/** The version records of one key (its `<key>@v` folder), newest first. */
export async function readVersionMetas(dir: string): Promise<VersionMeta[]> {
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
  return Promise.all(ids.map(async (id) => JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as VersionMeta));
}

/** A bucket tree's entries as keys (`/`-separated, relative to the tree); none when the tree is missing. */
async function treeEntries(bucketDir: string, tree: string): Promise<{ rel: string; file: string }[]> {
  const base = join(bucketDir, tree);
  let entries: string[];
  try {
    entries = (await readdir(base, { recursive: true })) as string[];
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
  return entries.map((entry) => ({
    rel: relative(base, join(base, entry)).split(sep).join('/'),
    file: join(base, entry),
  }));
}

/** The temporary files of unfinished writes under `prefix`, with their keys. */
export async function tempFiles(bucketDir: string, prefix: string): Promise<{ key: string; file: string }[]> {
  const out: { key: string; file: string }[] = [];
  for (const tree of ['data', 'versions']) {
    for (const { rel, file } of await treeEntries(bucketDir, tree)) {
      const m = /^(.*?)(?:@v\/[0-9a-z]{26}\.data)?\.tmp-[0-9a-f]{12}$/.exec(rel);
      if (m && m[1]!.startsWith(prefix)) out.push({ key: m[1]!, file });
    }
  }
  return out;
}

/** Every key stored in the bucket (a data file or a versions folder), sorted. */
export async function storedKeys(bucketDir: string): Promise<string[]> {
  const keys = new Set<string>();
  for (const tree of ['data', 'versions']) {
    for (const { rel } of await treeEntries(bucketDir, tree)) {
      if (tempSuffix.test(rel)) continue;
      if (tree === 'data') keys.add(rel);
      else if (rel.endsWith('@v')) keys.add(rel.slice(0, -2));
    }
  }
  return [...keys].sort();
}
