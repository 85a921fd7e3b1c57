// An artifact bundle as a random-access file over its chunks in the store, so that the zip reader
// (zip.ts) reads the directory at the end and then one entry at a time, without the whole bundle
// in memory. A chunk is at most `chunkLimits.chunkSize`; the last two read are kept, so a bundle of
// one or two chunks (most of them) is fetched once, and entries read in order fetch each chunk
// about once more.
import { createHash } from 'node:crypto';
import { readAll } from '../../../../storage/object-store.ts';
import { ensureSourceMapBucket, type UploadDeps } from '../../source-maps/uploads.ts';
import { chunkKey, chunkLimits } from './chunks.ts';
import type { RandomAccess } from './zip.ts';

/** A bundle that no retry can make whole (a chunk gone, the wrong checksum, too large). */
export class BundleError extends Error {}

export interface OpenedBundle extends RandomAccess {
  /** The SHA-1 of the chunks' bytes, in order: the bundle's checksum when it is whole. */
  sha1: string;
}

/** Reads the chunks once, in order, to hash them and learn their sizes (one chunk in memory at a time). */
export async function openBundle(deps: UploadDeps, envId: string, chunks: readonly string[]): Promise<OpenedBundle> {
  const bucket = await ensureSourceMapBucket(deps);
  const kept: { sha1: string; bytes: Buffer }[] = [];
  const fetchChunk = async (sha1: string): Promise<Buffer> => {
    const hit = kept.find((k) => k.sha1 === sha1);
    if (hit) return hit.bytes;
    const got = await deps.store.get(bucket, chunkKey(envId, sha1));
    if (!got) throw new BundleError(`chunk ${sha1} is gone; upload the bundle again`);
    const bytes = await readAll(got.body);
    kept.push({ sha1, bytes });
    if (kept.length > 2) kept.shift();
    return bytes;
  };

  const hash = createHash('sha1');
  const starts: number[] = [];
  let size = 0;
  for (const sha1 of chunks) {
    const bytes = await fetchChunk(sha1);
    starts.push(size);
    size += bytes.length;
    if (size > chunkLimits.maxFileSize)
      throw new BundleError(`the bundle is larger than the ${chunkLimits.maxFileSize} bytes a bundle may have`);
    hash.update(bytes);
  }

  /** The index of the chunk holding byte `offset` (the last whose start is at or before it). */
  const chunkAt = (offset: number): number => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };

  return {
    sha1: hash.digest('hex'),
    size,
    async read(offset: number, length: number): Promise<Buffer> {
      if (offset < 0 || length < 0 || offset + length > size) throw new RangeError('read outside the bundle');
      const out = Buffer.allocUnsafe(length);
      let done = 0;
      for (let i = chunkAt(offset); done < length; i++) {
        const bytes = await fetchChunk(chunks[i]!);
        const from = offset + done - starts[i]!;
        // A chunk that changed size since it was hashed is not the chunk that was hashed.
        if (starts[i]! + bytes.length !== (starts[i + 1] ?? size))
          throw new BundleError(`chunk ${chunks[i]} changed while the bundle was read; upload it again`);
        done += bytes.copy(out, done, from, Math.min(bytes.length, from + length - done));
      }
      return out;
    },
  };
}
