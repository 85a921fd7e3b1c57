// sentry-cli's chunk upload (docs/api.md "Sentry compatibility", sentry-cli): the CLI asks for the
// upload's parameters, then posts `multipart/form-data` whose parts (`file_gzip`, or `file`) are
// chunks of an artifact bundle, each named by the SHA-1 of its bytes. A chunk is kept only when
// its bytes hash to its name, as an object in the store, and the environment's row says it holds it.
// Parameters are ours, smaller than Sentry's (4 MiB chunks, 8 MiB requests, 2 at once), so that
// one CLI's upload holds at most `maxRequestSize` x `concurrency` (16 MiB) of a web process.
import { createHash } from 'node:crypto';
import { AppError } from '../../../../app-error.ts';
import type { Logger } from '../../../../log.ts';
import { ensureSourceMapBucket, type UploadDeps } from '../../source-maps/uploads.ts';
import { bundleQueries } from './queries.ts';

export const chunkLimits = {
  chunkSize: 4 * 1024 * 1024,
  chunksPerRequest: 16,
  maxRequestSize: 8 * 1024 * 1024,
  concurrency: 2,
  /** The largest artifact bundle assembled (its maps are each at most the 50 MiB a map upload takes). */
  maxFileSize: 100 * 1024 * 1024,
} as const;

/** What GET chunk-upload answers: Sentry's field names, which sentry-cli reads. */
export function chunkUploadOptions(url: string) {
  return {
    url,
    chunkSize: chunkLimits.chunkSize,
    chunksPerRequest: chunkLimits.chunksPerRequest,
    maxFileSize: chunkLimits.maxFileSize,
    maxRequestSize: chunkLimits.maxRequestSize,
    concurrency: chunkLimits.concurrency,
    hashAlgorithm: 'sha1',
    compression: ['gzip'],
    accept: ['artifact_bundles'],
  };
}

export const chunkKey = (envId: string, sha1: string): string => `sentry-chunks/${envId}/${sha1}`;

const bad = (message: string, status = 400) => new AppError('invalid_request', message, { status });

/** A chunk kept: its name (the SHA-1 of its bytes) and size. */
export interface KeptChunk {
  sha1: string;
  size_bytes: number;
}

/**
 * The chunk parts of one request as the route reads them (api/routes/sentry/chunk-parts.ts): each
 * part's name and bytes go to `keep` as they are read, and the answer is what `keep` answered for
 * each, once every part is read and kept. A refused request rejects once every `keep` begun settled.
 */
export type ChunkParts = (keep: (name: string, bytes: Buffer) => Promise<KeptChunk>) => Promise<KeptChunk[]>;

/**
 * Checks and keeps the chunks of one request; answers how many. A chunk's object is written before
 * its row, and a refused request keeps none of its chunks: the objects it wrote that no row vouches
 * for are removed before it is answered, since pruning starts from rows and would never find them.
 */
export async function receiveChunks(
  deps: UploadDeps & { log: Logger },
  envId: string,
  parts: ChunkParts,
): Promise<number> {
  /** The chunks this request wrote to the store. */
  const written: string[] = [];
  const bucket = await ensureSourceMapBucket(deps);
  try {
    const chunks = await parts(async (name, bytes) => {
      const sha1 = createHash('sha1').update(bytes).digest('hex');
      if (name.toLowerCase() !== sha1) throw bad(`chunk "${name.slice(0, 64)}" is not named by the SHA-1 of its bytes`);
      // Noted before the write, so that a write cut short is removed too.
      written.push(sha1);
      await deps.store.put(bucket, chunkKey(envId, sha1), bytes, { contentType: 'application/octet-stream' });
      return { sha1, size_bytes: bytes.length };
    });
    await bundleQueries(deps.db).addChunks(envId, chunks);
    return chunks.length;
  } catch (err) {
    await forgetWritten(deps, envId, bucket, written);
    throw err;
  }
}

/**
 * The objects a refused request wrote, but those of chunks the environment already held (a row
 * from an earlier upload vouches for the same bytes). Best effort: what cannot be removed is logged.
 */
async function forgetWritten(
  deps: UploadDeps & { log: Logger },
  envId: string,
  bucket: string,
  sha1s: readonly string[],
): Promise<void> {
  if (sha1s.length === 0) return;
  const unheld = await bundleQueries(deps.db)
    .missingChunks(envId, [...sha1s])
    .catch((err: unknown) => {
      deps.log.warn({ err, env_id: envId, chunks: sha1s }, "a refused chunk upload's objects are left: no row check");
      return [];
    });
  for (const sha1 of unheld)
    await deps.store
      .delete(bucket, chunkKey(envId, sha1))
      .catch((err: unknown) =>
        deps.log.warn({ err, env_id: envId, sha1 }, "a refused chunk upload's object is left: delete failed"),
      );
}

/**
 * Chunks uploaded more than a day ago are spent or abandoned (sentry-cli assembles within seconds
 * of its upload): their objects go, then their rows. Answers how many.
 */
export async function pruneChunks(deps: UploadDeps, now: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const stale = await bundleQueries(deps.db).staleChunks(new Date(now.getTime() - 24 * 3600 * 1000), 500);
    await discardChunks(deps, stale);
    total += stale.length;
    if (stale.length < 500) return total;
  }
}

/** Chunks done with: their objects go, then their rows (a row without its object would be taken as uploaded). */
export async function discardChunks(
  deps: UploadDeps,
  chunks: readonly { env_id: string; sha1: string }[],
): Promise<void> {
  const bucket = await ensureSourceMapBucket(deps);
  for (const c of chunks) await deps.store.delete(bucket, chunkKey(c.env_id, c.sha1)).catch(() => undefined);
  await bundleQueries(deps.db).dropChunks(chunks);
}
