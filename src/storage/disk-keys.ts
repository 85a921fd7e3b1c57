// How the local-disk driver (disk.ts) turns object keys into paths, and what a key cannot be there.
// S3 keys are flat strings; on disk a key is a path, so some keys S3 takes cannot be stored, and a
// few file-system errors follow from a key's name alone (a key below another: ENOTDIR; a key that
// is another's folder: EISDIR; a long segment: ENAMETOOLONG). Every one of them is the client's
// key, never the server's fault: a read of such a key finds no object (404), a write that would
// need it is a clash (409 conflict), and a key the disk cannot name at all is refused up front
// (400 invalid_request), before anything is written.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../app-error.ts';

/** Linux file systems (ext4, xfs, tmpfs, overlayfs) name a file in at most 255 bytes. */
const nameMax = 255;
/** A temporary file's suffix (`.tmp-` and 12 hex digits); the store's longest name is `<segment>.json.tmp-…`. */
export const tempSuffix = /\.tmp-[0-9a-f]{12}$/;
/** The longest key segment: a file name's 255 bytes less the metadata's `.json` and a temporary file's suffix. */
export const maxSegmentBytes = nameMax - '.json'.length - '.tmp-'.length - 12;

/** Why the disk store cannot hold `key`, or undefined when it can. */
export function diskKeyProblem(key: string): string | undefined {
  if (key.length === 0 || Buffer.byteLength(key) > 1024 || key.startsWith('/'))
    return 'object keys are 1-1024 bytes and do not start with "/"';
  if (key.includes('\0')) return 'object keys cannot hold U+0000 on the local disk store';
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..')
      return 'object keys must be relative paths without empty, "." or ".." segments';
    if (Buffer.byteLength(segment) > maxSegmentBytes)
      return `each "/"-separated part of a key is at most ${maxSegmentBytes} bytes on the local disk store`;
    // Such a name would be taken for an unfinished upload: hidden from lists, removed by a cleanup.
    if (tempSuffix.test(segment)) return 'a key part cannot end in ".tmp-" and 12 hex digits on the local disk store';
  }
  return undefined;
}

/** Errors a read meets when no object has this key: none there, a file where a folder would be, a folder. */
export function isAbsent(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

/**
 * A file-system error of a write or delete, as the client's fault it is when the key caused it:
 * a file-versus-folder clash is 409, a name too long 400. Anything else is returned as it is.
 */
export function keyFault(err: unknown, key: string): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'EISDIR' || code === 'ERR_FS_EISDIR' || code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOTEMPTY')
    return new AppError(
      'conflict',
      `${key} clashes with another key on the local disk store (a key cannot also be a prefix of another)`,
    );
  if (code === 'ENAMETOOLONG')
    return new AppError('invalid_request', `${key} is too long a path for the local disk store`);
  return err;
}

const isFile = async (path: string): Promise<boolean> => (await stat(path).catch(() => undefined))?.isFile() ?? false;
const isDir = async (path: string): Promise<boolean> =>
  (await stat(path).catch(() => undefined))?.isDirectory() ?? false;

/**
 * S3 keys are flat, so `a` and `a/b` may both exist there; on disk one would be a file and the
 * other a folder. The same holds in the metadata tree, where `a`'s metadata is the file `a.json`,
 * so `a` and `a.json/b` clash too. Such a clash is refused up front (409), before anything is written.
 */
export async function refuseClash(bucketDir: string, key: string): Promise<void> {
  const segments = key.split('/');
  for (let i = 1; i < segments.length; i++) {
    const prefix = segments.slice(0, i).join('/');
    if (await isFile(join(bucketDir, 'data', prefix)))
      throw new AppError(
        'conflict',
        `an object ${prefix} exists, so ${key} cannot: on the local disk store a key cannot also be a prefix of another`,
      );
    if (prefix.endsWith('.json') && (await isFile(join(bucketDir, 'meta', prefix))))
      throw new AppError(
        'conflict',
        `an object ${prefix.slice(0, -5)} exists, so ${key} cannot: the local disk store keeps its metadata at ${prefix}`,
      );
  }
  if (await isDir(join(bucketDir, 'data', key)))
    throw new AppError(
      'conflict',
      `objects under ${key}/ exist, so ${key} cannot: on the local disk store a key cannot also be a prefix of another`,
    );
  if (await isDir(join(bucketDir, 'meta', `${key}.json`)))
    throw new AppError(
      'conflict',
      `objects under ${key}.json/ exist, so ${key} cannot: the local disk store keeps its metadata at ${key}.json`,
    );
}
