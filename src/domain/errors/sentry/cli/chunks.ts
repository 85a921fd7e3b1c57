// sentry-cli's chunk upload (docs/api.md "Sentry compatibility", sentry-cli): the CLI asks for the
// upload's parameters, then posts `multipart/form-data` whose parts (`file_gzip`, or `file`) are
// chunks of an artifact bundle, each named by the SHA-1 of its bytes. A chunk is kept only when
// its bytes hash to its name, as an object in the store, and the environment's row says it holds it.
// Parameters are ours, smaller than Sentry's (4 MiB chunks, 8 MiB requests, 2 at once), so that
// one CLI's upload holds at most `maxRequestSize` x `concurrency` (16 MiB) of a web process.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import busboy from 'busboy';
import { AppError } from '../../../../app-error.ts';
import { discardRest } from '../../../../http/discard-body.ts';
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

/**
 * One part's bytes, gunzipped for `file_gzip`. The inflated bytes are counted as they come and the
 * part is refused as soon as they pass a chunk's size or the request's budget, so a small gzip
 * that inflates to gigabytes costs at most a chunk (the gunzip is destroyed with the loop).
 */
async function readPart(stream: Readable, gzip: boolean, budget: { left: number }): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  const source = gzip ? stream.pipe(createGunzip()) : stream;
  // A part cut short (its request refused) ends the read with its error, whether gunzipped or not.
  if (source !== stream) stream.once('error', (err) => source.destroy(err));
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      budget.left -= chunk.length;
      if (size > chunkLimits.chunkSize) throw bad(`a chunk is larger than ${chunkLimits.chunkSize} bytes`, 413);
      if (budget.left < 0) throw bad(`the request holds more than ${chunkLimits.maxRequestSize} bytes of chunks`, 413);
      parts.push(chunk);
    }
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('Z_')) throw bad('a file_gzip part does not gunzip');
    throw err;
  }
  return Buffer.concat(parts, size);
}

/**
 * Most bytes a chunk request may have on the wire: its chunks' bytes (sent gzipped, so rarely more
 * than they hold decoded) and the multipart framing around each (a few hundred bytes a part).
 */
const maxWireBytes = chunkLimits.maxRequestSize + 1024 * 1024;

/**
 * Reads, checks and keeps the chunks of one request; answers how many. The request is bounded as
 * a whole: its bytes on the wire, its parts (chunks and a few fields: one past the limit refuses
 * the request at once, rather than being skipped while the rest is still read), and its chunks' bytes.
 * A chunk's object is written before its row, and a refused request keeps none of its chunks: the
 * objects it wrote that no row vouches for are removed before it is answered, since pruning
 * starts from rows and would never find them.
 */
export async function receiveChunks(
  deps: UploadDeps & { log: Logger },
  envId: string,
  req: IncomingMessage,
): Promise<number> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? ''))
    throw bad('send the chunks as multipart/form-data parts named file_gzip (or file)');
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxWireBytes)
    throw bad(`the request is larger than ${maxWireBytes} bytes`, 413);
  const budget = { left: chunkLimits.maxRequestSize };
  const kept: Promise<{ sha1: string; size_bytes: number }>[] = [];
  /** The chunks this request wrote to the store. */
  const written: string[] = [];
  const bucket = await ensureSourceMapBucket(deps);
  try {
    await new Promise<void>((resolve, reject) => {
      const parser = busboy({
        headers: req.headers,
        limits: {
          files: chunkLimits.chunksPerRequest,
          fields: 8,
          fieldSize: 1024,
          parts: chunkLimits.chunksPerRequest + 8,
          headerPairs: 16,
        },
      });
      let wire = 0;
      let failed = false;
      const fail = (err: unknown) => {
        if (failed) return;
        failed = true;
        req.unpipe(parser);
        req.off('data', count);
        discardRest(req, maxWireBytes);
        // The part being read ends with an error, so that every part has settled before cleanup.
        parser.destroy();
        reject(err);
      };
      const count = (chunk: Buffer) => {
        wire += chunk.length;
        if (wire > maxWireBytes) fail(bad(`the request is larger than ${maxWireBytes} bytes`, 413));
      };
      parser.on('file', (field, stream, info) => {
        if (field !== 'file_gzip' && field !== 'file') {
          stream.on('error', () => undefined).resume();
          return;
        }
        const name = info.filename ?? '';
        const read = readPart(stream, field === 'file_gzip', budget).then(async (bytes) => {
          const sha1 = createHash('sha1').update(bytes).digest('hex');
          if (name.toLowerCase() !== sha1)
            throw bad(`chunk "${name.slice(0, 64)}" is not named by the SHA-1 of its bytes`);
          if (failed) throw new Error('the request was refused');
          // Noted before the write, so that a write cut short is removed too.
          written.push(sha1);
          await deps.store.put(bucket, chunkKey(envId, sha1), bytes, { contentType: 'application/octet-stream' });
          return { sha1, size_bytes: bytes.length };
        });
        // A refused part refuses the request at once: no chunk after it is written.
        read.catch((err: unknown) => {
          stream.resume();
          fail(err);
        });
        kept.push(read);
      });
      parser.on('filesLimit', () => fail(bad(`at most ${chunkLimits.chunksPerRequest} chunks per request`)));
      parser.on('fieldsLimit', () => fail(bad('at most 8 form fields per request')));
      parser.on('partsLimit', () => fail(bad(`at most ${chunkLimits.chunksPerRequest + 8} parts per request`)));
      parser.on('error', (err) => fail(bad(`the multipart body does not parse: ${(err as Error).message}`)));
      parser.on('close', resolve);
      req.on('error', fail);
      req.on('data', count);
      req.pipe(parser);
    });
    const chunks = await Promise.all(kept);
    await bundleQueries(deps.db).addChunks(envId, chunks);
    return chunks.length;
  } catch (err) {
    await Promise.allSettled(kept);
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
